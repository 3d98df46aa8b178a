/** Subscriptions' data module: the explicit (un)subscription rows of users to issues, merge requests and labels. `q`: the database or a transaction. */
import type { Queries } from '../layer/types.js';
import type { SubscribableType } from '../schema-collaboration.js';

/** The user's explicit row: true (subscribed), false, or undefined when there is none. */
export async function explicitSubscription(q: Queries, userId: number, type: SubscribableType, id: number): Promise<boolean | undefined> {
  const row = await q.get<{ subscribed: unknown }>(
    `SELECT subscribed FROM subscriptions WHERE subscribable_type = ? AND subscribable_id = ? AND user_id = ?`, [type, id, userId],
  );
  return row ? !!row.subscribed : undefined;
}

/** Write the user's explicit row unless it says `subscribed` already (one conditional upsert); whether it changed. */
export async function upsertSubscription(tx: Queries, userId: number, type: SubscribableType, id: number, subscribed: boolean, at: string): Promise<boolean> {
  const r = await tx.run(
    `INSERT INTO subscriptions (user_id, subscribable_type, subscribable_id, subscribed, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (subscribable_type, subscribable_id, user_id) DO UPDATE SET subscribed = excluded.subscribed, updated_at = excluded.updated_at
     WHERE subscriptions.subscribed <> excluded.subscribed`,
    [userId, type, id, subscribed, at, at],
  );
  return r.changes > 0;
}

/** The user's explicit rows on `ids` of one type: id to subscribed. */
export async function explicitSubscriptions(q: Queries, userId: number, type: SubscribableType, ids: readonly number[]): Promise<Map<number, boolean>> {
  if (!ids.length) return new Map();
  const rows = await q.all<{ id: number; subscribed: unknown }>(`SELECT s.subscribable_id AS id, s.subscribed FROM ${q.dialect.idList('j')} CROSS JOIN subscriptions s
    WHERE s.user_id = ? AND s.subscribable_type = ? AND s.subscribable_id = j.value`, [q.dialect.ids(ids), userId, type]);
  return new Map(rows.map((r) => [r.id, !!r.subscribed]));
}
