/**
 * `gantry pipeline watch`: refresh a pipeline every interval until it finishes. On a terminal the ink view is
 * redrawn in place; otherwise plain lines are printed when something changed (the pipeline status, a build status).
 */
import type { IO } from '../io.js';
import { changedBuildLines, isFinal, latestBuilds, pipelineHeader, type Build, type Pipeline } from './ci-format.js';
import type { PipelineViewProps } from './pipeline-view.js';

/** One refresh: the pipeline and its builds. */
export interface PipelineSnapshot {
  pipeline: Pipeline;
  builds: Build[];
}

/** Options of watchPipeline. */
export interface WatchOptions {
  intervalMs: number;
  /** Draw the ink view (stdout is a terminal) instead of plain lines. */
  live: boolean;
  /** Stop after this long without the pipeline finishing (ms; default: no limit). */
  timeoutMs?: number;
  /** Hints for a snapshot (a build waiting for a runner): printed once each off a terminal, the note of the live view. */
  hints?: (snap: PipelineSnapshot) => string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Watch until the pipeline's status is final; returns the last snapshot. Refresh errors are shown and retried. */
export async function watchPipeline(io: IO, fetch: () => Promise<PipelineSnapshot>, options: WatchOptions): Promise<PipelineSnapshot> {
  let snap = await fetch();
  const started = Date.now();
  const timedOut = () => options.timeoutMs !== undefined && Date.now() - started > options.timeoutMs;
  if (options.live) {
    // ink and react are loaded only for the live view (a chunk of their own in the bundle).
    const [{ PipelineView }, { startLiveView }] = await Promise.all([import('./pipeline-view.js'), import('./render.js')]);
    const view = startLiveView<PipelineViewProps>(PipelineView, { ...snap, now: Date.now(), note: null });
    try {
      while (!isFinal(snap.pipeline.status) && !timedOut()) {
        await sleep(options.intervalMs);
        let note: string | null = null;
        try {
          snap = await fetch();
          note = options.hints?.(snap)[0] ?? null;
        } catch (e) {
          note = `refresh failed: ${(e as Error).message}; retrying`;
        }
        view.update({ ...snap, now: Date.now(), note });
      }
      view.update({ ...snap, now: Date.now(), note: null });
    } finally {
      await view.stop();
    }
    return snap;
  }
  let lastHeader = '';
  const seen = new Map<number, string>();
  const hinted = new Set<string>();
  const print = (s: PipelineSnapshot) => {
    const stamp = new Date().toISOString().slice(11, 19);
    const header = `pipeline #${s.pipeline.id} ${s.pipeline.status}`;
    for (const line of changedBuildLines(seen, s.builds)) io.out(`${stamp} ${line}\n`);
    if (header !== lastHeader) io.out(`${stamp} ${isFinal(s.pipeline.status) ? pipelineHeader(s.pipeline) : header}\n`);
    lastHeader = header;
    for (const b of latestBuilds(s.builds)) seen.set(b.id, b.status);
    for (const hint of options.hints?.(s) ?? []) {
      if (!hinted.has(hint)) io.err(`${hint}\n`);
      hinted.add(hint);
    }
  };
  print(snap);
  while (!isFinal(snap.pipeline.status) && !timedOut()) {
    await sleep(options.intervalMs);
    try {
      snap = await fetch();
    } catch (e) {
      io.err(`refresh failed: ${(e as Error).message}; retrying\n`);
      continue;
    }
    print(snap);
  }
  return snap;
}
