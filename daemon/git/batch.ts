/**
 * Long-lived `git cat-file --batch` / `--batch-check` processes, one pair per repository, kept in a small LRU and
 * closed when idle, so hot reads (blobs, trees, commits) cost a pipe round trip instead of a process start.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Socket } from 'node:net';
import { GIT_BINARY, gitArgs, gitEnv, runGit } from './command.js';
import { gitProcessStarted } from '../metrics.js';
import { GitError, GitTimeoutError } from './errors.js';

/** An object's id, type and size. */
export interface ObjectHeader {
  sha: string;
  type: 'blob' | 'tree' | 'commit' | 'tag';
  size: number;
}

/** An object with its content. */
export interface RawObject extends ObjectHeader {
  content: Buffer;
}

interface Pending {
  name: string;
  resolve(v: RawObject | ObjectHeader | null): void;
  reject(e: Error): void;
}

const HEADER = /^([0-9a-f]{40}|[0-9a-f]{64}) (blob|tree|commit|tag) (\d+)$/;
const REQUEST_TIMEOUT_MS = 30_000;
const IDLE_MS = 60_000;
const MAX_PROCESSES = 16;

/** One `git cat-file --batch[-check]` process answering requests in order. */
class CatFileProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly queue: Pending[] = [];
  private head: Buffer = Buffer.alloc(0);
  private body: { header: ObjectHeader; buf: Buffer; filled: number } | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private requestTimer: NodeJS.Timeout | null = null;
  closed = false;

  constructor(
    readonly gitDir: string,
    private readonly withContent: boolean,
    private readonly onClosed: (p: CatFileProcess) => void,
  ) {
    const args = ['cat-file', withContent ? '--batch' : '--batch-check'];
    this.child = spawn(GIT_BINARY, gitArgs(args, { gitDir }), { env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = gitProcessStarted(args[0]);
    this.child.on('error', exited);
    this.child.on('close', exited);
    this.child.stdout.on('data', (c: Buffer) => this.onData(c));
    this.child.stderr.resume();
    this.child.stdin.on('error', () => undefined);
    this.child.on('error', (e) => this.fail(new GitError(`could not run git cat-file: ${e.message}`, args, null, '')));
    this.child.on('close', (code) => this.fail(new GitError(`git cat-file exited (${code})`, args, code, '')));
    this.setRef(false);
    this.armIdle();
  }

  /** Ask for one object by any name git accepts (sha, ref, `rev:path`); null when it does not exist. */
  request(name: string): Promise<RawObject | ObjectHeader | null> {
    if (this.closed) return Promise.reject(new GitError('git cat-file is closed', ['cat-file'], null, ''));
    if (/[\n\r\0]/.test(name)) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.queue.push({ name, resolve, reject });
      if (this.queue.length === 1) this.startRequestTimer();
      this.setRef(true);
      if (this.idleTimer) clearTimeout(this.idleTimer);
      this.child.stdin.write(`${name}\n`);
    });
  }

  /** Stop the process; pending requests fail. */
  close(): void {
    if (this.closed) return;
    this.child.stdin.end();
    this.child.kill();
    this.fail(new GitError('git cat-file closed', ['cat-file'], null, ''));
  }

  private fail(e: Error): void {
    if (!this.closed) {
      this.closed = true;
      if (this.idleTimer) clearTimeout(this.idleTimer);
      if (this.requestTimer) clearTimeout(this.requestTimer);
      if (this.child.exitCode === null) this.child.kill();
      this.onClosed(this);
    }
    for (const p of this.queue.splice(0)) p.reject(e);
  }

  private setRef(active: boolean): void {
    const m = active ? 'ref' : 'unref';
    this.child[m]();
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) (s as unknown as Socket)[m]?.();
  }

  private armIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close(), IDLE_MS);
    this.idleTimer.unref();
  }

  private startRequestTimer(): void {
    if (this.requestTimer) clearTimeout(this.requestTimer);
    this.requestTimer = setTimeout(() => this.fail(new GitTimeoutError(['cat-file'], REQUEST_TIMEOUT_MS)), REQUEST_TIMEOUT_MS);
    this.requestTimer.unref();
  }

  private settle(v: RawObject | ObjectHeader | null): void {
    const p = this.queue.shift();
    if (this.requestTimer) clearTimeout(this.requestTimer);
    this.requestTimer = null;
    if (this.queue.length) this.startRequestTimer();
    else {
      this.setRef(false);
      this.armIdle();
    }
    p?.resolve(v);
  }

  private onData(chunk: Buffer): void {
    let off = 0;
    while (off < chunk.length) {
      if (this.body) {
        const b = this.body;
        const take = Math.min(b.buf.length - b.filled, chunk.length - off);
        chunk.copy(b.buf, b.filled, off, off + take);
        b.filled += take;
        off += take;
        if (b.filled === b.buf.length) {
          this.body = null;
          this.settle({ ...b.header, content: b.buf.subarray(0, b.header.size) });
        }
        continue;
      }
      const nl = chunk.indexOf(0x0a, off);
      if (nl < 0) {
        this.head = Buffer.concat([this.head, chunk.subarray(off)]);
        return;
      }
      const line = Buffer.concat([this.head, chunk.subarray(off, nl)]).toString('utf8');
      this.head = Buffer.alloc(0);
      off = nl + 1;
      const m = HEADER.exec(line);
      if (!m) {
        this.settle(null); // `<name> missing` or `<name> ambiguous`
        continue;
      }
      const header: ObjectHeader = { sha: m[1]!, type: m[2] as ObjectHeader['type'], size: Number(m[3]) };
      if (this.withContent) this.body = { header, buf: Buffer.allocUnsafe(header.size + 1), filled: 0 };
      else this.settle(header);
    }
  }
}

