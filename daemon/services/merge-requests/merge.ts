/**
 * Merging a merge request (8.x MergeRequests::MergeService + PostMergeService, and the checks of PUT .../merge): a real
 * two-parent merge commit computed with `git merge-tree --write-tree` and published with a compare-and-set update of
 * the target branch (retried a few times when the branch moves meanwhile, then refused: never a half-written ref).
 * The merge request is locked while git works (8.x `locked`), so two merges of one merge request never both write.
 * Then ONE transaction marks it merged with its event, system note, todos done, merge request hook and the issues it
 * closes; then the target branch update goes through processPush as any push (push event and hooks, pipeline, merge
 * request refresh), and the source branch is removed when asked.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { users } from '../../db/schema.js';
import { mergeRequests, type MergeRequestRow } from '../../db/schema-merge-requests.js';
import { statement } from '../../db/statements.js';
import { ApiError, conflict, notAllowed, unauthorized, validationError } from '../../errors.js';
import { createMergeCommit, MergeConflictError } from '../../git/merge.js';
import { RefConflictError } from '../../git/errors.js';
import { branchRef } from '../../git/refs.js';
import { mergeRequestHookPayload } from '../../hooks/merge-requests.js';
import { canProject } from '../../policy/permissions.js';
import { and, eq } from 'drizzle-orm';
import { deleteBranch } from '../branches.js';
import { changeIssueStateIn, createSystemNote, markTodosDoneOnClose, stateChangeNote } from '../collaboration/index.js';
import { recordEvent } from '../events.js';
import { queueHookDeliveries } from '../hook-deliveries.js';
import { lookupProject, projectNamespace } from '../projects.js';
import { registerWorker } from '../../background.js';
import { branchRules } from '../protected-branches.js';
import { processPush } from '../push.js';
import { projectRepository } from '../repositories.js';
import { findMergeRequest, isOpen, workInProgress } from './find.js';
import { updateMergeRequest, type MergeRequestWriteRights, type UpdateMergeRequestParams } from './write.js';
import {
  canMergeMergeRequest, defaultMergeCommitMessage, headPipeline, isActivePipeline, mergeableCiState, mergeHeads, cleanMergeTree,
} from './merge-state.js';
import { checkMergeStatus, endsOf, sourceHeadInTarget } from './diffs.js';
import { enableAutoMerge } from './auto-merge.js';
import { closingIssuesOf } from './closing.js';

/** PUT .../merge params. */
export interface AcceptMergeRequestParams {
  merge_commit_message?: string;
  should_remove_source_branch?: boolean;
  merge_when_build_succeeds?: boolean;
  sha?: string;
}

/** What a merge is asked to do (also stored in merge_params for an automatic merge). */
export interface MergeOptions {
  commitMessage?: string | null;
  removeSourceBranch?: boolean;
}

/** How many times a merge is recomputed when the target branch moves between the computation and the ref update. */
export const MERGE_ATTEMPTS = 5;

/** 406 `406 Method Not Allowed`: the merge request is merged, closed or being merged (the spec's code for accept). */
export const notAcceptable = (): ApiError => new ApiError(406, { message: '406 Method Not Allowed' });
/** 405 `Branch cannot be merged`: conflicts, or histories without a merge base. */
export const cannotBeMerged = (): ApiError => notAllowed('Branch cannot be merged');

/**
 * Test seam: runs after the merge commit is written and before the target branch moves (tests move the branch there
 * to prove the compare-and-set retry). Null in production.
 */
export const mergeTestHooks: { beforePublish: ((attempt: number) => Promise<void>) | null } = { beforePublish: null };

/**
 * PUT /projects/:id/merge_requests/:merge_request_id/merge (8.12 lib/api/merge_requests.rb): 401 unless the caller may
 * merge into the target branch; 406 unless open; 405 for a work in progress or a missing branch; 405 `Branch cannot be
 * merged` on conflicts; 409 when `sha` is not the source head; with merge_when_build_succeeds and an unfinished head
 * pipeline the automatic merge is set; else 405 while only_allow_merge_if_build_succeeds waits for the pipeline, and
 * the merge happens. Returns the merge request as it is now.
 */
export async function acceptMergeRequest(ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, p: AcceptMergeRequestParams): Promise<MergeRequestRow> {
  return (await planAccept(ctx, actor, project, mr, p))(mr);
}

