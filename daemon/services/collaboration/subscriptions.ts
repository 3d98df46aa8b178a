/**
 * Subscriptions of users to issues, merge requests and labels (POST/DELETE .../subscription, the `subscribed` field).
 * OWNER: labels/milestones engineer. Signatures are a contract used by issues and merge requests.
 */
import type { AppContext } from '../../context.js';
import type { SubscribableType } from '../../db/schema-collaboration.js';
import type { Tx } from './tx.js';

/** Subscribe a user; false when already subscribed (the route answers 304). */
export function subscribe(tx: Tx, userId: number, type: SubscribableType, id: number): boolean {
  throw new Error('not implemented');
}

/** Unsubscribe a user; false when not subscribed (the route answers 304). */
export function unsubscribe(tx: Tx, userId: number, type: SubscribableType, id: number): boolean {
  throw new Error('not implemented');
}

/**
 * Which of `ids` the user is subscribed to: an explicit subscription row, or (for issues and merge requests, as 8.x's
 * Subscribable#subscribed?) being the author or the assignee or a participant without an explicit unsubscription.
 * `implicit` gives the author/assignee ids per target for that rule.
 */
export function subscribedSet(ctx: AppContext, userId: number, type: SubscribableType, ids: number[], implicit?: Map<number, number[]>): Set<number> {
  throw new Error('not implemented');
}

/** Users subscribed to a target (explicitly), for notifications. */
export function subscriberIds(ctx: AppContext, type: SubscribableType, id: number): number[] {
  throw new Error('not implemented');
}
