/** End-to-end helpers: run the BUILT programs (bin/gantryd.js, bin/gantry.js) as real processes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const GANTRYD = join(ROOT, 'bin', 'gantryd.js');
const GANTRY = join(ROOT, 'bin', 'gantry.js');

const tmpDirs: string[] = [];

/** A new temporary directory, removed by cleanupTmp(). */
export function tmp(prefix = 'gantry-e2e-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tmpDirs.push(dir);
  return dir;
}

/** Remove every temporary directory made by tmp(). */
export function cleanupTmp(): void {
  for (const dir of tmpDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * An environment without the caller's GANTRY_* settings (so a developer's shell does not leak into tests), and with
 * the SSH server off: daemons of parallel tests would all want port 2222. A test that wants SSH passes --ssh-port 0.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GANTRY_')) env[k] = v;
  return { ...env, GANTRY_LOG_LEVEL: 'warn', GANTRY_SSH_PORT: 'off', ...extra };
}

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running gantryd process. */
export interface Daemon {
  proc: ChildProcess;
  url: string;
  /** Everything written to stdout / stderr so far. */
  stdout(): string;
  stderr(): string;
  exited: Promise<Exit>;
  /** Send a signal (SIGTERM by default) and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

const running = new Set<ChildProcess>();

/** Spawn gantryd with args; resolve once it printed `gantryd listening on <url>`, reject (with its output) if it exits first. */
export function startGantryd(args: string[], env: NodeJS.ProcessEnv = cleanEnv(), timeoutMs = 15_000, nodeArgs: string[] = []): Promise<Daemon> {
  const proc = spawn(process.execPath, [...nodeArgs, GANTRYD, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const exited = new Promise<Exit>((resolveExit) => proc.on('exit', (code, signal) => {
    running.delete(proc);
    resolveExit({ code, signal });
  }));
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`gantryd not ready within ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`));
    }, timeoutMs);
    const onData = () => {
      const m = /^gantryd listening on (\S+)$/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      proc.stdout!.off('data', onData);
      resolveStart({
        proc, url: m[1], exited, stdout: () => out, stderr: () => err,
        stop: (signal: NodeJS.Signals = 'SIGTERM') => { proc.kill(signal); return exited; },
      });
    };
    proc.stdout!.on('data', onData);
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`gantryd exited (${e.code ?? e.signal}) before it was ready\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

/** The result of a finished process. */
export interface RunResult extends Exit {
  stdout: string;
  stderr: string;
}

/** A built program of ours (bin/*.js) to completion under this Node (killed after timeoutMs). */
function runNode(script: string, args: string[], env: NodeJS.ProcessEnv, input?: string, timeoutMs = 20_000, cwd?: string): Promise<RunResult> {
  return runProgram(process.execPath, [script, ...args], { env, input, timeoutMs, cwd });
}

/**
 * Run any program to its end with exactly `env` (in `cwd`, with `input` on its stdin; installed or packaged programs
 * too): resolves once it exited and its output is read to the end, fails when it cannot start or after timeoutMs.
 */
export function runProgram(
  cmd: string, args: string[], opts: { cwd?: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return new Promise((resolveRun, reject) => {
    const proc = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    running.add(proc);
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    proc.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    proc.on('error', (e) => {
      clearTimeout(timer);
      running.delete(proc);
      reject(e);
    });
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(proc);
      resolveRun({ code, signal, stdout, stderr });
    });
    proc.stdin.on('error', () => undefined); // a program that exits without reading its input
    proc.stdin.end(opts.input ?? '');
  });
}

/** Start any long-running program in `cwd` with exactly `env`; its output is kept; stop() sends SIGTERM and waits (killAll() kills it). */
export function startProgram(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }) {
  const proc = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  let output = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => { output += d; });
  proc.stderr.setEncoding('utf8').on('data', (d: string) => { output += d; });
  const exited = new Promise<number | null>((resolveExit) => proc.on('exit', (code) => { running.delete(proc); resolveExit(code); }));
  return { proc, output: () => output, exited, stop: () => { proc.kill('SIGTERM'); return exited; } };
}

/** Run gantryd to completion (for start failures). */
export function runGantryd(args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Promise<RunResult> {
  return runNode(GANTRYD, args, env);
}

/** Run the real CLI (bin/gantry.js) with a config dir of its own (in `cwd`, a clone say; killed after timeoutMs). */
export function runCli(args: string[], opts: { configDir: string; env?: Record<string, string>; input?: string; cwd?: string; timeoutMs?: number }): Promise<RunResult> {
  return runNode(GANTRY, args, cleanEnv({ GANTRY_CONFIG_DIR: opts.configDir, ...opts.env }), opts.input, opts.timeoutMs, opts.cwd);
}

/** Poll `fn` every 250 ms until it returns a value (not undefined, false or null); after timeoutMs fail with `context()` in the message. */
export async function eventually<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 30_000, context: () => string = () => ''): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false && v !== null) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Kill every process these helpers started that is still running (afterAll safety net). */
export function killAll(): void {
  for (const proc of running) proc.kill('SIGKILL');
  running.clear();
}

/** A JSON API response. */
export interface ApiResult {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Headers;
}

/** Call `<url>/api/v3<path>` (or an absolute path starting with /-/) with an optional token and JSON body. */
export async function api(url: string, method: string, path: string, token?: string | null, body?: unknown): Promise<ApiResult> {
  const full = path.startsWith('/-/') ? `${url}${path}` : `${url}/api/v3${path}`;
  const res = await fetch(full, {
    method,
    headers: { ...(token ? { 'private-token': token } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Lines of a text that are not empty. */
export function lines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '');
}

const GANTRY_RUNNER = join(ROOT, 'bin', 'gantry-runner.js');

/** A registered gantry-runner running `run` (the real agent, bin/gantry-runner.js) with a config dir of its own. */
export interface RunnerProcess {
  proc: ChildProcess;
  /** The runner's id and token as the server handed them out at registration. */
  id: number;
  token: string;
  /** Everything the agent logged so far. */
  log(): string;
  exited: Promise<Exit>;
  /** Send a signal (SIGTERM by default: running builds finish first) and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * Register a shared runner at `url` with the registration token and start `gantry-runner run` on it (debug log; killed
 * by killAll() if the test does not stop it). `tags`: its tag list (it then takes builds with those tags, and untagged
 * ones only with `runUntagged`); `configDir` and `buildsDir`: where its config and builds go (new temporary folders
 * unless given).
 */
export async function startRunner(
  url: string, registrationToken: string,
  opts: { description: string; tags?: string[]; runUntagged?: boolean; concurrent?: number; configDir?: string; buildsDir?: string },
): Promise<RunnerProcess> {
  const env = cleanEnv({ GANTRY_CONFIG_DIR: opts.configDir ?? tmp('gantry-e2e-runner-') });
  const reg = await runNode(GANTRY_RUNNER, [
    'register', '--url', url, '--registration-token', registrationToken, '--description', opts.description, '--json',
    ...(opts.tags?.length ? ['--tag-list', opts.tags.join(',')] : []), ...(opts.runUntagged ? ['--run-untagged'] : []),
  ], env);
  if (reg.code !== 0) throw new Error(`gantry-runner register failed (${reg.code}): ${reg.stdout}\n${reg.stderr}`);
  const saved = JSON.parse(reg.stdout) as { id: number; token: string };
  const buildsDir = opts.buildsDir ?? tmp('gantry-e2e-builds-');
  const proc = spawn(process.execPath, [GANTRY_RUNNER, 'run', '--concurrent', String(opts.concurrent ?? 1), '--builds-dir', buildsDir, '--log-level', 'debug'], {
    env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  let log = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => { log += d; });
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => { log += d; });
  const exited = new Promise<Exit>((resolveExit) => proc.on('exit', (code, signal) => {
    running.delete(proc);
    resolveExit({ code, signal });
  }));
  return { proc, id: saved.id, token: saved.token, log: () => log, exited, stop: (signal: NodeJS.Signals = 'SIGTERM') => { proc.kill(signal); return exited; } };
}
