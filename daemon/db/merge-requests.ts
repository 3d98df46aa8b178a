/** Merge requests' data module (the reads the hooks and presenters need). `q`: the database or a transaction. */
import type { Queries } from './layer/types.js';

/** The `commits` JSON text of a merge request's latest diff (newest commit first), or null without a diff. */
export async function latestDiffCommitsJson(q: Queries, mergeRequestId: number): Promise<string | null> {
  const row = await q.get<{ commits: string }>(`SELECT commits FROM merge_request_diffs WHERE merge_request_id = ? ORDER BY id DESC LIMIT 1`, [mergeRequestId]);
  return row?.commits ?? null;
}
