/**
 * Build traces (logs): one file per build at <traces>/<project id>/<build id>.log. Appends are synchronous
 * (so two requests in this process can never interleave), fsynced before they are acknowledged, and
 * mirrored in commit_statuses.trace_size. Live listeners (the WebSocket trace follower) hear every change.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { registerStorage } from './storage.js';

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

const listeners = new Map<number, Set<TraceListener>>();

/** Absolute path of a build's trace file (it may not exist). */
export function tracePath(ctx: AppContext, build: TraceBuild): string {
  return join(ctx.paths.traces, String(build.projectId), `${build.id}.log`);
}

/** Current trace length in bytes (0 when there is no trace). */
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

function setSize(ctx: AppContext, buildId: number, size: number): void {
  ctx.db.$client.prepare(`UPDATE commit_statuses SET trace_size = ?, updated_at = ? WHERE id = ?`).run(size, now(), buildId);
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function notify(buildId: number, event: TraceEvent): void {
  const set = listeners.get(buildId);
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
 * Append `data` at `offset`: written (and fsynced) only when offset equals the current length; otherwise
 * nothing changes and ok is false. `length` is the trace length afterwards.
 */
export function appendTrace(ctx: AppContext, build: TraceBuild, offset: number, data: Buffer): { ok: boolean; length: number } {
  const current = traceLength(ctx, build);
  if (offset !== current) return { ok: false, length: current };
  if (data.length === 0) return { ok: true, length: current };
  const file = tracePath(ctx, build);
  const created = current === 0;
  if (created) mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'a', 0o640);
  try {
    let written = 0;
    while (written < data.length) written += writeSync(fd, data, written, data.length - written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (created) syncDir(dirname(file));
  const length = current + data.length;
  setSize(ctx, build.id, length);
  notify(build.id, { offset, data, replaced: false });
  return { ok: true, length };
}

/** Replace the whole trace with `text` (written to a temp file, fsynced, renamed into place). */
export function replaceTrace(ctx: AppContext, build: TraceBuild, text: string | Buffer): void {
  const data = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  const file = tracePath(ctx, build);
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  const fd = openSync(temp, 'w', 0o640);
  try {
    let written = 0;
    while (written < data.length) written += writeSync(fd, data, written, data.length - written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  syncDir(dirname(file));
  setSize(ctx, build.id, data.length);
  notify(build.id, { offset: 0, data, replaced: true });
}

/** Delete a build's trace (erase, project removal); trace_size becomes 0. */
export function removeTrace(ctx: AppContext, build: TraceBuild): void {
  rmSync(tracePath(ctx, build), { force: true });
  setSize(ctx, build.id, 0);
  notify(build.id, { offset: 0, data: Buffer.alloc(0), replaced: true });
}

/** Listen to changes of one build's trace; returns the unsubscribe function. */
export function onTraceAppend(buildId: number, listener: TraceListener): () => void {
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
