/**
 * After a push (8.x MergeRequests::RefreshService): the open merge requests whose source or target branch moved get
 * merge_status `unchecked` inside the push transaction; then those whose source moved (or whose commits the push
 * brought to the target) get a new diff version computed from git, a system note listing the commits added to the
 * source, the `update` hook (with `oldrev`) and a fresh merge status check.
 */
import type { AppContext } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { branchName } from '../../git/refs.js';
import { messageTitle } from '../../git/objects.js';
import { onPush, type ProcessedPush } from '../repository/push.js';
import { lookupProjectAsync } from '../projects/projects.js';
import { checkMergeStatus, computeDiff, diffChanged, endsOf, insertDiff, writeHeadRef } from './diffs.js';
import { diffCommits, latestDiff } from './find.js';
import { lockMergeRequest, mergeRequestNote, queueMergeRequestHook, writeEnv } from './write.js';
import { mergeRequestById, openMergeRequestsFromBranch, openMergeRequestsIntoBranchWithHeads, uncheckMergeRequestsOfBranch } from '../../db/merge-requests.js';

/** Open merge requests with `branch` of `projectId` as their source. */
async function sourceSide(q: Queries, projectId: number, branch: string): Promise<MergeRequestRow[]> {
  return openMergeRequestsFromBranch(q, projectId, branch);
}

/** Open merge requests into `branch` of `projectId` (from another branch) whose source head is among `pushed` commits. */
async function targetSideReached(q: Queries, projectId: number, branch: string, pushed: string[]): Promise<MergeRequestRow[]> {
  if (pushed.length === 0) return [];
  return openMergeRequestsIntoBranchWithHeads(q, projectId, branch, pushed);
}

/** The branch names a push moved (tags do not concern merge requests). */
const branchesOf = (push: ProcessedPush) => push.updates.flatMap((u) => {
  const b = branchName(u.ref);
  return b === null ? [] : [{ branch: b, before: u.before, after: u.after }];
});

/** 8.x SystemNoteService.add_commits: "Added 2 commits:\n\n* 1234abcd - title". */
export function addedCommitsNote(commits: { id: string; message: string }[], total: number): string {
  const list = commits.map((c) => `* ${c.id.slice(0, 8)} - ${messageTitle(c.message)}`).join('\n');
  return `Added ${total} commit${total === 1 ? '' : 's'}:\n\n${list}`;
}

/**
 * Refresh one merge request from git: a new diff version when a head or the base moved (with the added-commits note
 * and the update hook when its source moved), then the merge status. Returns the row after the check.
 */
export async function refreshMergeRequest(
  ctx: AppContext, mr: MergeRequestRow, opts: { push?: ProcessedPush; sourceMoved?: { before: string } } = {},
): Promise<MergeRequestRow> {
  const target = await lookupProjectAsync(ctx, mr.targetProjectId);
  if (!target) return mr;
  const ends = await endsOf(ctx, mr, target);
  const diff = await computeDiff(ctx, ends);
  if (diff) {
    const stored = await latestDiff(ctx.data, mr.id);
    if (diffChanged(stored, diff)) {
      const known = new Set(diffCommits(stored).map((c) => c.id));
      const added = diff.commits.filter((c) => !known.has(c.id));
      const env = await writeEnv(ctx);
      await ctx.data.transaction(async (tx) => {
        // the merge request may have been closed or merged meanwhile: only open ones get a new version; two
        // refreshes at once (two daemons' pushes) write one version for one head
        const row = await lockMergeRequest(tx, mr.id);
        if (!row || !(row.state === 'opened' || row.state === 'reopened')) return;
        if (!diffChanged(await latestDiff(tx, mr.id), diff)) return;
        await insertDiff(tx, mr.id, diff);
        const actor = opts.push?.user;
        if (opts.sourceMoved && actor && added.length) {
          await mergeRequestNote(tx, target, row, actor, addedCommitsNote(added.slice(0, 100), added.length));
          await queueMergeRequestHook(ctx, tx, env, target, row, actor, 'update', opts.sourceMoved.before);
        }
      });
      try {
        await writeHeadRef(ctx, target, mr.iid, diff.headCommitSha);
      } catch {
        /* a convenience ref: written again next time */
      }
    }
  }
  const fresh = await mergeRequestById(ctx.data, mr.id);
  return fresh ? checkMergeStatus(ctx, fresh, target) : mr;
}

// Every push to a branch: the merge requests of that branch go unchecked in the push transaction, and are refreshed
// (diff version, note, hook, merge status) after it.
onPush({
  name: 'merge requests: refresh',
  async inTransactionAsync(tx, _ctx, push) {
    for (const { branch } of branchesOf(push)) {
      // rows already unchecked are left alone: checkMergeStatus re-reads the heads after writing its answer
      await uncheckMergeRequestsOfBranch(tx, push.project.id, branch);
    }
  },
  async afterCommit(ctx, push) {
    for (const { branch, before } of branchesOf(push)) {
      const pushed = push.updates.filter((u) => branchName(u.ref) === branch).flatMap((u) => u.data.commits.map((c) => c.id));
      // 8.x reload_merge_requests: a push to the source reloads the diff; a push to the target only when it brought
      // the merge request's commits (its source head: it was merged by hand); the others just stay unchecked and are
      // checked when read, so a target branch with thousands of open merge requests costs one indexed query here.
      for (const mr of await sourceSide(ctx.data, push.project.id, branch)) await refreshMergeRequest(ctx, mr, { push, sourceMoved: { before } });
      for (const mr of await targetSideReached(ctx.data, push.project.id, branch, pushed)) await refreshMergeRequest(ctx, mr, { push });
    }
  },
});

