/**
 * Merge request lists of a project (GET /projects/:id/merge_requests): iid, state, order_by, sort, pagination; and a
 * user's merge requests across projects (the web pages' dashboard).
 */
import type { AppContext } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { keysetPage, type KeysetList } from '../../db/keyset.js';
import { mergeRequestsByIds } from './find.js';
import type { UserRow } from '../../db/schema.js';
import { mergeRequestProjectsWhere } from '../../policy/permissions.js';
import {
  countedMergeRequests, countMergeRequestsWhere, mergeRequestListWhere, mergeRequestStatesOf, userMergeRequestsWhere, type MergeRequestListFilter,
} from '../../db/merge-requests.js';

export type { MergeRequestListFilter };

/**
 * How many merge requests a filter matches (X-Total): from the live counts of migration 0023 (a few rows), or a count
 * when iids narrow the list.
 */
export async function countMergeRequests(q: Queries, f: MergeRequestListFilter): Promise<number> {
  if (!f.iids || f.iids.length === 0) {
    const states = mergeRequestStatesOf(f.state);
    return countedMergeRequests(q, f.projectId, states ?? null);
  }
  const { where, values } = mergeRequestListWhere(f);
  return countMergeRequestsWhere(q, where, values);
}

/** The ordered list of a filter, as db/keyset.ts reads its pages (exported for the query plan checks of tests). */
export function mergeRequestKeysetList(f: MergeRequestListFilter): KeysetList {
  const { where, values } = mergeRequestListWhere(f);
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
  return userMergeRequestsWhere(f.role, f.userId, mergeRequestStatesOf(f.state), mergeRequestProjectsWhere(q.dialect, f.viewer));
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
