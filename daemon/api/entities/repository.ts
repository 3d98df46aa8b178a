/**
 * Repository presenters (GitLab v3 RepoCommit, RepoCommitDetail, RepoBranch, RepoTag, RepoTreeObject, RepoDiff,
 * Compare, Contributor, CommitNote, Release) and their response schemas.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { UserRow } from '../../db/schema.js';
import type { CommitNoteRow, ReleaseRow } from '../../db/schema-notes.js';
import { isoDate, messageTitle, type CommitInfo, type TreeEntry } from '../../git/objects.js';
import type { FileDiff } from '../../git/diff.js';
import type { Tag } from '../../git/repository.js';
import type { BranchRules } from '../../services/repository/protected-branches.js';
import type { CommitStats } from '../../services/repository/commits.js';
import { Nullable } from '../params.js';
import { userBasic, UserBasicSchema } from './users.js';

const S = Type.String();
const NS = Nullable(Type.String());
const I = Type.Integer();
const B = Type.Boolean();

/** GitLab's Commit#title: the first line, cut to 80 characters and `…` when it is longer than 100; a placeholder when empty. */
export function commitTitle(message: string): string {
  const first = messageTitle(message.replace(/^\s+/, ''));
  if (!first.trim()) return '--no commit message';
  return first.length > 100 ? `${first.slice(0, 80)}…` : first;
}

/** RepoCommit: a commit in lists (id, short_id, title, author, created_at = commit date, message). */
export function repoCommit(c: CommitInfo) {
  return {
    id: c.sha,
    short_id: c.sha.slice(0, 8),
    title: commitTitle(c.message),
    author_name: c.author.name,
    author_email: c.author.email,
    created_at: isoDate(c.committer),
    message: c.message,
  };
}
/** Response schema of RepoCommit. */
export const RepoCommitSchema = Type.Object({ id: S, short_id: S, title: S, author_name: S, author_email: S, created_at: S, message: S });

/** An item of GET /repository/commits: RepoCommit plus the spec's `allow_failure` (always false for a plain commit). */
export function repoCommitListItem(c: CommitInfo) {
  return { ...repoCommit(c), allow_failure: false };
}
/** Response schema of a commit list item. */
export const RepoCommitListItemSchema = Type.Object({ ...RepoCommitSchema.properties, allow_failure: B });

/** RepoCommitDetail: RepoCommit plus parent_ids, dates, stats and the combined pipeline status (or null). */
export function repoCommitDetail(c: CommitInfo, stats: CommitStats, status: string | null) {
  return {
    ...repoCommit(c),
    committed_date: isoDate(c.committer),
    authored_date: isoDate(c.author),
    parent_ids: c.parents,
    stats: { additions: stats.additions, deletions: stats.deletions, total: stats.additions + stats.deletions },
    status,
  };
}
/** Response schema of RepoCommitDetail. */
export const RepoCommitDetailSchema = Type.Object({
  ...RepoCommitSchema.properties,
  committed_date: S, authored_date: S, parent_ids: Type.Array(S),
  stats: Type.Object({ additions: I, deletions: I, total: I }),
  status: NS,
});

/**
 * The commit inside a branch or tag: GitLab 8.x's raw git hash (id, message, parent_ids, dates, author_*, committer_*)
 * plus the spec's fields (parents [{id}], tree, author {name, email}), a superset as DECISIONS.md says.
 */
export function refCommit(c: CommitInfo) {
  return {
    id: c.sha,
    message: c.message,
    parent_ids: c.parents,
    authored_date: isoDate(c.author),
    author_name: c.author.name,
    author_email: c.author.email,
    committed_date: isoDate(c.committer),
    committer_name: c.committer.name,
    committer_email: c.committer.email,
    parents: c.parents.map((id) => ({ id })),
    tree: c.tree,
    author: { name: c.author.name, email: c.author.email },
  };
}
/** Response schema of the commit of a branch or tag. */
export const RefCommitSchema = Type.Object({
  id: S, message: S, parent_ids: Type.Array(S), authored_date: S, author_name: S, author_email: S, committed_date: S,
  committer_name: S, committer_email: S, parents: Type.Array(Type.Object({ id: S })), tree: S, author: Type.Object({ name: S, email: S }),
});

