/**
 * The outbox's write side (hook_deliveries, migrations 0008 and 0038): rows written inside the transaction of the change
 * they report, each aimed at a project hook, a system hook or a project service, and the wake-up of the delivery workers
 * (services/hooks/deliveries.ts, which listens on HOOKS_CHANNEL). Kept apart from the worker so the services that queue
 * system hook events (users, projects, groups, members, keys) do not import the worker and its push listener.
 */
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import { insertDeliveryRows } from '../../db/hooks.js';
import { wakeAtCommit } from '../../db/layer/wake-ups.js';

/** The wake-up channel of the delivery workers (db/layer/wake-ups.ts; on PostgreSQL every daemon's). */
export const HOOKS_CHANNEL = 'gantry_hooks';

/** What a delivery row is sent to: a project hook, a system hook or a project service (exactly one per row). */
export type DeliveryTarget = 'hook_id' | 'system_hook_id' | 'service_id';

/** One outbox row to write: its target, the event it is for and the JSON body. */
export interface QueuedDelivery {
  target: DeliveryTarget;
  id: number;
  event: string;
  body: string;
}

/**
 * Write outbox rows inside the caller's transaction (one INSERT) and wake the workers: on SQLite those of this process
 * on the next turn (after the commit: a transaction runs within one turn); on PostgreSQL `NOTIFY gantry_hooks` in the
 * same transaction, which PostgreSQL delivers at the commit (never for a rollback) to the workers of every daemon.
 */
export async function insertDeliveriesAsync(tx: Queries, rows: readonly QueuedDelivery[]): Promise<number> {
  if (!rows.length) return 0;
  await insertDeliveryRows(tx, rows, now());
  await wakeAtCommit(tx, HOOKS_CHANNEL);
  return rows.length;
}