/**
 * PUT /projects/:id/merge_requests/:merge_request_id with `state_event=merge` (the spec's Merge request state table):
 * the merge of PUT .../merge with its defaults, together with the other fields given. Every check of the merge runs
 * first, then the fields are written (their own checks refuse before any write), then the merge is made with the
 * updated merge request (its default commit message names the new title): a refused request changes nothing.
 */
export async function updateAndMerge(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, p: UpdateMergeRequestParams, rights: MergeRequestWriteRights,
): Promise<MergeRequestRow> {
  const { state_event: _merge, ...fields } = p;
  if (fields.target_branch !== undefined && fields.target_branch !== mr.targetBranch) {
    throw validationError({ target_branch: ['cannot be changed by the request that merges'] });
  }
  const merge = await planAccept(ctx, actor, project, mr, {});
  const changes = Object.values(fields).some((v) => v !== undefined);
  const updated = changes ? await updateMergeRequest(ctx, actor, project, mr, fields, rights) : mr;
  return merge(updated);
}

/** The checks of PUT .../merge, in 8.x's order; resolves with what then merges (or sets the automatic merge). */
async function planAccept(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, p: AcceptMergeRequestParams,
): Promise<(current: MergeRequestRow) => Promise<MergeRequestRow>> {
  if (!canMergeMergeRequest(ctx, actor, project, mr)) throw unauthorized();
  if (!isOpen(mr)) throw notAcceptable();
  if (workInProgress(mr.title)) throw notAllowed();
  const heads = await mergeHeads(ctx, project, mr);
  if (!heads.sourceSha || !heads.targetSha) throw notAllowed();
  const tree = await cleanMergeTree(ctx, project, heads.targetSha, heads.sourceSha);
  if (!tree) {
    // the merge was checked: an unchecked merge request now reads cannot_be_merged (8.x check_if_can_be_merged)
    await checkMergeStatus(ctx, mr, project);
    throw cannotBeMerged();
  }
  if (p.sha !== undefined && p.sha !== heads.sourceSha) throw conflict(`SHA does not match HEAD of source branch: ${heads.sourceSha}`);
  const options: MergeOptions = { commitMessage: p.merge_commit_message ?? null, removeSourceBranch: p.should_remove_source_branch ?? false };
  const pipeline = headPipeline(ctx, mr, heads.source, heads.sourceSha);
  if (p.merge_when_build_succeeds && pipeline && isActivePipeline(pipeline)) {
    return async (current) => enableAutoMerge(ctx, actor, project, current, heads.sourceSha!, options);
  }
  if (!mergeableCiState(project, pipeline)) throw notAllowed();
  return async (current) => mergeMergeRequest(ctx, actor, project, current, options, heads.sourceSha!, { targetSha: heads.targetSha!, tree });
}

// ---- the lock (8.x in_locked_state) -----------------------------------------------------------------------------

/** Take the merge lock: open -> locked, remembering the state to go back to. False when it is not open any more. */
function lock(ctx: AppContext, mrId: number, userId: number): boolean {
  return statement(ctx,
    `UPDATE merge_requests SET lock_state = state, state = 'locked', locked_at = ?, merge_user_id = ?, merge_commit_sha = NULL
     WHERE id = ? AND state IN ('opened', 'reopened')`,
  ).run(now(), userId, mrId).changes === 1;
}

/** Give the lock back (the merge was refused): the state it had, the reason in merge_error. */
function unlock(ctx: AppContext, mrId: number, error: string | null): void {
  statement(ctx,
    `UPDATE merge_requests SET state = COALESCE(lock_state, 'opened'), lock_state = NULL, locked_at = NULL, merge_commit_sha = NULL, merge_error = ?
     WHERE id = ? AND state = 'locked'`,
  ).run(error, mrId);
}

/** Record the merge commit about to be published, so a restart can finish a merge whose branch moved. */
function recordCandidate(ctx: AppContext, mrId: number, sha: string): void {
  statement(ctx, `UPDATE merge_requests SET merge_commit_sha = ? WHERE id = ? AND state = 'locked'`).run(sha, mrId);
}

// ---- the merge --------------------------------------------------------------------------------------------------

/** A published merge: the merge commit, the target head it was made on, and the source head it merged. */
export interface WrittenMerge {
  sha: string;
  before: string;
  source: string;
}

/** The merged tree the checks computed for (target head, the source head they saw). */
export interface CheckedMerge {
  targetSha: string;
  tree: string;
}

/** The merging user as git records them. */
const person = (u: UserRow) => ({ name: u.name, email: u.email });

