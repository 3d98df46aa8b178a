// .gitlab-ci.yml validation and expansion into jobs, following GitLab 8.13
// (lib/ci/gitlab_ci_yaml_processor.rb and lib/gitlab/ci/config/node/*): same keywords, same
// inheritance, the first error reported with GitLab's wording.
import {
  ConfigError,
  JOB_WHEN,
  arrayOfStrings,
  artifactsEntry,
  cacheEntry,
  checkAllowedKeys,
  commandsEntry,
  coverageEntry,
  environmentEntry,
  fail,
  get,
  isArrayOfStrings,
  isMap,
  keyString,
  refPolicyEntry,
  stringEntry,
  variablesEntry,
  type YamlMap,
} from './config-entries.js';
import type {
  CiArtifacts,
  CiBuildOptions,
  CiCache,
  CiConfig,
  CiEnvironment,
  CiJob,
  CiWhen,
  ParseCiConfigResult,
} from './config-types.js';
import { loadYaml } from './yaml-load.js';

export type * from './config-types.js';
export { parseDuration, type ParsedDuration } from './duration.js';
export { jobMatchesRef, matchRefPattern, type PipelineSource, type RefContext, type RefFilters } from './refs.js';

/** Stages used when the file sets neither `stages` nor `types`. */
export const DEFAULT_STAGES: readonly string[] = ['build', 'test', 'deploy'];
/** Stage of a job that sets neither `stage` nor `type`. */
export const DEFAULT_STAGE = 'test';

const GLOBAL_KEYS = new Set(['before_script', 'image', 'services', 'after_script', 'variables', 'stages', 'types', 'cache']);
const JOB_KEYS = new Set([
  'tags', 'script', 'only', 'except', 'type', 'image', 'services', 'allow_failure', 'stage', 'when',
  'artifacts', 'cache', 'dependencies', 'before_script', 'after_script', 'variables', 'environment',
  'coverage',
]);

interface GlobalEntries {
  beforeScript?: string[];
  image?: string;
  services?: string[];
  afterScript?: string[];
  variables: [string, string][];
  stages: string[];
  cache?: CiCache;
}

/** A job after structural validation, before the cross-job (logical) checks. */
interface JobEntries {
  name: string;
  beforeScript?: string[];
  script: string[];
  stage: string;
  afterScript?: string[];
  cache?: CiCache;
  image?: string;
  services?: string[];
  only?: string[];
  except?: string[];
  variables?: [string, string][];
  artifacts?: CiArtifacts;
  environment?: CiEnvironment;
  coverage?: string;
  tags?: string[];
  allowFailure?: boolean;
  when?: CiWhen;
  dependencies?: string[];
}

/** Validates .gitlab-ci.yml text and expands it into jobs; never throws. */
export function parseCiConfig(text: string): ParseCiConfigResult {
  const loaded = loadYaml(typeof text === 'string' ? text : '');
  if (!loaded.ok) return { ok: false, error: loaded.error };
  if (!isMap(loaded.value)) return { ok: false, error: 'Invalid configuration format' };
  try {
    return { ok: true, config: buildConfig(loaded.value) };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, error: err.message };
    return { ok: false, error: 'Undefined error' };
  }
}

function buildConfig(root: YamlMap): CiConfig {
  const global = globalEntries(root);
  const jobMaps = [...root].filter(([k]) => !(typeof k === 'string' && GLOBAL_KEYS.has(k)));

  if (!jobMaps.some(([k]) => !keyString(k).startsWith('.'))) fail('jobs', 'config should contain at least one visible job');
  const jobs: JobEntries[] = [];
  for (const [key, value] of jobMaps) {
    if (keyString(key).startsWith('.')) hiddenJob(key, value);
    else jobs.push(jobEntries(key, value));
  }

  for (const job of jobs) checkJobLogic(job, jobs, global.stages);
  return { stages: global.stages, jobs: jobs.map((job) => expandJob(job, global)) };
}

