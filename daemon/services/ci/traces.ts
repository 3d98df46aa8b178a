/**
 * Build traces (logs): one file per build at <traces>/<project id>/<build id>.log, its length mirrored in
 * commit_statuses.trace_size. An append is accepted only when the stored size equals its offset: a conditional UPDATE
 * in the transaction that also writes (and fsyncs) the bytes at that offset before it commits, so two requests, in
 * one process or on two daemons sharing the database and the data directory, can never interleave. Live listeners
 * (the WebSocket trace follower) hear every change made in this process; on PostgreSQL the committing transaction also
 * sends a wake-up on `gantry_trace`, '<build id>' (db/layer/wake-ups.ts) so that the followers on other daemons read the new bytes (live/trace.ts).
 */
import { closeSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import { wakeAtCommit } from '../../db/layer/wake-ups.js';
import { replaceFileDurablySync, syncDirSync } from '../../durable-files.js';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AppContext } from '../../context.js';
import { now, stateSlot } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import { advanceTraceSize, setTraceSize, traceSize } from '../../db/builds.js';
import { registerStorage } from '../repository/storage.js';

/** The PostgreSQL channel of trace changes; the payload is `<build id>` (appended) or `<build id>:r` (rewritten). */
export const TRACE_CHANNEL = 'gantry_trace';

/** What the trace functions need of a build row. */
export interface TraceBuild {
  id: number;
  projectId: number;
}

/** A change to a trace heard by live listeners: `data` was written at `offset`; `replaced` = the whole trace was rewritten. */
export interface TraceEvent {
  offset: number;
  data: Buffer;
  replaced: boolean;
}

/** A live listener of one build's trace. */
export type TraceListener = (event: TraceEvent) => void;

/** This daemon's live listeners, by build id. */
const LISTENERS = stateSlot('trace listeners', () => new Map<number, Set<TraceListener>>());

/** Absolute path of a build's trace file (it may not exist). */
export function tracePath(ctx: AppContext, build: TraceBuild): string {
  return join(ctx.paths.traces, String(build.projectId), `${build.id}.log`);
}

/** Current trace file length in bytes (0 when there is no trace). */
export function traceLength(ctx: AppContext, build: TraceBuild): number {
  try {
    return statSync(tracePath(ctx, build)).size;
  } catch {
    return 0;
  }
}

/** The whole trace, or null when the build has none. */
export async function readTrace(ctx: AppContext, build: TraceBuild): Promise<Buffer | null> {
  try {
    return await readFile(tracePath(ctx, build));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** The trace bytes from `offset` to `end` (exclusive; the file's end when omitted); empty when there are none. */
export function readTraceRange(ctx: AppContext, build: TraceBuild, offset: number, end?: number): Buffer {
  let fd: number;
  try {
    fd = openSync(tracePath(ctx, build), 'r');
  } catch {
    return Buffer.alloc(0);
  }
  try {
    const stop = end ?? statSync(tracePath(ctx, build)).size;
    if (stop <= offset) return Buffer.alloc(0);
    const out = Buffer.alloc(stop - offset);
    let got = 0;
    while (got < out.length) {
      const n = readSync(fd, out, got, out.length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return out.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** Write `data` at `offset` (the file cut there first, so a write whose transaction failed is overwritten) and fsync. */
function writeAtSync(file: string, offset: number, data: Buffer): void {
  let isNew = false;
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dirname(file), { recursive: true });
    fd = openSync(file, 'w', 0o640);
    isNew = true;
  }
  try {
    ftruncateSync(fd, offset);
    let done = 0;
    while (done < data.length) done += writeSync(fd, data, done, data.length - done, offset + done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (isNew) syncDirSync(dirname(file));
}

/** Tell the other daemons when `tx` commits (PostgreSQL; on SQLite's single process nobody listens: onTraceAppend tells). */
export async function notifyTrace(tx: Queries, buildId: number, replaced = false): Promise<void> {
  await wakeAtCommit(tx, TRACE_CHANNEL, replaced ? `${buildId}:r` : String(buildId));
}

function notify(ctx: AppContext, buildId: number, event: TraceEvent): void {
  const set = ctx.state.get(LISTENERS).get(buildId);
  if (!set) return;
  for (const l of [...set]) {
    try {
      l(event);
    } catch {
      // a broken listener never fails the runner's request
    }
  }
}

/**
 * Append `data` at `offset`: accepted only when offset equals the stored trace size (a conditional UPDATE, committed
 * with the write); otherwise nothing changes and ok is false. `length` is the stored trace length afterwards.
 */
export async function appendTrace(ctx: AppContext, build: TraceBuild, offset: number, data: Buffer): Promise<{ ok: boolean; length: number }> {
  const file = tracePath(ctx, build);
  const result = await ctx.data.transaction(async (tx) => {
    const size = await traceSize(tx, build.id);
    const current = size ?? 0;
    if (size === undefined || offset !== current) return { ok: false, length: current };
    if (data.length === 0) return { ok: true, length: current };
    const length = current + data.length;
    if (!(await advanceTraceSize(tx, build.id, offset, length, now()))) {
      // Another daemon appended first (its transaction committed while this one waited on the row).
      return { ok: false, length: (await traceSize(tx, build.id)) ?? 0 };
    }
    await notifyTrace(tx, build.id);
    // Synchronous: the bytes are on disk before the size that covers them commits.
    writeAtSync(file, offset, data);
    return { ok: true, length };
  });
  if (result.ok && data.length) notify(ctx, build.id, { offset, data, replaced: false });
  return result;
}

/** Replace the whole trace with `text` (written to a temp file, fsynced, renamed into place). */
export async function replaceTrace(ctx: AppContext, build: TraceBuild, text: string | Buffer): Promise<void> {
  const data = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  await ctx.data.transaction(async (tx) => {
    await setTraceSize(tx, build.id, data.length, now());
    await notifyTrace(tx, build.id, true);
    replaceFileDurablySync(tracePath(ctx, build), data);
  });
  notify(ctx, build.id, { offset: 0, data, replaced: true });
}

/** Delete a build's trace (erase, project removal); trace_size becomes 0. */
export async function removeTrace(ctx: AppContext, build: TraceBuild): Promise<void> {
  await ctx.data.transaction(async (tx) => {
    await setTraceSize(tx, build.id, 0, now());
    await notifyTrace(tx, build.id, true);
    rmSync(tracePath(ctx, build), { force: true });
  });
  notify(ctx, build.id, { offset: 0, data: Buffer.alloc(0), replaced: true });
}

/** Listen to changes of one build's trace (made by this daemon); returns the unsubscribe function. */
export function onTraceAppend(ctx: AppContext, buildId: number, listener: TraceListener): () => void {
  const listeners = ctx.state.get(LISTENERS);
  let set = listeners.get(buildId);
  if (!set) listeners.set(buildId, (set = new Set()));
  set.add(listener);
  return () => {
    const s = listeners.get(buildId);
    if (!s) return;
    s.delete(listener);
    if (s.size === 0) listeners.delete(buildId);
  };
}

registerStorage({
  removed: async (ctx, projectId) => rm(join(ctx.paths.traces, String(projectId)), { recursive: true, force: true }),
});
