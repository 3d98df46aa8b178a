/**
 * Milestones' data module: project milestones by id, title and filter, their iids, and the issues of a milestone.
 * `q`: the database or a transaction. Validation and events stay in services/collaboration/milestones.ts.
 */
import type { Queries } from '../layer/types.js';
import { toIssue, toMilestone } from '../rows.js';
import type { IssueRow, MilestoneRow } from '../schema-collaboration.js';
import { placeholders, rowsWithIds } from '../sql.js';

type Rec = Record<string, unknown>;
const INT_MAX = 2147483647;
/** The LIMIT of "no limit". */
const MAX_ROWS = 2 ** 31 - 1;

/** A milestone of the project by id (ids beyond int4 match nothing), or null. */
export async function findProjectMilestone(q: Queries, projectId: number, milestoneId: number): Promise<MilestoneRow | null> {
  if (!Number.isSafeInteger(milestoneId) || Math.abs(milestoneId) > INT_MAX) return null;
  const row = await q.get<Rec>(`SELECT * FROM milestones WHERE project_id = ? AND id = ?`, [projectId, milestoneId]);
  return row ? toMilestone(row) : null;
}

/** A milestone of the project by title, or null (issue move assigns the same-titled milestone in the target). */
export async function findMilestoneByTitle(q: Queries, projectId: number, title: string): Promise<MilestoneRow | null> {
  const row = await q.get<Rec>(`SELECT * FROM milestones WHERE project_id = ? AND title = ?`, [projectId, title]);
  return row ? toMilestone(row) : null;
}

/** Milestones by id, for presenters (one query for a page). */
export async function milestonesById(q: Queries, ids: number[]): Promise<Map<number, MilestoneRow>> {
  const out = new Map<number, MilestoneRow>();
  if (ids.length === 0) return out;
  for (const m of await rowsWithIds<Rec>(q, 'milestones', ids)) {
    out.set(m.id as number, toMilestone(m));
  }
  return out;
}

/** Filters of GET /projects/:id/milestones: state `active`/`closed` (anything else: all) and iids. */
export interface MilestoneListFilter {
  state?: string;
  iids?: number[];
}

function listWhere(projectId: number, f: MilestoneListFilter): { sql: string; args: unknown[] } {
  const conds = ['project_id = ?'];
  const args: unknown[] = [projectId];
  if (f.state === 'active' || f.state === 'closed') conds.push('state = ?'), args.push(f.state);
  if (f.iids) {
    const iids = f.iids.filter((i) => Math.abs(i) <= INT_MAX);
    conds.push(iids.length ? `iid IN (${placeholders(iids)})` : 'FALSE');
    args.push(...iids);
  }
  return { sql: conds.join(' AND '), args };
}

/** Number of the project's milestones matching a filter. */
export async function countProjectMilestones(q: Queries, projectId: number, f: MilestoneListFilter): Promise<number> {
  const w = listWhere(projectId, f);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM milestones WHERE ${w.sql}`, w.args))!.n);
}

/** One page of the project's milestones matching a filter, newest first (8.x orders by id desc). */
export async function listProjectMilestones(q: Queries, projectId: number, f: MilestoneListFilter, limit = -1, offset = 0): Promise<MilestoneRow[]> {
  const w = listWhere(projectId, f);
  return (await q.all<Rec>(`SELECT * FROM milestones WHERE ${w.sql} ORDER BY id DESC LIMIT ? OFFSET ?`, [...w.args, limit < 0 ? MAX_ROWS : limit, offset]))
    .map(toMilestone);
}

/** The fields of a new milestone. */
export interface NewMilestone {
  projectId: number;
  title: string;
  description: string;
  dueDate: string | null;
  at: string;
}

/** Insert a milestone with the project's next iid; the new row (a unique violation when the title or iid was taken meanwhile). */
export async function insertMilestone(tx: Queries, m: NewMilestone): Promise<MilestoneRow> {
  const iid = Number((await tx.get<{ n: number | null }>(`SELECT MAX(iid) AS n FROM milestones WHERE project_id = ?`, [m.projectId]))?.n ?? 0) + 1;
  return toMilestone((await tx.get<Rec>(
    `INSERT INTO milestones (project_id, iid, title, description, due_date, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [m.projectId, iid, m.title, m.description, m.dueDate, m.at, m.at],
  ))!);
}

/** The state of a milestone, or undefined when it is gone. */
export async function milestoneState(q: Queries, id: number): Promise<string | undefined> {
  return (await q.get<{ state: string }>(`SELECT state FROM milestones WHERE id = ?`, [id]))?.state;
}

/** Update a milestone's title, description, due date and state (the defined ones); the row afterwards, or null when it is gone. */
export async function updateMilestoneRow(
  tx: Queries, id: number, set: { title?: string; description?: string; dueDate?: string; state?: string; at: string },
): Promise<MilestoneRow | null> {
  const sets: string[] = [];
  const args: unknown[] = [];
  if (set.title !== undefined) sets.push('title = ?'), args.push(set.title);
  if (set.description !== undefined) sets.push('description = ?'), args.push(set.description);
  if (set.dueDate !== undefined) sets.push('due_date = ?'), args.push(set.dueDate);
  if (set.state !== undefined) sets.push('state = ?'), args.push(set.state);
  sets.push('updated_at = ?'), args.push(set.at);
  const raw = await tx.get<Rec>(`UPDATE milestones SET ${sets.join(', ')} WHERE id = ? RETURNING *`, [...args, id]);
  return raw ? toMilestone(raw) : null;
}

/** Number of the live issues of a milestone that pass `issueFilter` (a condition over `issues i`). */
export async function countMilestoneIssues(q: Queries, milestone: MilestoneRow, issueFilter: { sql: string; args: unknown[] }): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM issues i
    WHERE i.milestone_id = ? AND i.project_id = ? AND i.deleted_at IS NULL AND ${issueFilter.sql}`, [milestone.id, milestone.projectId, ...issueFilter.args]))!.n);
}

/** One page of the live issues of a milestone in every state, newest first, that pass `issueFilter`. */
export async function listMilestoneIssues(
  q: Queries, milestone: MilestoneRow, issueFilter: { sql: string; args: unknown[] }, limit = -1, offset = 0,
): Promise<IssueRow[]> {
  return (await q.all<Rec>(`SELECT i.* FROM issues i
    WHERE i.milestone_id = ? AND i.project_id = ? AND i.deleted_at IS NULL AND ${issueFilter.sql}
    ORDER BY i.created_at DESC, i.id DESC LIMIT ? OFFSET ?`, [milestone.id, milestone.projectId, ...issueFilter.args, limit < 0 ? MAX_ROWS : limit, offset]))
    .map(toIssue);
}
