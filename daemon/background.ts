/** Background workers started with the daemon (hook deliveries, artifact expiry, ...), stopped on shutdown. */
import type { AppContext } from './context.js';

type Worker = { start(ctx: AppContext): void; stop(): void };
const workers: Worker[] = [];

/** Register a background worker; later issues add theirs here. */
export function registerWorker(worker: Worker): void {
  workers.push(worker);
}

/** Start every registered worker. */
export function startBackground(ctx: AppContext): void {
  for (const w of workers) w.start(ctx);
}

/** Stop every registered worker. */
export function stopBackground(): void {
  for (const w of workers) w.stop();
}
