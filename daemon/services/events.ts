/** Project events (GET /projects/:id/events): recorded by services inside their own transactions. */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { idOrderedPage } from '../db/keyset.js';
import { events, type EventRow } from '../db/schema.js';
import type { Queries } from '../db/layer/types.js';

/** What an event records; `action` is one of GitLab's action names (created, joined, left, pushed to, ...). */
export interface EventInput {
  projectId: number;
  authorId: number | null;
  action: 'created' | 'updated' | 'closed' | 'reopened' | 'pushed' | 'commented' | 'merged' | 'joined' | 'left' | 'destroyed' | 'expired';
  targetId?: number | null;
  targetType?: string | null;
  targetTitle?: string | null;
  title?: string | null;
  /** Push data and similar, stored as JSON. */
  data?: unknown;
  noteId?: number | null;
}

/** Record one event; pass the transaction's db (`tx`) when called inside a transaction. */
export function recordEvent(db: Pick<AppContext['db'], 'insert'>, e: EventInput): void {
  db.insert(events)
    .values({
      projectId: e.projectId, authorId: e.authorId, action: e.action, targetId: e.targetId ?? null, targetType: e.targetType ?? null,
      targetTitle: e.targetTitle ?? null, title: e.title ?? null, data: e.data === undefined ? null : JSON.stringify(e.data),
      noteId: e.noteId ?? null, createdAt: now(),
    })
    .run();
}

const INSERT_EVENT = `INSERT INTO events (project_id, author_id, action, target_id, target_type, target_title, title, data, note_id, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The async twin of recordEvent, on the data layer: pass the transaction (`tx`) it belongs to. */
export async function recordEventAsync(tx: Queries, e: EventInput): Promise<void> {
  await tx.run(INSERT_EVENT, [
    e.projectId, e.authorId, e.action, e.targetId ?? null, e.targetType ?? null, e.targetTitle ?? null, e.title ?? null,
    e.data === undefined ? null : JSON.stringify(e.data), e.noteId ?? null, now(),
  ]);
}

/** How many events a project has (those meeting `visible`, an SQL condition over `events`, e.g. policy's visibleEventsSql). */
export function countProjectEvents(ctx: AppContext, projectId: number, visible = '1'): number {
  return ctx.db.select({ n: sql<number>`count(*)` }).from(events).where(and(eq(events.projectId, projectId), sql.raw(visible))).get()!.n;
}

/**
 * One page of a project's events (those meeting `visible`), newest first. Events are the largest table in practice:
 * with `total` (countProjectEvents) a deep page costs what the first does (db/keyset.ts), not an OFFSET walk.
 */
export function listProjectEvents(ctx: AppContext, projectId: number, limit: number, offset: number, total?: number, visible = '1'): EventRow[] {
  return idOrderedPage(ctx, 'events', and(eq(events.projectId, projectId), sql.raw(visible)), true, limit, offset, total,
    (ids) => ctx.db.select().from(events).where(inArray(events.id, ids)).all());
}
