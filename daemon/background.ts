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
  stop(): void | Promise<void>;
}

let started: readonly BackgroundWorker[] = [];

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
  started = workers;
  for (const w of workers) w.start(ctx);
}

/** Stop every started worker; resolves once each has finished stopping (before the database is closed). */
export async function stopBackground(): Promise<void> {
  await Promise.all(started.map((w) => w.stop()));
}
