/** Merge requests' data module (the reads the hooks and presenters need). `q`: the database or a transaction. */
import type { Queries } from './layer/types.js';

/** The `commits` JSON text of a merge request's latest diff (newest commit first), or null without a diff. */
export async function latestDiffCommitsJson(q: Queries, mergeRequestId: number, headChars?: number): Promise<string | null> {
  // headChars: only the first characters of the list (a diff version of 5,000 commits is over a megabyte of JSON)
  const column = headChars === undefined ? 'commits' : `substr(commits, 1, ${Math.trunc(headChars)})`;
  const row = await q.get<{ commits: string }>(`SELECT ${column} AS commits FROM merge_request_diffs WHERE merge_request_id = ? ORDER BY id DESC LIMIT 1`, [mergeRequestId]);
  return row?.commits ?? null;
}

/** The id of a project's live merge request `iid` (as its target project), or undefined. */
export async function liveMergeRequestIdByIid(q: Queries, projectId: number, iid: number): Promise<number | undefined> {
  const r = await q.get<{ id: number }>('SELECT id FROM merge_requests WHERE target_project_id = ? AND iid = ? AND deleted_at IS NULL', [projectId, iid]);
  return r ? Number(r.id) : undefined;
}
