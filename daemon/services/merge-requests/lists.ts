/**
 * Merge request lists of a project (GET /projects/:id/merge_requests): iid, state, order_by, sort, pagination; and a
 * user's merge requests across projects (the web pages' dashboard).
 */
import type { AppContext } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { placeholders } from '../../db/sql.js';
import { keysetPage, type KeysetList } from '../../db/keyset.js';
import { mergeRequestsByIds } from './find.js';
import type { UserRow } from '../../db/schema.js';
import { mergeRequestProjectsWhere } from '../../policy/permissions.js';
import { countedMergeRequests, countMergeRequestsWhere } from '../../db/merge-requests.js';

/** The filters of a project's merge request list (unknown order/sort values already fell back to the defaults). */
export interface MergeRequestListFilter {
  projectId: number;
  /** opened (opened and reopened), closed, merged; anything else lists every state (8.x). */
  state?: string;
  iids?: number[];
  orderBy?: 'created_at' | 'updated_at';
  sort?: 'asc' | 'desc';
}

/** The WHERE text and its values of a filter. */
function whereOf(f: MergeRequestListFilter): { where: string; values: unknown[] } {
  const parts = ['m.target_project_id = ?', 'm.deleted_at IS NULL'];
  const values: unknown[] = [f.projectId];
  if (f.state === 'opened') parts.push(`m.state IN ('opened', 'reopened')`);
  else if (f.state === 'closed' || f.state === 'merged') {
    parts.push('m.state = ?');
    values.push(f.state);
  }
  if (f.iids && f.iids.length) {
    // an iid beyond the integer column names nothing (and must not reach PostgreSQL's int4 comparison)
    const iids = f.iids.filter((n) => Number.isSafeInteger(n) && Math.abs(n) <= 2147483647);
    if (iids.length) {
      parts.push(`m.iid IN (${placeholders(iids)})`);
      values.push(...iids);
    } else parts.push('1 = 0');
  }
  return { where: parts.join(' AND '), values };
}

/** The states a state filter counts (opened lists reopened ones too; no filter: every state, `locked` included). */
function statesOf(state: string | undefined): string[] | null {
  if (state === 'opened') return ['opened', 'reopened'];
  if (state === 'closed' || state === 'merged') return [state];
  return null;
}

/**
 * How many merge requests a filter matches (X-Total): from the live counts of migration 0023 (a few rows), or a count
 * when iids narrow the list.
 */
export async function countMergeRequests(q: Queries, f: MergeRequestListFilter): Promise<number> {
  if (!f.iids || f.iids.length === 0) {
    const states = statesOf(f.state);
    return countedMergeRequests(q, f.projectId, states ?? null);
  }
  const { where, values } = whereOf(f);
  return countMergeRequestsWhere(q, where, values);
}

/** The ordered list of a filter, as db/keyset.ts reads its pages (exported for the query plan checks of tests). */
export function mergeRequestKeysetList(f: MergeRequestListFilter): KeysetList {
  const { where, values } = whereOf(f);
  return {
    from: 'merge_requests m', where, values, key: f.orderBy === 'updated_at' ? 'm.updated_at' : 'm.created_at', id: 'm.id', desc: f.sort !== 'asc',
    select: 'm.id AS id',
  };
}

/**
 * One page of a list, newest first unless told (ties by id). With `total` a deep page costs what the first does
 * (db/keyset.ts: read from the nearer end, or from a keyset bookmark).
 */
export async function listMergeRequests(
  ctx: AppContext, q: Queries, f: MergeRequestListFilter, limit: number, offset: number, total?: number,
): Promise<MergeRequestRow[]> {
  const ids = (await keysetPage<{ id: number }>(ctx, q, mergeRequestKeysetList(f), limit, offset, total)).map((r) => Number(r.id));
  return mergeRequestsByIds(q, ids);
}

/** A user's merge requests across the projects a viewer may read (the dashboard of the web pages). */
export interface UserMergeRequestFilter {
  viewer: UserRow;
  /** Assigned to this user, or authored by them. */
  role: 'assignee' | 'author';
  userId: number;
  /** As MergeRequestListFilter's state. */
  state?: string;
}

/** The WHERE of a user's merge requests: theirs, live, in a project whose merge requests the viewer may list (policy). */
function userWhereOf(q: Queries, f: UserMergeRequestFilter): { where: string; values: unknown[] } {
  const projects = mergeRequestProjectsWhere(q.dialect, f.viewer);
  const parts = [`m.${f.role === 'assignee' ? 'assignee_id' : 'author_id'} = ?`, 'm.deleted_at IS NULL', `m.target_project_id IN (${projects.sql})`];
  const values: unknown[] = [f.userId, ...projects.args];
  const states = statesOf(f.state);
  if (states) {
    parts.push(`m.state IN (${placeholders(states)})`);
    values.push(...states);
  }
  return { where: parts.join(' AND '), values };
}

/** How many merge requests a user filter matches. */
export async function countUserMergeRequests(q: Queries, f: UserMergeRequestFilter): Promise<number> {
  const { where, values } = userWhereOf(q, f);
  return countMergeRequestsWhere(q, where, values);
}

/** One page of a user filter's merge requests, newest first. */
export async function listUserMergeRequests(ctx: AppContext, q: Queries, f: UserMergeRequestFilter, limit: number, offset: number, total?: number): Promise<MergeRequestRow[]> {
  const { where, values } = userWhereOf(q, f);
  const list: KeysetList = { from: 'merge_requests m', where, values, key: 'm.created_at', id: 'm.id', desc: true };
  const ids = (await keysetPage<{ id: number }>(ctx, q, { ...list, select: 'm.id AS id' }, limit, offset, total)).map((r) => Number(r.id));
  return mergeRequestsByIds(q, ids);
}
