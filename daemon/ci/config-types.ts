// The validated form of a .gitlab-ci.yml (GitLab 8.13 keywords), as the pipeline service uses it.

/** When a job runs relative to the result of earlier stages. */
export type CiWhen = 'on_success' | 'on_failure' | 'always' | 'manual';
/** When the runner uploads artifacts. */
export type ArtifactsWhen = 'on_success' | 'on_failure' | 'always';

/** One build variable as sent to the runner. */
export interface CiVariable {
  key: string;
  value: string;
  public: boolean;
}

/** cache: as written (entries left out when not given). */
export interface CiCache {
  key?: string;
  untracked?: boolean;
  paths?: string[];
}

/** artifacts: as written; `expire_in` is handed to the runner, which sends it back on upload. */
export interface CiArtifacts {
  name?: string;
  untracked?: boolean;
  paths?: string[];
  when?: ArtifactsWhen;
  expire_in?: string;
}

/** environment: a plain name becomes `{name, action: 'start'}`, as in 8.13. */
export interface CiEnvironment {
  name: string;
  url?: string;
  action?: 'start' | 'stop';
  on_stop?: string;
}

/** The build `options` GitLab 8.13 stored and sent to the runner (absent entries left out). */
export interface CiBuildOptions {
  image?: string;
  services?: string[];
  artifacts?: CiArtifacts;
  cache?: CiCache;
  dependencies?: string[];
  after_script?: string[];
  environment?: CiEnvironment;
}

/** One visible job, with global defaults applied. */
export interface CiJob {
  name: string;
  stage: string;
  /** Index of `stage` in CiConfig.stages. */
  stageIdx: number;
  /** before_script (job's, else global) followed by script, joined with "\n" (runner `commands`). */
  commands: string;
  script: string[];
  /** Effective before_script (job's, else global), undefined when neither is set. */
  beforeScript?: string[];
  /** Effective after_script (job's, else global). */
  afterScript?: string[];
  /** Global variables merged with the job's (job wins per key), as yaml_variables. */
  variables: CiVariable[];
  image?: string;
  services?: string[];
  cache?: CiCache;
  only?: string[];
  except?: string[];
  /** Runner tags the job needs ([] when none). */
  tags: string[];
  allowFailure: boolean;
  when: CiWhen;
  artifacts?: CiArtifacts;
  /** Jobs of earlier stages whose artifacts to fetch; undefined = all of them, [] = none. */
  dependencies?: string[];
  environment?: CiEnvironment;
  /** Coverage regex literal as written (`/.../`), when the job sets `coverage`. */
  coverageRegex?: string;
  /** What to store as the build's options and send to the runner. */
  options: CiBuildOptions;
}

/** A valid .gitlab-ci.yml. */
export interface CiConfig {
  /** Stage names in order (default build, test, deploy). */
  stages: string[];
  /** Visible jobs in file order. */
  jobs: CiJob[];
}

/** Result of parseCiConfig: the config or the first error, GitLab-style. */
export type ParseCiConfigResult = { ok: true; config: CiConfig } | { ok: false; error: string };
