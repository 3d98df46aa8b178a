/**
 * The pipelines of a merge request (8.13 MergeRequest#all_pipelines): the source project's pipelines of the source
 * branch whose commit is one of the merge request's commits (its latest diff version), newest first.
 */
import type { Queries } from '../../db/layer/types.js';
import { pipelinesOfShas } from '../../db/ci/pipelines.js';
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
  return pipelinesOfShas(q, mr.sourceProjectId, mr.sourceBranch, shas, MERGE_REQUEST_PIPELINES_LIMIT);
}
