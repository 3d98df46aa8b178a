/**
 * Background workers started with the daemon (hook deliveries, artifact expiry, ...), stopped on shutdown. The daemon
 * starts them from one list, BACKGROUND_WORKERS in main.ts; startBackground checks it first: every job there once.
 */
import type { AppContext } from './context.js';

/**
 * A worker runs on every daemon at once, so it must be safe with several of them on one database: it claims its work
 * (SKIP LOCKED, a conditional UPDATE, a lease) or holds an advisory lock while it runs (docs/design/postgres.md).
 * `name` says what it does (and is its identity in the list).
 */
export interface BackgroundWorker {
  name: string;
  start(ctx: AppContext): void;
  /** Stop what start(ctx) started (a process may run several daemons: tests); resolves once it has stopped. */
  stop(ctx: AppContext): void | Promise<void>;
}

const started = new Map<AppContext, readonly BackgroundWorker[]>();

/** Each job once: a worker or a name twice in the list is a bug of the build, refused before anything starts. */
export function checkWorkers(workers: readonly BackgroundWorker[]): void {
  const seen = new Set<string>();
  for (const w of workers) {
    if (seen.has(w.name)) throw new Error(`background worker "${w.name}" is listed twice: each job must have exactly one handler`);
    seen.add(w.name);
  }
  if (new Set(workers).size !== workers.length) throw new Error('a background worker is listed twice');
}

/** Start every worker of the list, on either engine. */
export function startBackground(ctx: AppContext, workers: readonly BackgroundWorker[]): void {
  checkWorkers(workers);
  started.set(ctx, workers);
  for (const w of workers) w.start(ctx);
}

/** Stop the workers started for `ctx`; resolves once each has finished stopping (before the database is closed). */
export async function stopBackground(ctx: AppContext): Promise<void> {
  const workers = started.get(ctx) ?? [];
  started.delete(ctx);
  await Promise.all(workers.map((w) => w.stop(ctx)));
}

/** A job repeated by repeatEvery: stop() ends the repetition and resolves once a run in flight has finished. */
export interface Repeating {
  stop(): Promise<void>;
}

/**
 * Run `job` now, then every `everyMs`, never two runs at once (a tick that comes while a run is in flight is skipped).
 * A failed run is written to stderr as `gantry: <what> failed: ...` and the next tick tries again. The timer does not
 * keep the process alive; stop() awaits the run in flight, so a draining daemon closes its database after it.
 */
export function repeatEvery(everyMs: number, what: string, job: () => Promise<unknown>): Repeating {
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = Promise.resolve()
      .then(job)
      .then(
        () => undefined,
        (e: unknown) => void process.stderr.write(`gantry: ${what} failed: ${(e as Error)?.message ?? String(e)}\n`),
      )
      .finally(() => {
        running = null;
      });
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * A background worker that repeats `job` for each context it is started for (repeatEvery: now, then every `everyMs`
 * (read at each start, so tests may shorten it), never overlapping); `when` leaves out the contexts it has no work in.
 * stop(ctx) stops the context's repetition and awaits its run in flight.
 */
export function periodicWorker(name: string, o: {
  everyMs: () => number;
  /** What the job does, for its failure line ("removing expired artifacts" -> "gantry: removing expired artifacts failed: ..."). */
  what: string;
  job: (ctx: AppContext) => Promise<unknown>;
  when?: (ctx: AppContext) => boolean;
}): BackgroundWorker {
  const running = new Map<AppContext, Repeating>();
  return {
    name,
    start(ctx) {
      if (running.has(ctx) || (o.when && !o.when(ctx))) return;
      running.set(ctx, repeatEvery(o.everyMs(), o.what, () => o.job(ctx)));
    },
    async stop(ctx) {
      const r = running.get(ctx);
      running.delete(ctx);
      await r?.stop();
    },
  };
}
