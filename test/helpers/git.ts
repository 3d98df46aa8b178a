/** Test helpers for the real git client: run git with a clean environment and a fixed identity, temp work trees. */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Identity passed to every client command (CI may have a global identity; tests do not rely on it). */
export const IDENTITY = ['-c', 'user.name=Test User', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=master'];

/** The result of a git client command. */
export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Environment of the test git client: no global/system config, never a prompt, no askpass. */
export function clientEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') && k !== 'SSH_ASKPASS') env[k] = v;
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...extra };
}

/** Run the git client (with IDENTITY) in `cwd`; never throws, returns code and output. */
export function git(cwd: string, args: string[], opts: { env?: Record<string, string>; input?: string | Buffer } = {}): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...IDENTITY, ...args], { cwd, env: clientEnv(opts.env) });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.stdin.on('error', () => undefined); // git may exit without reading stdin
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
    child.stdin.end(opts.input ?? '');
  });
}

/** Run git and fail the test with its stderr when it does not exit 0. */
export async function gitOk(cwd: string, args: string[], opts: { env?: Record<string, string>; input?: string | Buffer } = {}): Promise<string> {
  const r = await git(cwd, args, opts);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout.trim();
}

/** A new temporary directory. */
export const tempDir = (prefix = 'gantry-git-') => mkdtempSync(join(tmpdir(), prefix));

/** A new work tree with `git init`. */
export async function workTree(): Promise<string> {
  const dir = tempDir('gantry-work-');
  await gitOk(dir, ['init', '-q', '.']);
  return dir;
}

/** Write files (path -> content) into a work tree, add them and commit; returns the new commit sha. */
export async function commitFiles(dir: string, files: Record<string, string | Buffer>, message = 'update'): Promise<string> {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  await gitOk(dir, ['add', '-A']);
  await gitOk(dir, ['commit', '-q', '-m', message]);
  return gitOk(dir, ['rev-parse', 'HEAD']);
}

/** An http URL with basic credentials for a repository on a listening server. */
export function repoUrl(base: string, fullPath: string, cred?: { username: string; password: string }): string {
  const u = new URL(`${base}/${fullPath}.git`);
  if (cred) {
    u.username = encodeURIComponent(cred.username);
    u.password = encodeURIComponent(cred.password);
  }
  return u.toString();
}
