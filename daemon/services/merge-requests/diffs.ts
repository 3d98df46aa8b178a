/**
 * A merge request's diff versions and merge status, from git without a work tree (8.x MergeRequestDiff and
 * MergeRequest#check_if_can_be_merged): the source head is brought into the target repository (fetched from a fork
 * into `refs/gantry/forks/<project id>/<branch>`, kept as `refs/merge-requests/<iid>/head` as 8.x did), the merge
 * base of the two heads, the commits of the source not in the target (newest first), and whether the merge is clean
 * (`git merge-tree --write-tree`). Git runs outside every transaction: compute, then write.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { MergeRequestDiffRow, MergeRequestRow, MergeStatus } from '../../db/schema-merge-requests.js';
import type { ProjectRow } from '../../db/schema.js';
import { changedFileCount, limitedDiff, DEFAULT_DIFF_LIMITS, type DiffLimits, type LimitedDiff } from '../../git/diff-stream.js';
import { mergeTrees } from '../../git/merge.js';
import { isoDate, type CommitInfo } from '../../git/objects.js';
import { validBranchName } from '../../git/refs.js';
import type { Repository } from '../../git/repository.js';
import { lookupProjectAsync } from '../projects/projects.js';
import { projectRepository } from '../repository/repositories.js';
import { latestDiff, type StoredCommit } from './find.js';
import { diffVersion, diffVersions, insertMergeRequestDiff } from '../../db/merge-request-diffs.js';
import { mergeRequestById, mergeStatusVersion, takeBackMergeStatus, uncheckMergeStatus, writeCheckedMergeStatus } from '../../db/merge-requests.js';

/** At most this many commits are stored per diff version (commits_count keeps the real number). */
export const MAX_STORED_COMMITS = 10_000;

/** The ref of a fork's branch fetched into the target repository. */
const forkRef = (sourceProjectId: number, branch: string) => `refs/gantry/forks/${Math.trunc(sourceProjectId)}/${branch}`;
/** 8.x's ref of a merge request's source head in the target repository. */
export const mergeRequestHeadRef = (iid: number) => `refs/merge-requests/${Math.trunc(iid)}/head`;

/** The branches and projects of a merge request (or of one about to be created). */
export interface MergeRequestEnds {
  targetProject: ProjectRow;
  sourceProject: ProjectRow | null;
  sourceBranch: string;
  targetBranch: string;
}

/** The projects of a merge request row (the source may have been deleted). */
export async function endsOf(ctx: AppContext, mr: MergeRequestRow, target?: ProjectRow): Promise<MergeRequestEnds> {
  const targetProject = target ?? (await lookupProjectAsync(ctx, mr.targetProjectId))!;
  const sourceProject = mr.sourceProjectId === null ? null : mr.sourceProjectId === targetProject.id ? targetProject : await lookupProjectAsync(ctx, mr.sourceProjectId);
  return { targetProject, sourceProject, sourceBranch: mr.sourceBranch, targetBranch: mr.targetBranch };
}

/** The head of a branch of a project, or null (no repository, no branch, or an invalid name). */
export async function branchHead(ctx: AppContext, project: ProjectRow, branch: string): Promise<string | null> {
  if (!validBranchName(branch)) return null;
  const repo = projectRepository(ctx, project);
  if (!repo.exists()) return null;
  return repo.resolveBranch(branch);
}

/**
 * The source head as a commit of the target repository, or null when the source branch (or project) is gone. Same
 * project: the branch head. A fork: the branch is fetched into the target repository first.
 */
