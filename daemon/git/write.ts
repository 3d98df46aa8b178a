/**
 * Writing without a work tree: commits built in a temporary index (read-tree, hash-object, update-index,
 * write-tree, commit-tree) and published with a compare-and-set update-ref; tags and ref updates.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catFileObject } from './batch.js';
import { gitText, runGit } from './command.js';
import { GitError, InvalidPathError, InvalidRefNameError, PathExistsError, PathNotFoundError, RefConflictError } from './errors.js';
import { formatSignature, localTimezone, parseCommit, parseTree, ZERO_SHA, type TreeEntry } from './objects.js';
import { branchRef, validBranchName, validRefName, validTagName, tagRef } from './refs.js';
import { badRequestMessage } from '../errors.js';

/** Who wrote a commit or tag; `date` defaults to now. */
export interface Person {
  name: string;
  email: string;
  date?: Date;
}

/** One file change of a commit. */
export type FileChange =
  | { action: 'create' | 'update'; path: string; content: Buffer; executable?: boolean }
  | { action: 'delete'; path: string }
  /** Move `previousPath` to `path`, with new content when given (else the old content). */
  | { action: 'move'; path: string; previousPath: string; content?: Buffer; executable?: boolean };

/** What createCommit needs. */
export interface CreateCommitOptions {
  /** Short branch name to update (created when it does not exist and `expectedBranchSha` is null). */
  branch: string;
  /** The commit to build on (its tree is the starting point); null for a root commit. */
  parentSha: string | null;
  /** The value the branch must have now (default: `parentSha`; null: the branch must not exist). */
  expectedBranchSha?: string | null;
  author: Person;
  /** Defaults to the author. */
  committer?: Person;
  message: string;
  changes: FileChange[];
}

/** The commit that was written and published. */
export interface CreateCommitResult {
  sha: string;
  tree: string;
  parentSha: string | null;
}

/** Check and normalise a repository path: no leading/trailing slash, no empty, `.`, `..` or `.git` component. */
export function normalizeFilePath(path: string): string {
  const p = path.replace(/^\/+|\/+$/g, '');
  const parts = p.split('/');
  if (!p || /[\0\n\r]/.test(p) || parts.some((c) => c === '' || c === '.' || c === '..' || c.toLowerCase() === '.git')) {
    throw new InvalidPathError(path);
  }
  return p;
}

/** Looks up tree entries of one commit, reading each tree once. */
class TreeLookup {
  private readonly trees = new Map<string, TreeEntry[]>();
  constructor(
    private readonly gitDir: string,
    private readonly rootTree: string | null,
  ) {}

  private async tree(sha: string, dir: string): Promise<TreeEntry[]> {
    let t = this.trees.get(sha);
    if (!t) {
      const obj = await catFileObject(this.gitDir, sha);
      t = obj && obj.type === 'tree' ? parseTree(obj.content, dir, sha.length) : [];
      this.trees.set(sha, t);
    }
    return t;
  }

  /** The entry at a path, or the first ancestor that is not a directory, or null. */
  async find(path: string): Promise<{ entry: TreeEntry; exact: boolean } | null> {
    if (!this.rootTree) return null;
    let sha = this.rootTree;
    const parts = path.split('/');
    let dir = '';
    for (let i = 0; i < parts.length; i++) {
      const entry = (await this.tree(sha, dir)).find((e) => e.name === parts[i]);
      if (!entry) return null;
      if (i === parts.length - 1) return { entry, exact: true };
      if (entry.type !== 'tree') return { entry, exact: false };
      sha = entry.sha;
      dir = entry.path;
    }
    return null;
  }
}

/**
 * A commit or tag message as git stores it (ending in a newline). git refuses a NUL byte in one, and a NUL cannot be
 * passed in a name or email (environment variables): both are the caller's 400, not a failed git (was 500; found by
 * the fuzzer).
 */
