/** Typed errors of the git module, so callers map them to API answers without parsing git's stderr. */

/** A git command failed (non-zero exit, or could not be started). */
export class GitError extends Error {
  constructor(
    message: string,
    /** The git arguments (never a shell line). */
    readonly args: readonly string[],
    /** The exit code, or null when git was killed or did not start. */
    readonly exitCode: number | null,
    /** What git wrote to stderr (trimmed). */
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'GitError';
  }
}

/** A git command ran longer than its timeout and was killed. */
export class GitTimeoutError extends GitError {
  constructor(args: readonly string[], timeoutMs: number) {
    super(`git ${args[0] ?? ''} timed out after ${timeoutMs} ms`, args, null, '');
    this.name = 'GitTimeoutError';
  }
}

/** A compare-and-set ref update lost: the ref is not at the expected value (moved, created or deleted meanwhile). */
export class RefConflictError extends Error {
  constructor(
    readonly ref: string,
    /** The value the caller expected (null: the ref should not exist). */
    readonly expected: string | null,
    /** The value found (null: the ref does not exist). */
    readonly actual: string | null,
  ) {
    super(expected === null ? `${ref} already exists` : actual === null ? `${ref} does not exist` : `${ref} moved from ${expected} to ${actual}`);
    this.name = 'RefConflictError';
  }
}

/** A branch or tag name that git does not accept. */
export class InvalidRefNameError extends Error {
  constructor(readonly refName: string) {
    super(`invalid reference name: ${refName}`);
    this.name = 'InvalidRefNameError';
  }
}

/** A revision (sha, branch, tag) that does not name a commit. */
export class RevisionNotFoundError extends Error {
  constructor(readonly revision: string) {
    super(`revision not found: ${revision}`);
    this.name = 'RevisionNotFoundError';
  }
}

/** createCommit: a `create` of a path that exists, or a parent directory is a file. */
export class PathExistsError extends Error {
  constructor(readonly path: string) {
    super(`a file with this name already exists: ${path}`);
    this.name = 'PathExistsError';
  }
}

/** createCommit: an `update`, `delete` or `move` of a path that does not exist. */
export class PathNotFoundError extends Error {
  constructor(readonly path: string) {
    super(`file not found: ${path}`);
    this.name = 'PathNotFoundError';
  }
}

/** A file path that git cannot store (empty, absolute, `..`, `.git`, NUL or newline). */
export class InvalidPathError extends Error {
  constructor(readonly path: string) {
    super(`invalid file path: ${JSON.stringify(path)}`);
    this.name = 'InvalidPathError';
  }
}