/**
 * Write the merge commit of `sourceSha` onto the target branch: recomputed on the branch's current head whenever the
 * compare-and-set update loses, at most MERGE_ATTEMPTS times. Returns the merge commit and the head it was made on.
 */
async function writeMerge(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, sourceSha: string, message: string, checked?: CheckedMerge,
): Promise<WrittenMerge> {
  const repo = projectRepository(ctx, project);
  for (let attempt = 0; attempt < MERGE_ATTEMPTS; attempt++) {
    const targetSha = await repo.resolveBranch(mr.targetBranch);
    if (!targetSha) throw notAllowed();
    // The tree the checks computed serves while the target has not moved; else merge again on the new head.
    const tree = checked && checked.targetSha === targetSha ? checked.tree : undefined;
    if (!tree && !(await repo.mergeBase(targetSha, sourceSha))) throw cannotBeMerged();
    try {
      const { sha } = await createMergeCommit(repo.path, {
        targetBranch: mr.targetBranch, targetSha, sourceSha, message, author: person(actor), tree,
        beforePublish: async (candidate) => {
          recordCandidate(ctx, mr.id, candidate);
          await mergeTestHooks.beforePublish?.(attempt);
        },
      });
      return { sha, before: targetSha, source: sourceSha };
    } catch (e) {
      if (e instanceof MergeConflictError) throw cannotBeMerged();
      if (e instanceof RefConflictError) {
        if (e.actual === null) throw notAllowed();
        continue;
      }
      throw e;
    }
  }
  throw conflict('Target branch changed during the merge, try again');
}

/**
 * Merge an open merge request as `actor` (the API after its checks, and the automatic merge): lock, write the merge
 * commit, then finish (one transaction, then the post-push work). `sourceSha` is the head the checks saw; the merge
 * uses the source head read under the lock and refuses with 409 when it moved.
 */
export async function mergeMergeRequest(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, options: MergeOptions, sourceSha?: string, checked?: CheckedMerge,
): Promise<MergeRequestRow> {
  if (!lock(ctx, mr.id, actor.id)) throw notAcceptable();
  let written: WrittenMerge;
  try {
    const head = await sourceHeadInTarget(ctx, endsOf(ctx, mr, project));
    if (!head) throw notAllowed();
    if (sourceSha !== undefined && head !== sourceSha) throw conflict(`SHA does not match HEAD of source branch: ${head}`);
    written = await writeMerge(ctx, actor, project, mr, head, options.commitMessage || defaultMergeCommitMessage(mr), head === sourceSha ? checked : undefined);
  } catch (e) {
    unlock(ctx, mr.id, e instanceof ApiError ? String((e.body as { message?: unknown })?.message ?? '') : 'Something went wrong during merge');
    throw e;
  }
  return finishMerge(ctx, actor, project, mr, written, options);
}

/** The reference of a merge request as seen from `from` (`!3`, or `group/project!3` from another project). */
function mergeRequestReference(ctx: AppContext, target: ProjectRow, mr: MergeRequestRow, from: ProjectRow): string {
  if (from.id === target.id) return `!${mr.iid}`;
  return `${projectNamespace(ctx, target).path}/${target.path}!${mr.iid}`;
}

/**
 * After the target branch moved to the merge commit: one transaction (merged state, merged_at, merge_commit_sha, the
 * `merged` event, system note, the merger's todos done, merge request hook `merge`, the closed issues with their notes),
 * then processPush for the target branch, then the source branch removal when asked.
 */
