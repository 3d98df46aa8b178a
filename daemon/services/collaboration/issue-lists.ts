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
import {
  confidentialIssuesWhere, issueProjectsWhere, readableIssuesWhere, seesConfidentialIssues, type SqlCondition,
} from '../../policy/permissions.js';
import type { Queries } from '../../db/layer/types.js';
import { INT_MAX } from './tx.js';
import {
  authorIssueCount, countIssuesWhere, issueListWhere, issuesInOrder, ownConfidentialIssueCount, projectIssueCount,
} from '../../db/issues.js';

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
  const iids = f.iids && f.iids.length ? f.iids.filter((n) => Math.abs(n) <= INT_MAX) : undefined;
  const labels = [...new Set((f.labels ?? []).map((l) => l.trim()).filter((l) => l !== ''))];
  const common = { state: f.state, iids, labels, labelsMode: f.labelsMode, milestone: f.milestone };
  // The author always reads their own confidential issues; the project must still be readable with issues on.
  const readable: SqlCondition = f.viewer ? readableIssuesWhere(d, f.viewer) : { sql: 'FALSE', args: [] };
  switch (f.scope.kind) {
    case 'project':
      return issueListWhere(d, {
        ...common, scope: { kind: 'project', projectId: f.scope.project.id }, visible: await confidentialIssuesWhere(ctx, f.viewer, f.scope.project, level),
      });
    case 'group':
      return issueListWhere(d, { ...common, scope: { kind: 'group', groupId: f.scope.groupId }, visible: readable });
    default:
      return issueListWhere(d, { ...common, scope: { kind: f.scope.kind, userId: f.scope.userId }, visible: readable });
  }
}

/** Whether a filter narrows more than scope and state (then the counters cannot answer). */
const narrowed = (f: IssueListFilter) =>
  (f.labels ?? []).some((l) => l.trim() !== '') || (f.milestone !== undefined && f.milestone !== '') || (f.iids?.length ?? 0) > 0;

/** The count from the issue_counts table (migration 0018, kept by triggers on both engines), or null when the filter needs a real count. */
async function countFromCounters(ctx: AppContext, q: Queries, f: IssueListFilter, level?: number): Promise<number | null> {
  if (narrowed(f) || f.scope.kind === 'group' || f.scope.kind === 'assignee') return null;
  const state = f.state === 'opened' || f.state === 'closed' ? f.state : null;
  if (f.scope.kind === 'author') {
    if (!f.viewer) return 0;
    return authorIssueCount(q, f.scope.userId, state, issueProjectsWhere(q.dialect, f.viewer));
  }
  const project = f.scope.project;
  if (await seesConfidentialIssues(ctx, f.viewer, project, level, q)) return projectIssueCount(q, project.id, state, true);
  const open = await projectIssueCount(q, project.id, state, false);
  const own = await ownConfidentialIssueCount(q, project.id, state, f.viewer?.id ?? null);
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
  return filteredCounts.getAsync(ctx, cacheKey(lq.where, lq.values), () => countIssuesWhere(q, lq.where, lq.values), true);
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
  return issuesInOrder(q, rows.map((r) => r.id));
}
