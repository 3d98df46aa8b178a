/** Repository: reads (refs, objects, trees, commits, log, diffs) and writes (commits, refs, tags) of one bare repository. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { catFileHeader, catFileObject, catFileObjects, closeRepositoryProcesses, type ObjectHeader, type RawObject } from './batch.js';
import { gitText, runGit, type GitRunOptions, type GitResult } from './command.js';
import { changedPaths, changedPathsOfCommits, diffTrees, type ChangedPaths, type FileDiff } from './diff.js';
import { RevisionNotFoundError } from './errors.js';
import { isFullSha, parseCommit, parseTag, parseTree, type CommitInfo, type Signature, type TreeEntry } from './objects.js';
import { branchRef, safeRevision, tagRef, validBranchName, validRefName } from './refs.js';
import { createCommit, createTag, normalizeFilePath, readRef, updateRef, type CreateCommitOptions, type CreateCommitResult, type Person } from './write.js';

/**
 * Up to this many commits are read through the repository's shared cat-file process (pipelined), and listed with a
 * count walked in parallel; more are read by one cat-file process of their own.
 */
const SMALL_COMMIT_LIST = 100;

/** A branch with its head commit. */
export interface Branch {
  name: string;
  sha: string;
  commit: CommitInfo;
}

/** A tag: lightweight (message null) or annotated. */
export interface Tag {
  name: string;
  /** What the ref points at (the tag object for annotated tags). */
  sha: string;
  /** The commit (or other object) the tag finally points at. */
  targetSha: string;
  message: string | null;
  tagger: Signature | null;
  /** The target commit, or null when the tag points at a tree or blob. */
  commit: CommitInfo | null;
}

/** A file's content at a revision. */
export interface BlobAt {
  sha: string;
  size: number;
  mode: string;
  content: Buffer;
}

/** Filters of Repository.log. */
export interface LogOptions {
  /** Only commits after this time (ISO 8601 text or a Date). */
  since?: string | Date;
  /** Only commits before this time. */
  until?: string | Date;
  /** At most this many (default 20). */
  limit?: number;
  /** Skip this many first. */
  offset?: number;
  /** Only commits touching this path. */
  path?: string;
}

const time = (v: string | Date) => (typeof v === 'string' ? v : v.toISOString());

/** Last-commit answers keyed by repository, commit sha and path: immutable, so they never need invalidation. */
const lastCommitCache = new Map<string, string | null>();
const LAST_COMMIT_CACHE_SIZE = 10_000;

/** One bare repository on disk; every method drives git through the git module (no shell, no work tree). */
export class Repository {
  constructor(
    /** The repository directory (`<id>.git`). */
    readonly path: string,
  ) {}

  /** Whether the repository exists on disk. */
  exists(): boolean {
    return existsSync(join(this.path, 'HEAD'));
  }

  /** Run a git command in this repository (for callers needing a command the class does not wrap). */
  git(args: readonly string[], opts: Omit<GitRunOptions, 'gitDir'> = {}): Promise<GitResult> {
    return runGit(args, { ...opts, gitDir: this.path });
  }

  /** Stop this repository's cat-file processes. */
  close(): void {
    closeRepositoryProcesses(this.path);
  }

  // ---- objects -------------------------------------------------------------------------------------------

  /** Any object by name (sha, ref, `rev:path`), with content; null when missing. */
  async readObject(name: string): Promise<RawObject | null> {
    if (!name || /[\n\0]/.test(name)) return null;
    return catFileObject(this.path, name);
  }

  /** An object's id, type and size without its content; null when missing. */
  async objectHeader(name: string): Promise<ObjectHeader | null> {
    if (!name || /[\n\0]/.test(name)) return null;
    return catFileHeader(this.path, name);
  }

  /** A blob's content by id; null when missing or not a blob. */
  async readBlob(sha: string): Promise<Buffer | null> {
    if (!safeRevision(sha)) return null;
    const o = await this.readObject(sha);
    return o && o.type === 'blob' ? o.content : null;
  }