function globalEntries(root: YamlMap): GlobalEntries {
  const out: GlobalEntries = { variables: [], stages: [...DEFAULT_STAGES] };
  const beforeScript = get(root, 'before_script');
  if (beforeScript !== undefined) out.beforeScript = arrayOfStrings(beforeScript, 'before_script');
  const image = get(root, 'image');
  if (image !== undefined) out.image = stringEntry(image, 'image');
  const services = get(root, 'services');
  if (services !== undefined) out.services = arrayOfStrings(services, 'services');
  const afterScript = get(root, 'after_script');
  if (afterScript !== undefined) out.afterScript = arrayOfStrings(afterScript, 'after_script');
  const variables = get(root, 'variables');
  if (variables !== undefined) out.variables = variablesEntry(variables, 'variables');
  const stages = get(root, 'stages');
  const types = get(root, 'types');
  if (stages !== undefined) out.stages = arrayOfStrings(stages, 'stages');
  if (types !== undefined) {
    const t = arrayOfStrings(types, 'types');
    if (stages === undefined) out.stages = t;
  }
  const cache = get(root, 'cache');
  if (cache !== undefined) out.cache = cacheEntry(cache, 'cache');
  return out;
}

function hiddenJob(key: unknown, value: unknown): void {
  const location = `jobs:${keyString(key)}`;
  const config = value ?? new Map();
  if (!isMap(config)) fail(location, 'config should be a hash');
  if (config.size === 0) fail(location, "config can't be blank");
}

function jobEntries(key: unknown, value: unknown): JobEntries {
  const name = keyString(key);
  const location = `jobs:${name === '' ? 'job' : name}`;
  // Ruby: `config || {}`, so a job given as nil or false is an empty hash.
  const config = value === null || value === undefined || value === false ? new Map() : value;
  if (!isMap(config)) fail(location, 'config should be a hash');
  checkAllowedKeys(config, JOB_KEYS, location);
  if (config.size === 0) fail(location, "config can't be blank");
  if (name.trim() === '') fail(location, "name can't be blank");
  if (typeof key !== 'string') fail(location, 'name should be a symbol');

  const job: JobEntries = { name, script: [], stage: DEFAULT_STAGE };
  const tags = get(config, 'tags');
  if (tags !== undefined) {
    if (!isArrayOfStrings(tags)) fail(location, 'tags should be an array of strings');
    job.tags = tags;
  }
  const allowFailure = get(config, 'allow_failure');
  if (allowFailure !== undefined) {
    if (typeof allowFailure !== 'boolean') fail(location, 'allow failure should be a boolean value');
    job.allowFailure = allowFailure;
  }
  const when = get(config, 'when');
  if (when !== undefined) {
    if (!JOB_WHEN.includes(when as CiWhen)) fail(location, 'when should be on_success, on_failure, always or manual');
    job.when = when as CiWhen;
  }
  const dependencies = get(config, 'dependencies');
  if (dependencies !== undefined) {
    if (!isArrayOfStrings(dependencies)) fail(location, 'dependencies should be an array of strings');
    job.dependencies = dependencies;
  }
  // GitLab 8.13 let a job without script through (8.10 and 8.14+ did not); Gantry requires it.
  const script = get(config, 'script');
  if (script === undefined || script === '' || (Array.isArray(script) && script.length === 0)) {
    fail(location, "script can't be blank");
  }

  const beforeScript = get(config, 'before_script');
  if (beforeScript !== undefined) job.beforeScript = arrayOfStrings(beforeScript, `${location}:before_script`);
  job.script = commandsEntry(script, `${location}:script`);
  const stage = get(config, 'stage');
  if (stage !== undefined) job.stage = stringEntry(stage, `${location}:stage`);
  const type = get(config, 'type');
  if (type !== undefined) {
    const t = stringEntry(type, `${location}:type`);
    if (stage === undefined) job.stage = t;
  }
  const afterScript = get(config, 'after_script');
  if (afterScript !== undefined) job.afterScript = arrayOfStrings(afterScript, `${location}:after_script`);
  const cache = get(config, 'cache');
  if (cache !== undefined) job.cache = cacheEntry(cache, `${location}:cache`);
  const image = get(config, 'image');
  if (image !== undefined) job.image = stringEntry(image, `${location}:image`);
  const services = get(config, 'services');
  if (services !== undefined) job.services = arrayOfStrings(services, `${location}:services`);
  const only = get(config, 'only');
  if (only !== undefined) job.only = refPolicyEntry(only, `${location}:only`);
  const except = get(config, 'except');
  if (except !== undefined) job.except = refPolicyEntry(except, `${location}:except`);
  const variables = get(config, 'variables');
  if (variables !== undefined) job.variables = variablesEntry(variables, `${location}:variables`);
  const artifacts = get(config, 'artifacts');
  if (artifacts !== undefined) job.artifacts = artifactsEntry(artifacts, `${location}:artifacts`);
  const environment = get(config, 'environment');
  if (environment !== undefined) job.environment = environmentEntry(environment, `${location}:environment`);
  const coverage = get(config, 'coverage');
  if (coverage !== undefined) job.coverage = coverageEntry(coverage, `${location}:coverage`);
  return job;
}

