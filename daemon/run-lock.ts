/**
 * What marks a data directory in use (docs/design/postgres.md, "Migrating an existing installation"): every running
 * gantryd, and a running `gantryd migrate-db`, keeps a file of its own in `<data-dir>/run/`, named
 * `<kind>.<host>.<pid>.<random>` and holding the same facts as JSON. Node has no flock, and several daemons may share
 * one data directory (on PostgreSQL), so there is no single lock to hold: each process announces itself, then looks
 * for the others it cannot run beside. A daemon starts beside other daemons but not beside a migrate-db; migrate-db
 * runs beside nothing. Both write their own file BEFORE they look, so of two processes starting at once at least one
 * sees the other (both may, and both refuse: nothing is lost).
 *
 * A process that is killed leaves its file behind. A file of this host whose pid is gone is stale: it is ignored (and
 * migrate-db removes it). A file of another host (daemons on several machines sharing the directory) cannot be
 * checked from here: it counts as running, and the message names the file to delete once that daemon is known to be
 * stopped.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './config.js';

export type RunKind = 'gantryd' | 'migrate-db';

/** A process that announced itself in a data directory. */
export interface RunHolder {
  kind: RunKind;
  pid: number;
  host: string;
  /** The holder's file, for a message that says which one to delete. */
  file: string;
  /** True when the holder runs on this host (its pid could be checked). */
  local: boolean;
}

/** The run directory of a data directory. */
export const runDir = (dataDir: string) => join(dataDir, 'run');

/** A host name usable in a file name. */
const thisHost = () => hostname().replace(/[^A-Za-z0-9_-]/g, '_') || 'localhost';

/** Whether a process of this host is alive (EPERM: it exists, owned by another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Announce this process in `<data-dir>/run/`; `release()` removes the file (idempotent). */
export function announce(dataDir: string, kind: RunKind): { file: string; release(): void } {
  const dir = runDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const host = thisHost();
  // The random part keeps two daemons of one process (tests start several in-process) from sharing a file.
  const file = join(dir, `${kind}.${host}.${process.pid}.${randomBytes(4).toString('hex')}`);
  writeFileSync(file, `${JSON.stringify({ kind, pid: process.pid, host, started: new Date().toISOString() })}\n`, { flag: 'wx', mode: 0o600 });
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      rmSync(file, { force: true });
    },
  };
}

/**
 * The processes announced in a data directory, except `self` (a file name) and the stale files of this host, which are
 * removed when `removeStale` is set.
 */
export function holders(dataDir: string, opts: { self?: string; removeStale?: boolean } = {}): RunHolder[] {
  let names: string[];
  try {
    names = readdirSync(runDir(dataDir));
  } catch {
    return [];
  }
  const host = thisHost();
  const out: RunHolder[] = [];
  for (const name of names) {
    const m = /^(gantryd|migrate-db)\.(.+)\.(\d+)\.[0-9a-f]+$/.exec(name);
    if (!m) continue;
    const file = join(runDir(dataDir), name);
    if (opts.self && file === opts.self) continue;
    const holder: RunHolder = { kind: m[1] as RunKind, host: m[2]!, pid: Number(m[3]), file, local: m[2] === host };
    if (holder.local && !alive(holder.pid)) {
      if (opts.removeStale) rmSync(file, { force: true });
      continue;
    }
    out.push(holder);
  }
  return out;
}

/** "pid N" or "pid N on host H (if it is not running, delete FILE)", for messages. */
export function describeHolder(h: RunHolder): string {
  return h.local ? `pid ${h.pid}` : `pid ${h.pid} on host ${h.host}; if it is not running, delete ${h.file}`;
}

/**
 * Open something (the daemon's database) with the data directory marked as used by a daemon: refuses while
 * `gantryd migrate-db` copies it, and the mark goes away with the opened thing's close().
 */
export async function withDaemonMark<T extends { close(): Promise<void> }>(dataDir: string, open: () => Promise<T>): Promise<T> {
  const mark = announce(dataDir, 'gantryd');
  try {
    const migrating = holders(dataDir, { self: mark.file }).find((h) => h.kind === 'migrate-db');
    if (migrating) {
      throw new ConfigError(`gantryd migrate-db is copying this data dir (${describeHolder(migrating)}); start gantryd when it has finished`);
    }
    const opened = await open();
    const close = opened.close.bind(opened);
    opened.close = async () => {
      try {
        await close();
      } finally {
        mark.release();
      }
    };
    return opened;
  } catch (e) {
    mark.release();
    throw e;
  }
}
