/** The merge_request_diffs table's data module: a merge request's diff versions. `q`: the database or a transaction. */
import type { Queries } from './layer/types.js';
import { validId } from './merge-requests.js';
import { toMergeRequestDiff } from './rows.js';
import type { MergeRequestDiffRow } from './schema-merge-requests.js';

type Rec = Record<string, unknown>;

/** The latest diff version of each merge request (one query), keyed by merge request id. */
export async function latestDiffs(q: Queries, mergeRequestIds: number[]): Promise<Map<number, MergeRequestDiffRow>> {
  const ids = [...new Set(mergeRequestIds)].filter(validId);
  if (ids.length === 0) return new Map();
  const rows = await q.all<Rec>(
    `SELECT d.* FROM merge_request_diffs d WHERE d.id IN (
       SELECT MAX(x.id) FROM merge_request_diffs x WHERE x.merge_request_id IN ${q.dialect.inIds} GROUP BY x.merge_request_id)`,
    [q.dialect.ids(ids)],
  );
  return new Map(rows.map((r) => [r.merge_request_id as number, toMergeRequestDiff(r)]));
}

/**
 * The source head of each merge request's latest diff version (the presenter's `sha`), without reading the versions'
 * stored commit lists (a 5,000-commit merge request keeps 1.5 MB of them).
 */
export async function latestDiffHeads(q: Queries, mergeRequestIds: number[]): Promise<Map<number, string | null>> {
  const ids = [...new Set(mergeRequestIds)].filter(validId);
  if (ids.length === 0) return new Map();
  const rows = await q.all<{ id: number; head: string | null }>(
    `SELECT d.merge_request_id AS id, d.head_commit_sha AS head FROM merge_request_diffs d WHERE d.id IN (
       SELECT MAX(x.id) FROM merge_request_diffs x WHERE x.merge_request_id IN ${q.dialect.inIds} GROUP BY x.merge_request_id)`,
    [q.dialect.ids(ids)],
  );
  return new Map(rows.map((r) => [r.id, r.head]));
}
