/**
 * Repository files (GET/POST/PUT/DELETE /projects/:id/repository/files): read a file at a ref, and write one file as
 * a real commit built without a work tree, published on the branch with a compare-and-set ref update. A branch that
 * moved meanwhile is a 400 for the caller (never a silent retry), then processPush runs as for a git push.
 */
import { basename } from 'node:path';
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { badRequestMessage, invalidParam, notFound } from '../../errors.js';
import { GitError, InvalidPathError, PathExistsError, PathNotFoundError, RefConflictError, InvalidRefNameError } from '../../git/errors.js';
import { ZERO_SHA } from '../../git/objects.js';
import { branchRef, validBranchName } from '../../git/refs.js';
import type { FileChange } from '../../git/write.js';
import { normalizeFilePath } from '../../git/write.js';
import { refUpdateDenial } from './branches.js';
import { processPush } from './push.js';
import { ensureRepository } from './repositories.js';
import { readableRepository } from './commits.js';

/** GitLab's (non-specific) messages for a file commit that cannot be made; all are 400. */
export const FILE_ERRORS = {
  invalidPath: 'Your changes could not be committed, because the file path is invalid',
  exists: 'A file with this name already exists',
  missing: 'You are attempting to update a file that does not exist',
  missingDelete: 'You are attempting to delete a file that does not exist',
  unchanged: 'Your changes could not be committed, because the file has not been changed',
  noBranch: 'You can only create or edit files when you are on a branch',
  moved: 'Your changes could not be committed, because the branch has been updated since you started editing it',
  notAllowed: 'You are not allowed to push into this branch',
  invalidBranch: 'Branch name is invalid',
} as const;

/** GET /repository/files: the file at a ref with base64 content, its blob, the ref's commit and the last commit touching it. */
export async function readRepositoryFile(ctx: AppContext, project: ProjectRow, filePath: string, ref: string) {
  const repo = readableRepository(ctx, project);
  const commitId = repo ? await repo.resolveRef(ref) : null;
  if (!repo || !commitId) throw notFound('Commit');
  let path: string;
  try {
    path = normalizeFilePath(filePath);
  } catch {
    throw notFound('File');
  }
  const blob = await repo.readFileAt(commitId, path);
  if (!blob) throw notFound('File');
  const lastCommitId = await repo.lastCommitFor(commitId, path);
  return {
    file_name: basename(path),
    file_path: path,
    size: blob.size,
    encoding: 'base64',
    content: blob.content.toString('base64'),
    ref,
    blob_id: blob.sha,
    commit_id: commitId,
    last_commit_id: lastCommitId ?? commitId,
  };
}

/** A file write asked for through the API. */
export interface FileWriteParams {
  action: 'create' | 'update' | 'delete';
  filePath: string;
  branch: string;
  commitMessage: string;
  /** Required for create and update. */
  content?: string;
  /** `text` (default) or `base64`. */
  encoding?: string;
  authorName?: string;
  authorEmail?: string;
}

/** What a successful write returns. */
export interface FileWriteResult {
  filePath: string;
  branch: string;
  sha: string;
}

function decodeContent(content: string, encoding: string | undefined): Buffer {
  if (encoding === undefined || encoding === 'text') return Buffer.from(content, 'utf8');
  if (encoding !== 'base64') throw invalidParam('encoding', 'does not have a valid value');
  const clean = content.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) throw invalidParam('content', 'is not valid base64');
  return Buffer.from(clean, 'base64');
}

/**
 * Create, update or delete one file on a branch as `user` (who has push_code): one commit on the branch head, the
 * branch moved with compare-and-set, then processPush. Creating the first file of an empty repository creates the
 * branch. Every failure is a 400 with a short message and changes nothing.
 */
export async function writeRepositoryFile(ctx: AppContext, project: ProjectRow, user: UserRow, p: FileWriteParams): Promise<FileWriteResult> {
  let path: string;
  try {
    path = normalizeFilePath(p.filePath);
  } catch {
    throw badRequestMessage(FILE_ERRORS.invalidPath);
  }
  // A path written with `..` or a leading slash is refused as such, even where normalising would make it valid.
  if (p.filePath.startsWith('/') || p.filePath.split('/').includes('..')) throw badRequestMessage(FILE_ERRORS.invalidPath);
  if (!validBranchName(p.branch)) throw badRequestMessage(FILE_ERRORS.invalidBranch);
  const content = p.action === 'delete' ? null : decodeContent(p.content ?? '', p.encoding);

  const repo = await ensureRepository(ctx, project);
  const head = await repo.resolveBranch(p.branch);
  if (!head && !(p.action === 'create' && (await repo.isEmpty()))) throw badRequestMessage(FILE_ERRORS.noBranch);
  const ref = branchRef(p.branch);
  // The same branch rules as a git push (a commit: never a deletion), with GitLab's message for file writes.
  if (await refUpdateDenial(ctx, project, user, ref, head ? 'update' : 'create')) throw badRequestMessage(FILE_ERRORS.notAllowed);

  if (head && p.action === 'update') {
    const current = await repo.readFileAt(head, path);
    if (!current) throw badRequestMessage(FILE_ERRORS.missing);
    if (content && current.content.equals(content)) throw badRequestMessage(FILE_ERRORS.unchanged);
  }
  const change: FileChange = p.action === 'delete' ? { action: 'delete', path } : { action: p.action, path, content: content! };
  const author = { name: p.authorName || user.name, email: p.authorEmail || user.email };
  let sha: string;
  try {
    ({ sha } = await repo.createCommit({ branch: p.branch, parentSha: head, expectedBranchSha: head, author, message: p.commitMessage, changes: [change] }));
  } catch (e) {
    throw fileWriteError(e, p.action);
  }
  await processPush(ctx, project, user, [{ ref, before: head ?? ZERO_SHA, after: sha }]);
  return { filePath: path, branch: p.branch, sha };
}

/** Map an error of createCommit to the caller's 400 (a lost compare-and-set, a lock held by a concurrent write, ...). */
function fileWriteError(e: unknown, action: FileWriteParams['action']): unknown {
  if (e instanceof RefConflictError) return badRequestMessage(FILE_ERRORS.moved);
  if (e instanceof PathExistsError) return badRequestMessage(FILE_ERRORS.exists);
  if (e instanceof PathNotFoundError) return badRequestMessage(action === 'delete' ? FILE_ERRORS.missingDelete : FILE_ERRORS.missing);
  if (e instanceof InvalidPathError) return badRequestMessage(FILE_ERRORS.invalidPath);
  if (e instanceof InvalidRefNameError) return badRequestMessage(FILE_ERRORS.invalidBranch);
  // update-ref fails without a RefConflictError when another write holds the ref's lock at that instant.
  if (e instanceof GitError && e.args[0] === 'update-ref') return badRequestMessage(FILE_ERRORS.moved);
  return e;
}
