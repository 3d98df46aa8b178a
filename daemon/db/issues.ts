/**
 * Issues' data module: issues by id, the WHERE text of the issue lists, and their counts (from the issue_counts
 * counters of migration 0018 when the filter allows). `q`: the database or a transaction. Which issues a viewer may
 * see comes in as a condition from policy/.
 */
import type { Dialect, Queries } from './layer/types.js';
import { placeholders, rowsWithIds } from './sql.js';
import { toIssue } from './rows.js';
import type { IssueRow } from './schema-collaboration.js';

/** The issues of `ids` that are not deleted (repeats skipped). */
export async function liveIssuesByIds(q: Queries, ids: readonly number[]): Promise<Map<number, IssueRow>> {
  const wanted = [...new Set(ids)];
  if (!wanted.length) return new Map();
  return new Map((await rowsWithIds(q, 'issues', wanted)).filter((r) => r.deleted_at === null)
    .map((r) => [r.id as number, toIssue(r)]));
}

/** An SQL condition and its values. */
type Condition = { sql: string; args: readonly unknown[] };

/** Issue rows by id, in the order of `ids` (ids that are gone are skipped). */
export async function issuesInOrder(q: Queries, ids: readonly number[]): Promise<IssueRow[]> {
  if (ids.length === 0) return [];
  const rows = await rowsWithIds(q, 'issues', ids);
  const byId = new Map(rows.map((r) => [r.id as number, toIssue(r)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** What an issue list selects, over `issues i` (the scope's own condition and the viewer's comes from the caller). */
export interface IssueListWhere {
  scope: { kind: 'project'; projectId: number } | { kind: 'group'; groupId: number } | { kind: 'author' | 'assignee'; userId: number };
  /** Which of the scope's issues the viewer may see. */
  visible: Condition;
  state?: string;
  /** Already within int4. */
  iids?: number[];
  labels?: string[];
  labelsMode?: 'any' | 'all';
  milestone?: string;
}

/** The WHERE text over `issues i` and its values for a list. */
export function issueListWhere(_d: Dialect, f: IssueListWhere): { where: string; values: unknown[] } {
  const parts = ['i.deleted_at IS NULL'];
  const values: unknown[] = [];
  let labelProject: number | null = null;
  switch (f.scope.kind) {
    case 'project':
      parts.push('i.project_id = ?');
      values.push(f.scope.projectId);
      labelProject = f.scope.projectId;
      break;
    case 'group':
      parts.push('i.project_id IN (SELECT g.id FROM projects g WHERE g.namespace_id = ?)');
      values.push(f.scope.groupId);
      break;
    case 'author':
      parts.push('i.author_id = ?');
      values.push(f.scope.userId);
      break;
    case 'assignee':
      parts.push('i.assignee_id = ?');
      values.push(f.scope.userId);
      break;
  }
  parts.push(f.visible.sql);
  values.push(...f.visible.args);
  if (f.state === 'opened' || f.state === 'closed') {
    parts.push('i.state = ?');
    values.push(f.state);
  }
  if (f.iids) {
    parts.push(f.iids.length ? `i.iid IN (${placeholders(f.iids)})` : 'FALSE');
    values.push(...f.iids);
  }
  const labels = f.labels ?? [];
  if (labels.length) {
    const projectCond = labelProject !== null ? ` AND l.project_id = ${Math.trunc(labelProject)}` : '';
    const sub = (cond: string) =>
      `i.id IN (SELECT ll.target_id FROM label_links ll JOIN labels l ON l.id = ll.label_id WHERE ll.target_type = 'Issue' AND ${cond}${projectCond})`;
    if (f.labelsMode === 'all') {
      for (const l of labels) {
        parts.push(sub('l.title = ?'));
        values.push(l);
      }
    } else {
      parts.push(sub(`l.title IN (${placeholders(labels)})`));
      values.push(...labels);
    }
  }
  if (f.milestone !== undefined && f.milestone !== '') {
    const projectCond = labelProject !== null ? ` AND m.project_id = ${Math.trunc(labelProject)}` : '';
    parts.push(`i.milestone_id IN (SELECT m.id FROM milestones m WHERE m.title = ?${projectCond})`);
    values.push(f.milestone);
  }
  return { where: parts.join(' AND '), values };
}

/** Number of issues matching a list's WHERE text. */
export async function countIssuesWhere(q: Queries, where: string, values: readonly unknown[]): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM issues i WHERE ${where}`, [...values]))!.n);
}

const sum = async (q: Queries, sql: string, args: unknown[]) => Number((await q.get<{ n: number | null }>(sql, args))?.n ?? 0);
const stateOf = (state: string | null) => ({ sql: state ? ' AND c.state = ?' : '', args: state ? [state] : [] });

/** Live issues by an author (in `state` when given) in the projects `projects` selects (a subquery's condition), from the counters. */
export function authorIssueCount(q: Queries, authorId: number, state: string | null, projects: Condition): Promise<number> {
  const s = stateOf(state);
  return sum(q, `SELECT SUM(c.n) AS n FROM issue_counts c WHERE c.author_id = ?${s.sql} AND c.project_id IN (${projects.sql})`,
    [authorId, ...s.args, ...projects.args]);
}

/** Live issues of a project (in `state` when given; only the non-confidential ones unless `confidentialToo`), from the counters. */
export function projectIssueCount(q: Queries, projectId: number, state: string | null, confidentialToo: boolean): Promise<number> {
  const s = stateOf(state);
  return sum(q, `SELECT SUM(c.n) AS n FROM issue_counts c WHERE c.project_id = ?${confidentialToo ? '' : ' AND c.confidential = FALSE'}${s.sql}`,
    [projectId, ...s.args]);
}

/** Live confidential issues of a project (in `state` when given) the user wrote or is assigned. */
export function ownConfidentialIssueCount(q: Queries, projectId: number, state: string | null, userId: number | null): Promise<number> {
  return sum(q,
    `SELECT COUNT(*) AS n FROM issues i WHERE i.deleted_at IS NULL AND i.confidential = TRUE AND i.project_id = ?${state ? ' AND i.state = ?' : ''}
       AND (i.author_id = ? OR i.assignee_id = ?)`,
    [projectId, ...(state ? [state] : []), userId, userId],
  );
}

/** A live issue of the project by its global id (a valid row id), or null. */
export async function liveProjectIssue(q: Queries, projectId: number, issueId: number): Promise<IssueRow | null> {
  const row = await q.get<Record<string, unknown>>(`SELECT * FROM issues WHERE id = ? AND project_id = ? AND deleted_at IS NULL`, [issueId, projectId]);
  return row ? toIssue(row) : null;
}

/** The fields of a new issue (its iid is the project's next). */
export type NewIssue = Pick<IssueRow,
  'projectId' | 'title' | 'description' | 'state' | 'confidential' | 'authorId' | 'assigneeId' | 'milestoneId' | 'dueDate' | 'createdAt' | 'updatedAt' | 'closedAt'>;

/** Insert an issue with the project's next iid (the caller serialises the project's issue creates); the new row. */
export async function insertIssue(tx: Queries, i: NewIssue): Promise<IssueRow> {
  const iid = Number((await tx.get<{ n: number }>(`SELECT COALESCE(MAX(iid), 0) AS n FROM issues WHERE project_id = ?`, [i.projectId]))!.n) + 1;
  return toIssue((await tx.get<Record<string, unknown>>(
    `INSERT INTO issues (project_id, iid, title, description, state, confidential, author_id, assignee_id, milestone_id, due_date, created_at, updated_at, closed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [i.projectId, iid, i.title, i.description, i.state, i.confidential, i.authorId, i.assigneeId, i.milestoneId, i.dueDate, i.createdAt, i.updatedAt, i.closedAt],
  ))!);
}

/** The issue columns an update may set. */
export interface IssueColumns {
  title?: string;
  description?: string | null;
  due_date?: string | null;
  confidential?: boolean;
  assignee_id?: number | null;
  milestone_id?: number | null;
  state?: string;
  closed_at?: string | null;
}

/** Set the given columns of an issue with updated_at and updated_by_id; the row afterwards (undefined when it is gone). */
export async function updateIssueRow(tx: Queries, id: number, set: IssueColumns, at: string, userId: number): Promise<IssueRow | undefined> {
  const cols = Object.entries(set).filter(([, v]) => v !== undefined);
  const row = await tx.get<Record<string, unknown>>(
    `UPDATE issues SET ${[...cols.map(([c]) => `${c} = ?`), 'updated_at = ?', 'updated_by_id = ?'].join(', ')} WHERE id = ? RETURNING *`,
    [...cols.map(([, v]) => v), at, userId, id],
  );
  return row ? toIssue(row) : undefined;
}

/** Soft-delete an issue; the row as deleted, or null when it was deleted already. */
export async function softDeleteIssue(tx: Queries, id: number, userId: number, at: string): Promise<IssueRow | null> {
  const row = await tx.get<Record<string, unknown>>(`UPDATE issues SET deleted_at = ?, updated_by_id = ? WHERE id = ? AND deleted_at IS NULL RETURNING *`, [at, userId, id]);
  return row ? toIssue(row) : null;
}

/** Mark an issue moved to another (moved_to_id). */
export async function setIssueMovedTo(tx: Queries, id: number, movedToId: number): Promise<void> {
  await tx.run(`UPDATE issues SET moved_to_id = ? WHERE id = ?`, [movedToId, id]);
}

/** An issue by id (deleted ones too), or null. */
export async function issueById(q: Queries, id: number): Promise<IssueRow | null> {
  const row = await q.get<Record<string, unknown>>(`SELECT * FROM issues WHERE id = ?`, [id]);
  return row ? toIssue(row) : null;
}

/** The id of a project's live issue `iid`, or undefined. */
export async function liveIssueIdByIid(q: Queries, projectId: number, iid: number): Promise<number | undefined> {
  const r = await q.get<{ id: number }>('SELECT id FROM issues WHERE project_id = ? AND iid = ? AND deleted_at IS NULL', [projectId, iid]);
  return r ? Number(r.id) : undefined;
}

/** A project's live issue `iid`, or null. */
export async function liveIssueByIid(q: Queries, projectId: number, iid: number): Promise<IssueRow | null> {
  const r = await q.get<Record<string, unknown>>(`SELECT * FROM issues WHERE project_id = ? AND iid = ? AND deleted_at IS NULL`, [projectId, iid]);
  return r ? toIssue(r) : null;
}

/** Whether an issue is live and not closed. */
export async function issueIsOpen(q: Queries, id: number): Promise<boolean> {
  return !!(await q.get(`SELECT 1 AS x FROM issues WHERE id = ? AND deleted_at IS NULL AND state <> 'closed'`, [id]));
}
