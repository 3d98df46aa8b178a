/** Project events (GET /projects/:id/events): recorded by services inside their own transactions. */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { keysetPage } from '../../db/keyset.js';
import { toEvent } from '../../db/rows.js';
import type { EventRow, ProjectRow, UserRow } from '../../db/schema.js';
import type { Queries } from '../../db/layer/types.js';
import {
  projectAbilityAtLevel, projectAbilityWithoutLevel, projectAccessLevelAsync, REPORTER, type ProjectAbility, type SqlCondition,
} from '../../policy/permissions.js';
import { canProjectSnippets, visibleSnippetLevels } from '../../policy/snippets.js';

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

const INSERT_EVENT = `INSERT INTO events (project_id, author_id, action, target_id, target_type, target_title, title, data, note_id, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Record one event, in the transaction (`tx`) it belongs to. */
export async function recordEvent(tx: Queries, e: EventInput): Promise<void> {
  await tx.run(INSERT_EVENT, [
    e.projectId, e.authorId, e.action, e.targetId ?? null, e.targetType ?? null, e.targetTitle ?? null, e.title ?? null,
    e.data === undefined ? null : JSON.stringify(e.data), e.noteId ?? null, now(),
  ]);
}

/**
 * The events of ONE project the caller may read (8.x Event#visible_to_user?), as a condition over `events` with its
 * bound values: an issue's events and the comments on it only when they may read that issue (issues on; a confidential
 * one as its author, assignee, a reporter and up or an admin), a merge request's and its comments' only while merge
 * requests are on, a snippet's comments only when they may read that snippet. `level`: the caller's access level when already read (loadProject), else read here once if
 * needed.
 */
export async function visibleEventsWhere(
  ctx: AppContext, user: UserRow | null, project: ProjectRow, level?: number, q: Queries = ctx.data,
): Promise<SqlCondition> {
  let access = level;
  const can = async (ability: ProjectAbility) => {
    const decided = projectAbilityWithoutLevel(user, ability, project);
    if (decided !== undefined) return decided;
    access ??= await projectAccessLevelAsync(ctx, user, project, q);
    return projectAbilityAtLevel(user!, ability, project, access);
  };
  const hidden: string[] = [];
  const values: unknown[] = [];
  const onIssues = (ids: string, idValues: unknown[]) => {
    hidden.push(`("events"."target_type" = 'Issue' AND "events"."target_id" IN (${ids}))
      OR ("events"."target_type" = 'Note' AND "events"."note_id" IN (SELECT n.id FROM notes n WHERE n.noteable_type = 'Issue' AND n.noteable_id IN (${ids})))`);
    values.push(...idValues, ...idValues);
  };
  if (!(await can('read_issue'))) onIssues('SELECT i.id FROM issues i WHERE i.project_id = ?', [project.id]);
  else if (user && !user.isAdmin && (access ??= await projectAccessLevelAsync(ctx, user, project, q)) < REPORTER) {
    // the confidential issues they neither wrote nor are assigned
    onIssues('SELECT i.id FROM issues i WHERE i.project_id = ? AND i.confidential = TRUE AND COALESCE(i.author_id, 0) <> ? AND COALESCE(i.assignee_id, 0) <> ?',
      [project.id, user.id, user.id]);
  }
  if (!(await can('read_merge_request'))) {
    hidden.push(`"events"."target_type" = 'MergeRequest'
      OR ("events"."target_type" = 'Note' AND "events"."note_id" IN (SELECT n.id FROM notes n WHERE n.noteable_type = 'MergeRequest'))`);
  }
  // comments on snippets: none while the caller may not read the project's snippets, else those on snippets whose
  // visibility hides them from the caller (policy/snippets.ts)
  const snippetNotes = (where: string) =>
    `"events"."target_type" = 'Note' AND "events"."note_id" IN (SELECT n.id FROM notes n WHERE n.noteable_type = 'Snippet' AND n.noteable_id IN (${where}))`;
  if (!user || !(await canProjectSnippets(ctx, user, 'read_project_snippet', project, access, q))) {
    hidden.push(snippetNotes('SELECT s.id FROM snippets s WHERE s.project_id = ?'));
    values.push(project.id);
  } else {
    const levels = visibleSnippetLevels(user, user.isAdmin ? 0 : (access ??= await projectAccessLevelAsync(ctx, user, project, q)));
    if (levels) {
      hidden.push(snippetNotes(`SELECT s.id FROM snippets s WHERE s.project_id = ? AND s.visibility_level NOT IN (${levels.map(() => '?').join(', ')})`));
      values.push(project.id, ...levels);
    }
  }
  // events without a target (pushes) have NULL in these columns: a NULL test counts as "not hidden"
  return hidden.length ? { sql: `NOT COALESCE((${hidden.join(') OR (')}), FALSE)`, args: values } : { sql: 'TRUE', args: [] };
}

/** How many events of a project meet `visible` (visibleEventsWhere). */
export async function countProjectEvents(ctx: AppContext, projectId: number, visible: SqlCondition, q: Queries = ctx.data): Promise<number> {
  const row = await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM "events" WHERE "events"."project_id" = ? AND (${visible.sql})`, [projectId, ...visible.args]);
  return row?.n ?? 0;
}

/**
 * One page of a project's events (those meeting `visible`), newest first. Events are the largest table in practice:
 * with `total` (countProjectEvents) a deep page costs what the first does (db/keyset.ts), not an OFFSET walk; `q` is
 * the snapshot the count ran in.
 */
export async function listProjectEvents(
  ctx: AppContext, projectId: number, limit: number, offset: number, total: number | undefined, visible: SqlCondition, q: Queries = ctx.data,
): Promise<EventRow[]> {
  const id = '"events"."id"';
  const rows = await keysetPage(ctx, q, {
    from: '"events"', where: `"events"."project_id" = ? AND (${visible.sql})`, values: [projectId, ...visible.args],
    key: id, id, desc: true, select: '"events".*',
  }, limit, offset, total, q !== ctx.data);
  return rows.map(toEvent);
}
