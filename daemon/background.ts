/** Background workers started with the daemon (hook deliveries, artifact expiry, ...), stopped on shutdown. */
import type { AppContext } from './context.js';

/**
 * A worker runs on every daemon at once, so it must be safe with several of them on one database: it claims its work
 * (SKIP LOCKED, a conditional UPDATE, a lease) or holds an advisory lock while it runs (docs/design/postgres.md).
 * `name` says what it does.
 */
type Worker = { name: string; start(ctx: AppContext): void; stop(): void | Promise<void> };
const workers: Worker[] = [];

/** Register a background worker; later issues add theirs here. */
export function registerWorker(worker: Worker): void {
  workers.push(worker);
}

/** Start every registered worker, on either engine. */
export function startBackground(ctx: AppContext): void {
  for (const w of workers) w.start(ctx);
}

/** Stop every registered worker; resolves once each has finished stopping (before the database is closed). */
export async function stopBackground(): Promise<void> {
  await Promise.all(workers.map((w) => w.stop()));
}
