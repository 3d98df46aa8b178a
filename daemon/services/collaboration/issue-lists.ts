/**
 * Issue list queries: GET /issues (the caller's), /groups/:id/issues and /projects/:id/issues with their filters, and
 * the open issue counts of projects. A page costs the page, not the offset: the ordered walk reads ids only from the
 * partial covering indexes of migration 0018 (live issues), from the nearer end or a keyset bookmark (db/keyset.ts).
 */
import type { AppContext } from '../../context.js';
import type { IssueRow } from '../../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { UntilNextWrite } from '../../db/read-cache.js';
import { keysetPage, type KeysetList } from '../../db/keyset.js';
import { statement } from '../../db/statements.js';
import { placeholders } from '../../db/sql.js';
import { confidentialIssuesSql, issueProjectsSql, readableIssuesSql, seesConfidentialIssues } from '../../policy/permissions.js';
import { toIssue } from '../../db/rows.js';
import { IN_IDS, idList } from '../../db/sql.js';

/** Which issues a list covers. */
export type IssueListScope =
  | { kind: 'project'; project: ProjectRow }
  | { kind: 'group'; groupId: number }
  | { kind: 'author'; userId: number };

/** The filters of the three issue lists (already parsed: unknown order/sort values fall back to the defaults). */
export interface IssueListFilter {
  scope: IssueListScope;
  viewer: UserRow;
  /** opened or closed; anything else lists every state. */
  state?: string;
  labels?: string[];
  /** `any` (GET /issues and project lists) or `all` (group lists). */
  labelsMode?: 'any' | 'all';
  milestone?: string;
  iids?: number[];
  orderBy?: 'created_at' | 'updated_at';
  sort?: 'asc' | 'desc';
}

