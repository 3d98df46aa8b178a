/**
 * Browsing a project's repository: trees, raw blobs, archives (streamed from `git archive`), comparisons between two
 * revisions and contributors. Reads only; an absent or empty repository answers as GitLab 8.x did (404 or []).
 */
import type { ChildProcess } from 'node:child_process';
import type { AppContext } from '../../context.js';
import type { ProjectRow } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { gitText, spawnGit } from '../../git/command.js';
import type { FileDiff } from '../../git/diff.js';
import type { CommitInfo, TreeEntry, TreeEntryType } from '../../git/objects.js';
import { normalizeFilePath } from '../../git/write.js';
import { findCommit, readableRepository } from './commits.js';

const TYPE_ORDER: Record<TreeEntryType, number> = { tree: 0, blob: 1, commit: 2 };

/** Trees first, then blobs, then submodules; git's order within each kind (GitLab's sorted_entries). */
export function sortTreeEntries(entries: TreeEntry[]): TreeEntry[] {
  return entries.map((e, i) => ({ e, i })).sort((a, b) => TYPE_ORDER[a.e.type] - TYPE_ORDER[b.e.type] || a.i - b.i).map((x) => x.e);
}

/**
 * The entries of a directory at a ref (default: the default branch), optionally recursive (directories included).
 * 404 `Tree Not Found` for an unknown ref; a path that is not a directory lists nothing, as GitLab 8.x did.
 */
export async function listTree(ctx: AppContext, project: ProjectRow, o: { ref?: string; path?: string; recursive?: boolean }): Promise<TreeEntry[]> {
  const repo = readableRepository(ctx, project);
  const sha = repo ? await repo.resolveRef(o.ref || project.defaultBranch) : null;
  if (!repo || !sha) throw notFound('Tree');
  let dir = '';
  if (o.path && o.path.replace(/^\/+|\/+$/g, '') !== '') {
    try {
      dir = normalizeFilePath(o.path);
    } catch {
      return [];
    }
  }
  if (!o.recursive) return sortTreeEntries((await repo.readTree(sha, dir)) ?? []);
  const entry = dir ? await repo.entryAt(sha, dir) : null;
  if (dir && entry?.type !== 'tree') return [];
  const out = await gitText(['ls-tree', '-r', '-t', '-z', '--full-tree', sha, ...(dir ? ['--', `${dir}/`] : [])], { gitDir: repo.path });
  const entries: TreeEntry[] = [];
  for (const rec of out.split('\0')) {
    const tab = rec.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, id] = rec.slice(0, tab).split(' ') as [string, TreeEntryType, string];
    const path = rec.slice(tab + 1);
    // With -t, ls-tree also shows the directory asked for itself.
    if (dir && !path.startsWith(`${dir}/`)) continue;
    entries.push({ name: path.slice(path.lastIndexOf('/') + 1), path, type, mode: mode.padStart(6, '0'), sha: id });
  }
  return sortTreeEntries(entries);
}

/** The content of a file at a revision: 404 `Commit Not Found` or `File Not Found`. */
export async function blobAtRevision(ctx: AppContext, project: ProjectRow, rev: string, filePath: string): Promise<Buffer> {
  const { repo, commit } = await findCommit(ctx, project, rev);
  const blob = await repo.readFileAt(commit.sha, filePath).catch(() => null);
  if (!blob) throw notFound('File');
  return blob.content;
}

/** A blob's content by its id: 404 `Blob Not Found`. */
export async function rawBlob(ctx: AppContext, project: ProjectRow, sha: string): Promise<Buffer> {
  const repo = readableRepository(ctx, project);
  const content = repo ? await repo.readBlob(sha) : null;
  if (!content) throw notFound('Blob');
  return content;
}

/** Whether content looks binary (a NUL byte in its first 8000 bytes, as git decides). */
export const looksBinary = (content: Buffer) => content.subarray(0, 8000).includes(0);

