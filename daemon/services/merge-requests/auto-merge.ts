/**
 * Merge when the build succeeds (8.x MergeRequests::MergeWhenBuildSucceedsService, AddTodoWhenBuildFailsService and
 * RefreshService#reset_merge_when_build_succeeds): set and cancel the automatic merge, merge when the head pipeline
 * succeeds (onBuildFinished), a `build_failed` todo for the author when a build of it fails, and the flag cleared
 * when a new commit arrives on the source branch (onPush, in the push transaction). Importing this module registers
 * the listeners.
 */
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { users } from '../../db/schema.js';
import type { CommitStatusRow, PipelineRow } from '../../db/schema-ci.js';
import { mergeRequests, type MergeRequestRow } from '../../db/schema-merge-requests.js';
import { ApiError, notAllowed, unauthorized } from '../../errors.js';
import { branchName } from '../../git/refs.js';
import { isZeroSha } from '../../git/objects.js';
import { onBuildFinished, onBuildRetried } from '../builds.js';
import { createSystemNote, markBuildFailedTodosDone, todoForBuildFailed } from '../collaboration/index.js';
import type { Tx } from '../collaboration/tx.js';
import { findPipeline } from '../pipelines.js';
import { lookupProject } from '../projects.js';
import { onPush } from '../push.js';
import { projectRepository } from '../repositories.js';
import { isOpen, mergeRequestInfo } from './find.js';
import { canCancelAutoMerge, canMergeMergeRequest } from './merge-state.js';
import { mergeMergeRequest, type MergeOptions } from './merge.js';

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
export function enableAutoMerge(ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, sourceSha: string, options: MergeOptions): MergeRequestRow {
  return ctx.db.transaction((tx) => {
    const current = tx.select().from(mergeRequests).where(eq(mergeRequests.id, mr.id)).get();
    if (!current || !isOpen(current)) throw new ApiError(406, { message: '406 Method Not Allowed' });
    const params: StoredMergeParams = { ...mergeParamsOf(current), commit_message: options.commitMessage ?? null, should_remove_source_branch: !!options.removeSourceBranch };
    const set: Partial<MergeRequestRow> = { mergeParams: JSON.stringify(params), shouldRemoveSourceBranch: !!options.removeSourceBranch, updatedAt: now() };
    if (!current.mergeWhenBuildSucceeds) {
      set.mergeWhenBuildSucceeds = true;
      set.mergeUserId = actor.id;
      createSystemNote(tx, { projectId: project.id, noteableType: 'MergeRequest', noteableId: mr.id, authorId: actor.id, body: AUTO_MERGE_NOTES.enabled(sourceSha) });
    }
    return tx.update(mergeRequests).set(set).where(eq(mergeRequests.id, mr.id)).returning().get()!;
  });
}

/** Clear the automatic merge inside a transaction, with a system note by `actor`. */
function clearAutoMerge(tx: Tx, actor: UserRow, mr: MergeRequestRow, note: string): MergeRequestRow {
  createSystemNote(tx, { projectId: mr.targetProjectId, noteableType: 'MergeRequest', noteableId: mr.id, authorId: actor.id, body: note });
  return tx.update(mergeRequests)
    .set({ mergeWhenBuildSucceeds: false, mergeUserId: null, mergeParams: withoutAutoMergeParams(mr), shouldRemoveSourceBranch: false, updatedAt: now() })
    .where(eq(mergeRequests.id, mr.id)).returning().get()!;
}

/**
 * PUT/POST .../cancel_merge_when_build_succeeds: 401 unless the caller may merge or wrote the merge request; 405 when
 * it is merged or closed; 406 when no automatic merge is set; else cleared with a system note.
 */
export function cancelAutoMerge(ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow): MergeRequestRow {
  if (!canCancelAutoMerge(ctx, actor, project, mr)) throw unauthorized();
  return ctx.db.transaction((tx) => {
    const current = tx.select().from(mergeRequests).where(eq(mergeRequests.id, mr.id)).get() ?? mr;
    if (!isOpen(current)) throw notAllowed();
    if (!current.mergeWhenBuildSucceeds) throw new ApiError(406, { message: "Can't cancel the automatic merge" });
    return clearAutoMerge(tx, actor, current, AUTO_MERGE_NOTES.canceled);
  });
}

