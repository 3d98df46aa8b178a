/** Project events (GET /projects/:id/events): recorded by services inside their own transactions. */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import {
  commentsOnProjectSnippets, countEventsOfProject, eventsNoneOf, eventsOfMergeRequests, eventsOfOthersConfidentialIssues, eventsOfProjectIssues,
  eventsOfProjectPage, insertEvent,
} from '../../db/events.js';
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

/** Record one event, in the transaction (`tx`) it belongs to. */
export async function recordEvent(tx: Queries, e: EventInput): Promise<void> {
  await insertEvent(tx, {
    projectId: e.projectId, authorId: e.authorId, action: e.action, targetId: e.targetId ?? null, targetType: e.targetType ?? null,
    targetTitle: e.targetTitle ?? null, title: e.title ?? null, data: e.data === undefined ? null : JSON.stringify(e.data), noteId: e.noteId ?? null,
    createdAt: now(),
  });
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
  const hidden: SqlCondition[] = [];
  if (!(await can('read_issue'))) hidden.push(eventsOfProjectIssues(project.id));
  else if (user && !user.isAdmin && (access ??= await projectAccessLevelAsync(ctx, user, project, q)) < REPORTER) {
    // the confidential issues they neither wrote nor are assigned
    hidden.push(eventsOfOthersConfidentialIssues(project.id, user.id));
  }
  if (!(await can('read_merge_request'))) hidden.push(eventsOfMergeRequests());
  // comments on snippets: none while the caller may not read the project's snippets, else those on snippets whose
  // visibility hides them from the caller (policy/snippets.ts)
  if (!user || !(await canProjectSnippets(ctx, user, 'read_project_snippet', project, access, q))) {
    hidden.push(commentsOnProjectSnippets(project.id));
  } else {
    const levels = visibleSnippetLevels(user, user.isAdmin ? 0 : (access ??= await projectAccessLevelAsync(ctx, user, project, q)));
    if (levels) hidden.push(commentsOnProjectSnippets(project.id, levels));
  }
  return eventsNoneOf(hidden);
}

/** How many events of a project meet `visible` (visibleEventsWhere). */
export async function countProjectEvents(ctx: AppContext, projectId: number, visible: SqlCondition, q: Queries = ctx.data): Promise<number> {
  return countEventsOfProject(q, projectId, visible);
}

/**
 * One page of a project's events (those meeting `visible`), newest first. Events are the largest table in practice:
 * with `total` (countProjectEvents) a deep page costs what the first does (db/keyset.ts), not an OFFSET walk; `q` is
 * the snapshot the count ran in.
 */
export async function listProjectEvents(
  ctx: AppContext, projectId: number, limit: number, offset: number, total: number | undefined, visible: SqlCondition, q: Queries = ctx.data,
): Promise<EventRow[]> {
  return eventsOfProjectPage(ctx, q, projectId, visible, limit, offset, total, q !== ctx.data);
}