export async function finishMerge(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, written: WrittenMerge, options: MergeOptions,
): Promise<MergeRequestRow> {
  // closes_issues names none unless the target is the default branch (8.x PostMergeService).
  const closing = closingIssuesOf(ctx, actor, project, mr);
  const removeSource = !!options.removeSourceBranch || mr.forceRemoveSourceBranch;
  const merged = ctx.db.transaction((tx) => {
    const at = now();
    const row = tx.update(mergeRequests).set({
      state: 'merged', mergedAt: at, mergeCommitSha: written.sha, mergeUserId: actor.id, mergeError: null, mergeWhenBuildSucceeds: false,
      shouldRemoveSourceBranch: removeSource, updatedAt: at,
    }).where(and(eq(mergeRequests.id, mr.id), eq(mergeRequests.state, 'locked'))).returning().get();
    if (!row) return null;
    statement(ctx, `UPDATE merge_requests SET lock_state = NULL, locked_at = NULL WHERE id = ?`).run(mr.id);
    createSystemNote(tx, { projectId: project.id, noteableType: 'MergeRequest', noteableId: row.id, authorId: actor.id, body: stateChangeNote('merged') });
    recordEvent(tx, { projectId: project.id, authorId: actor.id, action: 'merged', targetId: row.id, targetType: 'MergeRequest', targetTitle: row.title });
    markTodosDoneOnClose(tx, actor, { type: 'MergeRequest', id: row.id });
    queueHookDeliveries(tx, project.id, 'merge_request', mergeRequestHookPayload(ctx, project, row, actor, 'merge'));
    for (const { issue, project: issueProject } of closing) {
      changeIssueStateIn(ctx, tx, actor, issueProject, issue, 'closed', { source: mergeRequestReference(ctx, project, row, issueProject) });
    }
    return row;
  });
  if (!merged) return findMergeRequest(ctx, mr.id) ?? mr;
  await processPush(ctx, project, actor, [{ ref: branchRef(mr.targetBranch), before: written.before, after: written.sha }]);
  if (removeSource) await removeSourceBranch(ctx, actor, project, merged, written.source);
  return findMergeRequest(ctx, mr.id) ?? merged;
}

/**
 * Remove the source branch after a merge (8.x DeleteBranchService as the merger, or as the author when the author
 * forced it): only when that user may push to the source project, never the default or a protected branch, and only
 * while the branch still points at the merged head. Failures are logged: the merge is done.
 */
async function removeSourceBranch(ctx: AppContext, actor: UserRow, target: ProjectRow, mr: MergeRequestRow, mergedHead: string): Promise<void> {
  const source = endsOf(ctx, mr, target).sourceProject;
  if (!source) return;
  let user = actor;
  if (mr.forceRemoveSourceBranch && mr.authorId !== null && mr.authorId !== actor.id) {
    user = ctx.db.select().from(users).where(eq(users.id, mr.authorId)).get() ?? actor;
  }
  if (!canProject(ctx, user, 'push_code', source)) return;
  if (mr.sourceBranch === source.defaultBranch || branchRules(ctx, source, mr.sourceBranch).protected) return;
  if ((await projectRepository(ctx, source).resolveBranch(mr.sourceBranch)) !== mergedHead) return;
  try {
    await deleteBranch(ctx, source, user, mr.sourceBranch);
  } catch (e) {
    process.stderr.write(`gantry: removing source branch ${mr.sourceBranch} of !${mr.iid} failed: ${(e as Error)?.message ?? String(e)}\n`);
  }
}

/**
 * After a restart: finish or undo merges left locked. A merge whose recorded commit is on the target branch is
 * finished (merged state, event, note, hook, closed issues, push processing) as its merging user; any other goes
 * back to the state it had, with merge_error set. Returns how many were finished and undone.
 */
export async function repairLockedMergeRequests(ctx: AppContext): Promise<{ finished: number; undone: number }> {
  const locked = (statement(ctx, `SELECT id FROM merge_requests WHERE state = 'locked'`).all() as { id: number }[]).map((r) => r.id);
  let finished = 0;
  let undone = 0;
  for (const id of locked) {
    const mr = findMergeRequest(ctx, id);
    const target = mr ? lookupProject(ctx, mr.targetProjectId) : null;
    const user = mr?.mergeUserId != null ? ctx.db.select().from(users).where(eq(users.id, mr.mergeUserId)).get() ?? null : null;
    const repo = target ? projectRepository(ctx, target) : null;
    const head = repo && mr ? await repo.resolveBranch(mr.targetBranch) : null;
    const commit = repo && mr?.mergeCommitSha ? await repo.readCommit(mr.mergeCommitSha) : null;
    if (mr && target && user && head && commit && commit.parents.length === 2 && (await repo!.isAncestor(commit.sha, head))) {
      await finishMerge(ctx, user, target, mr, { sha: commit.sha, before: commit.parents[0]!, source: commit.parents[1]! }, {});
      finished++;
    } else {
      unlock(ctx, id, 'The merge was interrupted; merge again');
      undone++;
    }
  }
  return { finished, undone };
}

registerWorker({
  name: 'merge lock repair',
  start(ctx) {
    repairLockedMergeRequests(ctx).catch((e: unknown) => process.stderr.write(`gantry: repairing locked merge requests failed: ${(e as Error)?.message ?? String(e)}\n`));
  },
  stop() {},
});
