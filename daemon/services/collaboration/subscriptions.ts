/**
 * Subscriptions of users to issues, merge requests and labels (POST/DELETE .../subscription, the `subscribed` field).
 * OWNER: labels/milestones engineer. Signatures are a contract used by issues and merge requests.
 */
import { now } from '../../context.js';
import type { SubscribableType } from '../../db/schema-collaboration.js';
import type { Queries } from '../../db/layer/types.js';
import { explicitSubscription, explicitSubscriptions, upsertSubscription } from '../../db/collaboration/subscriptions.js';

/**
 * Write the explicit (un)subscription row when it changes the state: one conditional upsert, so two requests at once
 * cannot both change it (the second finds the row already in the wanted state and answers false, the route's 304).
 */
async function setSubscribed(tx: Queries, userId: number, type: SubscribableType, id: number, subscribed: boolean, implicitly: boolean): Promise<boolean> {
  const current = await explicitSubscription(tx, userId, type, id);
  if ((current ?? implicitly) === subscribed) return false;
  return upsertSubscription(tx, userId, type, id, subscribed, now());
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
  const explicit = await explicitSubscriptions(q, userId, type, ids);
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
