// Validators for the entries of a .gitlab-ci.yml, one per GitLab 8.13 config node
// (lib/gitlab/ci/config/node/*). Each throws ConfigError with GitLab's message for the first problem.
import type { ArtifactsWhen, CiArtifacts, CiCache, CiEnvironment, CiWhen } from './config-types.js';
import { parseDuration } from './duration.js';
import { parseRegexpLiteral, rubyRegExp } from './ruby-regexp.js';

/** The first validation error of a config; `message` is what users see. */
export class ConfigError extends Error {}

/** A structural error: "<location> <message>", lower-cased as GitLab 8.13 printed them. */
export function fail(location: string, message: string): never {
  throw new ConfigError(`${location} ${message}`.toLowerCase());
}

/** YAML mapping as loaded (keys keep their YAML types). */
export type YamlMap = Map<unknown, unknown>;

/** Whether the value is a YAML mapping. */
export function isMap(v: unknown): v is YamlMap {
  return v instanceof Map;
}

/** Whether the value is an array of strings. */
export function isArrayOfStrings(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

/** Ruby's to_s of a YAML key, for messages and names. */
export function keyString(k: unknown): string {
  if (k === null || k === undefined) return '';
  if (k instanceof Date) return k.toISOString();
  return String(k);
}

/** Value of a key, undefined for absent or null (GitLab treats nil as "not specified"). */
export function get(map: YamlMap, key: string): unknown {
  const v = map.get(key);
  return v === null ? undefined : v;
}

/** Rejects keys outside `allowed` ("contains unknown keys: a, b"). */
export function checkAllowedKeys(map: YamlMap, allowed: ReadonlySet<string>, location: string): void {
  const unknown = [...map.keys()].filter((k) => typeof k !== 'string' || !allowed.has(k));
  if (unknown.length > 0) fail(location, `config contains unknown keys: ${unknown.map(keyString).join(', ')}`);
}

/** before_script / after_script / services / stages: an array of strings. */
export function arrayOfStrings(v: unknown, location: string): string[] {
  if (!isArrayOfStrings(v)) fail(location, 'config should be an array of strings');
  return v;
}

/** image / stage: a string. */
export function stringEntry(v: unknown, location: string): string {
  if (typeof v !== 'string') fail(location, 'config should be a string');
  return v;
}

/** script: a string or an array of strings, as an array. */
export function commandsEntry(v: unknown, location: string): string[] {
  if (typeof v === 'string') return [v];
  if (!isArrayOfStrings(v)) fail(location, 'config should be a string or an array of strings');
  return v;
}

/** variables: a hash of string keys to string values, in file order. */
export function variablesEntry(v: unknown, location: string): [string, string][] {
  const ok = isMap(v) && [...v].every(([k, val]) => typeof k === 'string' && typeof val === 'string');
  if (!ok) fail(location, 'config should be a hash of key value pairs');
  return [...(v as Map<string, string>)];
}

const CACHE_KEYS = new Set(['key', 'untracked', 'paths']);

/** cache: {key, untracked, paths}. */
export function cacheEntry(v: unknown, location: string): CiCache {
  if (!isMap(v)) fail(location, 'config should be a hash');
  checkAllowedKeys(v, CACHE_KEYS, location);
  const cache: CiCache = {};
  const key = get(v, 'key');
  if (key !== undefined) {
    if (typeof key !== 'string') fail(`${location}:key`, 'config should be a string or symbol');
    cache.key = key;
  }
  const untracked = get(v, 'untracked');
  if (untracked !== undefined) {
    if (typeof untracked !== 'boolean') fail(`${location}:untracked`, 'config should be a boolean value');
    cache.untracked = untracked;
  }
  const paths = get(v, 'paths');
  if (paths !== undefined) cache.paths = arrayOfStrings(paths, `${location}:paths`);
  return cache;
}

/** Whether an only/except entry is a usable string or /regexp/. */
export function isRefPattern(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const lit = parseRegexpLiteral(v);
  return lit === null || rubyRegExp(lit.source, lit.flags) !== null;
}

/** only / except: an array of strings or /regexps/ (each regexp must compile). */
export function refPolicyEntry(v: unknown, location: string): string[] {
  if (!Array.isArray(v) || !v.every(isRefPattern)) fail(location, 'config should be an array of strings or regexps');
  return v as string[];
}

const ARTIFACTS_KEYS = new Set(['name', 'untracked', 'paths', 'when', 'expire_in']);
const ARTIFACTS_WHEN: readonly ArtifactsWhen[] = ['on_success', 'on_failure', 'always'];

/** artifacts: {name, untracked, paths, when, expire_in}. */
export function artifactsEntry(v: unknown, location: string): CiArtifacts {
  if (!isMap(v)) fail(location, 'config should be a hash');
  checkAllowedKeys(v, ARTIFACTS_KEYS, location);
  const a: CiArtifacts = {};
  const name = get(v, 'name');
  if (name !== undefined) {
    if (typeof name !== 'string') fail(location, 'name should be a string');
    a.name = name;
  }
  const untracked = get(v, 'untracked');
  if (untracked !== undefined) {
    if (typeof untracked !== 'boolean') fail(location, 'untracked should be a boolean value');
    a.untracked = untracked;
  }
  const paths = get(v, 'paths');
  if (paths !== undefined) {
    if (!isArrayOfStrings(paths)) fail(location, 'paths should be an array of strings');
    a.paths = paths;
  }
  const when = get(v, 'when');
  if (when !== undefined) {
    if (!ARTIFACTS_WHEN.includes(when as ArtifactsWhen)) fail(location, 'when should be on_success, on_failure or always');
    a.when = when as ArtifactsWhen;
  }
  const expireIn = get(v, 'expire_in');
  if (expireIn !== undefined) {
    if (typeof expireIn !== 'string' || !parseDuration(expireIn).ok) fail(location, 'expire in should be a duration');
    a.expire_in = expireIn;
  }
  return a;
}

const ENVIRONMENT_KEYS = new Set(['name', 'url', 'action', 'on_stop']);
/** 8.13's Gitlab::Regex.environment_name_regex: the characters an environment name may use. */
export const ENVIRONMENT_NAME = /^[a-zA-Z0-9_\\/${}. -]+$/;
/** 8.13's environment_name_regex_message. */
export const ENVIRONMENT_NAME_MESSAGE = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces";
// no whitespace or control characters anywhere (URI.regexp refuses them)
const URL_FORM = /^(?:https?|ssh|git):\/\/[^\s/?#\x00-\x1f\x7f]+[^\s\x00-\x1f\x7f]*$/i;

/** 8.13's AddressableUrlValidator with its default protocols: an http, https, ssh or git URL with a host. */
export function isAddressableUrl(url: string): boolean {
  return URL_FORM.test(url.trim());
}

/** environment: a name, or {name, url, action: start|stop, on_stop}. */
export function environmentEntry(v: unknown, location: string): CiEnvironment {
  if (typeof v !== 'string' && !isMap(v)) fail(location, 'config should be a hash or a string');
  const name = typeof v === 'string' ? v : get(v, 'name');
  if (name === undefined || name === '' || (typeof name === 'string' && name.trim() === '')) fail(location, "name can't be blank");
  if (typeof name !== 'string' || !ENVIRONMENT_NAME.test(name)) fail(location, `name ${ENVIRONMENT_NAME_MESSAGE}`);
  if (typeof v === 'string') return { name, action: 'start' };

  checkAllowedKeys(v, ENVIRONMENT_KEYS, location);
  const env: CiEnvironment = { name };
  const url = get(v, 'url');
  if (url !== undefined) {
    if (typeof url === 'string' && url.length > 255) fail(location, 'url is too long (maximum is 255 characters)');
    if (typeof url !== 'string' || !isAddressableUrl(url)) fail(location, 'url must be a valid URL');
    env.url = url;
  }
  const action = get(v, 'action');
  if (action !== undefined) {
    if (action !== 'start' && action !== 'stop') fail(location, 'action should be start or stop');
    env.action = action;
  }
  const onStop = get(v, 'on_stop');
  if (onStop !== undefined) {
    if (typeof onStop !== 'string') fail(location, 'on stop should be a string');
    env.on_stop = onStop;
  }
  return env;
}

/** coverage (a later GitLab keyword Gantry accepts): a `/regexp/` literal that compiles. */
export function coverageEntry(v: unknown, location: string): string {
  const lit = typeof v === 'string' ? parseRegexpLiteral(v) : null;
  if (lit === null || rubyRegExp(lit.source, lit.flags) === null) fail(location, 'config must be a regular expression');
  return v as string;
}

/** Allowed values of a job's `when`. */
export const JOB_WHEN: readonly CiWhen[] = ['on_success', 'on_failure', 'always', 'manual'];
