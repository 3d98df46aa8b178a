/**
 * Merge when the build succeeds (8.x MergeRequests::MergeWhenBuildSucceedsService, AddTodoWhenBuildFailsService and
 * RefreshService#reset_merge_when_build_succeeds): set and cancel the automatic merge, merge when the head pipeline
 * succeeds (onBuildFinished), a `build_failed` todo for the author when a build of it fails, and the flag cleared
 * when a new commit arrives on the source branch (onPush, in the push transaction). Importing this module registers
 * the listeners.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { CommitStatusRow, PipelineRow } from '../../db/schema-ci.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { ApiError, notAllowed, unauthorized } from '../../errors.js';
import { branchName } from '../../git/refs.js';
import { isZeroSha } from '../../git/objects.js';
import { onBuildFinished, onBuildRetried } from '../ci/builds.js';
import { createSystemNote } from '../collaboration/notes.js';
import { markBuildFailedTodosDone, todoForBuildFailed } from '../collaboration/todos.js';
import { findPipeline } from '../ci/pipelines.js';
import { lookupProjectAsync } from '../projects/projects.js';
import { onPush } from '../repository/push.js';
import { projectRepository } from '../repository/repositories.js';
import { isOpen, mergeRequestInfo } from './find.js';
import { canCancelAutoMerge, canMergeMergeRequest } from './merge-state.js';
import { mergeMergeRequest, type MergeOptions } from './merge.js';
import { userById } from '../../db/users.js';
import { lockMergeRequest } from './write.js';
import { clearAutoMergeColumns, openMergeRequestsFromBranch, setAutoMergeColumns, setMergeError } from '../../db/merge-requests.js';

/** System note texts (8.12 SystemNoteService; the abort wording is GitLab's later one: 8.x wrote no note). */
export const AUTO_MERGE_NOTES = {
  enabled: (sha: string) => `enabled an automatic merge when the build for ${sha} succeeds`,
  canceled: 'canceled the automatic merge',
  aborted: 'aborted the automatic merge because source branch was updated',
} as const;

/** merge_params as stored (8.x serialized Hash): the commit message and the source branch removal of the automatic merge. */
export interface StoredMergeParams {
  commit_message?: string | null;
  should_remove_source_branch?: boolean;
  [key: string]: unknown;
}

/** merge_params of a row as an object. */
export function mergeParamsOf(mr: Pick<MergeRequestRow, 'mergeParams'>): StoredMergeParams {
  if (!mr.mergeParams) return {};
  try {
    const v = JSON.parse(mr.mergeParams) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as StoredMergeParams) : {};
  } catch {
    return {};
  }
}

/** merge_params without the automatic merge's keys (8.x reset_merge_when_build_succeeds), or null when empty. */
function withoutAutoMergeParams(mr: MergeRequestRow): string | null {
  const { commit_message: _c, should_remove_source_branch: _s, ...rest } = mergeParamsOf(mr);
  return Object.keys(rest).length ? JSON.stringify(rest) : null;
}

/**
 * Set the automatic merge (or update its params when already set, without a second note): the flag, the merging
 * user, merge_params, and the system note naming the head commit. Returns the merge request.
 */
export async function enableAutoMerge(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, sourceSha: string, options: MergeOptions,
): Promise<MergeRequestRow> {
  return ctx.data.transaction(async (tx) => {
    const current = await lockMergeRequest(tx, mr.id);
    if (!current || !isOpen(current)) throw new ApiError(406, { message: '406 Method Not Allowed' });
    const params: StoredMergeParams = { ...mergeParamsOf(current), commit_message: options.commitMessage ?? null, should_remove_source_branch: !!options.removeSourceBranch };
    const first = !current.mergeWhenBuildSucceeds;
    if (first) {
      await createSystemNote(tx, { projectId: project.id, noteableType: 'MergeRequest', noteableId: mr.id, authorId: actor.id, body: AUTO_MERGE_NOTES.enabled(sourceSha) });
    }
    return setAutoMergeColumns(tx, mr.id, {
      mergeParams: JSON.stringify(params), removeSourceBranch: !!options.removeSourceBranch, at: now(), ...(first ? { mergeUserId: actor.id } : {}),
    });
  });
}

/** Clear the automatic merge inside a transaction, with a system note by `actor`. */
async function clearAutoMerge(tx: Queries, actor: UserRow, mr: MergeRequestRow, note: string): Promise<MergeRequestRow> {
  await createSystemNote(tx, { projectId: mr.targetProjectId, noteableType: 'MergeRequest', noteableId: mr.id, authorId: actor.id, body: note });
  return clearAutoMergeColumns(tx, mr.id, withoutAutoMergeParams(mr), now());
}

/**
 * PUT/POST .../cancel_merge_when_build_succeeds: 401 unless the caller may merge or wrote the merge request; 405 when
 * it is merged or closed; 406 when no automatic merge is set; else cleared with a system note. 404 when deleted meanwhile.
 */