export async function sourceHeadInTarget(ctx: AppContext, ends: MergeRequestEnds): Promise<string | null> {
  const { sourceProject, targetProject, sourceBranch } = ends;
  if (!sourceProject) return null;
  const head = await branchHead(ctx, sourceProject, sourceBranch);
  if (!head || sourceProject.id === targetProject.id) return head;
  const target = projectRepository(ctx, targetProject);
  if (!target.exists()) return null;
  const ref = forkRef(sourceProject.id, sourceBranch);
  if ((await target.resolveRef(ref)) !== head || !(await target.readCommit(head))) {
    const source = projectRepository(ctx, sourceProject);
    await target.git(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', source.path, `+refs/heads/${sourceBranch}:${ref}`], { timeoutMs: 300_000 });
  }
  return target.resolveRef(ref);
}

/** A commit as a diff version stores it. */
function storedCommit(c: CommitInfo): StoredCommit {
  return {
    id: c.sha, message: c.message, author_name: c.author.name, author_email: c.author.email, authored_date: isoDate(c.author),
    committer_name: c.committer.name, committer_email: c.committer.email, committed_date: isoDate(c.committer),
  };
}

/** A computed diff version, ready to be written. */
export interface ComputedDiff {
  state: MergeRequestDiffRow['state'];
  baseCommitSha: string | null;
  headCommitSha: string | null;
  startCommitSha: string | null;
  commits: StoredCommit[];
  commitsCount: number;
  realSize: string | null;
  /** Whether the head merges cleanly into the start (when asked for): the merge status of exactly this version. */
  mergeStatus?: Exclude<MergeStatus, 'unchecked'>;
}

/**
 * Compute a diff version from git: the merge base of the target and source heads, the commits of the source not in
 * the target (newest first), the number of changed files, and with `mergeStatus` whether the merge is clean. The git
 * commands that do not need each other's answer run at once (the commits walk, the merge base then the changed
 * files, the merge). Null when a branch is missing (nothing to store).
 */
export async function computeDiff(ctx: AppContext, ends: MergeRequestEnds, opts: { mergeStatus?: boolean } = {}): Promise<ComputedDiff | null> {
  const repo = projectRepository(ctx, ends.targetProject);
  if (!repo.exists()) return null;
  const [head, start] = await Promise.all([sourceHeadInTarget(ctx, ends), branchHead(ctx, ends.targetProject, ends.targetBranch)]);
  if (!head || !start) return null;
  const [{ base, files }, { commits, total }, mergeStatus] = await Promise.all([
    repo.mergeBase(start, head).then(async (b) => ({ base: b, files: await changedFileCount(repo.path, b ?? start, head) })),
    repo.commitsBetween(head, [start], MAX_STORED_COMMITS),
    opts.mergeStatus ? mergeStatusOf(repo, start, head) : undefined,
  ]);
  return {
    state: base === null ? 'unrelated' : total === 0 ? 'empty' : 'collected',
    baseCommitSha: base, headCommitSha: head, startCommitSha: start, commits: commits.map(storedCommit), commitsCount: total,
    realSize: String(files), ...(mergeStatus ? { mergeStatus } : {}),
  };
}

/** Whether `head` merges cleanly into `start` (git refuses unrelated histories; a failed git is no clean merge). */
async function mergeStatusOf(repo: Repository, start: string, head: string): Promise<Exclude<MergeStatus, 'unchecked'>> {
  try {
    return (await mergeTrees(repo.path, start, head)).clean ? 'can_be_merged' : 'cannot_be_merged';
  } catch {
    return 'cannot_be_merged';
  }
}

/** Whether a computed diff differs from the stored one (a new version is needed). */
export function diffChanged(stored: MergeRequestDiffRow | null, d: ComputedDiff): boolean {
  return !stored || stored.headCommitSha !== d.headCommitSha || stored.baseCommitSha !== d.baseCommitSha || stored.startCommitSha !== d.startCommitSha;
}

/** Insert a diff version of a merge request (inside the caller's transaction). */
export async function insertDiff(tx: Queries, mergeRequestId: number, d: ComputedDiff): Promise<MergeRequestDiffRow> {
  const commits = JSON.stringify(d.commits);
  const createdAt = now();
  // only the id comes back: the commits just written (megabytes for thousands of commits) are not read again
  const row: Omit<MergeRequestDiffRow, 'id'> = {
    mergeRequestId, state: d.state, baseCommitSha: d.baseCommitSha, headCommitSha: d.headCommitSha, startCommitSha: d.startCommitSha, commits,
    commitsCount: d.commitsCount, realSize: d.realSize, createdAt,
  };
  return { id: await insertMergeRequestDiff(tx, row), ...row };
}

/** Keep `refs/merge-requests/<iid>/head` at the source head in the target repository (as 8.x; clients fetch it). */
export async function writeHeadRef(ctx: AppContext, targetProject: ProjectRow, iid: number, sha: string | null): Promise<void> {
  if (!sha) return;
  const repo = projectRepository(ctx, targetProject);
  if (repo.exists()) await repo.git(['update-ref', mergeRequestHeadRef(iid), sha]);
}

/** Whether the source head merges cleanly into the target head (unrelated histories never do). */
export async function computeMergeStatus(ctx: AppContext, ends: MergeRequestEnds): Promise<Exclude<MergeStatus, 'unchecked'>> {
  try {
    const repo: Repository = projectRepository(ctx, ends.targetProject);
    if (!repo.exists()) return 'cannot_be_merged';
    const [head, start] = await Promise.all([sourceHeadInTarget(ctx, ends), branchHead(ctx, ends.targetProject, ends.targetBranch)]);
    if (!head || !start) return 'cannot_be_merged';
    return await mergeStatusOf(repo, start, head);
  } catch {
    return 'cannot_be_merged';
  }
}

/** The source and target branch heads as they are now (ref reads, no git process, no fetch), as one comparable text. */
async function branchHeads(ctx: AppContext, ends: MergeRequestEnds): Promise<string> {
  const [source, start] = await Promise.all([
    ends.sourceProject ? branchHead(ctx, ends.sourceProject, ends.sourceBranch) : null,
    branchHead(ctx, ends.targetProject, ends.targetBranch),
  ]);
  return `${source ?? '-'} ${start ?? '-'}`;
}

/** Set merge_status back to unchecked: a push or a new target branch (inside the writing transaction `tx`). */
export async function resetMergeStatus(tx: Queries, mergeRequestId: number): Promise<void> {
  await uncheckMergeStatus(tx, mergeRequestId);
}

/**
 * Check an open merge request whose merge_status is unchecked: git decides, then the answer is written unless the
 * status was reset meanwhile (a push during the check). Returns the row as it is after the check.
 */
export async function checkMergeStatus(ctx: AppContext, mr: MergeRequestRow, target?: ProjectRow): Promise<MergeRequestRow> {
  if (mr.mergeStatus !== 'unchecked' || (mr.state !== 'opened' && mr.state !== 'reopened')) return mr;
  const version = await mergeStatusVersion(ctx.data, mr.id);
  const ends = await endsOf(ctx, mr, target);
  const before = await branchHeads(ctx, ends);
  const status = await computeMergeStatus(ctx, ends);
  const wrote = await writeCheckedMergeStatus(ctx.data, mr.id, status, version);
  // A push moves its ref before its transaction sets the merge requests it touches back to unchecked, and that reset
  // passes over rows that are unchecked already (a target branch with thousands of open merge requests costs nothing
  // then). So a push that lands while this check runs may find the row still unchecked and leave it: the heads are
  // read again after the answer is written, and a moved head takes the answer back. A push after this re-read finds
  // the answer written and resets it itself.
  if (wrote.changes > 0 && (await branchHeads(ctx, ends)) !== before) {
    await takeBackMergeStatus(ctx.data, mr.id, status, version);
  }
  return (await mergeRequestById(ctx.data, mr.id)) ?? mr;
}

/** The changes of a merge request's latest diff version, within limits (GET .../changes). */
export async function mergeRequestChanges(ctx: AppContext, mr: MergeRequestRow, target: ProjectRow, limits: DiffLimits = DEFAULT_DIFF_LIMITS): Promise<LimitedDiff> {
  return versionChanges(ctx, await latestDiff(ctx.data, mr.id), target, limits);
}

/** The diff versions of a merge request, newest first (8.13 `GET .../versions`). */
export async function listDiffVersions(q: Queries, mergeRequestId: number): Promise<MergeRequestDiffRow[]> {
  return diffVersions(q, mergeRequestId);
}

/** One diff version of a merge request, or null (another merge request's, or none: an id past int4 never reaches SQL). */
export async function findDiffVersion(q: Queries, mergeRequestId: number, versionId: number): Promise<MergeRequestDiffRow | null> {
  if (!Number.isSafeInteger(versionId) || versionId <= 0 || versionId > 2_147_483_647) return null;
  return diffVersion(q, mergeRequestId, versionId);
}

/** The file changes of one diff version (base, or start when unrelated, to head), from git within `limits`. */
export async function versionChanges(ctx: AppContext, diff: MergeRequestDiffRow | null, target: ProjectRow, limits: DiffLimits = DEFAULT_DIFF_LIMITS): Promise<LimitedDiff> {
  if (!diff || !diff.headCommitSha) return { files: [], overflow: false, total: 0 };
  const repo = projectRepository(ctx, target);
  if (!repo.exists()) return { files: [], overflow: false, total: 0 };
  const from = diff.baseCommitSha ?? diff.startCommitSha;
  try {
    return await limitedDiff(repo.path, from, diff.headCommitSha, limits);
  } catch {
    // the commits are gone (a fork's objects pruned): nothing to show rather than a 500
    return { files: [], overflow: false, total: 0 };
  }
}

