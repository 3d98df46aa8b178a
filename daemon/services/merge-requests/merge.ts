/**
 * Merging a merge request (8.x MergeRequests::MergeService + PostMergeService, and the checks of PUT .../merge): a real
 * two-parent merge commit computed with `git merge-tree --write-tree` and published with a compare-and-set update of
 * the target branch (retried a few times when the branch moves meanwhile, then refused: never a half-written ref).
 * The merge request is locked while git works (8.x `locked`), so two merges of one merge request never both write.
 * Then ONE transaction marks it merged with its event, system note, todos done, merge request hook and the issues it
 * closes; then the target branch update goes through processPush as any push (push event and hooks, pipeline, merge
 * request refresh), and the source branch is removed when asked.
 */
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { userById } from '../../db/users.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { ApiError, conflict, notAllowed, notFound, unauthorized, validationError } from '../../errors.js';
import { createMergeCommit, MergeConflictError } from '../../git/merge.js';
import { changedPaths, type ChangedPaths } from '../../git/diff.js';
import type { CommitInfo } from '../../git/objects.js';
import { RefConflictError } from '../../git/errors.js';
import { branchRef } from '../../git/refs.js';
import { canProjectAsync } from '../../policy/permissions.js';
import { deleteBranch } from '../repository/branches.js';
import { changeIssueStateIn } from '../collaboration/issues.js';
import { createSystemNote } from '../collaboration/notes.js';
import { stateChangeNote } from '../collaboration/system-notes.js';
import { markTodosDoneOnClose } from '../collaboration/todos.js';
import { LOCKS, lockAsync } from '../collaboration/tx.js';
import { recordEvent } from '../instance/events.js';
import { lookupProjectAsync, projectNamespace } from '../projects/projects.js';
import { periodicWorker, type BackgroundWorker } from '../../background.js';
import { branchRules } from '../repository/protected-branches.js';
import { afterPush, preparePush, PUSH_COMMITS_LIMIT, writePushIn, type KnownPushCommits, type PreparedPush } from '../repository/push.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { leadingArrayObjects } from '../../json-head.js';
import { projectRepository } from '../repository/repositories.js';
import { findMergeRequest, isOpen, workInProgress } from './find.js';
import { queueMergeRequestHook, updateMergeRequest, writeEnv, type MergeRequestWriteRights, type UpdateMergeRequestParams, type WriteEnv } from './write.js';
import {
  canMergeMergeRequest, defaultMergeCommitMessage, headPipeline, isActivePipeline, mergeableCiState, mergeHeads, cleanMergeTree,
} from './merge-state.js';
import { checkMergeStatus, endsOf, sourceHeadInTarget } from './diffs.js';
import { enableAutoMerge } from './auto-merge.js';
import { closingIssuesOf, type ClosingIssue } from './closing.js';
import {
  beatMergeLock, claimStaleMergeLock, markMerged, mergeRequestById, recordMergeCandidate, releaseMergeLock, setMergeError, staleLockedMergeRequestIds,
  takeMergeLock,
} from '../../db/merge-requests.js';
import { latestDiffHead } from '../../db/merge-request-diffs.js';
import { issueIsOpen } from '../../db/issues.js';

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
  if (!(await canMergeMergeRequest(ctx, actor, project, mr))) throw unauthorized();
  if (!isOpen(mr)) throw notAcceptable();
  if (workInProgress(mr.title)) throw notAllowed();
  const heads = await mergeHeads(ctx, project, mr);
  if (!heads.sourceSha || !heads.targetSha) throw notAllowed();
  // the issues a merge would close are read while git computes the merge (kept for the merge of this very row)
  const treeP = cleanMergeTree(ctx, project, heads.targetSha, heads.sourceSha);
  const closing = closingIssuesOf(ctx, actor, project, mr);
  closing.catch(() => {});
  // and the push data's commits while git merges (a refused merge drops them; a failure reads them again after)
  const pushCommits = readMergedCommits(ctx, project, mr.id, heads.targetSha, heads.sourceSha, treeP).catch(() => null);
  const tree = await treeP;
  if (!tree) {
    // the merge was checked: an unchecked merge request now reads cannot_be_merged (8.x check_if_can_be_merged)
    await checkMergeStatus(ctx, mr, project);
    throw cannotBeMerged();
  }
  if (p.sha !== undefined && p.sha !== heads.sourceSha) throw conflict(`SHA does not match HEAD of source branch: ${heads.sourceSha}`);
  const options: MergeOptions = { commitMessage: p.merge_commit_message ?? null, removeSourceBranch: p.should_remove_source_branch ?? false };
  const pipeline = await headPipeline(ctx, mr, heads.source, heads.sourceSha);
  if (p.merge_when_build_succeeds && pipeline && isActivePipeline(pipeline)) {
    return async (current) => enableAutoMerge(ctx, actor, project, current, heads.sourceSha!, options);
  }
  if (!mergeableCiState(project, pipeline)) throw notAllowed();
  return async (current) => mergeMergeRequest(ctx, actor, project, current, options, heads.sourceSha!, {
    targetSha: heads.targetSha!, tree, closing: current === mr ? closing : undefined, pushCommits: current === mr ? pushCommits : undefined,
  });
}