export function gitMessage(text: string): string {
  if (text.includes('\0')) throw badRequestMessage('400 (Bad request) a commit or tag message may not contain a NUL byte');
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** GIT_<prefix>_NAME, _EMAIL and _DATE for a person (the identity commit-tree records). */
export function personEnv(prefix: 'AUTHOR' | 'COMMITTER', p: Person): Record<string, string> {
  if (p.name.includes('\0') || p.email.includes('\0')) throw badRequestMessage('400 (Bad request) an author name or email may not contain a NUL byte');
  const date = p.date ?? new Date();
  return {
    [`GIT_${prefix}_NAME`]: p.name,
    [`GIT_${prefix}_EMAIL`]: p.email,
    [`GIT_${prefix}_DATE`]: `${Math.floor(date.getTime() / 1000)} ${localTimezone(date)}`,
  };
}

/** The current value of a ref, or null. */
export async function readRef(gitDir: string, ref: string): Promise<string | null> {
  const { stdout, exitCode } = await runGit(['rev-parse', '-q', '--verify', `${ref}^{object}`], { gitDir, okCodes: [0, 1] });
  return exitCode === 0 ? stdout.toString().trim() : null;
}

/**
 * Compare-and-set a ref: set `ref` to `newSha` (null deletes it) only if it is at `expected` now (null: must not
 * exist). Throws RefConflictError when the ref is elsewhere.
 */
export async function updateRef(gitDir: string, ref: string, newSha: string | null, expected: string | null, reason = 'gantry'): Promise<void> {
  if (!validRefName(ref) || !ref.startsWith('refs/')) throw new InvalidRefNameError(ref);
  const args = newSha === null ? ['update-ref', '-m', reason, '-d', ref, expected ?? ZERO_SHA] : ['update-ref', '-m', reason, ref, newSha, expected ?? ZERO_SHA];
  try {
    await runGit(args, { gitDir });
  } catch (e) {
    if (!(e instanceof GitError)) throw e;
    const actual = await readRef(gitDir, ref);
    if (actual !== expected) throw new RefConflictError(ref, expected, actual);
    throw e;
  }
}

/** Build a commit from a parent and file changes in a temporary index, then publish it on a branch (compare-and-set). */
export async function createCommit(gitDir: string, o: CreateCommitOptions): Promise<CreateCommitResult> {
  if (!validBranchName(o.branch)) throw new InvalidRefNameError(o.branch);
  let rootTree: string | null = null;
  if (o.parentSha) {
    const parent = await catFileObject(gitDir, o.parentSha);
    if (!parent || parent.type !== 'commit') throw new GitError(`parent ${o.parentSha} is not a commit`, ['cat-file'], null, '');
    rootTree = parseCommit(parent.sha, parent.content).tree;
  }
  const lookup = new TreeLookup(gitDir, rootTree);
  // The state of each touched path while the changes apply in order: null = absent.
  const state = new Map<string, { mode: string; sha: string } | null>();
  const current = async (path: string) => {
    if (state.has(path)) return state.get(path)!;
    const found = await lookup.find(path);
    if (found && !found.exact) throw new PathExistsError(found.entry.path);
    if (found?.entry.type === 'tree') return { mode: '040000', sha: found.entry.sha };
    return found ? { mode: found.entry.mode, sha: found.entry.sha } : null;
  };
  const writeBlob = async (content: Buffer) => (await gitText(['hash-object', '-w', '--no-filters', '--stdin'], { gitDir, input: content })).trim();
  const blobMode = (executable: boolean | undefined, old: { mode: string } | null) =>
    executable === undefined ? (old && old.mode !== '040000' ? old.mode : '100644') : executable ? '100755' : '100644';
  const isFile = (s: { mode: string } | null) => s !== null && s.mode !== '040000';

  for (const c of o.changes) {
    const path = normalizeFilePath(c.path);
    const old = await current(path);
    if (c.action === 'create' || c.action === 'update') {
      if (c.action === 'create' && old) throw new PathExistsError(path);
      if (c.action === 'update' && !isFile(old)) throw new PathNotFoundError(path);
      state.set(path, { mode: blobMode(c.executable, c.action === 'create' ? null : old), sha: await writeBlob(c.content) });
    } else if (c.action === 'delete') {
      if (!isFile(old)) throw new PathNotFoundError(path);
      state.set(path, null);
    } else if (c.action === 'move') {
      const from = normalizeFilePath(c.previousPath);
      const prev = await current(from);
      if (!isFile(prev)) throw new PathNotFoundError(from);
      if (old && from !== path) throw new PathExistsError(path);
      state.set(from, null);
      state.set(path, { mode: blobMode(c.executable, prev), sha: c.content ? await writeBlob(c.content) : prev!.sha });
    }
  }
  // A created path must not sit under a path created as a file in this same commit.
  const files = new Set([...state].filter(([, v]) => v).map(([k]) => k));
  for (const p of files) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) if (files.has(parts.slice(0, i).join('/'))) throw new PathExistsError(parts.slice(0, i).join('/'));
  }

  const tmp = await mkdtemp(join(tmpdir(), 'gantry-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(tmp, 'index') };
    await runGit(o.parentSha ? ['read-tree', o.parentSha] : ['read-tree', '--empty'], { gitDir, env });
    const records = [...state].map(([p, v]) => (v ? `${v.mode} ${v.sha}\t${p}` : `0 ${ZERO_SHA}\t${p}`));
    if (records.length) await runGit(['update-index', '-z', '--index-info'], { gitDir, env, input: records.map((r) => `${r}\0`).join('') });
    const tree = (await gitText(['write-tree'], { gitDir, env })).trim();
    const author = personEnv('AUTHOR', o.author);
    const committer = personEnv('COMMITTER', o.committer ?? { ...o.author, date: o.author.date });
    const parentArgs = o.parentSha ? ['-p', o.parentSha] : [];
    const message = gitMessage(o.message);
    const sha = (await gitText(['commit-tree', tree, ...parentArgs, '-F', '-'], { gitDir, env: { ...author, ...committer }, input: message })).trim();
    const expected = o.expectedBranchSha === undefined ? o.parentSha : o.expectedBranchSha;
    await updateRef(gitDir, branchRef(o.branch), sha, expected, `commit: ${message.split('\n', 1)[0]}`);
    return { sha, tree, parentSha: o.parentSha };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Create a tag: annotated when a message is given (a tag object by `tagger`), else lightweight. Fails if it exists. */
export async function createTag(gitDir: string, name: string, targetSha: string, opts: { message?: string | null; tagger?: Person } = {}): Promise<string> {
  if (!validTagName(name)) throw new InvalidRefNameError(name);
  let sha = targetSha;
  if (opts.message) {
    const target = await catFileObject(gitDir, targetSha);
    if (!target) throw new GitError(`tag target ${targetSha} not found`, ['cat-file'], null, '');
    const tagger = opts.tagger ?? { name: 'Gantry', email: 'gantry@localhost' };
    const date = tagger.date ?? new Date();
    const sig = formatSignature({ name: tagger.name.replace(/[<>\n]/g, ''), email: tagger.email.replace(/[<>\n]/g, ''), date, timezone: localTimezone(date) });
    const message = gitMessage(opts.message);
    const body = `object ${target.sha}\ntype ${target.type}\ntag ${name}\ntagger ${sig}\n\n${message}`;
    sha = (await gitText(['hash-object', '-t', 'tag', '-w', '--stdin'], { gitDir, input: body })).trim();
  }
  await updateRef(gitDir, tagRef(name), sha, null, `tag: ${name}`);
  return sha;
}
