/** Row types of the hook delivery outbox (migration 0008_hook_deliveries.sql is the source of truth). */

/** The kinds of event a project hook is sent for (the `event` column). */
export const HOOK_EVENTS = ['push', 'tag_push', 'issue', 'merge_request', 'note', 'build', 'pipeline'] as const;
/** One kind of hook event. */
export type HookEvent = (typeof HOOK_EVENTS)[number];
/** Delivery states: pending until sent with a 2xx answer (delivered) or out of attempts (failed). */
export type HookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A row of `hook_deliveries`. */
export interface HookDeliveryRow {
  id: number;
  /** The project hook (0038: or null, when the row is for a system hook or a service). */
  hookId: number | null;
  /** 0038: the system hook or the project service the row is for (exactly one of the three is set). */
  systemHookId: number | null;
  serviceId: number | null;
  event: HookEvent;
  /** The JSON body posted to the hook. */
  payload: string;
  status: HookDeliveryStatus;
  attempts: number;
  nextAttemptAt: string;
  /** Set while a sender holds the row; the lease ends at next_attempt_at. */
  lockedAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}