// ---- the lock (8.x in_locked_state), with its owner and heartbeat ------------------------------------------------

/**
 * This process's name on the merge locks it holds (docs/design/postgres.md, "Several daemons": the repair rule): a
 * random id made at start, so a lock names the daemon that took it. While that daemon works on the merge it moves
 * the lock's heartbeat (lock_heartbeat_at) every `heartbeatMs`; a lock whose heartbeat is older than `leaseMs` lost its
 * owner (the daemon died or hung) and is repaired by whichever daemon sweeps next. Tests shorten the times.
 */
export const MERGE_LOCK_OWNER = randomUUID();
export const mergeLockTimes = { leaseMs: 60_000, heartbeatMs: 10_000, sweepMs: 60_000 };

/**
 * Take the merge lock with the merge commit about to be published (recorded so a repair can finish the merge if this
 * daemon dies after the branch moved): open -> locked, remembering the state to go back to. False when it is not open
 * any more (merged, closed, or another merge holds the lock).
 */
async function lock(ctx: AppContext, mrId: number, userId: number, candidate: string): Promise<boolean> {
  return takeMergeLock(ctx.data, mrId, MERGE_LOCK_OWNER, userId, candidate, now());
}

/** Record why a merge refused before it took the lock (merge_error), while the merge request is open. */
async function recordRefusal(ctx: AppContext, mrId: number, error: string): Promise<void> {
  await setMergeError(ctx.data, mrId, error, true);
}

/** Move the heartbeat of a lock this daemon holds every heartbeatMs until the returned function is called. */
function heartbeat(ctx: AppContext, mrId: number): () => void {
  const timer = setInterval(() => {
    beatMergeLock(ctx.data, mrId, MERGE_LOCK_OWNER, now())
      .catch((e: unknown) => process.stderr.write(`gantry: merge lock heartbeat of merge request ${mrId} failed: ${(e as Error)?.message ?? String(e)}\n`));
  }, mergeLockTimes.heartbeatMs);
  timer.unref?.();
  return () => clearInterval(timer);
}

/** Give the lock back (the merge was refused): the state it had, the reason in merge_error. Only this daemon's lock. */
async function unlock(q: Queries, mrId: number, error: string | null): Promise<void> {
  await releaseMergeLock(q, mrId, MERGE_LOCK_OWNER, error);
}

/** Record a recomputed merge commit about to be published (a later attempt, the lock already held). */
async function recordCandidate(ctx: AppContext, mrId: number, sha: string): Promise<void> {
  await recordMergeCandidate(ctx.data, mrId, MERGE_LOCK_OWNER, sha, now());
}

// ---- the merge --------------------------------------------------------------------------------------------------

/** A published merge: the merge commit, the target head it was made on, and the source head it merged. */
export interface WrittenMerge {
  sha: string;
  before: string;
  source: string;
}

/** The merged tree the checks computed for (target head, the source head they saw), and the issues it would close. */
export interface CheckedMerge {
  targetSha: string;
  tree: string;
  closing?: Promise<ClosingIssue[]>;
  /** The push data's commits, read while git merged (readMergedCommits). */
  pushCommits?: Promise<MergedCommits | null>;
}

/** The merging user as git records them. */
const person = (u: UserRow) => ({ name: u.name, email: u.email });

