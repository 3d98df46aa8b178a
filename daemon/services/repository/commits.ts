/**
 * Commits of a project's repository: history (filtered and paged, counted with rev-list --count), one commit with
 * stats and pipeline status, its diff, and comments on commits (stored in commit_notes, with GitLab's rule for
 * when a comment is attached to a diff line).
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { compositeStatus, type BuildStatus } from '../../ci/status.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { countCommitNotes, insertCommitNote, listCommitNotes as commitNotesPage } from '../../db/notes.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { CommitNoteRow } from '../../db/schema-notes.js';
import { badRequestMessage, notFound } from '../../errors.js';
import { gitText } from '../../git/command.js';
import type { FileDiff } from '../../git/diff.js';
import { RevisionNotFoundError } from '../../git/errors.js';
import { EMPTY_TREE_SHA, isFullSha, type CommitInfo } from '../../git/objects.js';
import type { Repository } from '../../git/repository.js';
import { afterCommitNote, commitNoteHookContext } from './commit-note-hooks.js';
import { projectRepository } from './repositories.js';
import { usersByIds } from '../../db/users.js';
import { commitPipelineStatuses } from '../../db/ci/pipelines.js';

/** The project's repository for reading, or null when it is not on disk (reads then see an empty repository). */
export function readableRepository(ctx: AppContext, project: Pick<ProjectRow, 'id'>): Repository | null {
  const repo = projectRepository(ctx, project);
  return repo.exists() ? repo : null;
}

/** The commit a revision (sha, branch or tag) names, or 404 `Commit Not Found`. */
export async function findCommit(ctx: AppContext, project: ProjectRow, rev: string): Promise<{ repo: Repository; commit: CommitInfo }> {
  const repo = readableRepository(ctx, project);
  const commit = repo ? await repo.readCommit(rev) : null;
  if (!repo || !commit) throw notFound('Commit');
  return { repo, commit };
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** Parse a `since`/`until` param: ISO 8601, else 400 with GitLab's message. */
export function parseTimestamp(name: 'since' | 'until', value: string | undefined): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const d = new Date(value.trim());
  if (!ISO_8601.test(value.trim()) || Number.isNaN(d.getTime())) {
    throw badRequestMessage(`"${name}" must be a timestamp in ISO 8601 format: YYYY-MM-DDTHH:MM:SSZ`);
  }
  return d;
}

/** Filters of the commit list. */
export interface CommitListFilter {
  /** Branch, tag or sha; default: the project's default branch. */
  ref?: string;
  since?: Date;
  until?: Date;
  path?: string;
}

/** A page of commits and how many there are in all (an unknown ref, or an empty repository, lists nothing). */
export async function listCommits(ctx: AppContext, project: ProjectRow, f: CommitListFilter, limit: number, offset: number): Promise<{ total: number; commits: CommitInfo[] }> {
  const repo = readableRepository(ctx, project);
  const ref = f.ref || project.defaultBranch;
  if (!repo || !(await repo.resolveRef(ref))) return { total: 0, commits: [] };
  const opts = { since: f.since, until: f.until, path: f.path?.replace(/^\/+/, '') || undefined };
  // A path that climbs out of the repository names no file in it (git refuses it: was 500; found by the fuzzer).
  if (opts.path && opts.path.split(/[/\\]/).includes('..')) return { total: 0, commits: [] };
  try {
    const total = await repo.countCommits(ref, opts);
    const commits = total > offset ? await repo.log(ref, { ...opts, limit, offset }) : [];
    return { total, commits };
  } catch (e) {
    if (e instanceof RevisionNotFoundError) return { total: 0, commits: [] };
    throw e;
  }
}

/** Additions and deletions of a commit against its first parent. */
export interface CommitStats {
  additions: number;
  deletions: number;
}

/** Lines added and removed by a commit against its first parent (binary files count 0), without building patches. */
export async function commitStats(repo: Repository, c: CommitInfo): Promise<CommitStats> {
  const out = await gitText(['diff-tree', '-r', '--numstat', '--no-renames', '--no-ext-diff', '--no-textconv', c.parents[0] ?? EMPTY_TREE_SHA, c.sha], { gitDir: repo.path });
  let additions = 0;
  let deletions = 0;
  for (const line of out ? out.split('\n') : []) {
    const [a, d] = line.split('\t');
    if (a && a !== '-') additions += Number(a) || 0;
    if (d && d !== '-') deletions += Number(d) || 0;
  }
  return { additions, deletions };
}

