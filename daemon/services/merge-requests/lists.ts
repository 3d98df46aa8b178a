/** Merge request lists of a project (GET /projects/:id/merge_requests): iid, state, order_by, sort, pagination. */
import type { AppContext } from '../../context.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { statement } from '../../db/statements.js';
import { placeholders } from '../../db/sql.js';
import { mergeRequestsByIds } from './find.js';

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
    parts.push(`m.iid IN (${placeholders(f.iids)})`);
    values.push(...f.iids);
  }
  return { where: parts.join(' AND '), values };
}

/** How many merge requests a filter matches (X-Total). */
export function countMergeRequests(ctx: AppContext, f: MergeRequestListFilter): number {
  const { where, values } = whereOf(f);
  return (statement(ctx, `SELECT COUNT(*) AS n FROM merge_requests m WHERE ${where}`).get(...values) as { n: number }).n;
}

/** One page of a list, newest first unless told (ties by id). */
export function listMergeRequests(ctx: AppContext, f: MergeRequestListFilter, limit: number, offset: number): MergeRequestRow[] {
  const { where, values } = whereOf(f);
  const col = f.orderBy === 'updated_at' ? 'm.updated_at' : 'm.created_at';
  const dir = f.sort === 'asc' ? 'ASC' : 'DESC';
  const ids = (statement(ctx, `SELECT m.id AS id FROM merge_requests m WHERE ${where} ORDER BY ${col} ${dir}, m.id ${dir} LIMIT ? OFFSET ?`)
    .all(...values, limit, offset) as { id: number }[]).map((r) => r.id);
  return mergeRequestsByIds(ctx, ids);
}

/** Open merge requests per project (for `open_merge_requests_count`-style counters), one query. */
export function openMergeRequestsCounts(ctx: AppContext, projectIds: number[]): Map<number, number> {
  if (projectIds.length === 0) return new Map();
  return new Map((statement(ctx,
    `SELECT target_project_id AS id, COUNT(*) AS n FROM merge_requests WHERE target_project_id IN (${placeholders(projectIds)})
     AND state IN ('opened', 'reopened') AND deleted_at IS NULL GROUP BY target_project_id`,
  ).all(...projectIds) as { id: number; n: number }[]).map((r) => [r.id, r.n]));
}