/** Archive formats by the suffixes GitLab 8.x accepted: git's format, the file extension and the content type. */
const ARCHIVE_FORMATS: Record<string, { format: string; ext: string; type: string }> = {
  zip: { format: 'zip', ext: 'zip', type: 'application/zip' },
  tar: { format: 'tar', ext: 'tar', type: 'application/x-tar' },
  'tar.gz': { format: 'tar.gz', ext: 'tar.gz', type: 'application/gzip' },
  tgz: { format: 'tar.gz', ext: 'tar.gz', type: 'application/gzip' },
  gz: { format: 'tar.gz', ext: 'tar.gz', type: 'application/gzip' },
  'tar.bz2': { format: 'tar.bz2', ext: 'tar.bz2', type: 'application/x-bzip2' },
  tbz: { format: 'tar.bz2', ext: 'tar.bz2', type: 'application/x-bzip2' },
  tbz2: { format: 'tar.bz2', ext: 'tar.bz2', type: 'application/x-bzip2' },
  tb2: { format: 'tar.bz2', ext: 'tar.bz2', type: 'application/x-bzip2' },
  bz2: { format: 'tar.bz2', ext: 'tar.bz2', type: 'application/x-bzip2' },
};
/** The archive suffixes routes accept. */
export const ARCHIVE_SUFFIXES = Object.keys(ARCHIVE_FORMATS);

/** A started archive: git's process (stdout is the archive), the file name and content type. */
export interface Archive {
  child: ChildProcess;
  filename: string;
  contentType: string;
}

/**
 * Start `git archive` of a revision (default: the default branch) in a format (default tar.gz); the files sit under
 * `<project path>-<sha>/`. 404 `File Not Found` for an unknown revision or format.
 */
export async function startArchive(ctx: AppContext, project: ProjectRow, rev: string | undefined, format = 'tar.gz'): Promise<Archive> {
  const f = ARCHIVE_FORMATS[format];
  const repo = readableRepository(ctx, project);
  const sha = f && repo ? await repo.resolveRef(rev || project.defaultBranch) : null;
  if (!f || !repo || !sha) throw notFound('File');
  const base = `${project.path}-${sha}`;
  // bzip2 is not built into git archive: a fixed command (no user input) registers it.
  const config: Record<string, string> = f.format === 'tar.bz2' ? { 'tar.tar.bz2.command': 'bzip2 -c' } : {};
  const child = spawnGit(['archive', `--format=${f.format}`, `--prefix=${base}/`, sha], { gitDir: repo.path, config, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr?.resume();
  return { child, filename: `${base}.${f.ext}`, contentType: f.type };
}

/** The result of comparing two revisions. */
export interface Comparison {
  /** Commits reachable from `to` and not from `from`, oldest first. */
  commits: CommitInfo[];
  /** Changes from the merge base of the two to `to`. */
  diffs: FileDiff[];
  sameRef: boolean;
}

/** At most this many commits are listed by a comparison. */
export const COMPARE_COMMITS_LIMIT = 5000;

/** Compare two revisions as GitLab does (`from...to`): 404 `Commit Not Found` when either is unknown. */
export async function compareRevisions(ctx: AppContext, project: ProjectRow, from: string, to: string): Promise<Comparison> {
  const a = await findCommit(ctx, project, from);
  const b = await findCommit(ctx, project, to);
  if (a.commit.sha === b.commit.sha) return { commits: [], diffs: [], sameRef: true };
  const repo = b.repo;
  const base = (await repo.mergeBase(a.commit.sha, b.commit.sha)) ?? a.commit.sha;
  const [{ commits }, diffs] = await Promise.all([
    repo.commitsBetween(b.commit.sha, [a.commit.sha], COMPARE_COMMITS_LIMIT),
    repo.diffBetween(base, b.commit.sha),
  ]);
  return { commits: commits.reverse(), diffs, sameRef: false };
}

/** Contributor: name, email, commits; additions and deletions are always 0, as in GitLab 8.12. */
export interface Contributor {
  name: string;
  email: string;
  commits: number;
  additions: number;
  deletions: number;
}

/** Authors of the last 2000 non-merge commits of the default branch, grouped by email in order of appearance. */
export async function listContributors(ctx: AppContext, project: ProjectRow): Promise<Contributor[]> {
  const repo = readableRepository(ctx, project);
  const sha = repo ? await repo.resolveRef(project.defaultBranch) : null;
  if (!repo || !sha) return [];
  const out = await gitText(['log', '--no-merges', '--max-count=2000', '--format=%an%x00%ae', sha], { gitDir: repo.path });
  const byEmail = new Map<string, Contributor>();
  for (const line of out ? out.split('\n') : []) {
    const [name = '', email = ''] = line.split('\0');
    const c = byEmail.get(email);
    if (c) {
      c.commits++;
      if (!c.name) c.name = name;
    } else byEmail.set(email, { name, email, commits: 1, additions: 0, deletions: 0 });
  }
  return [...byEmail.values()];
}