  /**
   * The commit sha a revision names (sha, short sha, branch, tag peeled to its commit, `HEAD`, `x~1`); null when it
   * names no commit. Revisions with `:` or control characters are refused (null).
   */
  async resolveRef(ref: string): Promise<string | null> {
    if (!safeRevision(ref)) return null;
    return (await catFileHeader(this.path, `${ref}^{commit}`))?.sha ?? null;
  }

  /** The head commit of a branch (exactly `refs/heads/<name>`), or null. */
  async resolveBranch(name: string): Promise<string | null> {
    if (!validBranchName(name)) return null;
    return this.resolveRef(branchRef(name));
  }

  /** The raw value of a full ref name (the tag object for annotated tags), or null. */
  async refValue(ref: string): Promise<string | null> {
    if (!validRefName(ref)) return null;
    return readRef(this.path, ref);
  }

  /** A parsed commit by revision; null when the revision names no commit. */
  async readCommit(rev: string): Promise<CommitInfo | null> {
    if (!safeRevision(rev)) return null;
    const o = await catFileObject(this.path, `${rev}^{commit}`);
    return o && o.type === 'commit' ? parseCommit(o.sha, o.content) : null;
  }

  /**
   * The entries of the directory `path` at a revision (raw git order); null when the revision or the directory does
   * not exist, or `path` is a file.
   */
  async readTree(treeish: string, path = ''): Promise<TreeEntry[] | null> {
    const tree = await this.resolveTree(treeish);
    if (!tree) return null;
    const dir = path.replace(/^\/+|\/+$/g, '');
    if (/[\n\0]/.test(dir)) return null;
    const o = await catFileObject(this.path, dir ? `${tree}:${dir}` : tree);
    return o && o.type === 'tree' ? parseTree(o.content, dir, o.sha.length) : null;
  }

  /** The tree entry at a path of a revision (file, directory or submodule), or null. */
  async entryAt(rev: string, path: string): Promise<TreeEntry | null> {
    let p: string;
    try {
      p = normalizeFilePath(path);
    } catch {
      return null;
    }
    const slash = p.lastIndexOf('/');
    const entries = await this.readTree(rev, slash < 0 ? '' : p.slice(0, slash));
    return entries?.find((e) => e.path === p) ?? null;
  }

  /** A file's content at a revision; null when the revision or file does not exist or the path is not a file. */
  async readFileAt(rev: string, path: string): Promise<BlobAt | null> {
    const entry = await this.entryAt(rev, path);
    if (!entry || entry.type !== 'blob') return null;
    const o = await catFileObject(this.path, entry.sha);
    return o ? { sha: o.sha, size: o.size, mode: entry.mode, content: o.content } : null;
  }

  private async resolveTree(treeish: string): Promise<string | null> {
    if (!safeRevision(treeish)) return null;
    return (await catFileHeader(this.path, `${treeish}^{tree}`))?.sha ?? null;
  }

  // ---- history -------------------------------------------------------------------------------------------

  private async revListArgs(ref: string, o: LogOptions): Promise<string[]> {
    const sha = await this.resolveRef(ref);
    if (!sha) throw new RevisionNotFoundError(ref);
    const args: string[] = [];
    if (o.since !== undefined) args.push(`--since=${time(o.since)}`);
    if (o.until !== undefined) args.push(`--until=${time(o.until)}`);
    args.push(sha);
    if (o.path) args.push('--', o.path.replace(/^\/+/, ''));
    return args;
  }

