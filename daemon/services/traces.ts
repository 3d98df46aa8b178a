/**
 * Build traces (logs): one file per build at <traces>/<project id>/<build id>.log. Appends are synchronous
 * (so two requests in this process can never interleave), fsynced before they are acknowledged, and
 * mirrored in commit_statuses.trace_size. Live listeners (the WebSocket trace follower) hear every change.
 */
import { rmSync, statSync } from 'node:fs';
import { appendFileDurablySync, replaceFileDurablySync } from '../durable-files.js';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { registerStorage } from './storage.js';
import { statement } from '../db/statements.js';

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
  statement(ctx, `UPDATE commit_statuses SET trace_size = ?, updated_at = ? WHERE id = ?`).run(size, now(), buildId);
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
  appendFileDurablySync(tracePath(ctx, build), data, current === 0);
  const length = current + data.length;
  setSize(ctx, build.id, length);
  notify(build.id, { offset, data, replaced: false });
  return { ok: true, length };
}

/** Replace the whole trace with `text` (written to a temp file, fsynced, renamed into place). */
export function replaceTrace(ctx: AppContext, build: TraceBuild, text: string | Buffer): void {
  const data = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  replaceFileDurablySync(tracePath(ctx, build), data);
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
