/**
 * After a push (8.x MergeRequests::RefreshService): the open merge requests whose source or target branch moved get
 * merge_status `unchecked` inside the push transaction; then those whose source moved (or whose commits the push
 * brought to the target) get a new diff version computed from git, a system note listing the commits added to the
 * source, the `update` hook (with `oldrev`) and a fresh merge status check.
 */
import type { AppContext } from '../../context.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { statement } from '../../db/statements.js';
import { IN_IDS } from '../../db/sql.js';
import { branchName } from '../../git/refs.js';
import { messageTitle } from '../../git/objects.js';
import { onPush, type ProcessedPush } from '../push.js';
import { lookupProject } from '../projects.js';
import { checkMergeStatus, computeDiff, diffChanged, endsOf, insertDiff, writeHeadRef } from './diffs.js';
import { diffCommits, latestDiff, toMergeRequest } from './find.js';
import { mergeRequestNote, queueMergeRequestHook } from './write.js';

const OPEN = `state IN ('opened', 'reopened') AND deleted_at IS NULL`;

/** Open merge requests with `branch` of `projectId` as their source. */
function sourceSide(ctx: AppContext, projectId: number, branch: string): MergeRequestRow[] {
  return (statement(ctx, `SELECT * FROM merge_requests WHERE ${OPEN} AND source_project_id = @p AND source_branch = @b ORDER BY id`)
    .all({ p: projectId, b: branch }) as Record<string, unknown>[]).map(toMergeRequest);
}

/** Open merge requests into `branch` of `projectId` (from another branch) whose source head is among `pushed` commits. */
function targetSideReached(ctx: AppContext, projectId: number, branch: string, pushed: string[]): MergeRequestRow[] {
  if (pushed.length === 0) return [];
  return (statement(ctx,
    `SELECT * FROM merge_requests WHERE ${OPEN} AND target_project_id = @p AND target_branch = @b
       AND NOT (source_project_id = @p AND source_branch = @b)
       AND id IN (SELECT merge_request_id FROM merge_request_diffs WHERE head_commit_sha IN ${IN_IDS.replace('?', '@pushed')}) ORDER BY id`,
  ).all({ p: projectId, b: branch, pushed: JSON.stringify(pushed) }) as Record<string, unknown>[]).map(toMergeRequest);
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
  const target = lookupProject(ctx, mr.targetProjectId);
  if (!target) return mr;
  const ends = endsOf(ctx, mr, target);
  const diff = await computeDiff(ctx, ends);
  if (diff) {
    const stored = latestDiff(ctx, mr.id);
    if (diffChanged(stored, diff)) {
      const known = new Set(diffCommits(stored).map((c) => c.id));
      const added = diff.commits.filter((c) => !known.has(c.id));
      ctx.db.transaction((tx) => {
        // the merge request may have been closed or merged meanwhile: only open ones get a new version
        const current = statement(ctx, `SELECT * FROM merge_requests WHERE id = ? AND ${OPEN}`).get(mr.id) as Record<string, unknown> | undefined;
        if (!current) return;
        insertDiff(tx, mr.id, diff);
        const row = toMergeRequest(current);
        const actor = opts.push?.user;
        if (opts.sourceMoved && actor && added.length) {
          mergeRequestNote(tx, target, row, actor, addedCommitsNote(added.slice(0, 100), added.length));
          queueMergeRequestHook(ctx, tx, target, row, actor, 'update', opts.sourceMoved.before);
        }
      });
      try {
        await writeHeadRef(ctx, target, mr.iid, diff.headCommitSha);
      } catch {
        /* a convenience ref: written again next time */
      }
    }
  }
  const fresh = statement(ctx, `SELECT * FROM merge_requests WHERE id = ?`).get(mr.id) as Record<string, unknown> | undefined;
  return fresh ? checkMergeStatus(ctx, toMergeRequest(fresh), target) : mr;
}

// Every push to a branch: the merge requests of that branch go unchecked in the push transaction, and are refreshed
// (diff version, note, hook, merge status) after it.
onPush({
  inTransaction(_tx, ctx, push) {
    for (const { branch } of branchesOf(push)) {
      statement(ctx,
        `UPDATE merge_requests SET merge_status = 'unchecked', merge_status_version = merge_status_version + 1
         WHERE ${OPEN} AND ((source_project_id = @p AND source_branch = @b) OR (target_project_id = @p AND target_branch = @b))`,
      ).run({ p: push.project.id, b: branch });
    }
  },
  async afterCommit(ctx, push) {
    for (const { branch, before } of branchesOf(push)) {
      const pushed = push.updates.filter((u) => branchName(u.ref) === branch).flatMap((u) => u.data.commits.map((c) => c.id));
      // 8.x reload_merge_requests: a push to the source reloads the diff; a push to the target only when it brought
      // the merge request's commits (its source head: it was merged by hand); the others just stay unchecked and are
      // checked when read, so a target branch with thousands of open merge requests costs one indexed query here.
      for (const mr of sourceSide(ctx, push.project.id, branch)) await refreshMergeRequest(ctx, mr, { push, sourceMoved: { before } });
      for (const mr of targetSideReached(ctx, push.project.id, branch, pushed)) await refreshMergeRequest(ctx, mr, { push });
    }
  },
});