  /** Commits reachable from `ref`, newest first, filtered and paged. Throws RevisionNotFoundError for an unknown ref. */
  async log(ref: string, o: LogOptions = {}): Promise<CommitInfo[]> {
    const rest = await this.revListArgs(ref, o);
    const limit = Math.max(0, Math.floor(o.limit ?? 20));
    const skip = Math.max(0, Math.floor(o.offset ?? 0));
    if (limit === 0) return [];
    const out = await gitText(['rev-list', `--max-count=${limit}`, `--skip=${skip}`, ...rest], { gitDir: this.path });
    return this.readCommits(out ? out.split('\n') : []);
  }

  /** How many commits log(ref, o) would list without limit and offset. */
  async countCommits(ref: string, o: Omit<LogOptions, 'limit' | 'offset'> = {}): Promise<number> {
    const rest = await this.revListArgs(ref, o);
    return Number(await gitText(['rev-list', '--count', ...rest], { gitDir: this.path }));
  }

  /** Commits reachable from `to` but not from any of `exclude` (shas), newest first, at most `limit`. */
  async commitsBetween(to: string, exclude: string[], limit = 20): Promise<{ commits: CommitInfo[]; total: number }> {
    const not = exclude.length ? ['--not', ...exclude] : [];
    const max = Math.max(0, limit);
    const listed = (out: string) => (out ? out.split('\n') : []);
    if (max <= SMALL_COMMIT_LIST) {
      // a short list (push data, compare): the count walks in parallel
      const [list, count] = await Promise.all([
        gitText(['rev-list', `--max-count=${max}`, to, ...not], { gitDir: this.path }),
        gitText(['rev-list', '--count', to, ...not], { gitDir: this.path }),
      ]);
      return { commits: await this.readCommits(listed(list)), total: Number(count) };
    }
    // a long list (a merge request's commits): the count is the list's length unless the limit cut it
    const shas = listed(await gitText(['rev-list', `--max-count=${max}`, to, ...not], { gitDir: this.path }));
    const [commits, total] = await Promise.all([
      this.readCommits(shas),
      shas.length < max ? shas.length : gitText(['rev-list', '--count', to, ...not], { gitDir: this.path }).then(Number),
    ]);
    return { commits, total };
  }

  /**
   * The sha of the newest commit at or before `commitSha` that touched `path` (null when none did). Cached: the
   * answer for a full commit sha never changes, and without the cache every file read would spawn `git rev-list`.
   */
  async lastCommitFor(commitSha: string, path: string): Promise<string | null> {
    const key = `${this.path}\u0000${commitSha}\u0000${path}`;
    const hit = lastCommitCache.get(key);
    if (hit !== undefined) {
      lastCommitCache.delete(key);
      lastCommitCache.set(key, hit); // most recently used last
      return hit;
    }
    const out = await gitText(['rev-list', '--max-count=1', commitSha, '--', path], { gitDir: this.path });
    const sha = out.trim() || null;
    if (lastCommitCache.size >= LAST_COMMIT_CACHE_SIZE) lastCommitCache.delete(lastCommitCache.keys().next().value as string);
    lastCommitCache.set(key, sha);
    return sha;
  }

  /** Parse many commits by sha (pipelined through cat-file). */
  async readCommits(shas: string[]): Promise<CommitInfo[]> {
    if (shas.length > SMALL_COMMIT_LIST && shas.every(isFullSha)) {
      // many commits: one cat-file process for all of them (objects that are not commits are left out, as below)
      if (!this.exists()) return [];
      return (await catFileObjects(this.path, shas)).filter((o) => o.type === 'commit').map((o) => parseCommit(o.sha, o.content));
    }
    const all = await Promise.all(shas.map((s) => this.readCommit(s)));
    return all.filter((c): c is CommitInfo => c !== null);
  }

