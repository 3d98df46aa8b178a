/**
 * Memory back to the system once a burst of work is over. V8 gives back what a burst left (old-generation garbage,
 * the pages it keeps pooled for reuse) only when its memory reducer runs, about 8 s after the last full collection,
 * and not at all when the burst ended between its checks (the API bench's daemon still held 132 MB 12 s after the
 * run). Here the daemon watches its own event loop (performance.eventLoopUtilization: no per-request cost): after a
 * second in which it was busy, the first whole second in which it was idle runs one memory-reducing full collection,
 * at most one every 10 s. A request that arrives meanwhile waits for it (tens of ms), as it would for V8's own. Only
 * the gantryd process runs it (not the daemons tests start inside their own process).
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The loop's busy share of a second from which the second counts as work, and below which as idle. */
const BUSY = 0.05;
const IDLE = 0.01;
/** The least time between two collections (a daemon whose load comes and goes each second pays at most this often). */
const MIN_INTERVAL_MS = 10_000;

/** What the reclaimer remembers between its checks (exported for the unit test). */
export interface IdleState {
  /** Work happened since the last collection. */
  worked: boolean;
  /** When the last collection ran (ms, any clock). */
  lastAt: number;
}

/** Whether this second's loop utilization calls for a collection at `now` (ms); updates `state`. */
export function shouldCollect(state: IdleState, utilization: number, now: number): boolean {
  if (utilization >= BUSY) {
    state.worked = true;
    return false;
  }
  if (!state.worked || utilization >= IDLE || now - state.lastAt < MIN_INTERVAL_MS) return false;
  state.worked = false;
  state.lastAt = now;
  return true;
}

type Collect = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** V8's `gc` (of a context made after --expose-gc is set: the flag works for contexts made after it). */
function collector(): Collect {
  const exposed = (globalThis as { gc?: Collect }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Collect;
}

/** Start the reclaimer (one check a second, unref'd); returns its stop. */
export function startIdleReclaimer(): () => void {
  const gc = collector();
  // (the start counts as work: what booting left is given back in the first idle second, 98 -> 92 MB idle)
  const state: IdleState = { worked: true, lastAt: -Infinity };
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    // 'last-resort': a full collection that also reduces the heap's footprint and releases its pooled pages
    if (!shouldCollect(state, utilization, performance.now())) return;
    try {
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    } catch {
      clearInterval(timer); // a V8 without these options: V8's own memory reducer is left to do it
    }
  }, 1000);
  timer.unref();
  return () => clearInterval(timer);
}
