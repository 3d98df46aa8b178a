/**
 * The one git command runner: git is spawned directly with an argument array (never a shell), with a clean
 * environment (no inherited GIT_* variables, no system or global config), a timeout on every call and typed errors.
 * Callers build arguments from literals; user values go in only as values (after `--` when they are paths).
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { GitError, GitTimeoutError } from './errors.js';
import { gitProcessStarted } from '../metrics.js';

/** The git executable (GANTRY_GIT overrides, for tests or unusual installs). */
export const GIT_BINARY = process.env.GANTRY_GIT || 'git';

/** Default timeout of a short git command. */
export const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT = 256 * 1024 * 1024;

/** Options of one git invocation. */
export interface GitRunOptions {
  /** The repository (`--git-dir`); omitted for commands that take their own path (init, clone). */
  gitDir?: string;
  /** Working directory (defaults to the process's). */
  cwd?: string;
  /** `-c key=value` settings placed before the subcommand. */
  config?: Record<string, string>;
  /** Extra environment variables (GIT_INDEX_FILE, GIT_AUTHOR_NAME, ...). */
  env?: Record<string, string>;
  /** Written to stdin, then stdin is closed. */
  input?: Buffer | string;
  /** Kill git after this long (default 60 s). */
  timeoutMs?: number;
  /** Fail when stdout grows beyond this many bytes (default 256 MiB). */
  maxOutput?: number;
  /** Exit codes that are answers rather than failures (e.g. [0, 1] for `merge-base --is-ancestor`). */
  okCodes?: number[];
}

/** What a finished git command produced. */
export interface GitResult {
  stdout: Buffer;
  stderr: string;
  exitCode: number;
}

/**
 * The environment git runs with: the daemon's environment without any GIT_* variable (a daemon started from a
 * git hook must not leak GIT_DIR into its repositories), no system or global config, never a terminal prompt, literal pathspecs.
 */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.GIT_CONFIG_GLOBAL = '/dev/null';
  env.GIT_TERMINAL_PROMPT = '0';
  env.LC_ALL = 'C';
  // Paths given after `--` are literal file names, never glob patterns or pathspec magic.
  env.GIT_LITERAL_PATHSPECS = '1';
  return { ...env, ...extra };
}

/** The full argument list: global options, then the subcommand's arguments. */
export function gitArgs(args: readonly string[], opts: Pick<GitRunOptions, 'gitDir' | 'config'> = {}): string[] {
  const out: string[] = [];
  if (opts.gitDir) out.push(`--git-dir=${opts.gitDir}`);
  for (const [k, v] of Object.entries(opts.config ?? {})) out.push('-c', `${k}=${v}`);
  return [...out, ...args];
}

/** Run git to completion and collect its output; throws GitError / GitTimeoutError. */
export function runGit(args: readonly string[], opts: GitRunOptions = {}): Promise<GitResult> {
  const full = gitArgs(args, opts);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxOutput = opts.maxOutput ?? DEFAULT_MAX_OUTPUT;
  const okCodes = opts.okCodes ?? [0];
  return new Promise((resolve, reject) => {
    const child = spawn(GIT_BINARY, full, {
      cwd: opts.cwd,
      env: gitEnv(opts.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = gitProcessStarted(args[0]);
    const chunks: Buffer[] = [];
    let size = 0;
    const errChunks: Buffer[] = [];
    let failure: Error | null = null;
    const timer = setTimeout(() => {
      failure = new GitTimeoutError(args, timeoutMs);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxOutput) {
        failure ??= new GitError(`git ${args[0]} output exceeds ${maxOutput} bytes`, args, null, '');
        child.kill('SIGKILL');
        return;
      }
      chunks.push(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      if (errChunks.length < 256) errChunks.push(c);
    });
    child.on('error', (e) => {
      exited();
      failure ??= new GitError(`could not run git: ${e.message}`, args, null, '');
    });
    // A command that exits before reading its input must not crash the daemon with EPIPE.
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => {
      exited();
      clearTimeout(timer);
      const stderr = Buffer.concat(errChunks).toString('utf8').trim();
      if (failure) return reject(failure);
      if (code === null || !okCodes.includes(code)) {
        const first = stderr.split('\n').find((l) => l.trim()) ?? `exit code ${code}`;
        return reject(new GitError(`git ${args[0]} failed: ${first}`, args, code, stderr));
      }
      resolve({ stdout: Buffer.concat(chunks), stderr, exitCode: code });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** Run git and return stdout as text without the trailing newline. */
export async function gitText(args: readonly string[], opts: GitRunOptions = {}): Promise<string> {
  const { stdout } = await runGit(args, opts);
  return stdout.toString('utf8').replace(/\n$/, '');
}

/** Options of a streaming git process. */
export interface GitSpawnOptions extends Pick<GitRunOptions, 'gitDir' | 'cwd' | 'config' | 'env'> {
  /** Kill the process after this long (default: 1 hour; streaming services move big packs). */
  timeoutMs?: number;
  stdio?: SpawnOptions['stdio'];
}

/** Start a long-running git process whose stdin/stdout the caller streams (upload-pack, receive-pack, archive). */
export function spawnGit(args: readonly string[], opts: GitSpawnOptions = {}): ChildProcess {
  const child = spawn(GIT_BINARY, gitArgs(args, opts), {
    cwd: opts.cwd,
    env: gitEnv(opts.env),
    stdio: opts.stdio ?? ['pipe', 'pipe', 'pipe'],
  });
  const exited = gitProcessStarted(args[0]);
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60 * 60 * 1000);
  timer.unref();
  child.on('error', exited);
  child.on('close', () => {
    exited();
    clearTimeout(timer);
  });
  return child;
}
