/**
 * What a merge needs to know before it writes anything (8.x MergeRequest#mergeable_state?, #can_be_merged_by?,
 * #mergeable_ci_state?, #diff_head_sha): who may merge, the heads of both branches (a fork's source commits fetched into
 * the target repository by diffs.ts), whether the merge is clean, the head pipeline, the default commit message.
 */
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { PipelineRow } from '../../db/schema-ci.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { branchRef } from '../../git/refs.js';
import { mergeTrees } from '../../git/merge.js';
import { canMergeIntoBranch } from '../repository/protected-branches.js';
import { pipelineFor } from '../ci/pipelines.js';
import { projectRepository } from '../repository/repositories.js';
import { branchHead, endsOf, sourceHeadInTarget } from './diffs.js';

/** Pipeline statuses that are still going (8.x `active?`). */
const ACTIVE = new Set(['created', 'pending', 'running']);

/** Whether a pipeline is unfinished. */
export const isActivePipeline = (p: Pick<PipelineRow, 'status'>): boolean => ACTIVE.has(p.status);

/**
 * Whether `user` may merge the merge request (8.x can_be_merged_by?): push or merge access to the target branch of the
 * target project, so its protection applies (a developer cannot merge into a branch only masters may push).
 */
export function canMergeMergeRequest(ctx: AppContext, user: UserRow | null, target: ProjectRow, mr: Pick<MergeRequestRow, 'targetBranch'>): Promise<boolean> {
  return canMergeIntoBranch(ctx, user, target, mr.targetBranch);
}

/** Whether `user` may cancel the automatic merge: who may merge, and the merge request's author (8.x). */
export async function canCancelAutoMerge(ctx: AppContext, user: UserRow | null, target: ProjectRow, mr: Pick<MergeRequestRow, 'targetBranch' | 'authorId'>): Promise<boolean> {
  return !!user && (user.id === mr.authorId || (await canMergeMergeRequest(ctx, user, target, mr)));
}

/** The heads a merge is computed from; null where the branch (or the source project) is missing. */
export interface MergeHeads {
  source: ProjectRow | null;
  sourceSha: string | null;
  targetSha: string | null;
}

/** Read both heads of a merge request, the source as a commit of the target repository (a fork's fetched). */
export async function mergeHeads(ctx: AppContext, target: ProjectRow, mr: MergeRequestRow): Promise<MergeHeads> {
  const ends = await endsOf(ctx, mr, target);
  const [sourceSha, targetSha] = await Promise.all([sourceHeadInTarget(ctx, ends), branchHead(ctx, target, mr.targetBranch)]);
  return { source: ends.sourceProject, sourceSha, targetSha };
}

/**
 * The merged tree of the source into the target (computed with `git merge-tree`, no work tree), or null when they
 * conflict or share no history (unrelated histories cannot be merged).
 */
export async function cleanMergeTree(ctx: AppContext, target: ProjectRow, targetSha: string, sourceSha: string): Promise<string | null> {
  const merged = await mergeTrees(projectRepository(ctx, target).path, targetSha, sourceSha);
  return merged.clean ? merged.tree : null;
}

/** The head pipeline (8.x MergeRequest#pipeline): the source project's newest pipeline for the source branch at its head. */
export async function headPipeline(
  ctx: AppContext, mr: Pick<MergeRequestRow, 'sourceBranch'>, source: ProjectRow | null, sourceSha: string | null,
): Promise<PipelineRow | null> {
  if (!source || !sourceSha) return null;
  return pipelineFor(ctx.data, source.id, mr.sourceBranch, sourceSha);
}

/** 8.x mergeable_ci_state?: true unless the project only merges after a successful build and the head pipeline did not succeed. */
export function mergeableCiState(target: ProjectRow, pipeline: PipelineRow | null): boolean {
  if (!target.onlyAllowMergeIfBuildSucceeds) return true;
  return !pipeline || pipeline.status === 'success';
}

/** The default merge commit message (8.x MergeRequest#merge_commit_message). */
export function defaultMergeCommitMessage(mr: Pick<MergeRequestRow, 'sourceBranch' | 'targetBranch' | 'title' | 'description' | 'iid'>): string {
  let message = `Merge branch '${mr.sourceBranch}' into '${mr.targetBranch}'\n\n${mr.title}\n\n`;
  if (mr.description) message += `${mr.description}\n\n`;
  return `${message}See merge request !${mr.iid}`;
}

/** The full ref of the target branch. */
export const targetRef = (mr: Pick<MergeRequestRow, 'targetBranch'>): string => branchRef(mr.targetBranch);