/** One commit with its stats and the combined status of its pipelines (null without pipelines). */
export async function commitDetail(ctx: AppContext, project: ProjectRow, rev: string): Promise<{ commit: CommitInfo; stats: CommitStats; status: string | null }> {
  const { repo, commit } = await findCommit(ctx, project, rev);
  const stats = await commitStats(repo, commit);
  return { commit, stats, status: await commitStatusOf(ctx, project.id, commit.sha) };
}

/**
 * The combined status of every pipeline of a commit (the single commit's `status` field): the composite of the
 * pipeline statuses, or null when the commit has no pipeline.
 */
export async function commitStatusOf(ctx: AppContext, projectId: number, sha: string): Promise<string | null> {
  const statuses = await commitPipelineStatuses(ctx.data, projectId, sha);
  if (!statuses.length) return null;
  return compositeStatus(statuses.map((status) => ({ status: status as BuildStatus, allowFailure: false })));
}

/** The diff of a commit against its first parent. */
export async function commitDiff(ctx: AppContext, project: ProjectRow, rev: string): Promise<FileDiff[]> {
  const { repo, commit } = await findCommit(ctx, project, rev);
  return repo.diff(commit.sha);
}

// ---- comments ----------------------------------------------------------------------------------------------

/**
 * How many comments a commit has and a page of them, oldest first, with their authors: read in one snapshot, so the
 * count and the page agree.
 */
export async function listCommitNotes(
  ctx: AppContext, projectId: number, sha: string, limit: number, offset: number,
): Promise<{ total: number; notes: { note: CommitNoteRow; author: UserRow | null }[] }> {
  return ctx.data.snapshot(async (q) => {
    const count = await countCommitNotes(q, projectId, sha);
    const rows = await commitNotesPage(q, projectId, sha, limit, offset);
    const authors = await usersByIds(q, rows.map((r) => r.authorId));
    return { total: count, notes: rows.map((note) => ({ note, author: note.authorId !== null ? authors.get(note.authorId) ?? null : null })) };
  });
}

/** A comment asked for: the note, and optionally the diff line it is about. */
export interface CommitNoteParams {
  note: string;
  path?: string;
  line?: number;
  lineType?: string;
}

/**
 * Whether a line comment can be placed (GitLab's rule): the commit was named by its full sha, and its diff has the
 * path with an added line (`line_type` new) at that new-file line number.
 */
export function diffHasLine(diffs: FileDiff[], path: string, line: number, lineType: string): boolean {
  if (lineType !== 'new') return false;
  const diff = diffs.find((d) => d.newPath === path);
  if (!diff) return false;
  let newPos = 0;
  let inHunk = false;
  for (const text of diff.diff.split('\n')) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (hunk) {
      newPos = Number(hunk[1]);
      inHunk = true;
      continue;
    }
    if (!inHunk) continue;
    if (text.startsWith('+')) {
      if (newPos === line) return true;
      newPos++;
    } else if (text.startsWith(' ')) newPos++;
  }
  return false;
}

/**
 * Add a comment to a commit (named by sha, branch or tag); a line comment only where the placement rule allows it.
 * The comment, its `commented on` event and its note hook deliveries are written in one transaction.
 */
export async function createCommitNote(ctx: AppContext, project: ProjectRow, user: UserRow, rev: string, p: CommitNoteParams): Promise<{ note: CommitNoteRow; author: UserRow }> {
  const { repo, commit } = await findCommit(ctx, project, rev);
  let placed = false;
  if (isFullSha(rev.toLowerCase()) && p.path && p.line !== undefined && p.lineType) {
    placed = diffHasLine(await repo.diff(commit.sha), p.path, p.line, p.lineType);
  }
  const hc = await commitNoteHookContext(ctx, project);
  const t = now();
  try {
    const note = await ctx.data.transaction(async (tx) => {
      const row = await insertCommitNote(tx, {
        projectId: project.id, sha: commit.sha, body: p.note, path: placed ? p.path! : null, line: placed ? p.line! : null,
        lineType: placed ? 'new' : null, authorId: user.id, at: t,
      });
      await afterCommitNote(tx, ctx, project, hc, user, commit, row);
      return row;
    });
    return { note, author: user };
  } catch (e) {
    // The project (or the commenting user) was deleted meanwhile: nothing is written.
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
}
