/** Background workers started with the daemon (hook deliveries, artifact expiry, ...), stopped on shutdown. */
import type { AppContext } from './context.js';

type Worker = { start(ctx: AppContext): void; stop(): void };
const workers: Worker[] = [];

/** Register a background worker; later issues add theirs here. */
export function registerWorker(worker: Worker): void {
  workers.push(worker);
}

/**
 * Start every registered worker. On PostgreSQL none starts: the workers (hook deliveries, artifact expiry, ...) are
 * rooms not ported yet, and several daemons need one owner per worker first (docs/design/postgres.md).
 */
export function startBackground(ctx: AppContext, log: (message: string) => void = () => undefined): void {
  if (ctx.data.dialect.name === 'postgres') {
    if (workers.length) log(`background workers do not run on PostgreSQL yet (${workers.length} not started: hook deliveries, artifact expiry and the like)`);
    return;
  }
  for (const w of workers) w.start(ctx);
}

/** Stop every registered worker. */
export function stopBackground(): void {
  for (const w of workers) w.stop();
}