export async function cancelAutoMerge(ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow): Promise<MergeRequestRow> {
  if (!(await canCancelAutoMerge(ctx, actor, project, mr))) throw unauthorized();
  return ctx.data.transaction(async (tx) => {
    const current = await lockMergeRequest(tx, mr.id);
    if (!current) throw new ApiError(404, { message: '404 Not found' });
    if (!isOpen(current)) throw notAllowed();
    if (!current.mergeWhenBuildSucceeds) throw new ApiError(406, { message: "Can't cancel the automatic merge" });
    return clearAutoMerge(tx, actor, current, AUTO_MERGE_NOTES.canceled);
  });
}

// ---- listeners --------------------------------------------------------------------------------------------------

/** Open merge requests whose source is `ref` of the project and whose source head is `sha` (8.x Pipeline#merge_requests). */
async function mergeRequestsOfPipeline(ctx: AppContext, pipeline: PipelineRow): Promise<{ mr: MergeRequestRow; source: ProjectRow }[]> {
  if (pipeline.tag || !pipeline.ref) return [];
  const rows = await openMergeRequestsFromBranch(ctx.data, pipeline.projectId, pipeline.ref);
  if (!rows.length) return [];
  const source = await lookupProjectAsync(ctx, pipeline.projectId);
  if (!source) return [];
  const head = await projectRepository(ctx, source).resolveBranch(pipeline.ref);
  return head === pipeline.sha ? rows.map((mr) => ({ mr, source })) : [];
}

/** A failed build of a head pipeline: a `build_failed` todo for each merge request's author. */
async function buildFailed(ctx: AppContext, pipeline: PipelineRow): Promise<void> {
  for (const { mr } of await mergeRequestsOfPipeline(ctx, pipeline)) {
    const author = await userById(ctx.data, mr.authorId);
    const target = await lookupProjectAsync(ctx, mr.targetProjectId);
    if (!author || !target) continue;
    await ctx.data.transaction(async (tx) => {
      if (await lockMergeRequest(tx, mr.id)) await todoForBuildFailed(tx, author, mergeRequestInfo(target, mr));
    });
  }
}

/** The head pipeline succeeded: merge the merge requests set to merge automatically, as the user who set it. */
async function pipelineSucceeded(ctx: AppContext, pipeline: PipelineRow): Promise<void> {
  for (const { mr } of await mergeRequestsOfPipeline(ctx, pipeline)) {
    if (!mr.mergeWhenBuildSucceeds) continue;
    const target = await lookupProjectAsync(ctx, mr.targetProjectId);
    const user = await userById(ctx.data, mr.mergeUserId);
    if (!target || !user) continue;
    if (!(await canMergeMergeRequest(ctx, user, target, mr))) {
      await setMergeError(ctx.data, mr.id, 'The user who set the automatic merge may not merge any more', false);
      continue;
    }
    const params = mergeParamsOf(mr);
    try {
      await mergeMergeRequest(ctx, user, target, mr, { commitMessage: params.commit_message ?? null, removeSourceBranch: !!params.should_remove_source_branch }, pipeline.sha);
    } catch (e) {
      // Refusals (conflicts, a moved branch, already merged) are recorded in merge_error by the merge itself.
      if (!(e instanceof ApiError)) throw e;
    }
  }
}

/** The onBuildFinished listener: todos on failure, the automatic merge when the pipeline is now a success. */
export async function afterBuildFinished(ctx: AppContext, build: CommitStatusRow): Promise<void> {
  const pipeline = await findPipeline(ctx.data, build.pipelineId);
  if (!pipeline) return;
  if (build.status === 'failed') await buildFailed(ctx, pipeline);
  if (pipeline.status === 'success') await pipelineSucceeded(ctx, pipeline);
}

onBuildFinished(afterBuildFinished);

// A retried build: the author's pending build_failed todos on the pipeline's merge requests are done (8.x).
onBuildRetried(async (ctx, old) => {
  const pipeline = await findPipeline(ctx.data, old.pipelineId);
  if (!pipeline) return;
  const mrs = await mergeRequestsOfPipeline(ctx, pipeline);
  if (mrs.length) {
    await ctx.data.transaction(async (tx) => {
      for (const { mr } of mrs) await markBuildFailedTodosDone(tx, { type: 'MergeRequest', id: mr.id });
    });
  }
});

// A new commit (or a deletion) on a source branch clears its automatic merges, in the push transaction.
onPush({
  name: 'merge requests: automatic merges aborted by a new commit',
  async inTransactionAsync(tx, _ctx, push) {
    for (const u of push.updates) {
      const branch = branchName(u.ref);
      if (branch === null || isZeroSha(u.before)) continue;
      const rows = await openMergeRequestsFromBranch(tx, push.project.id, branch, true);
      for (const mr of rows) await clearAutoMerge(tx, push.user, mr, AUTO_MERGE_NOTES.aborted);
    }
  },
});
