/** The environment of a build's processes and where its files go (builds dir layout, variables). */
import { join } from 'node:path';
import type { BuildPayload, BuildVariable } from './types.js';

/**
 * The project part of the build dir, from the repo URL's path (`http://host/group/project.git` -> `group/project`),
 * as GitLab Runner does; `project-<id>` when the URL has no usable path. Never climbs out (`..` segments dropped).
 */
export function projectDirName(repoUrl: string, projectId: number | undefined): string {
  let path = '';
  try {
    const u = new URL(repoUrl);
    if (u.host) path = decodeURIComponent(u.pathname);
  } catch {
    path = '';
  }
  const segments = path
    .replace(/\.git\/?$/, '')
    .split('/')
    .map((s) => s.replace(/[^\w.-]/g, '_'))
    .filter((s) => s !== '' && s !== '.' && s !== '..');
  return segments.length > 0 ? segments.join('/') : `project-${projectId ?? 0}`;
}

/** The dir name of a runner under the builds dir: its id, or the first 8 characters of its token. */
export function runnerDirName(runner: { id: number | null; token: string }): string {
  return runner.id !== null ? String(runner.id) : runner.token.slice(0, 8).replace(/[^\w-]/g, '_');
}

/** A repository URL without credentials, for logs and the trace. */
export function cleanUrl(repoUrl: string): string {
  try {
    const u = new URL(repoUrl);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return repoUrl.replace(/\/\/[^/@]*@/, '//');
  }
}

/** One file to write before the build runs (file variables). */
export interface VariableFile {
  path: string;
  content: string;
}

/**
 * The build's variables, in GitLab Runner's order: the runner's own defaults first, then the server's list (which
 * therefore overrides them; the last occurrence of a key wins). `file: true` variables are written to files in
 * `tmpDir` and the variable holds the file's path.
 */
export function buildVariables(build: BuildPayload, projectDir: string, tmpDir: string): { vars: Array<[string, string]>; files: VariableFile[] } {
  const vars: Array<[string, string]> = [
    ['CI', 'true'],
    ['CI_DEBUG_TRACE', 'false'],
    ['CI_BUILD_REF', build.sha],
    ['CI_BUILD_BEFORE_SHA', build.before_sha ?? '0'.repeat(40)],
    ['CI_BUILD_REF_NAME', build.ref],
    ['CI_BUILD_ID', String(build.id)],
    ['CI_BUILD_REPO', build.repo_url],
    ['CI_BUILD_TOKEN', build.token],
    ['CI_PROJECT_ID', String(build.project_id ?? '')],
    ['CI_PROJECT_DIR', projectDir],
    ['CI_SERVER', 'yes'],
    ['CI_SERVER_NAME', 'GitLab CI'],
    ['CI_SERVER_VERSION', ''],
    ['CI_SERVER_REVISION', ''],
    ['GITLAB_CI', 'true'],
  ];
  const files: VariableFile[] = [];
  for (const v of build.variables ?? []) {
    if (!isVariable(v)) continue;
    if (v.file) {
      const path = join(tmpDir, v.key.replace(/[^\w.-]/g, '_'));
      files.push({ path, content: v.value });
      vars.push([v.key, path]);
    } else {
      vars.push([v.key, String(v.value)]);
    }
  }
  return { vars, files };
}

/** Whether a payload variable has a usable key (an environment variable name) and a value. */
function isVariable(v: BuildVariable): boolean {
  return Boolean(v) && typeof v.key === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v.key) && v.value !== undefined && v.value !== null;
}

/** The last value of a key in a variable list. */
export function variable(vars: Array<[string, string]>, key: string): string | undefined {
  for (let i = vars.length - 1; i >= 0; i--) if (vars[i][0] === key) return vars[i][1];
  return undefined;
}

/**
 * The process environment of the build: the runner's own environment (without GANTRY_* settings, which may name
 * the runner's config and tokens) plus the build variables, the last occurrence of a key winning.
 */
export function processEnvironment(base: NodeJS.ProcessEnv, vars: Array<[string, string]>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!k.startsWith('GANTRY_') && v !== undefined) env[k] = v;
  for (const [k, v] of vars) env[k] = v;
  return env;
}
