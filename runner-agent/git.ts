/** Getting a build's sources with the host's git, as GitLab Runner's shell executor does (clone, fetch or none). */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ProcessResult } from './process.js';
import type { BuildPayload } from './types.js';

/** How to get the sources. */
export type GitStrategy = 'clone' | 'fetch' | 'none';

/** The strategy from GIT_STRATEGY, else the build's allow_git_fetch (fetch when true). */
export function gitStrategy(build: BuildPayload, value: string | undefined): GitStrategy {
  if (value === 'clone' || value === 'fetch' || value === 'none') return value;
  return build.allow_git_fetch ? 'fetch' : 'clone';
}

/** GIT_DEPTH as a positive integer, or null. */
export function gitDepth(value: string | undefined): number | null {
  const n = Number(value);
  return value && Number.isInteger(n) && n > 0 ? n : null;
}

/** What getSources needs from the build it runs in. */
export interface SourcesHost {
  /** Run git with these arguments in `cwd`, output into the trace. */
  git(args: string[], cwd: string): Promise<ProcessResult>;
  /** Write a runner line into the trace. */
  notice(text: string): void;
}

/** Options of getSources. */
export interface SourcesOptions {
  strategy: GitStrategy;
  depth: number | null;
  submodules: string | undefined;
}

const ok = (r: ProcessResult) => r.code === 0 && !r.error;

/** Check out the build's sha (detached) in `dir`; returns false (after saying why in the trace) when it failed. */
export async function getSources(host: SourcesHost, build: BuildPayload, dir: string, options: SourcesOptions): Promise<boolean> {
  const short = build.sha.slice(0, 8);
  if (options.strategy === 'none') {
    host.notice('Skipping Git repository setup\n');
    mkdirSync(dir, { recursive: true });
    return true;
  }
  let fetched = false;
  if (options.strategy === 'fetch' && existsSync(join(dir, '.git'))) {
    host.notice(`Fetching changes...\n`);
    fetched = await fetchInto(host, build, dir, options.depth);
    if (!fetched) host.notice('Fetching failed; cloning the repository again\n');
  }
  if (!fetched) {
    host.notice('Cloning repository...\n');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dirname(dir), { recursive: true });
    const args = ['clone', '--no-checkout'];
    if (options.depth) args.push('--depth', String(options.depth), '--branch', build.ref);
    args.push('--', build.repo_url, dir);
    if (!ok(await host.git(args, dirname(dir)))) return false;
  }
  host.notice(`Checking out ${short} as ${build.ref}...\n`);
  if (!ok(await host.git(['checkout', '-f', '-q', build.sha], dir))) return false;
  if (!ok(await host.git(['clean', '-ffdx', '-q'], dir))) return false;
  if (options.submodules === 'normal' || options.submodules === 'recursive') {
    const recursive = options.submodules === 'recursive' ? ['--recursive'] : [];
    host.notice('Updating/initializing submodules...\n');
    if (!ok(await host.git(['submodule', 'sync', ...recursive], dir))) return false;
    if (!ok(await host.git(['submodule', 'update', '--init', ...recursive], dir))) return false;
  } else host.notice('Skipping Git submodules setup\n');
  return true;
}

/** Update an existing checkout: clean it, point origin at the build's URL (new token) and fetch. */
async function fetchInto(host: SourcesHost, build: BuildPayload, dir: string, depth: number | null): Promise<boolean> {
  rmSync(join(dir, '.git', 'index.lock'), { force: true });
  rmSync(join(dir, '.git', 'shallow.lock'), { force: true });
  if (!ok(await host.git(['config', 'fetch.recurseSubmodules', 'false'], dir))) return false;
  if (!ok(await host.git(['clean', '-ffdx', '-q'], dir))) return false;
  await host.git(['reset', '--hard', '-q'], dir); // fails harmlessly in a checkout without a HEAD
  if (!ok(await host.git(['remote', 'set-url', 'origin', build.repo_url], dir))) return false;
  const refspecs = depth
    ? [build.tag ? `+refs/tags/${build.ref}:refs/tags/${build.ref}` : `+refs/heads/${build.ref}:refs/remotes/origin/${build.ref}`]
    : ['+refs/heads/*:refs/remotes/origin/*', '+refs/tags/*:refs/tags/*'];
  const args = ['fetch', ...(depth ? ['--depth', String(depth)] : []), 'origin', '--prune', ...refspecs];
  return ok(await host.git(args, dir));
}
