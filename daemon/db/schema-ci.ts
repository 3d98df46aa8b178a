/** Row types of the CI tables (migration 0005_ci.sql is the source of truth). */

/** A row of `pipelines`. */
export interface PipelineRow {
  id: number;
  projectId: number;
  ref: string | null;
  sha: string;
  beforeSha: string | null;
  tag: boolean;
  yamlErrors: string | null;
  status: string;
  userId: number | null;
  duration: number | null;
  startedAt: string | null;
  finishedAt: string | null;
  committedAt: string | null;
  /** The commit's message and author (0011_pipeline_commit.sql), for the hook payloads. */
  commitMessage: string | null;
  commitAuthorName: string | null;
  commitAuthorEmail: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A row of `runners`. */
export interface RunnerRow {
  id: number;
  tokenHash: string;
  description: string | null;
  name: string | null;
  version: string | null;
  revision: string | null;
  platform: string | null;
  architecture: string | null;
  active: boolean;
  isShared: boolean;
  locked: boolean;
  runUntagged: boolean;
  /** JSON array text. */
  tagList: string;
  contactedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A row of `commit_statuses`. */
export interface CommitStatusRow {
  id: number;
  type: 'build' | 'generic';
  projectId: number;
  pipelineId: number;
  name: string;
  stage: string | null;
  stageIdx: number;
  ref: string | null;
  tag: boolean;
  status: string;
  description: string | null;
  targetUrl: string | null;
  allowFailure: boolean;
  when: string;
  userId: number | null;
  runnerId: number | null;
  commands: string | null;
  /** JSON: the runner `options` (image, services, artifacts, cache, dependencies, after_script, environment). */
  options: string | null;
  /** JSON array of {key, value, public}. */
  yamlVariables: string | null;
  /** JSON array text. */
  tagList: string;
  environment: string | null;
  coverage: number | null;
  coverageRegex: string | null;
  tokenHash: string | null;
  /** The plain build token sealed with the server secret while the build runs (0028), for trace masking on any daemon. */
  tokenSealed: string | null;
  traceSize: number;
  artifactsFile: string | null;
  artifactsSize: number | null;
  artifactsExpireAt: string | null;
  erasedAt: string | null;
  erasedById: number | null;
  queuedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  createdAt: string;
  updatedAt: string;
}
