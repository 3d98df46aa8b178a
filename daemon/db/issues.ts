/**
 * Issues' data module: issues by id, the WHERE text of the issue lists, and their counts (from the issue_counts
 * counters of migration 0018 when the filter allows). `q`: the database or a transaction. Which issues a viewer may
 * see comes in as a condition from policy/.
 */
import type { Dialect, Queries } from './layer/types.js';
import { placeholders } from './sql.js';
import { toIssue } from './rows.js';
import type { IssueRow } from './schema-collaboration.js';

/** The issues of `ids` that are not deleted (repeats skipped). */
export async function liveIssuesByIds(q: Queries, ids: readonly number[]): Promise<Map<number, IssueRow>> {
  const wanted = [...new Set(ids)];
  if (!wanted.length) return new Map();
  return new Map((await q.all(`SELECT * FROM issues WHERE id IN ${q.dialect.inIds} AND deleted_at IS NULL`, [q.dialect.ids(wanted)]))
    .map((r) => [r.id as number, toIssue(r)]));
}

/** An SQL condition and its values. */
type Condition = { sql: string; args: readonly unknown[] };

/** Issue rows by id, in the order of `ids` (ids that are gone are skipped). */
export async function issuesInOrder(q: Queries, ids: readonly number[]): Promise<IssueRow[]> {
  if (ids.length === 0) return [];
  const rows = await q.all<Record<string, unknown>>(`SELECT * FROM issues WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(ids)]);
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
