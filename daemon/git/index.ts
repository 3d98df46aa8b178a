/** The git module: the only code that drives the git CLI. */
export { Repository, type Branch, type Tag, type BlobAt, type LogOptions } from './repository.js';
export { type CommitInfo, type Signature, type TreeEntry, type TreeEntryType, type TagObject, ZERO_SHA, EMPTY_TREE_SHA, isZeroSha, isFullSha, isoDate, messageTitle } from './objects.js';
export { type FileDiff, type ChangedPaths } from './diff.js';
export { type FileChange, type CreateCommitOptions, type CreateCommitResult, type Person, normalizeFilePath } from './write.js';
export { validRefName, validBranchName, validTagName, branchRef, tagRef, branchName, tagName, safeRevision } from './refs.js';
export { GitError, GitTimeoutError, RefConflictError, InvalidRefNameError, RevisionNotFoundError, PathExistsError, PathNotFoundError, InvalidPathError } from './errors.js';
export { runGit, spawnGit, gitText, type GitRunOptions, type GitResult } from './command.js';
export { initBareRepository, copyBareRepository, removeBareRepository } from './lifecycle.js';
export { closeAllProcesses, closeRepositoryProcesses } from './batch.js';
export { mergeTrees, createMergeCommit, MergeConflictError, type MergeResult, type MergeCommitOptions } from './merge.js';
