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
import { placeholders } from '../../db/sql.js';
import {
  confidentialIssuesWhere, issueProjectsWhere, readableIssuesWhere, seesConfidentialIssues, type SqlCondition,
} from '../../policy/permissions.js';
import type { Queries } from '../../db/layer/types.js';
import { INT_MAX } from './tx.js';
import { toIssue } from '../../db/rows.js';

/** Which issues a list covers. */
export type IssueListScope =
  | { kind: 'project'; project: ProjectRow }
  | { kind: 'group'; groupId: number }
  | { kind: 'author'; userId: number }
  /** The issues assigned to a user (the dashboard of the web pages). */
  | { kind: 'assignee'; userId: number };

/** The filters of the three issue lists (already parsed: unknown order/sort values fall back to the defaults). */
export interface IssueListFilter {
  scope: IssueListScope;
  /** null: an anonymous reader of a public project's page (project scope only; other scopes then match nothing). */
  viewer: UserRow | null;
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

/** The WHERE text and its values for a filter (`level`: the viewer's access level on a project list's project, when known). */
async function whereOf(ctx: AppContext, f: IssueListFilter, level?: number): Promise<{ where: string; values: unknown[] }> {
  const d = ctx.data.dialect;
  const parts = ['i.deleted_at IS NULL'];
  const values: unknown[] = [];
  const add = (c: SqlCondition) => { parts.push(c.sql); values.push(...c.args); };
  let labelProject: number | null = null;
  switch (f.scope.kind) {
    case 'project':
      parts.push('i.project_id = ?');
      values.push(f.scope.project.id);
      add(await confidentialIssuesWhere(ctx, f.viewer, f.scope.project, level));
      labelProject = f.scope.project.id;
      break;
    case 'group':
      parts.push('i.project_id IN (SELECT g.id FROM projects g WHERE g.namespace_id = ?)');
      values.push(f.scope.groupId);
      add(f.viewer ? readableIssuesWhere(d, f.viewer) : { sql: 'FALSE', args: [] });
      break;
    case 'author':
      parts.push('i.author_id = ?');
      values.push(f.scope.userId);
      // The author always reads their own confidential issues; the project must still be readable with issues on.
      add(f.viewer ? readableIssuesWhere(d, f.viewer) : { sql: 'FALSE', args: [] });
      break;
    case 'assignee':
      parts.push('i.assignee_id = ?');
      values.push(f.scope.userId);
      add(f.viewer ? readableIssuesWhere(d, f.viewer) : { sql: 'FALSE', args: [] });
      break;
  }
  if (f.state === 'opened' || f.state === 'closed') {
    parts.push('i.state = ?');
    values.push(f.state);
  }
  const iids = (f.iids ?? []).filter((n) => Math.abs(n) <= INT_MAX);
  if (f.iids && f.iids.length) {
    parts.push(iids.length ? `i.iid IN (${placeholders(iids)})` : 'FALSE');
    values.push(...iids);
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

/** The count from the issue_counts table (migration 0018, kept by triggers on both engines), or null when the filter needs a real count. */
async function countFromCounters(ctx: AppContext, q: Queries, f: IssueListFilter, level?: number): Promise<number | null> {
  if (narrowed(f) || f.scope.kind === 'group' || f.scope.kind === 'assignee') return null;
  const state = f.state === 'opened' || f.state === 'closed' ? f.state : null;
  const stateSql = state ? ' AND c.state = ?' : '';
  const stateArgs = state ? [state] : [];
  const sum = async (sql: string, args: unknown[]) => Number((await q.get<{ n: number | null }>(sql, args))?.n ?? 0);
  if (f.scope.kind === 'author') {
    if (!f.viewer) return 0;
    const projects = issueProjectsWhere(q.dialect, f.viewer);
    return sum(`SELECT SUM(c.n) AS n FROM issue_counts c WHERE c.author_id = ?${stateSql} AND c.project_id IN (${projects.sql})`,
      [f.scope.userId, ...stateArgs, ...projects.args]);
  }
  const project = f.scope.project;
  if (await seesConfidentialIssues(ctx, f.viewer, project, level, q)) {
    return sum(`SELECT SUM(c.n) AS n FROM issue_counts c WHERE c.project_id = ?${stateSql}`, [project.id, ...stateArgs]);
  }
  const open = await sum(`SELECT SUM(c.n) AS n FROM issue_counts c WHERE c.project_id = ? AND c.confidential = FALSE${stateSql}`, [project.id, ...stateArgs]);
  const own = await sum(
    `SELECT COUNT(*) AS n FROM issues i WHERE i.deleted_at IS NULL AND i.confidential = TRUE AND i.project_id = ?${state ? ' AND i.state = ?' : ''}
       AND (i.author_id = ? OR i.assignee_id = ?)`,
    [project.id, ...stateArgs, f.viewer?.id ?? null, f.viewer?.id ?? null],
  );
  return open + own;
}

/**
 * Counts and page ids of the lists the counters cannot answer (labels, milestone, iids, groups), exact until the next
 * write on SQLite (as project list pages are): a filter that matches few of many issues otherwise costs a walk of all
 * of them on every request. On PostgreSQL they are not cached (several daemons: docs/design/postgres.md, "Caches").
 */
const filteredCounts = new UntilNextWrite<number>(1000);
const filteredPages = new UntilNextWrite<{ id: number }[]>(1000);
const cacheKey = (where: string, values: unknown[]) => `${where}\u0000${JSON.stringify(values)}`;

/** A list's condition, computed once per request (before its snapshot): pass it to countIssues and listIssues. */
export interface IssueListQuery {
  filter: IssueListFilter;
  where: string;
  values: unknown[];
  level?: number;
}

/** The query of a filter (`level`: the viewer's access level on a project list's project, when the route has it). */
export async function issueListQuery(ctx: AppContext, f: IssueListFilter, level?: number): Promise<IssueListQuery> {
  const { where, values } = await whereOf(ctx, f, level);
  return { filter: f, where, values, level };
}

/** Number of issues a filter matches (X-Total), read on `q` (the list's snapshot). */
export async function countIssues(ctx: AppContext, q: Queries, lq: IssueListQuery): Promise<number> {
  const counted = await countFromCounters(ctx, q, lq.filter, lq.level);
  if (counted !== null) return counted;
  return filteredCounts.getAsync(ctx, cacheKey(lq.where, lq.values), async () =>
    Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM issues i WHERE ${lq.where}`, lq.values))!.n), true);
}

/** Issue rows by id, in the order of `ids`. */
export async function issuesByIds(q: Queries, ids: number[]): Promise<IssueRow[]> {
  if (ids.length === 0) return [];
  const rows = await q.all<Record<string, unknown>>(`SELECT * FROM issues WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(ids)]);
  const byId = new Map(rows.map((r) => [r.id as number, toIssue(r)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The ordered list of a query, as db/keyset.ts reads its pages (exported for the query plan checks of tests). */
export function issueKeysetList(lq: IssueListQuery): KeysetList {
  const f = lq.filter;
  return { from: 'issues i', where: lq.where, values: lq.values, key: f.orderBy === 'updated_at' ? 'i.updated_at' : 'i.created_at', id: 'i.id', desc: f.sort !== 'asc' };
}

/**
 * One page of a list. With `total` (from countIssues), a page in the second half is read backwards from the end,
 * and (SQLite) a deep page starts from a keyset bookmark (db/keyset.ts), so any page costs what the first does.
 */
export async function listIssues(ctx: AppContext, q: Queries, lq: IssueListQuery, limit: number, offset: number, total?: number): Promise<IssueRow[]> {
  const f = lq.filter;
  const list = issueKeysetList(lq);
  const cached = narrowed(f) || f.scope.kind === 'group' || f.scope.kind === 'assignee';
  const read = () => keysetPage<{ id: number }>(ctx, q, list, limit, offset, total);
  const rows = cached
    ? await filteredPages.getAsync(ctx, `${cacheKey(lq.where, lq.values)}\u0000${list.key}:${list.desc}:${limit}:${offset}:${total}`, read, true)
    : await read();
  return issuesByIds(q, rows.map((r) => r.id));
}