/** The merge lock as one merge holds it: taken with its first candidate commit, with its heartbeat. */
interface HeldLock {
  held: boolean;
  stop: () => void;
}

/**
 * Write the merge commit of `sourceSha` onto the target branch: recomputed on the branch's current head whenever the
 * compare-and-set update loses, at most MERGE_ATTEMPTS times. The lock is taken with the first commit written (before
 * the branch moves), and while the lock's write and the ref update run, `prepare` reads what finishing the merge needs
 * (the push data of the merge commit: git processes running meanwhile). Returns the merge commit, the head it was made
 * on, and what `prepare` read for it (null when that failed: finishMerge reads it again).
 */
async function writeMerge(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, sourceSha: string, message: string, checked: CheckedMerge | undefined,
  lockState: HeldLock, prepare: (written: WrittenMerge) => Promise<FinishReady>,
): Promise<{ written: WrittenMerge; ready: FinishReady | null }> {
  const repo = projectRepository(ctx, project);
  for (let attempt = 0; attempt < MERGE_ATTEMPTS; attempt++) {
    // The checks' head and tree serve the first attempt (the compare-and-set update refuses when the target moved
    // since); later ones merge again on the branch's new head (git refuses unrelated histories: a conflict).
    const targetSha = attempt === 0 && checked ? checked.targetSha : await repo.resolveBranch(mr.targetBranch);
    if (!targetSha) throw notAllowed();
    const tree = checked && checked.targetSha === targetSha ? checked.tree : undefined;
    let ready: Promise<FinishReady | null> | null = null;
    try {
      const { sha } = await createMergeCommit(repo.path, {
        targetBranch: mr.targetBranch, targetSha, sourceSha, message, author: person(actor), tree,
        beforePublish: async (candidate) => {
          ready = prepare({ sha: candidate, before: targetSha, source: sourceSha }).catch((e: unknown) => {
            process.stderr.write(`gantry: preparing the push of merge request ${mr.id} failed: ${(e as Error)?.message ?? String(e)}\n`);
            return null;
          });
          if (!lockState.held) {
            if (!(await lock(ctx, mr.id, actor.id, candidate))) throw notAcceptable();
            lockState.held = true;
            lockState.stop = heartbeat(ctx, mr.id);
          } else {
            await recordCandidate(ctx, mr.id, candidate);
          }
          await mergeTestHooks.beforePublish?.(attempt);
        },
      });
      return { written: { sha, before: targetSha, source: sourceSha }, ready: await ready! };
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

/** The reason a refused merge records in merge_error. */
const refusalMessage = (e: unknown): string => (e instanceof ApiError ? String((e.body as { message?: unknown })?.message ?? '') : 'Something went wrong during merge');

/**
 * Merge an open merge request as `actor` (the API after its checks, and the automatic merge): write the merge commit,
 * lock with it, move the target branch, then finish (one transaction with the push of the target branch, then the
 * post-push work). `sourceSha` is the head the checks saw; without the checks' merge the source head is read again
 * and a moved one refused with 409.
 */
export async function mergeMergeRequest(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, options: MergeOptions, sourceSha?: string, checked?: CheckedMerge,
): Promise<MergeRequestRow> {
  const held: HeldLock = { held: false, stop: () => {} };
  const closing = checked?.closing ?? closingIssuesOf(ctx, actor, project, mr);
  closing.catch(() => {});
  try {
    let result: { written: WrittenMerge; ready: FinishReady | null };
    try {
      // the checks just read the source head and merged it (the API): that head is merged
      const head = checked && sourceSha !== undefined ? sourceSha : await sourceHeadInTarget(ctx, await endsOf(ctx, mr, project));
      if (!head) throw notAllowed();
      if (sourceSha !== undefined && head !== sourceSha) throw conflict(`SHA does not match HEAD of source branch: ${head}`);
      const message = options.commitMessage || defaultMergeCommitMessage(mr);
      result = await writeMerge(ctx, actor, project, mr, head, message, head === sourceSha ? checked : undefined, held,
        async (written) => prepareFinish(ctx, actor, project, mr, written, closing, checked?.pushCommits));
    } catch (e) {
      if (held.held) await unlock(ctx.data, mr.id, refusalMessage(e));
      // a merge request that is not open (406) is someone else's: nothing to record
      else if (!(e instanceof ApiError && e.statusCode === 406)) await recordRefusal(ctx, mr.id, refusalMessage(e));
      throw e;
    }
    return await finishMerge(ctx, actor, project, mr, result.written, options, held.stop, result.ready ?? undefined);
  } finally {
    held.stop();
  }
}

/** The reference of a merge request as seen from `from` (`!3`, or `group/project!3` from another project). */
async function mergeRequestReference(tx: Queries, ctx: AppContext, target: ProjectRow, mr: MergeRequestRow, from: ProjectRow): Promise<string> {
  if (from.id === target.id) return `!${mr.iid}`;
  return `${(await projectNamespace(ctx, target, tx)).path}/${target.path}!${mr.iid}`;
}

/** What finishing a merge reads before its transaction: the issues it closes, the write environment, the push prepared. */
export interface FinishReady {
  closing: ClosingIssue[];
  env: WriteEnv;
  push: PreparedPush;
}

/**
 * Read what finishMerge writes (no write here: it may run before the target branch moved, and be thrown away when the
 * branch update loses): the closed issues, and the push of the target branch to the merge commit prepared (push data
 * from the merge request's stored commits, the listeners' prepare part).
 */
async function prepareFinish(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, written: WrittenMerge, closing?: Promise<ClosingIssue[]>,
  pushCommits?: Promise<MergedCommits | null>,
): Promise<FinishReady> {
  const ref = branchRef(mr.targetBranch);
  const push = (async () => {
    const early = await pushCommits;
    const known = early && early.before === written.before && early.source === written.source
      ? await withMergeCommit(ctx, project, early, written)
      : await mergedCommits(ctx, mr.id, written);
    return preparePush(ctx, project, actor, [{ ref, before: written.before, after: written.sha }], known ? { known: new Map([[ref, known]]) } : {});
  })();
  // closes_issues names none unless the target is the default branch (8.x PostMergeService).
  const [issues, env, prepared] = await Promise.all([closing ?? closingIssuesOf(ctx, actor, project, mr), writeEnv(ctx), push]);
  return { closing: issues, env, push: prepared };
}

/**
 * After the target branch moved to the merge commit: one transaction (merged state, merged_at, merge_commit_sha, the
 * `merged` event, system note, the merger's todos done, merge request hook `merge`, the closed issues with their notes,
 * and the push of the target branch: its push event, hooks, pipeline), then the push's after-commit work (merge request
 * refresh), then the source branch removal when asked. `ready` is what prepareFinish read (read here when absent).
 */
export async function finishMerge(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, written: WrittenMerge, options: MergeOptions, stopHeartbeat?: () => void,
  ready?: FinishReady,
): Promise<MergeRequestRow> {
  const { closing, env, push } = ready ?? (await prepareFinish(ctx, actor, project, mr, written));
  const removeSource = !!options.removeSourceBranch || mr.forceRemoveSourceBranch;
  let merged: MergeRequestRow | null;
  try {
    merged = await ctx.data.transaction(async (tx) => {
      const at = now();
      // only while this daemon still holds the lock (a repair of another daemon may have taken it over)
      const row = await markMerged(tx, mr.id, MERGE_LOCK_OWNER, { at, sha: written.sha, userId: actor.id, removeSourceBranch: removeSource });
      if (!row) return null;
      await createSystemNote(tx, { projectId: project.id, noteableType: 'MergeRequest', noteableId: row.id, authorId: actor.id, body: stateChangeNote('merged') });
      await recordEvent(tx, { projectId: project.id, authorId: actor.id, action: 'merged', targetId: row.id, targetType: 'MergeRequest', targetTitle: row.title });
      await markTodosDoneOnClose(tx, actor, { type: 'MergeRequest', id: row.id });
      await queueMergeRequestHook(ctx, tx, env, project, row, actor, 'merge');
      for (const { issue, project: issueProject } of closing) {
        // an issue closed or deleted since closes_issues was read stays as it is
        await lockAsync(tx, LOCKS.issue, issue.id);
        if (!(await issueIsOpen(tx, issue.id))) continue;
        const source = await mergeRequestReference(tx, ctx, project, row, issueProject);
        await changeIssueStateIn(ctx, tx, env, actor, issueProject, issue, 'closed', { source });
      }
      // the target branch moved to the merge commit: its push (event, hooks, pipeline) commits with the merge
      await writePushIn(tx, ctx, push);
      return row;
    });
  } catch (e) {
    // The project (or the merging user) was deleted while the merge ran: the lock stays for the repair to settle.
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
  stopHeartbeat?.();
  if (!merged) return (await findMergeRequest(ctx.data, mr.id)) ?? mr;
  await afterPush(ctx, push);
  if (removeSource) await removeSourceBranch(ctx, actor, project, merged, written.source);
  return (await findMergeRequest(ctx.data, mr.id)) ?? merged;
}

/** How much of the stored commit list is read for the push data of a merge (its first PUSH_COMMITS_LIMIT commits). */
const MERGED_COMMITS_HEAD_CHARS = 65_536;

/**
 * The merge request's stored commits (newest first, at most PUSH_COMMITS_LIMIT - 1) and their count, when its diff
 * version was computed for exactly a merge of `source` into `before` (its start is the head the merge is made on, its
 * head the merged source); null when the version does not match or its list is not there.
 */
async function storedMergeCommits(ctx: AppContext, mrId: number, before: string, source: string): Promise<{ ids: string[]; count: number } | null> {
  const r = await latestDiffHead(ctx.data, mrId, MERGED_COMMITS_HEAD_CHARS);
  if (!r || r.head !== source || r.start !== before) return null;
  const count = Number(r.n);
  const wanted = Math.min(count, PUSH_COMMITS_LIMIT - 1);
  const ids = leadingArrayObjects(r.commits, wanted).map((c) => c.id).filter((id): id is string => typeof id === 'string');
  return ids.length < wanted ? null : { ids, count };
}

/**
 * The commits a merge brought to the target branch (storedMergeCommits): the merge commit, then the stored ones, so
 * the push data needs no walk of a history of thousands of commits. Null when they are not known: the push data then
 * walks the history as for any push.
 */
async function mergedCommits(ctx: AppContext, mrId: number, written: WrittenMerge): Promise<KnownPushCommits | null> {
  const stored = await storedMergeCommits(ctx, mrId, written.before, written.source);
  return stored && { newestFirst: [written.sha, ...stored.ids], total: stored.count + 1 };
}

/**
 * What readMergedCommits reads of a merge of `source` into `before` before the merge commit exists (while git computes
 * the merge): the stored commits with the paths each changed, and the paths the merge changes on the target (its first
 * parent against the merged tree; null when the merge does not go through).
 */
export interface MergedCommits {
  before: string;
  source: string;
  newestFirst: string[];
  total: number;
  read: Map<string, { commit: CommitInfo; paths: ChangedPaths }>;
  mergePaths: Promise<ChangedPaths | null>;
}

/** MergedCommits of a merge about to be made; null when the stored commits do not match it (mergedCommits' fallback). */
async function readMergedCommits(
  ctx: AppContext, project: ProjectRow, mrId: number, before: string, source: string, tree: Promise<string | null>,
): Promise<MergedCommits | null> {
  const repo = projectRepository(ctx, project);
  const mergePaths = tree.then((t) => (t ? changedPaths(repo.path, before, t) : null));
  mergePaths.catch(() => {});
  const stored = await storedMergeCommits(ctx, mrId, before, source);
  if (!stored) return null;
  const commits = await repo.readCommits(stored.ids);
  if (commits.length < stored.ids.length) return null;
  const paths = await repo.changedPathsOfCommits(commits);
  const read = new Map(commits.map((c) => [c.sha, { commit: c, paths: paths.get(c.sha) ?? { added: [], modified: [], removed: [] } }]));
  return { before, source, newestFirst: stored.ids, total: stored.count, read, mergePaths };
}

/** The push data's commits of a written merge from what readMergedCommits read: the merge commit first, then those. */
async function withMergeCommit(ctx: AppContext, project: ProjectRow, early: MergedCommits, written: WrittenMerge): Promise<KnownPushCommits | null> {
  const [commit, paths] = await Promise.all([projectRepository(ctx, project).readCommit(written.sha), early.mergePaths]);
  if (!commit || !paths) return null;
  const read = new Map(early.read);
  read.set(written.sha, { commit, paths });
  return { newestFirst: [written.sha, ...early.newestFirst], total: early.total + 1, read };
}

/**
 * Remove the source branch after a merge (8.x DeleteBranchService as the merger, or as the author when the author
 * forced it): only when that user may push to the source project, never the default or a protected branch, and only
 * while the branch still points at the merged head. Failures are logged: the merge is done.
 */
async function removeSourceBranch(ctx: AppContext, actor: UserRow, target: ProjectRow, mr: MergeRequestRow, mergedHead: string): Promise<void> {
  const source = (await endsOf(ctx, mr, target)).sourceProject;
  if (!source) return;
  let user = actor;
  if (mr.forceRemoveSourceBranch && mr.authorId !== null && mr.authorId !== actor.id) user = (await userById(ctx.data, mr.authorId)) ?? actor;
  if (!(await canProjectAsync(ctx, user, 'push_code', source))) return;
  if (mr.sourceBranch === source.defaultBranch || (await branchRules(ctx, source, mr.sourceBranch)).protected) return;
  if ((await projectRepository(ctx, source).resolveBranch(mr.sourceBranch)) !== mergedHead) return;
  try {
    await deleteBranch(ctx, source, user, mr.sourceBranch);
  } catch (e) {
    process.stderr.write(`gantry: removing source branch ${mr.sourceBranch} of !${mr.iid} failed: ${(e as Error)?.message ?? String(e)}\n`);
  }
}


/**
 * Take over the lock of a merge whose owner's heartbeat is older than the lease (the owner died): one conditional
 * UPDATE, so of several daemons sweeping at once exactly one takes it, and a live owner's lock is never taken.
 */
async function claimStaleLock(ctx: AppContext, mrId: number, staleBefore: string): Promise<boolean> {
  return claimStaleMergeLock(ctx.data, mrId, MERGE_LOCK_OWNER, staleBefore, now());
}

/**
 * Finish or undo merges left locked by a daemon that died (its heartbeat older than the lease; locks of live daemons,
 * this one's included, are left alone). A merge whose recorded commit is on the target branch is finished (merged
 * state, event, note, hook, closed issues, push processing) as its merging user; any other goes back to the state it
 * had, with merge_error set. Runs at start and every sweepMs. Returns how many were finished and undone.
 */
export async function repairLockedMergeRequests(ctx: AppContext): Promise<{ finished: number; undone: number }> {
  const staleBefore = new Date(Date.now() - mergeLockTimes.leaseMs).toISOString();
  const locked = await staleLockedMergeRequestIds(ctx.data, staleBefore);
  let finished = 0;
  let undone = 0;
  for (const id of locked) {
    if (!(await claimStaleLock(ctx, id, staleBefore))) continue;
    const stop = heartbeat(ctx, id);
    try {
      const mr = await mergeRequestById(ctx.data, id);
      const target = mr ? await lookupProjectAsync(ctx, mr.targetProjectId) : null;
      const user = mr ? await userById(ctx.data, mr.mergeUserId) : null;
      const repo = target ? projectRepository(ctx, target) : null;
      const head = repo && mr ? await repo.resolveBranch(mr.targetBranch) : null;
      const commit = repo && mr?.mergeCommitSha ? await repo.readCommit(mr.mergeCommitSha) : null;
      if (mr && mr.deletedAt === null && target && user && head && commit && commit.parents.length === 2 && (await repo!.isAncestor(commit.sha, head))) {
        await finishMerge(ctx, user, target, mr, { sha: commit.sha, before: commit.parents[0]!, source: commit.parents[1]! }, {}, stop);
        finished++;
      } else {
        await unlock(ctx.data, id, 'The merge was interrupted; merge again');
        undone++;
      }
    } finally {
      stop();
    }
  }
  return { finished, undone };
}

/** The repair of merge locks left by dead daemons: once at the start, then every mergeLockTimes.sweepMs. */
export const mergeLockSweepWorker: BackgroundWorker = periodicWorker('merge lock repair', {
  everyMs: () => mergeLockTimes.sweepMs, what: 'repairing locked merge requests', job: repairLockedMergeRequests,
});
