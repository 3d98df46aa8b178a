/**
 * Subscriptions of users to issues, merge requests and labels (POST/DELETE .../subscription, the `subscribed` field).
 * OWNER: labels/milestones engineer. Signatures are a contract used by issues and merge requests.
 */
import { now } from '../../context.js';
import type { SubscribableType } from '../../db/schema-collaboration.js';
import type { Queries } from '../../db/layer/types.js';

/** Whether the user's explicit row says subscribed: true, false, or undefined when there is no row. */
async function explicitAsync(q: Queries, userId: number, type: SubscribableType, id: number): Promise<boolean | undefined> {
  const row = await q.get<{ subscribed: unknown }>(
    `SELECT subscribed FROM subscriptions WHERE subscribable_type = ? AND subscribable_id = ? AND user_id = ?`, [type, id, userId],
  );
  return row ? !!row.subscribed : undefined;
}

/**
 * Write the explicit (un)subscription row when it changes the state: one conditional upsert, so two requests at once
 * cannot both change it (the second finds the row already in the wanted state and answers false, the route's 304).
 */
async function setSubscribed(tx: Queries, userId: number, type: SubscribableType, id: number, subscribed: boolean, implicitly: boolean): Promise<boolean> {
  const current = await explicitAsync(tx, userId, type, id);
  if ((current ?? implicitly) === subscribed) return false;
  const t = now();
  const r = await tx.run(
    `INSERT INTO subscriptions (user_id, subscribable_type, subscribable_id, subscribed, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (subscribable_type, subscribable_id, user_id) DO UPDATE SET subscribed = excluded.subscribed, updated_at = excluded.updated_at
     WHERE subscriptions.subscribed <> excluded.subscribed`,
    [userId, type, id, subscribed, t, t],
  );
  return r.changes > 0;
}

/** The async twin of subscribe (data layer; `tx` a transaction or ctx.data): false when already subscribed (304). */
export function subscribe(tx: Queries, userId: number, type: SubscribableType, id: number, implicitly = false): Promise<boolean> {
  return setSubscribed(tx, userId, type, id, true, implicitly);
}

/** The async twin of unsubscribe: false when not subscribed (304). */
export function unsubscribe(tx: Queries, userId: number, type: SubscribableType, id: number, implicitly = false): Promise<boolean> {
  return setSubscribed(tx, userId, type, id, false, implicitly);
}

/** The async twin of subscribedSet, on the data layer (one statement whatever the number of ids). */
export async function subscribedSet(
  q: Queries, userId: number, type: SubscribableType, ids: number[], implicit?: Map<number, number[]>,
): Promise<Set<number>> {
  const out = new Set<number>();
  if (ids.length === 0) return out;
  const explicit = new Map<number, boolean>();
  const rows = await q.all<{ id: number; subscribed: unknown }>(`SELECT subscribable_id AS id, subscribed FROM subscriptions
    WHERE user_id = ? AND subscribable_type = ? AND subscribable_id IN ${q.dialect.inIds}`, [userId, type, q.dialect.ids([...new Set(ids)])]);
  for (const r of rows) explicit.set(r.id, !!r.subscribed);
  for (const id of ids) {
    const e = explicit.get(id);
    if (e === undefined ? (implicit?.get(id)?.includes(userId) ?? false) : e) out.add(id);
  }
  return out;
}

/** Split ids into parts below SQLite's bound-parameter limit. */
export function chunks<T>(xs: T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}