/** The WHERE text and its values for a filter. */
function whereOf(ctx: AppContext, f: IssueListFilter): { where: string; values: unknown[] } {
  const parts = ['i.deleted_at IS NULL'];
  const values: unknown[] = [];
  let labelProject: number | null = null;
  switch (f.scope.kind) {
    case 'project':
      parts.push('i.project_id = ?');
      values.push(f.scope.project.id);
      parts.push(confidentialIssuesSql(ctx, f.viewer, f.scope.project));
      labelProject = f.scope.project.id;
      break;
    case 'group':
      parts.push('i.project_id IN (SELECT g.id FROM projects g WHERE g.namespace_id = ?)');
      values.push(f.scope.groupId);
      parts.push(readableIssuesSql(f.viewer));
      break;
    case 'author':
      parts.push('i.author_id = ?');
      values.push(f.scope.userId);
      // The author always reads their own confidential issues; the project must still be readable with issues on.
      parts.push(readableIssuesSql(f.viewer));
      break;
  }
  if (f.state === 'opened' || f.state === 'closed') {
    parts.push('i.state = ?');
    values.push(f.state);
  }
  if (f.iids && f.iids.length) {
    parts.push(`i.iid IN (${placeholders(f.iids)})`);
    values.push(...f.iids);
  }
  const labels = [...new Set((f.labels ?? []).map((l) => l.trim()).filter((l) => l !== ''))];
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

/** Whether a filter narrows more than scope and state (then the counters cannot answer). */
const narrowed = (f: IssueListFilter) =>
  (f.labels ?? []).some((l) => l.trim() !== '') || (f.milestone !== undefined && f.milestone !== '') || (f.iids?.length ?? 0) > 0;

/** The count from the issue_counts table (migration 0018), or null when the filter needs a real count. */
function countFromCounters(ctx: AppContext, f: IssueListFilter): number | null {
  if (narrowed(f) || f.scope.kind === 'group') return null;
  const state = f.state === 'opened' || f.state === 'closed' ? f.state : null;
  const stateSql = state ? ' AND c.state = ?' : '';
  const stateArgs = state ? [state] : [];
  const sum = (sql: string, ...args: unknown[]) => ((statement(ctx, sql).get(...args) as { n: number | null }).n ?? 0);
  if (f.scope.kind === 'author') {
    const projects = ` AND c.project_id IN (${issueProjectsSql(f.viewer)})`;
    return sum(`SELECT SUM(c.n) AS n FROM issue_counts c WHERE c.author_id = ?${stateSql}${projects}`, f.scope.userId, ...stateArgs);
  }
  const project = f.scope.project;
  if (seesConfidentialIssues(ctx, f.viewer, project)) {
    return sum(`SELECT SUM(c.n) AS n FROM issue_counts c WHERE c.project_id = ?${stateSql}`, project.id, ...stateArgs);
  }
  const open = sum(`SELECT SUM(c.n) AS n FROM issue_counts c WHERE c.project_id = ? AND c.confidential = 0${stateSql}`, project.id, ...stateArgs);
  const own = sum(
    `SELECT COUNT(*) AS n FROM issues i WHERE i.deleted_at IS NULL AND i.confidential = 1 AND i.project_id = ?${state ? ' AND i.state = ?' : ''}
       AND (i.author_id = ? OR i.assignee_id = ?)`,
    project.id, ...stateArgs, f.viewer.id, f.viewer.id,
  );
  return open + own;
}

/**
 * Counts and page ids of the lists the counters cannot answer (labels, milestone, iids, groups), exact until the next
 * write (as project list pages are): a filter that matches few of many issues otherwise costs a walk of all of them
 * on every request.
 */
const filteredCounts = new UntilNextWrite<number>(1000);
const filteredPages = new UntilNextWrite<{ id: number }[]>(1000);
const cacheKey = (where: string, values: unknown[]) => `${where}\u0000${JSON.stringify(values)}`;

/** Number of issues a filter matches (X-Total). */
export function countIssues(ctx: AppContext, f: IssueListFilter): number {
  const counted = countFromCounters(ctx, f);
  if (counted !== null) return counted;
  const { where, values } = whereOf(ctx, f);
  return filteredCounts.get(ctx, cacheKey(where, values), () =>
    (statement(ctx, `SELECT COUNT(*) AS n FROM issues i WHERE ${where}`).get(...values) as { n: number }).n);
}

/** Issue rows by id, in the order of `ids`. */
export function issuesByIds(ctx: AppContext, ids: number[]): IssueRow[] {
  if (ids.length === 0) return [];
  const rows = statement(ctx, `SELECT * FROM issues WHERE id IN ${IN_IDS}`).all(idList(ids)) as Record<string, unknown>[];
  const byId = new Map(rows.map((r) => [r.id as number, toIssue(r)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/**
 * One page of a list. With `total` (from countIssues), a page in the second half is read backwards from the end,
 * and a deep page starts from a keyset bookmark (db/keyset.ts), so any page costs what the first does.
 */
export function listIssues(ctx: AppContext, f: IssueListFilter, limit: number, offset: number, total?: number): IssueRow[] {
  const { where, values } = whereOf(ctx, f);
  const list: KeysetList = {
    from: 'issues i', where, values, key: f.orderBy === 'updated_at' ? 'i.updated_at' : 'i.created_at', id: 'i.id', desc: f.sort !== 'asc',
  };
  const cached = narrowed(f) || f.scope.kind === 'group';
  const rows = keysetPage<{ id: number }>(ctx, list, limit, offset, total, (text, args, run) =>
    (cached ? filteredPages.get(ctx, cacheKey(text, args), run) : run()));
  return issuesByIds(ctx, rows.map((r) => r.id));
}

/** Open (not deleted) issues per project, for `open_issues_count`: one query on the counters for a page of projects. */
export function openIssuesCounts(ctx: AppContext, projectIds: number[]): Map<number, number> {
  if (projectIds.length === 0) return new Map();
  return new Map((statement(ctx,
    `SELECT c.project_id AS id, SUM(c.n) AS n FROM issue_counts c WHERE c.project_id IN (${placeholders(projectIds)}) AND c.state = 'opened' GROUP BY c.project_id`,
  ).all(...projectIds) as { id: number; n: number }[]).map((r) => [r.id, r.n]));
}