  /** Whether commit `ancestor` is reachable from `descendant` (true when equal). */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const [a, d] = await Promise.all([this.resolveRef(ancestor), this.resolveRef(descendant)]);
    if (!a || !d) return false;
    const { exitCode } = await runGit(['merge-base', '--is-ancestor', a, d], { gitDir: this.path, okCodes: [0, 1] });
    return exitCode === 0;
  }

  /** The best common ancestor of two revisions, or null. */
  async mergeBase(a: string, b: string): Promise<string | null> {
    if (isFullSha(a) && isFullSha(b)) {
      // two object ids (the usual caller): git checks them itself, a missing or non-commit one is its 128
      if (!this.exists()) return null;
      const { stdout, exitCode } = await runGit(['merge-base', a, b], { gitDir: this.path, okCodes: [0, 1, 128] });
      return exitCode === 0 ? stdout.toString().trim() : null;
    }
    const [x, y] = await Promise.all([this.resolveRef(a), this.resolveRef(b)]);
    if (!x || !y) return null;
    const { stdout, exitCode } = await runGit(['merge-base', x, y], { gitDir: this.path, okCodes: [0, 1] });
    return exitCode === 0 ? stdout.toString().trim() : null;
  }

  // ---- diffs ---------------------------------------------------------------------------------------------

  /** The changes a commit made against its first parent (against the empty tree for a root commit). */
  async diff(rev: string): Promise<FileDiff[]> {
    const c = await this.readCommit(rev);
    if (!c) throw new RevisionNotFoundError(rev);
    return diffTrees(this.path, c.parents[0] ?? null, c.sha);
  }

  /** The changes between two revisions (`from` null: the empty tree), optionally limited to paths. */
  async diffBetween(from: string | null, to: string, paths: string[] = []): Promise<FileDiff[]> {
    const [a, b] = await Promise.all([from === null ? null : this.resolveRef(from), this.resolveRef(to)]);
    if (from !== null && !a) throw new RevisionNotFoundError(from);
    if (!b) throw new RevisionNotFoundError(to);
    return diffTrees(this.path, a, b, paths);
  }

  /** changedPaths of many commits (known CommitInfo) with one git process, keyed by sha. */
  changedPathsOfCommits(commits: readonly CommitInfo[]): Promise<Map<string, ChangedPaths>> {
    return changedPathsOfCommits(this.path, commits);
  }

  /** The paths a commit added, modified and removed against its first parent. */
  async changedPaths(rev: string): Promise<ChangedPaths> {
    const c = await this.readCommit(rev);
    if (!c) throw new RevisionNotFoundError(rev);
    return changedPaths(this.path, c.parents[0] ?? null, c.sha);
  }

  // ---- refs ----------------------------------------------------------------------------------------------

  /** The branch HEAD points at (the default branch), or null. */
  async headBranch(): Promise<string | null> {
    const { stdout, exitCode } = await runGit(['symbolic-ref', '-q', 'HEAD'], { gitDir: this.path, okCodes: [0, 1] });
    const ref = stdout.toString().trim();
    return exitCode === 0 && ref.startsWith('refs/heads/') ? ref.slice(11) : null;
  }

  /** Point HEAD at a branch (it need not exist yet). */
  async setHeadBranch(name: string): Promise<void> {
    if (!validBranchName(name)) throw new RevisionNotFoundError(name);
    await runGit(['symbolic-ref', 'HEAD', branchRef(name)], { gitDir: this.path });
  }

  /** Values of refs under a prefix (`refs/heads/`), keyed by full ref name. */
  async refsUnder(prefix: string): Promise<Map<string, string>> {
    const out = await gitText(['for-each-ref', '--format=%(objectname) %(refname)', prefix], { gitDir: this.path });
    const map = new Map<string, string>();
    for (const line of out ? out.split('\n') : []) {
      const sp = line.indexOf(' ');
      map.set(line.slice(sp + 1), line.slice(0, sp));
    }
    return map;
  }

  /** Whether the repository has no branches. */
  async isEmpty(): Promise<boolean> {
    return (await gitText(['for-each-ref', '--count=1', '--format=x', 'refs/heads/'], { gitDir: this.path })) === '';
  }

  /** All branches with their head commits, sorted by name. */
  async listBranches(): Promise<Branch[]> {
    const refs = await this.refsUnder('refs/heads/');
    const rows = [...refs].map(([ref, sha]) => ({ name: ref.slice(11), sha }));
    const commits = await Promise.all(rows.map((r) => this.readCommit(r.sha)));
    return rows.flatMap((r, i) => (commits[i] ? [{ ...r, commit: commits[i]! }] : []));
  }

  /** One branch, or null. */
  async findBranch(name: string): Promise<Branch | null> {
    const sha = await this.resolveBranch(name);
    const commit = sha ? await this.readCommit(sha) : null;
    return sha && commit ? { name, sha, commit } : null;
  }

  /** All tags with their target commits and annotation, sorted by name. */
  async listTags(): Promise<Tag[]> {
    const out = await gitText(['for-each-ref', '--format=%(objecttype) %(objectname) %(*objectname) %(refname)', 'refs/tags/'], { gitDir: this.path });
    const lines = out ? out.split('\n') : [];
    return Promise.all(
      lines.map(async (line) => {
        const [type, sha, peeled, ...rest] = line.split(' ');
        return this.tagFrom(rest.join(' ').slice(10), type!, sha!, peeled || sha!);
      }),
    );
  }

  /** One tag, or null. */
  async findTag(name: string): Promise<Tag | null> {
    const sha = await this.refValue(tagRef(name));
    if (!sha) return null;
    const h = await catFileHeader(this.path, sha);
    if (!h) return null;
    const peeled = (await catFileHeader(this.path, `${sha}^{}`))?.sha ?? sha;
    return this.tagFrom(name, h.type, sha, peeled);
  }

  private async tagFrom(name: string, type: string, sha: string, targetSha: string): Promise<Tag> {
    let message: string | null = null;
    let tagger: Signature | null = null;
    if (type === 'tag') {
      const o = await catFileObject(this.path, sha);
      if (o) {
        const t = parseTag(sha, o.content);
        message = t.message.replace(/\n+$/, '');
        tagger = t.tagger;
      }
    }
    const target = await catFileHeader(this.path, targetSha);
    const commit = target?.type === 'commit' ? await this.readCommit(targetSha) : null;
    return { name, sha, targetSha, message, tagger, commit };
  }

  // ---- writes --------------------------------------------------------------------------------------------

  /** Write a commit from file changes without a work tree and move the branch (compare-and-set); see CreateCommitOptions. */
  createCommit(o: CreateCommitOptions): Promise<CreateCommitResult> {
    return createCommit(this.path, o);
  }

  /** Compare-and-set a full ref: to `newSha` (null deletes) only if it is at `expected` (null: absent) now. */
  updateRef(ref: string, newSha: string | null, expected: string | null, reason?: string): Promise<void> {
    return updateRef(this.path, ref, newSha, expected, reason);
  }

  /** Create a branch at a commit; RefConflictError when it exists. */
  createBranch(name: string, sha: string): Promise<void> {
    return updateRef(this.path, branchRef(name), sha, null, `branch: created ${name}`);
  }

  /** Delete a branch (only if still at `expected` when given). */
  async deleteBranch(name: string, expected?: string): Promise<void> {
    const current = expected ?? (await this.refValue(branchRef(name)));
    await updateRef(this.path, branchRef(name), null, current, `branch: deleted ${name}`);
  }

  /** Create a tag at a commit (annotated when a message is given); RefConflictError when it exists. Returns the ref value. */
  createTag(name: string, targetSha: string, opts: { message?: string | null; tagger?: Person } = {}): Promise<string> {
    return createTag(this.path, name, targetSha, opts);
  }

  /** Delete a tag. */
  async deleteTag(name: string): Promise<void> {
    const current = await this.refValue(tagRef(name));
    await updateRef(this.path, tagRef(name), null, current, `tag: deleted ${name}`);
  }
}
