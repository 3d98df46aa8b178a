/** Merging without a work tree against real repositories: merge base, ancestry, merge-tree results, merge commits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  Repository, RefConflictError, initBareRepository, closeAllProcesses, createMergeCommit, mergeTrees, MergeConflictError,
} from '../../daemon/git/index.js';
import { createCommit } from '../../daemon/git/write.js';
import { gitOk, tempDir } from '../helpers/git.js';

const author = { name: 'Ann Author', email: 'ann@example.com', date: new Date('2016-09-07T10:03:20Z') };
const buf = (s: string) => Buffer.from(s);

let root: string;
let gitDir: string;
let repo: Repository;
let base: string;
let feature: string;
let master: string;
let conflicting: string;
let unrelated: string;

beforeAll(async () => {
  root = tempDir();
  gitDir = join(root, 'm.git');
  await initBareRepository(gitDir, 'master');
  repo = new Repository(gitDir);
  base = (await createCommit(gitDir, { branch: 'master', parentSha: null, author, message: 'base', changes: [
    { action: 'create', path: 'README.md', content: buf('readme\n') },
    { action: 'create', path: 'src/a.txt', content: buf('one\ntwo\nthree\n') },
  ] })).sha;
  feature = (await createCommit(gitDir, { branch: 'feature', parentSha: base, expectedBranchSha: null, author, message: 'feature', changes: [
    { action: 'create', path: 'src/b.txt', content: buf('new file\n') },
    { action: 'update', path: 'src/a.txt', content: buf('ONE\ntwo\nthree\n') },
  ] })).sha;
  master = (await createCommit(gitDir, { branch: 'master', parentSha: base, author, message: 'master moves on', changes: [
    { action: 'update', path: 'README.md', content: buf('readme v2\n') },
  ] })).sha;
  conflicting = (await createCommit(gitDir, { branch: 'conflict', parentSha: base, expectedBranchSha: null, author, message: 'conflict', changes: [
    { action: 'update', path: 'README.md', content: buf('something else\n') },
  ] })).sha;
  unrelated = (await createCommit(gitDir, { branch: 'orphan', parentSha: null, expectedBranchSha: null, author, message: 'orphan', changes: [
    { action: 'create', path: 'other.txt', content: buf('x\n') },
  ] })).sha;
});
afterAll(() => {
  closeAllProcesses(root);
  rmSync(root, { recursive: true, force: true });
});

describe('merge base and ancestry (Repository)', () => {
  it('finds the fork point, and null for unrelated histories', async () => {
    expect(await repo.mergeBase(feature, master)).toBe(base);
    expect(await repo.mergeBase(feature, unrelated)).toBeNull();
  });
  it('tells ancestors apart', async () => {
    expect(await repo.isAncestor(base, feature)).toBe(true);
    expect(await repo.isAncestor(feature, feature)).toBe(true);
    expect(await repo.isAncestor(feature, master)).toBe(false);
  });
});

describe('mergeTrees of unrelated histories', () => {
  it('refuses them with no conflicting path (git decides: no `git merge-base` is run first)', async () => {
    expect(await mergeTrees(gitDir, master, unrelated)).toEqual({ clean: false, conflicts: [], unrelated: true });
  });
});

describe('mergeTrees', () => {
  it('merges disjoint changes into one tree without moving any ref', async () => {
    const r = await mergeTrees(gitDir, master, feature);
    expect(r.clean).toBe(true);
    const tree = await gitOk(root, ['--git-dir', gitDir, 'ls-tree', '-r', '--name-only', (r as { tree: string }).tree]);
    expect(tree.trim().split('\n')).toEqual(['README.md', 'src/a.txt', 'src/b.txt']);
    expect(await repo.resolveRef('master')).toBe(master);
  });
  it('names the conflicting paths', async () => {
    expect(await mergeTrees(gitDir, master, conflicting)).toEqual({ clean: false, conflicts: ['README.md'] });
  });
});

describe('createMergeCommit', () => {
  it('writes a two-parent commit with the merged content and moves the target branch', async () => {
    const before = master;
    const { sha } = await createMergeCommit(gitDir, { targetBranch: 'master', targetSha: before, sourceSha: feature, message: "Merge branch 'feature' into 'master'", author });
    master = sha;
    const parents = (await gitOk(root, ['--git-dir', gitDir, 'rev-list', '--parents', '-n', '1', sha])).trim().split(' ');
    expect(parents).toEqual([sha, before, feature]);
    expect(await repo.resolveRef('master')).toBe(sha);
    expect((await gitOk(root, ['--git-dir', gitDir, 'show', `${sha}:src/a.txt`]))).toBe('ONE\ntwo\nthree');
    expect((await gitOk(root, ['--git-dir', gitDir, 'show', `${sha}:README.md`]))).toBe('readme v2');
    expect((await gitOk(root, ['--git-dir', gitDir, 'log', '-1', '--format=%s%n%an <%ae>', sha])).trim()).toBe("Merge branch 'feature' into 'master'\nAnn Author <ann@example.com>");
  });
  it('refuses a conflicting merge and leaves the branch alone', async () => {
    await expect(createMergeCommit(gitDir, { targetBranch: 'master', targetSha: master, sourceSha: conflicting, message: 'm', author }))
      .rejects.toBeInstanceOf(MergeConflictError);
    expect(await repo.resolveRef('master')).toBe(master);
  });
  it('refuses when the target branch moved since the merge was computed (compare-and-set)', async () => {
    await expect(createMergeCommit(gitDir, { targetBranch: 'master', targetSha: base, sourceSha: feature, message: 'm', author }))
      .rejects.toBeInstanceOf(RefConflictError);
    expect(await repo.resolveRef('master')).toBe(master);
  });
});
