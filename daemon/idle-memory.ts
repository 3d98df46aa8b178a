/**
 * Memory back to the system once a burst of work is over. V8 gives back what a burst left (old-generation garbage,
 * the pages it keeps pooled for reuse) only when its memory reducer runs, about 8 s after the last full collection,
 * and not at all when the burst ended between its checks (the API bench's daemon still held 132 MB 12 s after the
 * run). Here the daemon watches its own event loop (performance.eventLoopUtilization: no per-request cost) and runs
 * one memory-reducing collection once the work is over: after the start, in the first idle second (what booting
 * left is never needed again); after a burst of requests, once the daemon has been idle for 10 s in a row and its
 * resident set has grown by 8 MB since the last collection, at most one every 10 s. What a collection gives back, the
 * next burst faults in again (page faults, page clearing, SQLite's page cache refilling: an uncached list page cost
 * 2-11 % more CPU in the seconds after one, measured 2026-11-28): a daemon whose traffic pauses for a few seconds keeps
 * its working set, and a short burst's few MB are not collected. (With 3 s the API bench's daemon held 105-112 MB right
 * after the run instead of 126-138, whose last round is the floor's: a pause of 5 s.) A request that arrives during a
 * collection waits for it (tens of ms), as it would for V8's own. Only the gantryd process runs it (not the daemons
 * tests start inside their own process).
 *
 * It is V8's 'last-resort' collection, which also empties V8's pool of freed pages (a plain full collection keeps
 * them: 121-132 MB 12 s after the API bench against 101-112). A memory-reducing collection (V8's own memory reducer
 * runs them too) drops the maps no live object uses; on Node 22 and 24 one of them cost every later request 15-25 %
 * more CPU for good (a kept GET /projects/:id 31 -> 37 µs, measured 2026-11-28): process.nextTick builds its tick
 * object with a literal of computed (symbol) keys, and V8 turns that literal's feedback megamorphic once the map it
 * recorded has died, after which every tick (several a request) adds its properties in V8's runtime (perf: 7 % of
 * the main thread under nextTick, in Runtime_DefineKeyedOwnPropertyInLiteral). The reclaimer keeps one tick object
 * alive for the life of the daemon (`keepTickShape`), so that map never dies, whichever collection runs (Node 26's
 * nextTick has no such literal). docs/decisions.md, "memory given back after a burst of work", has the figures.
 *
 * The launcher (bin/gantryd.js) keeps V8's young generation at its starting size while the daemon boots: booting grew
 * it to its bound (2 MB a semi-space), which an idle daemon then held for nothing (3-5 MB of its resident set). Once
 * booted (the reclaimer starts just before the daemon says it listens), it may grow again, up to that bound, when the
 * daemon runs with one (shared/daemon-env.ts); without one it is left as the launcher chose (at its starting size on
 * Node 24; Node 26's V8 grows it in steps anyway).
 */
import { executionAsyncResource } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { youngGenerationBounded } from '../shared/daemon-env.js';

/** The loop's busy share of a second from which the second counts as work, and below which as idle. */
const BUSY = 0.05;
const IDLE = 0.01;
/** The least time between two collections (a daemon whose load comes and goes each second pays at most this often). */
const MIN_INTERVAL_MS = 10_000;
/** The idle seconds in a row after a burst of requests before its collection (after the start: one). */
export const QUIET_SECONDS = 10;
/**
 * How much the resident set must have grown since the last collection for a burst's collection: a short burst leaves
 * a few MB that the next one reuses (3-4 MB after a 5 s round of list pages), not worth the heap's growing back.
 */
export const GROWN_BYTES = 8 * 1024 * 1024;

/** What the reclaimer remembers between its checks (exported for the unit test). */
export interface IdleState {
  /** Work happened since the last collection. */
  worked: boolean;
  /** When the last collection ran (ms, any clock). */
  lastAt: number;
  /** Idle seconds in a row so far. */
  idle: number;
  /** Still the start's work: its collection comes in the first idle second. */
  booting: boolean;
  /** The resident set right after the last collection (bytes). */
  residentAfter: number;
}

/** The state of a daemon that has just started (its start counts as work). */
export const startingState = (): IdleState => ({ worked: true, lastAt: -Infinity, idle: 0, booting: true, residentAfter: 0 });

/**
 * Whether this second's loop utilization calls for a collection at `now` (ms); updates `state`. `resident` reads the
 * resident set (bytes), only when the rest calls for a burst's collection.
 */
export function shouldCollect(state: IdleState, utilization: number, now: number, resident: () => number = () => Infinity): boolean {
  if (utilization >= BUSY) {
    state.worked = true;
    state.idle = 0;
    return false;
  }
  state.idle = utilization < IDLE ? state.idle + 1 : 0;
  if (!state.worked || state.idle < (state.booting ? 1 : QUIET_SECONDS) || now - state.lastAt < MIN_INTERVAL_MS) return false;
  if (!state.booting && resident() - state.residentAfter < GROWN_BYTES) return false;
  state.worked = false;
  state.booting = false;
  state.lastAt = now;
  return true;
}

type Collect = (options?: { type: 'major'; execution: 'sync'; flavor?: 'regular' | 'last-resort' }) => void;

/** The tick object kept alive (see the header). */
let keptTick: object | undefined;

/** Keep one of Node's tick objects (the resource a nextTick callback runs in) alive, and with it their map. */
export function keepTickShape(): void {
  if (!keptTick) process.nextTick(() => { keptTick = executionAsyncResource(); });
}

/** V8's `gc` (of a context made after --expose-gc is set: the flag works for contexts made after it). */
function collector(setFlags: (flags: string) => void): Collect {
  const exposed = (globalThis as { gc?: Collect }).gc;
  if (exposed) return exposed;
  setFlags('--expose-gc');
  return runInNewContext('gc') as Collect;
}

/** Start the reclaimer (one check a second, unref'd); returns its stop. `setFlags`: V8's (the unit test watches it). */
export function startIdleReclaimer(setFlags: (flags: string) => void = setFlagsFromString): () => void {
  // booted: the young generation may grow again under load, up to the daemon's bound (V8's own growth factor)
  if (youngGenerationBounded(process.execArgv, process.env)) setFlags('--semi-space-growth-factor=2');
  const gc = collector(setFlags);
  keepTickShape();
  // (the start counts as work: what booting left is given back in the first idle second)
  const state = startingState();
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    if (!shouldCollect(state, utilization, performance.now(), process.memoryUsage.rss)) return;
    try {
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      state.residentAfter = process.memoryUsage.rss();
    } catch {
      clearInterval(timer); // a V8 without these options: V8's own memory reducer is left to do it
    }
  }, 1000);
  timer.unref();
  return () => clearInterval(timer);
}
