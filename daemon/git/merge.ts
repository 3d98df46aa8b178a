/**
 * Merging without a work tree (merge requests): `git merge-tree --write-tree` (git 2.38+) computes a merge and its
 * conflicts, and a merge commit is published with a compare-and-set ref update. Merge bases and ancestry are
 * Repository#mergeBase and #isAncestor.
 */
import { gitText, runGit } from './command.js';
import { GitError, InvalidRefNameError } from './errors.js';
import { branchRef, validBranchName } from './refs.js';
import { gitMessage, personEnv, updateRef, type Person } from './write.js';

/**
 * What merging `theirs` into `ours` gives: the merged tree, or the paths in conflict (none, with `unrelated`, when the
 * two commits share no history: such a merge is refused).
 */
export type MergeResult = { clean: true; tree: string } | { clean: false; conflicts: string[]; unrelated?: boolean };

/** git's refusal of a merge of two commits without a common ancestor. */
const UNRELATED = /refusing to merge unrelated histories/;

/**
 * Compute the merge of two commits without touching any ref or work tree (objects are written to the repository).
 * git itself refuses commits without a merge base (one process: no `git merge-base` is run first to find out).
 */
export async function mergeTrees(gitDir: string, ours: string, theirs: string): Promise<MergeResult> {
  const { stdout, stderr, exitCode } = await runGit(
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs],
    { gitDir, okCodes: [0, 1, 128] },
  );
  if (exitCode === 128) {
    if (UNRELATED.test(stderr)) return { clean: false, conflicts: [], unrelated: true };
    const first = stderr.split('\n').find((l) => l.trim()) ?? 'exit code 128';
    throw new GitError(`git merge-tree failed: ${first}`, ['merge-tree'], exitCode, stderr);
  }
  const fields = stdout.toString('utf8').split('\0').filter((f) => f !== '');
  const tree = fields[0];
  if (!tree || !/^[0-9a-f]{40,64}$/.test(tree)) throw new GitError('git merge-tree gave no tree', ['merge-tree'], exitCode, '');
  if (exitCode === 0) return { clean: true, tree };
  return { clean: false, conflicts: [...new Set(fields.slice(1))] };
}

/** The merge of a source commit cannot be made without conflicts. */
export class MergeConflictError extends Error {
  constructor(readonly conflicts: string[]) {
    super(`merge conflicts in ${conflicts.join(', ')}`);
    this.name = 'MergeConflictError';
  }
}

/** What a merge commit needs. */
export interface MergeCommitOptions {
  /** The branch that receives the merge. */
  targetBranch: string;
  /** The target branch's commit the merge is made on; the branch must still be there (compare-and-set). */
  targetSha: string;
  /** The commit merged in (the merge request's source head). */
  sourceSha: string;
  message: string;
  author: Person;
  committer?: Person;
  /** The merged tree when already computed for exactly these two commits (mergeTrees): not computed again. */
  tree?: string;
  /** Called with the merge commit once it is written and before the branch moves (to record it for crash repair). */
  beforePublish?: (sha: string) => void | Promise<void>;
}

/** Write a two-parent merge commit of `sourceSha` into `targetSha` and move the target branch to it. */
export async function createMergeCommit(gitDir: string, o: MergeCommitOptions): Promise<{ sha: string; tree: string }> {
  if (!validBranchName(o.targetBranch)) throw new InvalidRefNameError(o.targetBranch);
  const merged = o.tree ? { clean: true as const, tree: o.tree } : await mergeTrees(gitDir, o.targetSha, o.sourceSha);
  if (!merged.clean) throw new MergeConflictError(merged.conflicts);
  const message = gitMessage(o.message);
  const env = { ...personEnv('AUTHOR', o.author), ...personEnv('COMMITTER', o.committer ?? o.author) };
  const sha = (await gitText(['commit-tree', merged.tree, '-p', o.targetSha, '-p', o.sourceSha, '-F', '-'], { gitDir, env, input: message })).trim();
  await o.beforePublish?.(sha);
  await updateRef(gitDir, branchRef(o.targetBranch), sha, o.targetSha, `merge: ${message.split('\n', 1)[0]}`);
  return { sha, tree: merged.tree };
}