interface PoolEntry {
  batch?: CatFileProcess;
  check?: CatFileProcess;
}
const pool = new Map<string, PoolEntry>();

function entryFor(gitDir: string): PoolEntry {
  let e = pool.get(gitDir);
  if (e) {
    pool.delete(gitDir); // re-insert: most recently used last
  } else {
    e = {};
    while (pool.size >= MAX_PROCESSES) closeRepositoryProcesses(pool.keys().next().value!);
  }
  pool.set(gitDir, e);
  return e;
}

function processFor(gitDir: string, withContent: boolean): CatFileProcess {
  const e = entryFor(gitDir);
  const key = withContent ? 'batch' : 'check';
  let p = e[key];
  if (!p || p.closed) {
    p = new CatFileProcess(gitDir, withContent, (closed) => {
      const cur = pool.get(gitDir);
      if (cur?.[key] === closed) delete cur[key];
      if (cur && !cur.batch && !cur.check) pool.delete(gitDir);
    });
    e[key] = p;
  }
  return p;
}

/** Read one object with its content through the repository's `cat-file --batch`; null when missing. */
export async function catFileObject(gitDir: string, name: string): Promise<RawObject | null> {
  return (await processFor(gitDir, true).request(name)) as RawObject | null;
}

/**
 * Read many objects at once with one short-lived `git cat-file --batch` fed every name in one write: for thousands of
 * objects (a merge request's 5,000 commits) this costs one process and one parse loop instead of a pipe round trip,
 * a promise and a timer per object on the shared process. Missing names are left out.
 */
export async function catFileObjects(gitDir: string, names: readonly string[]): Promise<RawObject[]> {
  const wanted = names.filter((n) => !/[\n\r\0]/.test(n));
  if (wanted.length === 0) return [];
  const { stdout } = await runGit(['cat-file', '--batch'], { gitDir, input: `${wanted.join('\n')}\n` });
  const out: RawObject[] = [];
  let off = 0;
  while (off < stdout.length) {
    const nl = stdout.indexOf(0x0a, off);
    if (nl < 0) break;
    const m = HEADER.exec(stdout.toString('utf8', off, nl));
    off = nl + 1;
    if (!m) continue; // `<name> missing`
    const size = Number(m[3]);
    out.push({ sha: m[1]!, type: m[2] as ObjectHeader['type'], size, content: stdout.subarray(off, off + size) });
    off += size + 1;
  }
  return out;
}

/** Look up one object's id, type and size through the repository's `cat-file --batch-check`; null when missing. */
export async function catFileHeader(gitDir: string, name: string): Promise<ObjectHeader | null> {
  const h = await processFor(gitDir, false).request(name);
  return h ? { sha: h.sha, type: h.type, size: h.size } : null;
}

/** Close the cat-file processes of one repository (before it is removed or replaced). */
export function closeRepositoryProcesses(gitDir: string): void {
  const e = pool.get(gitDir);
  pool.delete(gitDir);
  e?.batch?.close();
  e?.check?.close();
}

/** Close every cat-file process of repositories under a directory (daemon stop); all when no directory is given. */
export function closeAllProcesses(underDir?: string): void {
  for (const dir of [...pool.keys()]) if (!underDir || dir.startsWith(underDir)) closeRepositoryProcesses(dir);
}

/** How many repositories have cat-file processes (for tests and metrics). */
export const openProcessCount = () => pool.size;
