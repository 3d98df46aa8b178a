/** The shapes of the runner API v1 (GitLab 8.x / Runner 1.x) as the agent reads them. */

/** One variable of a build payload; `file: true` means the value is written to a file and the variable holds its path. */
export interface BuildVariable {
  key: string;
  value: string;
  public?: boolean;
  file?: boolean;
}

/** `options.artifacts` of a build: what to upload and when. */
export interface ArtifactsOptions {
  paths?: string[];
  untracked?: boolean;
  name?: string;
  when?: string;
  expire_in?: string;
}

/** `options` of a build (the job's YAML after processing); the shell executor reads only these keys. */
export interface BuildOptions {
  artifacts?: ArtifactsOptions | null;
  dependencies?: string[] | null;
  after_script?: string[] | null;
  [key: string]: unknown;
}

/** An earlier build of the same pipeline whose artifacts this build may download. */
export interface DependencyBuild {
  id: number;
  token: string;
  name: string;
  stage?: string;
  artifacts_file?: { filename: string; size: number } | null;
}

/** The 201 body of POST /ci/api/v1/builds/register. */
export interface BuildPayload {
  id: number;
  token: string;
  repo_url: string;
  sha: string;
  ref: string;
  commands: string;
  name?: string;
  stage?: string;
  tag?: boolean | null;
  project_id?: number;
  before_sha?: string;
  allow_git_fetch?: boolean;
  timeout?: number;
  variables?: BuildVariable[];
  options?: BuildOptions | null;
  depends_on_builds?: DependencyBuild[];
}

/** The final (or intermediate) state the runner reports with PUT /builds/:id. */
export type BuildState = 'running' | 'success' | 'failed';
