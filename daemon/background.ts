/** Background workers started with the daemon (hook deliveries, artifact expiry, ...), stopped on shutdown. */
import type { AppContext } from './context.js';

/**
 * `name` says what it does (in the start log); `postgres: true` once the worker runs on the data layer and is safe with
 * several daemons at once (claims with SKIP LOCKED, an advisory lock or a lease), as docs/design/postgres.md says.
 */
type Worker = { name?: string; postgres?: boolean; start(ctx: AppContext): void; stop(): void | Promise<void> };
const workers: Worker[] = [];

/** Register a background worker; later issues add theirs here. */
export function registerWorker(worker: Worker): void {
  workers.push(worker);
}

/**
 * Start every registered worker. On PostgreSQL only those marked `postgres: true` start: the others belong to rooms
 * not ported yet (docs/design/postgres.md).
 */
export function startBackground(ctx: AppContext, log: (message: string) => void = () => undefined): void {
  if (ctx.data.dialect.name === 'postgres') {
    const waiting = workers.filter((w) => !w.postgres);
    if (waiting.length) log(`background workers not on PostgreSQL yet, not started: ${waiting.map((w) => w.name ?? 'unnamed').join(', ')}`);
    for (const w of workers) if (w.postgres) w.start(ctx);
    return;
  }
  for (const w of workers) w.start(ctx);
}

/** Stop every registered worker; resolves once each has finished stopping (before the database is closed). */
export async function stopBackground(): Promise<void> {
  await Promise.all(workers.map((w) => w.stop()));
}
