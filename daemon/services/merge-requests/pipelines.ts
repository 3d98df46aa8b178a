/**
 * The pipelines of a merge request (8.13 MergeRequest#all_pipelines): the source project's pipelines of the source
 * branch whose commit is one of the merge request's commits (its latest diff version), newest first.
 */
import type { Queries } from '../../db/layer/types.js';
import { toPipeline } from '../../db/rows.js';
import type { PipelineRow } from '../../db/schema-ci.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { diffCommits, latestDiff } from './find.js';

/** At most this many pipelines are listed for one merge request. */
export const MERGE_REQUEST_PIPELINES_LIMIT = 100;

/** The merge request's pipelines, newest first (none when its source project is gone). */
export async function mergeRequestPipelines(q: Queries, mr: Pick<MergeRequestRow, 'id' | 'sourceProjectId' | 'sourceBranch'>): Promise<PipelineRow[]> {
  if (mr.sourceProjectId === null) return [];
  const shas = diffCommits(await latestDiff(q, mr.id)).map((c) => c.id);
  if (!shas.length) return [];
  const set = q.dialect.name === 'postgres' ? 'json_array_elements_text(?::json) AS t(value)' : 'json_each(?)';
  const rows = await q.all<Record<string, unknown>>(
    `SELECT * FROM pipelines WHERE project_id = ? AND ref = ? AND sha IN (SELECT value FROM ${set}) ORDER BY id DESC LIMIT ?`,
    [mr.sourceProjectId, mr.sourceBranch, JSON.stringify(shas), MERGE_REQUEST_PIPELINES_LIMIT],
  );
  return rows.map(toPipeline);
}