/** Cross-job checks of GitLab 8.13's processor (messages are not lower-cased). */
function checkJobLogic(job: JobEntries, jobs: JobEntries[], stages: string[]): void {
  const stageIdx = stages.indexOf(job.stage);
  if (stageIdx < 0) throw new ConfigError(`${job.name} job: stage parameter should be ${stages.join(', ')}`);

  for (const dep of job.dependencies ?? []) {
    const other = jobs.find((j) => j.name === dep);
    if (!other) throw new ConfigError(`${job.name} job: undefined dependency: ${dep}`);
    if (!(stages.indexOf(other.stage) < stageIdx)) {
      throw new ConfigError(`${job.name} job: dependency ${dep} is not defined in prior stages`);
    }
  }

  const onStop = job.environment?.on_stop;
  if (job.environment && onStop !== undefined) {
    const prefix = `${job.name} job: on_stop job ${onStop}`;
    const stopJob = jobs.find((j) => j.name === onStop);
    if (!stopJob) throw new ConfigError(`${prefix} is not defined`);
    if (!stopJob.environment) throw new ConfigError(`${prefix} does not have environment defined`);
    if (stopJob.environment.name !== job.environment.name) throw new ConfigError(`${prefix} have different environment name`);
    if (stopJob.environment.action !== 'stop') throw new ConfigError(`${prefix} needs to have action stop defined`);
  }
}

function expandJob(job: JobEntries, global: GlobalEntries): CiJob {
  const beforeScript = job.beforeScript ?? global.beforeScript;
  const afterScript = job.afterScript ?? global.afterScript;
  const image = job.image ?? global.image;
  const services = job.services ?? global.services;
  const cache = job.cache ?? global.cache;

  const merged = new Map<string, string>(global.variables);
  for (const [k, v] of job.variables ?? []) merged.set(k, v);

  const options: CiBuildOptions = {};
  if (image !== undefined) options.image = image;
  if (services !== undefined) options.services = services;
  if (job.artifacts !== undefined) options.artifacts = job.artifacts;
  if (cache !== undefined) options.cache = cache;
  if (job.dependencies !== undefined) options.dependencies = job.dependencies;
  if (afterScript !== undefined) options.after_script = afterScript;
  if (job.environment !== undefined) options.environment = job.environment;

  const out: CiJob = {
    name: job.name,
    stage: job.stage,
    stageIdx: global.stages.indexOf(job.stage),
    commands: [...(beforeScript ?? []), ...job.script].join('\n'),
    script: job.script,
    variables: [...merged].map(([key, value]) => ({ key, value, public: true })),
    tags: job.tags ?? [],
    allowFailure: job.allowFailure ?? false,
    when: job.when ?? 'on_success',
    options,
  };
  if (beforeScript !== undefined) out.beforeScript = beforeScript;
  if (afterScript !== undefined) out.afterScript = afterScript;
  if (image !== undefined) out.image = image;
  if (services !== undefined) out.services = services;
  if (cache !== undefined) out.cache = cache;
  if (job.only !== undefined) out.only = job.only;
  if (job.except !== undefined) out.except = job.except;
  if (job.artifacts !== undefined) out.artifacts = job.artifacts;
  if (job.dependencies !== undefined) out.dependencies = job.dependencies;
  if (job.environment !== undefined) out.environment = job.environment;
  if (job.coverage !== undefined) out.coverageRegex = job.coverage;
  return out;
}