// ---- listeners --------------------------------------------------------------------------------------------------

/** Open merge requests whose source is `ref` of the project and whose source head is `sha` (8.x Pipeline#merge_requests). */
async function mergeRequestsOfPipeline(ctx: AppContext, pipeline: PipelineRow): Promise<{ mr: MergeRequestRow; source: ProjectRow }[]> {
  if (pipeline.tag || !pipeline.ref) return [];
  const rows = ctx.db.select().from(mergeRequests).where(and(
    eq(mergeRequests.sourceProjectId, pipeline.projectId), eq(mergeRequests.sourceBranch, pipeline.ref),
    inArray(mergeRequests.state, ['opened', 'reopened']), isNull(mergeRequests.deletedAt),
  )).all();
  if (!rows.length) return [];
  const source = lookupProject(ctx, pipeline.projectId);
  if (!source) return [];
  const head = await projectRepository(ctx, source).resolveBranch(pipeline.ref);
  return head === pipeline.sha ? rows.map((mr) => ({ mr, source })) : [];
}

const userById = (ctx: AppContext, id: number | null): UserRow | null => (id === null ? null : ctx.db.select().from(users).where(eq(users.id, id)).get() ?? null);

/** A failed build of a head pipeline: a `build_failed` todo for each merge request's author. */
async function buildFailed(ctx: AppContext, pipeline: PipelineRow): Promise<void> {
  for (const { mr } of await mergeRequestsOfPipeline(ctx, pipeline)) {
    const author = userById(ctx, mr.authorId);
    const target = lookupProject(ctx, mr.targetProjectId);
    if (!author || !target) continue;
    ctx.db.transaction((tx) => todoForBuildFailed(tx, author, mergeRequestInfo(target, mr)));
  }
}

/** The head pipeline succeeded: merge the merge requests set to merge automatically, as the user who set it. */
async function pipelineSucceeded(ctx: AppContext, pipeline: PipelineRow): Promise<void> {
  for (const { mr } of await mergeRequestsOfPipeline(ctx, pipeline)) {
    if (!mr.mergeWhenBuildSucceeds) continue;
    const target = lookupProject(ctx, mr.targetProjectId);
    const user = userById(ctx, mr.mergeUserId);
    if (!target || !user) continue;
    if (!canMergeMergeRequest(ctx, user, target, mr)) {
      ctx.db.update(mergeRequests).set({ mergeError: 'The user who set the automatic merge may not merge any more' }).where(eq(mergeRequests.id, mr.id)).run();
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
  const pipeline = findPipeline(ctx.db, build.pipelineId);
  if (!pipeline) return;
  if (build.status === 'failed') await buildFailed(ctx, pipeline);
  if (pipeline.status === 'success') await pipelineSucceeded(ctx, pipeline);
}

onBuildFinished(afterBuildFinished);

// A retried build: the author's pending build_failed todos on the pipeline's merge requests are done (8.x).
onBuildRetried(async (ctx, old) => {
  const pipeline = findPipeline(ctx.db, old.pipelineId);
  if (!pipeline) return;
  const mrs = await mergeRequestsOfPipeline(ctx, pipeline);
  if (mrs.length) ctx.db.transaction((tx) => { for (const { mr } of mrs) markBuildFailedTodosDone(tx, { type: 'MergeRequest', id: mr.id }); });
});

// A new commit (or a deletion) on a source branch clears its automatic merges, in the push transaction.
onPush({
  inTransaction(tx, _ctx, push) {
    for (const u of push.updates) {
      const branch = branchName(u.ref);
      if (branch === null || isZeroSha(u.before)) continue;
      const rows = tx.select().from(mergeRequests).where(and(
        eq(mergeRequests.sourceProjectId, push.project.id), eq(mergeRequests.sourceBranch, branch), eq(mergeRequests.mergeWhenBuildSucceeds, true),
        inArray(mergeRequests.state, ['opened', 'reopened']), isNull(mergeRequests.deletedAt),
      )).all();
      for (const mr of rows) clearAutoMerge(tx, push.user, mr, AUTO_MERGE_NOTES.aborted);
    }
  },
});

