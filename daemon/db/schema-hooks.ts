/** Drizzle definitions of the hook delivery outbox (migration 0008_hook_deliveries.sql is the source of truth). */
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';

/** The kinds of event a project hook is sent for (the `event` column). */
export const HOOK_EVENTS = ['push', 'tag_push', 'issue', 'merge_request', 'note', 'build', 'pipeline'] as const;
/** One kind of hook event. */
export type HookEvent = (typeof HOOK_EVENTS)[number];
/** Delivery states: pending until sent with a 2xx answer (delivered) or out of attempts (failed). */
export type HookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export const hookDeliveries = sqliteTable('hook_deliveries', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  /** The project hook (0038: or null, when the row is for a system hook or a service). */
  hookId: integer('hook_id'),
  event: text('event').$type<HookEvent>().notNull(),
  /** The JSON body posted to the hook. */
  payload: text('payload').notNull(),
  status: text('status').$type<HookDeliveryStatus>().notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: text('next_attempt_at').notNull(),
  /** Set while a sender holds the row; the lease ends at next_attempt_at. */
  lockedAt: text('locked_at'),
  lastStatusCode: integer('last_status_code'),
  lastError: text('last_error'),
  createdAt: text('created_at').notNull(),
  deliveredAt: text('delivered_at'),
});
export type HookDeliveryRow = typeof hookDeliveries.$inferSelect;
