/** The runner's config file (runner.json): the registered runners (url, token, tags) and the concurrency. */
import { join } from 'node:path';
import { configDir, readJsonFile, writePrivateJsonFile } from '../shared/config-dir.js';

/** One registered runner as the config file keeps it. */
export interface RunnerEntry {
  /** The server's runner id (null when the server did not send one). */
  id: number | null;
  description: string;
  /** The server URL as given to `register` (the runner API is at <url>/ci/api/v1). */
  url: string;
  /** The runner token (secret). */
  token: string;
  tags: string[];
  run_untagged: boolean;
  locked: boolean;
  registered_at: string;
}

/** The whole config file. */
export interface RunnerConfig {
  /** How many builds `run` executes at the same time (over all runners). */
  concurrent: number;
  runners: RunnerEntry[];
}

/** The default config file: <config dir>/runner.json ($GANTRY_CONFIG_DIR, else $XDG_CONFIG_HOME/gantry). */
export function defaultConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'runner.json');
}

/** The default builds dir: <config dir>/builds. */
export function defaultBuildsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'builds');
}

/** An empty config. */
export function emptyConfig(): RunnerConfig {
  return { concurrent: 1, runners: [] };
}

/** Check and normalise a parsed config file; throws an Error naming the file and the bad field. */
export function validateConfig(file: string, raw: unknown): RunnerConfig {
  const bad = (what: string): never => {
    throw new Error(`${file}: ${what}; fix or remove the file`);
  };
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) bad('not a JSON object');
  const o = raw as Record<string, unknown>;
  const concurrent = o.concurrent === undefined ? 1 : o.concurrent;
  if (!Number.isInteger(concurrent) || (concurrent as number) < 1) bad('"concurrent" must be a positive integer');
  const runners = o.runners === undefined ? [] : o.runners;
  if (!Array.isArray(runners)) bad('"runners" must be a list');
  return {
    concurrent: concurrent as number,
    runners: (runners as unknown[]).map((r, i) => {
      if (!r || typeof r !== 'object') bad(`runners[${i}] is not an object`);
      const e = r as Record<string, unknown>;
      if (typeof e.url !== 'string' || !/^https?:\/\//.test(e.url)) bad(`runners[${i}].url must be an http(s) URL`);
      if (typeof e.token !== 'string' || e.token === '') bad(`runners[${i}].token is missing`);
      return {
        id: typeof e.id === 'number' ? e.id : null,
        description: typeof e.description === 'string' ? e.description : '',
        url: e.url as string,
        token: e.token as string,
        tags: Array.isArray(e.tags) ? e.tags.map(String) : [],
        run_untagged: e.run_untagged === undefined ? true : Boolean(e.run_untagged),
        locked: Boolean(e.locked),
        registered_at: typeof e.registered_at === 'string' ? e.registered_at : '',
      };
    }),
  };
}

/** Read the config file (an empty config when it does not exist). */
export function loadConfig(file: string): RunnerConfig {
  const raw = readJsonFile<unknown>(file);
  return raw === null ? emptyConfig() : validateConfig(file, raw);
}

/** Write the config file (mode 0600 in a 0700 directory, atomically). */
export function saveConfig(file: string, config: RunnerConfig): void {
  writePrivateJsonFile(file, config);
}

/** The config with one more runner (a runner with the same token is replaced). */
export function addRunner(config: RunnerConfig, entry: RunnerEntry): RunnerConfig {
  return { ...config, runners: [...config.runners.filter((r) => r.token !== entry.token), entry] };
}

/** The config without the runner of this token. */
export function removeRunner(config: RunnerConfig, token: string): RunnerConfig {
  return { ...config, runners: config.runners.filter((r) => r.token !== token) };
}

/** A `--tag-list a,b` value -> trimmed, non-empty, unique tags. */
export function parseTagList(value: string | undefined): string[] {
  if (!value) return [];
  return [...new Set(value.split(',').map((t) => t.trim()).filter(Boolean))];
}

/**
 * The runner API base URL for a server URL, as GitLab Runner builds it: strip trailing slashes, add `/ci` unless
 * the URL already ends with it, then `/api/v1`. Throws for anything but http(s).
 */
export function ciApiBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`invalid URL "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`invalid URL "${url}": only http and https are supported`);
  let base = url.replace(/\/+$/, '');
  if (!base.endsWith('/ci')) base += '/ci';
  return `${base}/api/v1`;
}

/** A token shortened for display (first 8 characters). */
export function shortToken(token: string): string {
  return token.length > 8 ? `${token.slice(0, 8)}…` : token;
}
