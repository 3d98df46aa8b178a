/**
 * The git clone the CLI runs in (`gantry mr create` and `mr checkout`, as `gh pr` works in a clone): the current
 * branch, the remote that points at the Gantry server, pushing and fetching. Every call is the git client run with an
 * argument array (never a shell line), in io.cwd. node:child_process is imported only when git is really run.
 */
import { CliError } from './errors.js';
import type { IO } from './io.js';

/** How one git command ended. */
export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of runGit. */
export interface GitOptions {
  /** Extra environment (GIT_CONFIG_* for a one-off header, say). */
  env?: Record<string, string>;
  /** Copy git's stderr (progress, hints) to the CLI's stderr as it comes. */
  showProgress?: boolean;
}

/** Run `git <args>` in the clone; never throws for a non-zero exit (a missing git binary is a CliError). */
export async function runGit(io: IO, args: string[], opts: GitOptions = {}): Promise<GitResult> {
  const { spawn } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: io.cwd ?? process.cwd(),
      env: { ...io.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      err.push(c);
      if (opts.showProgress) io.err(c.toString());
    });
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'ENOENT' ? new CliError('git is not installed (or not on PATH)', 'install git, or run this outside a clone with the project and branches named') : e));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
  });
}

/** Run git and throw a CliError (git's own message, plus `hint`) when it fails; returns stdout trimmed. */
export async function gitOrFail(io: IO, args: string[], hint: string | null = null, opts: GitOptions = {}): Promise<string> {
  const r = await runGit(io, args, opts);
  if (r.code !== 0) {
    throw new CliError(`git ${args[0]} failed: ${gitFailureReason(r.stderr) ?? `exit code ${r.code}`}`, hint);
  }
  return r.stdout.trim();
}

/**
 * Why git failed, from its stderr: its `fatal:` (or `error:`) line, with the line of ssh or the network that caused it
 * (`Permission denied (publickey)`, a refused connection...), never the last line of git's advice ("and the repository
 * exists.").
 */
export function gitFailureReason(stderr: string): string | null {
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !/^hint:/.test(l));
  const fatal = lines.find((l) => /^(fatal|error):/.test(l));
  const cause = lines.find((l) => /Permission denied|Host key verification failed|Connection refused|Connection timed out|Could not resolve hostname|Connection closed/i.test(l));
  const main = fatal?.replace(/^(fatal|error): /, '') ?? lines[lines.length - 1];
  if (!main) return null;
  return cause && cause !== fatal ? `${main} (${cause.replace(/^(fatal|error): /, '')})` : main;
}

/** Whether io.cwd is inside a git work tree. */
export async function insideClone(io: IO): Promise<boolean> {
  try {
    const r = await runGit(io, ['rev-parse', '--is-inside-work-tree']);
    return r.code === 0 && r.stdout.trim() === 'true';
  } catch {
    return false;
  }
}

/** The checked-out branch, or null when HEAD is detached (or there is no clone). */
export async function currentBranch(io: IO): Promise<string | null> {
  const r = await runGit(io, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null;
}

/** The commit a local branch points at, or null when there is no such local branch. */
export async function localBranchHead(io: IO, branch: string): Promise<string | null> {
  const r = await runGit(io, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** A git config value, or null when unset. */
export async function gitConfig(io: IO, key: string): Promise<string | null> {
  const r = await runGit(io, ['config', '--get', key]);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** A remote of the clone and its fetch URL. */
export interface Remote {
  name: string;
  url: string;
}

/** The remotes of the clone (fetch URLs), in `git remote` order. */
export async function remotes(io: IO): Promise<Remote[]> {
  const r = await runGit(io, ['remote', '-v']);
  if (r.code !== 0) return [];
  const found: Remote[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^(\S+)\t(\S+) \(fetch\)$/.exec(line);
    if (m) found.push({ name: m[1]!, url: m[2]! });
  }
  return found;
}

/**
 * The `namespace/project` a remote URL names when it points at the Gantry server at `serverUrl` (HTTP: same scheme
 * host and port, under the server's path; SSH `git@host:ns/p.git` or `ssh://host/ns/p.git`: same host name); else null.
 */
export function remoteProjectPath(remoteUrl: string, serverUrl: string): string | null {
  let server: URL;
  try {
    server = new URL(serverUrl);
  } catch {
    return null;
  }
  const clean = (path: string) => {
    const p = decodeURIComponent(path).replace(/^\/+/, '').replace(/\/+$/, '').replace(/\.git$/, '');
    return /^[^/]+(\/[^/]+)+$/.test(p) ? p : null;
  };
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/.exec(remoteUrl);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(remoteUrl)) return scp[1]!.toLowerCase() === server.hostname.toLowerCase() ? clean(scp[2]!) : null;
  let remote: URL;
  try {
    remote = new URL(remoteUrl);
  } catch {
    return null;
  }
  if (remote.protocol === 'ssh:') return remote.hostname.toLowerCase() === server.hostname.toLowerCase() ? clean(remote.pathname) : null;
  if (remote.protocol !== server.protocol || remote.host.toLowerCase() !== server.host.toLowerCase()) return null;
  const base = server.pathname.replace(/\/+$/, '');
  if (base && !remote.pathname.startsWith(`${base}/`)) return null;
  return clean(remote.pathname.slice(base.length));
}

/** A remote of the clone that points at a project on the Gantry server. */
export interface ServerRemote extends Remote {
  /** `namespace/project` on the server. */
  project: string;
}

/**
 * The remotes that point at projects on the server, best first: the current branch's upstream remote, then
 * `origin`, then the others in `git remote` order.
 */
export async function serverRemotes(io: IO, serverUrl: string): Promise<ServerRemote[]> {
  const all = await remotes(io);
  const branch = await currentBranch(io);
  const upstream = branch ? await gitConfig(io, `branch.${branch}.remote`) : null;
  const rank = (r: Remote) => (r.name === upstream ? 0 : r.name === 'origin' ? 1 : 2);
  return all
    .map((r) => ({ ...r, project: remoteProjectPath(r.url, serverUrl) }))
    .filter((r): r is ServerRemote => r.project !== null)
    .sort((a, b) => rank(a) - rank(b));
}

/**
 * Environment that makes git send the API token as HTTP basic credentials to `url` (the server accepts any user name
 * with a private or personal token, and `oauth2` with an OAuth token, as GitLab), through GIT_CONFIG_* so the token
 * never appears in a process's arguments.
 */
export function tokenAuthEnv(url: string, token: string, oauth = false): Record<string, string> {
  const basic = Buffer.from(`${oauth ? 'oauth2' : 'gantry'}:${token}`).toString('base64');
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: `http.${url}.extraHeader`, GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
}