/** RepoBranch: name, commit, protected, developers_can_push, developers_can_merge. */
export function repoBranch(b: { name: string; commit: CommitInfo }, rules: BranchRules) {
  return {
    name: b.name,
    commit: refCommit(b.commit),
    protected: rules.protected,
    developers_can_push: rules.protected && rules.developersCanPush,
    developers_can_merge: rules.protected && rules.developersCanMerge,
  };
}
/** Response schema of RepoBranch. */
export const RepoBranchSchema = Type.Object({ name: S, commit: RefCommitSchema, protected: B, developers_can_push: B, developers_can_merge: B });

/** Release: the release notes of a tag. */
export function releaseEntity(r: Pick<ReleaseRow, 'tagName' | 'description'>) {
  return { tag_name: r.tagName, description: r.description };
}
/** Response schema of Release. */
export const ReleaseSchema = Type.Object({ tag_name: S, description: S });

/** RepoTag: name, message (null for lightweight tags), commit (null when the tag points at no commit), release. */
export function repoTag(t: Tag, release: ReleaseRow | null) {
  return {
    name: t.name,
    message: t.message,
    commit: t.commit ? refCommit(t.commit) : null,
    release: release ? releaseEntity(release) : null,
  };
}
/** Response schema of RepoTag. */
export const RepoTagSchema = Type.Object({ name: S, message: NS, commit: Nullable(RefCommitSchema), release: Nullable(ReleaseSchema) });

/** RepoTreeObject: id, name, type, mode, plus path (from the repository root). */
export function treeObject(e: TreeEntry) {
  return { id: e.sha, name: e.name, type: e.type, mode: e.mode, path: e.path };
}
/** Response schema of RepoTreeObject. */
export const TreeObjectSchema = Type.Object({ id: S, name: S, type: S, mode: S, path: S });

/** RepoDiff: old_path, new_path, a_mode, b_mode, diff, new_file, renamed_file, deleted_file. */
export function repoDiff(d: FileDiff) {
  return {
    old_path: d.oldPath, new_path: d.newPath, a_mode: d.aMode, b_mode: d.bMode, diff: d.diff,
    new_file: d.newFile, renamed_file: d.renamedFile, deleted_file: d.deletedFile,
  };
}
/** Response schema of RepoDiff. */
export const RepoDiffSchema = Type.Object({
  old_path: S, new_path: S, a_mode: NS, b_mode: NS, diff: S, new_file: B, renamed_file: B, deleted_file: B,
});

/** Compare: the newest commit, the commits (oldest first), the diffs, and two flags. */
export function compareEntity(commits: CommitInfo[], diffs: FileDiff[], sameRef: boolean) {
  return {
    commit: commits.length ? repoCommit(commits[commits.length - 1]!) : null,
    commits: commits.map(repoCommit),
    diffs: diffs.map(repoDiff),
    compare_timeout: false,
    compare_same_ref: sameRef,
  };
}
/** Response schema of Compare. */
export const CompareSchema = Type.Object({
  commit: Nullable(RepoCommitSchema), commits: Type.Array(RepoCommitSchema), diffs: Type.Array(RepoDiffSchema), compare_timeout: B, compare_same_ref: B,
});

/** Response schema of Contributor. */
export const ContributorSchema = Type.Object({ name: S, email: S, commits: I, additions: I, deletions: I });

/** CommitNote: note, path, line, line_type (null unless a line comment), author (UserBasic + created_at), created_at. */
export function commitNoteEntity(ctx: AppContext, n: CommitNoteRow, author: UserRow | null, gravatar: boolean) {
  return {
    note: n.note,
    path: n.path,
    line: n.line,
    line_type: n.lineType,
    author: author ? { ...userBasic(ctx, author, gravatar), created_at: author.createdAt } : null,
    created_at: n.createdAt,
  };
}
/** Response schema of CommitNote. */
export const CommitNoteSchema = Type.Object({
  note: S, path: NS, line: Nullable(I), line_type: NS,
  author: Nullable(Type.Object({ ...UserBasicSchema.properties, created_at: S })),
  created_at: S,
});

/** The answer of a repository file write: file_name and file_path (both the path, see DECISIONS.md) and branch_name. */
export function fileCommitEntity(path: string, branch: string) {
  return { file_name: path, file_path: path, branch_name: branch };
}
/** Response schema of a file write. */
export const FileCommitSchema = Type.Object({ file_name: S, file_path: S, branch_name: S });

/** Response schema of GET /repository/files. */
export const RepositoryFileSchema = Type.Object({
  file_name: S, file_path: S, size: I, encoding: S, content: S, ref: S, blob_id: S, commit_id: S, last_commit_id: S,
});
