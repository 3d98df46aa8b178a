/** Collaboration fixture builders (issues, todos ...) written straight to the database: fast, no API round trips. */
import type { AppContext } from '../../daemon/context.js';
import { now } from '../../daemon/context.js';

/** Insert an issue row (next iid of the project) and return its id and iid. */
export function insertIssue(
  ctx: AppContext, projectId: number,
  opts: { title?: string; description?: string | null; authorId?: number | null; assigneeId?: number | null; confidential?: boolean; state?: 'opened' | 'closed' } = {},
): { id: number; iid: number } {
  const t = now();
  const { iid } = ctx.db.$client.prepare(`SELECT COALESCE(MAX(iid), 0) + 1 AS iid FROM issues WHERE project_id = ?`).get(projectId) as { iid: number };
  const r = ctx.db.$client
    .prepare(`INSERT INTO issues (project_id, iid, title, description, state, confidential, author_id, assignee_id, created_at, updated_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(projectId, iid, opts.title ?? `Issue ${iid}`, opts.description ?? null, opts.state ?? 'opened', opts.confidential ? 1 : 0,
      opts.authorId ?? null, opts.assigneeId ?? null, t, t);
  return { id: Number(r.lastInsertRowid), iid };
}

/** Insert a todo row directly (pending unless told) and return its id. */
export function insertTodo(
  ctx: AppContext,
  t: { userId: number; projectId: number; targetId: number; authorId?: number | null; action?: string; state?: 'pending' | 'done'; targetType?: 'Issue' | 'MergeRequest' },
): number {
  const ts = now();
  const r = ctx.db.$client
    .prepare(`INSERT INTO todos (user_id, project_id, author_id, target_type, target_id, action, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(t.userId, t.projectId, t.authorId ?? null, t.targetType ?? 'Issue', t.targetId, t.action ?? 'assigned', t.state ?? 'pending', ts, ts);
  return Number(r.lastInsertRowid);
}

/** Insert a label row of a project and return its id. */
export function insertLabel(ctx: AppContext, projectId: number, title: string, opts: { color?: string; description?: string | null } = {}): number {
  const t = now();
  const r = ctx.db.$client
    .prepare(`INSERT INTO labels (project_id, title, color, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`)
    .run(projectId, title, opts.color ?? '#428BCA', opts.description ?? null, t, t);
  return Number(r.lastInsertRowid);
}

/** Put a label on an issue or merge request. */
export function linkLabel(ctx: AppContext, labelId: number, target: { type: 'Issue' | 'MergeRequest'; id: number }): void {
  ctx.db.$client.prepare(`INSERT INTO label_links (label_id, target_type, target_id, created_at) VALUES (?, ?, ?, ?)`).run(labelId, target.type, target.id, now());
}

/** Insert a milestone row (next iid of the project) and return its id and iid. */
export function insertMilestone(
  ctx: AppContext, projectId: number, opts: { title?: string; state?: 'active' | 'closed'; dueDate?: string | null; description?: string } = {},
): { id: number; iid: number } {
  const t = now();
  const { iid } = ctx.db.$client.prepare(`SELECT COALESCE(MAX(iid), 0) + 1 AS iid FROM milestones WHERE project_id = ?`).get(projectId) as { iid: number };
  const r = ctx.db.$client
    .prepare(`INSERT INTO milestones (project_id, iid, title, description, state, due_date, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(projectId, iid, opts.title ?? `Milestone ${iid}`, opts.description ?? '', opts.state ?? 'active', opts.dueDate ?? null, t, t);
  return { id: Number(r.lastInsertRowid), iid };
}

/** Set the milestone of an issue. */
export function setIssueMilestone(ctx: AppContext, issueId: number, milestoneId: number | null): void {
  ctx.db.$client.prepare(`UPDATE issues SET milestone_id = ? WHERE id = ?`).run(milestoneId, issueId);
}

/** Insert an open merge request row (branches `feature` -> `master`) of a project and return its id. */
export function insertMergeRequest(ctx: AppContext, projectId: number, opts: { state?: 'opened' | 'reopened' | 'closed' | 'merged'; authorId?: number | null } = {}): number {
  const t = now();
  const { iid } = ctx.db.$client.prepare(`SELECT COALESCE(MAX(iid), 0) + 1 AS iid FROM merge_requests WHERE target_project_id = ?`).get(projectId) as { iid: number };
  const r = ctx.db.$client
    .prepare(`INSERT INTO merge_requests (target_project_id, iid, source_project_id, source_branch, target_branch, title, state, author_id, created_at, updated_at)
              VALUES (?, ?, ?, ?, 'master', ?, ?, ?, ?, ?)`)
    .run(projectId, iid, projectId, `feature-${iid}`, `MR ${iid}`, opts.state ?? 'opened', opts.authorId ?? null, t, t);
  return Number(r.lastInsertRowid);
}

/** Callers of an authorization matrix: anonymous, outsiders, each member level, the owner and the admin. */
export type Actor = 'anonymous' | 'nonMember' | 'external' | 'guest' | 'reporter' | 'developer' | 'master' | 'owner' | 'admin';
export const ACTORS: Actor[] = ['anonymous', 'nonMember', 'external', 'guest', 'reporter', 'developer', 'master', 'owner', 'admin'];
const ACTOR_LEVEL: Record<Actor, number> = { anonymous: 0, nonMember: 0, external: 0, guest: 10, reporter: 20, developer: 30, master: 40, owner: 50, admin: 100 };

/**
 * The status an actor should get on a project of visibility `vis` (0, 10, 20): 401 anonymous, 404 when the project is
 * hidden from them, `ok` with at least level `min` (or as a logged-in non-member of a visible project when
 * `nonMembers`), else 403.
 */
export function expectedStatus(actor: Actor, vis: number, min: number, ok: number, nonMembers = false): number {
  if (actor === 'anonymous') return 401;
  const level = ACTOR_LEVEL[actor];
  const sees = level > 0 || (actor === 'external' ? vis === 20 : vis >= 10);
  if (!sees) return 404;
  if (level >= min) return ok;
  if (level === 0 && nonMembers) return ok;
  return 403;
}

/** A merge request row between branches (same project unless `sourceProjectId`), with no diff version; returns its id. */
export function insertMergeRequestBetween(ctx: AppContext, o: {
  targetProjectId: number; sourceBranch: string; targetBranch?: string; sourceProjectId?: number; title?: string; description?: string | null;
  authorId?: number | null; state?: 'opened' | 'reopened' | 'closed' | 'merged'; forceRemoveSourceBranch?: boolean;
}): number {
  const t = now();
  const { iid } = ctx.db.$client.prepare(`SELECT COALESCE(MAX(iid), 0) + 1 AS iid FROM merge_requests WHERE target_project_id = ?`).get(o.targetProjectId) as { iid: number };
  const r = ctx.db.$client
    .prepare(`INSERT INTO merge_requests (target_project_id, iid, source_project_id, source_branch, target_branch, title, description, state, author_id,
              force_remove_source_branch, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(o.targetProjectId, iid, o.sourceProjectId ?? o.targetProjectId, o.sourceBranch, o.targetBranch ?? 'master', o.title ?? `MR ${iid}`,
      o.description ?? null, o.state ?? 'opened', o.authorId ?? null, o.forceRemoveSourceBranch ? 1 : 0, t, t);
  return Number(r.lastInsertRowid);
}
