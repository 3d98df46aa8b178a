/**
 * Events' data module: the insert every service records through (services/instance/events.ts recordEvent), the
 * project's event list and count, and the SQL fragments the visibility rule of services/instance/events.ts combines.
 * `q`: the database or a transaction.
 */
import type { AppContext } from '../context.js';
import { keysetPage } from './keyset.js';
import type { Queries } from './layer/types.js';
import { toEvent } from './rows.js';
import type { EventRow } from './schema.js';
import type { SqlCondition } from './sql.js';

/** An events row to insert (`data`: JSON text or null): the row without its id, always of a project. */
export type NewEvent = Omit<EventRow, 'id' | 'projectId'> & { projectId: number };

/** Insert one event (in the transaction that writes what it records). */
export async function insertEvent(tx: Queries, e: NewEvent): Promise<void> {
  await tx.run(
    `INSERT INTO events (project_id, author_id, action, target_id, target_type, target_title, title, data, note_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [e.projectId, e.authorId, e.action, e.targetId, e.targetType, e.targetTitle, e.title, e.data, e.noteId, e.createdAt],
  );
}

/** The events of issues (and the comments on them) `issueIds` selects: an `SELECT i.id FROM issues i ...` fragment. */
function eventsOfIssues(issueIds: string, args: readonly unknown[]): SqlCondition {
  return {
    sql: `("events"."target_type" = 'Issue' AND "events"."target_id" IN (${issueIds}))
      OR ("events"."target_type" = 'Note' AND "events"."note_id" IN (SELECT n.id FROM notes n WHERE n.noteable_type = 'Issue' AND n.noteable_id IN (${issueIds})))`,
    args: [...args, ...args],
  };
}

/** The events of every issue of a project and of the comments on them. */
export function eventsOfProjectIssues(projectId: number): SqlCondition {
  return eventsOfIssues('SELECT i.id FROM issues i WHERE i.project_id = ?', [projectId]);
}

/** The events of a project's confidential issues that `userId` neither wrote nor is assigned, and of their comments. */
export function eventsOfOthersConfidentialIssues(projectId: number, userId: number): SqlCondition {
  return eventsOfIssues(
    'SELECT i.id FROM issues i WHERE i.project_id = ? AND i.confidential = TRUE AND COALESCE(i.author_id, 0) <> ? AND COALESCE(i.assignee_id, 0) <> ?',
    [projectId, userId, userId]);
}

/** The events of merge requests and of the comments on them. */
export function eventsOfMergeRequests(): SqlCondition {
  return {
    sql: `"events"."target_type" = 'MergeRequest'
      OR ("events"."target_type" = 'Note' AND "events"."note_id" IN (SELECT n.id FROM notes n WHERE n.noteable_type = 'MergeRequest'))`,
    args: [],
  };
}

/** The comments on a project's snippets; with `exceptLevels`, only on those whose visibility level is none of them. */
export function commentsOnProjectSnippets(projectId: number, exceptLevels?: readonly number[]): SqlCondition {
  const levels = exceptLevels ? ` AND s.visibility_level NOT IN (${exceptLevels.map(() => '?').join(', ')})` : '';
  return {
    sql: `"events"."target_type" = 'Note' AND "events"."note_id" IN (SELECT n.id FROM notes n WHERE n.noteable_type = 'Snippet' AND n.noteable_id IN (SELECT s.id FROM snippets s WHERE s.project_id = ?${levels}))`,
    args: [projectId, ...(exceptLevels ?? [])],
  };
}

/** The events none of `hidden` selects (events without a target have NULL there: a NULL test counts as not hidden). */
export function eventsNoneOf(hidden: readonly SqlCondition[]): SqlCondition {
  if (!hidden.length) return { sql: 'TRUE', args: [] };
  return { sql: `NOT COALESCE((${hidden.map((h) => h.sql).join(') OR (')}), FALSE)`, args: hidden.flatMap((h) => h.args) };
}

/** How many events of a project meet `visible`. */
export async function countEventsOfProject(q: Queries, projectId: number, visible: SqlCondition): Promise<number> {
  const row = await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM "events" WHERE "events"."project_id" = ? AND (${visible.sql})`, [projectId, ...visible.args]);
  return row?.n ?? 0;
}

/** One page of a project's events meeting `visible`, newest first (db/keyset.ts; `inSnapshot` as keysetPage takes it). */
export async function eventsOfProjectPage(
  ctx: AppContext, q: Queries, projectId: number, visible: SqlCondition, limit: number, offset: number, total: number | undefined, inSnapshot: boolean,
): Promise<EventRow[]> {
  const id = '"events"."id"';
  const rows = await keysetPage(ctx, q, {
    from: '"events"', where: `"events"."project_id" = ? AND (${visible.sql})`, values: [projectId, ...visible.args],
    key: id, id, desc: true, select: '"events".*',
  }, limit, offset, total, inSnapshot);
  return rows.map(toEvent);
}
