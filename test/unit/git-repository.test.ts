/** The git module against real repositories: reads through cat-file --batch, commits without a work tree, refs, diffs. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  Repository, GitError, RefConflictError, PathExistsError, PathNotFoundError, InvalidPathError, InvalidRefNameError, RevisionNotFoundError,
  initBareRepository, copyBareRepository, removeBareRepository, closeAllProcesses, isoDate, ZERO_SHA, validBranchName, validTagName,
} from '../../daemon/git/index.js';
import { openProcessCount } from '../../daemon/git/batch.js';
import { commitFiles, gitOk, tempDir, workTree } from '../helpers/git.js';

const author = { name: 'Ann Author', email: 'ann@example.com', date: new Date('2016-09-07T10:03:20Z') };
const buf = (s: string) => Buffer.from(s);

let root: string;
let repo: Repository;
let first: string;
let second: string;

beforeAll(async () => {
  root = tempDir();
  await initBareRepository(join(root, '1.git'), 'master');
  repo = new Repository(join(root, '1.git'));
});
afterAll(() => {
  closeAllProcesses(root);
  rmSync(root, { recursive: true, force: true });
});

describe('empty repository', () => {
  it('exists with HEAD on the default branch and no refs', async () => {
    expect(repo.exists()).toBe(true);
    expect(await repo.headBranch()).toBe('master');
    expect(await repo.isEmpty()).toBe(true);
    expect(await repo.resolveRef('master')).toBeNull();
    expect(await repo.listBranches()).toEqual([]);
    expect(await repo.listTags()).toEqual([]);
    expect(await repo.readTree('master')).toBeNull();
  });

  it('init leaves an existing repository alone', async () => {
    await initBareRepository(repo.path, 'other');
    expect(await repo.headBranch()).toBe('master');
  });
});

describe('createCommit', () => {
  it('writes a root commit and creates the branch', async () => {
    const r = await repo.createCommit({
      branch: 'master', parentSha: null, author, message: 'Initial commit\n\nWith a body',
      changes: [
        { action: 'create', path: 'README.md', content: buf('# Hello\n') },
        { action: 'create', path: '/dir/run.sh', content: buf('#!/bin/sh\necho hi\n'), executable: true },
      ],
    });
    first = r.sha;
    expect(r.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await repo.resolveBranch('master')).toBe(first);
    expect(await repo.resolveRef('HEAD')).toBe(first);
    const c = (await repo.readCommit(first))!;
    expect(c.parents).toEqual([]);
    expect(c.tree).toBe(r.tree);
    expect(c.message).toBe('Initial commit\n\nWith a body\n');
    expect(c.author).toMatchObject({ name: 'Ann Author', email: 'ann@example.com' });
    expect(c.author.date.toISOString()).toBe('2016-09-07T10:03:20.000Z');
    expect(c.committer.email).toBe('ann@example.com');
  });

  it('reads trees, entries and files', async () => {
    const rootTree = (await repo.readTree('master'))!;
    expect(rootTree.map((e) => [e.name, e.type, e.mode])).toEqual([
      ['README.md', 'blob', '100644'],
      ['dir', 'tree', '040000'],
    ]);
    const dir = (await repo.readTree(first, 'dir/'))!;
    expect(dir).toEqual([expect.objectContaining({ name: 'run.sh', path: 'dir/run.sh', type: 'blob', mode: '100755' })]);
    expect(await repo.readTree('master', 'README.md')).toBeNull();
    expect(await repo.readTree('master', 'nope')).toBeNull();
    expect(await repo.readTree('nope')).toBeNull();
    const file = (await repo.readFileAt('master', 'dir/run.sh'))!;
    expect(file.content.toString()).toBe('#!/bin/sh\necho hi\n');
    expect(file.mode).toBe('100755');
    expect((await repo.readBlob(file.sha))!.toString()).toBe('#!/bin/sh\necho hi\n');
    expect(await repo.readBlob(first)).toBeNull(); // a commit, not a blob
    expect(await repo.readFileAt('master', 'dir')).toBeNull();
    expect(await repo.readFileAt('master', '../etc/passwd')).toBeNull();
    expect(await repo.entryAt('master', 'dir')).toMatchObject({ type: 'tree' });
  });

  it('builds on a parent: update keeps the mode, delete, create in a new directory', async () => {
    const r = await repo.createCommit({
      branch: 'master', parentSha: first, author: { name: 'Bob', email: 'bob@example.com' }, message: 'Second',
      changes: [
        { action: 'update', path: 'dir/run.sh', content: buf('#!/bin/sh\necho bye\n') },
        { action: 'delete', path: 'README.md' },
        { action: 'create', path: 'a/b/c.txt', content: buf('one\ntwo\n') },
      ],
    });
    second = r.sha;
    const c = (await repo.readCommit('master'))!;
    expect(c.sha).toBe(second);
    expect(c.parents).toEqual([first]);
    expect((await repo.readFileAt('master', 'dir/run.sh'))!.mode).toBe('100755');
    expect(await repo.readFileAt('master', 'README.md')).toBeNull();
    expect((await repo.readFileAt('master', 'a/b/c.txt'))!.content.toString()).toBe('one\ntwo\n');
  });

  it('refuses a stale parent with RefConflictError and leaves the branch alone', async () => {
    const attempt = repo.createCommit({ branch: 'master', parentSha: first, author, message: 'late', changes: [{ action: 'create', path: 'x', content: buf('x') }] });
    await expect(attempt).rejects.toBeInstanceOf(RefConflictError);
    await expect(attempt).rejects.toMatchObject({ ref: 'refs/heads/master', expected: first, actual: second });
    expect(await repo.resolveBranch('master')).toBe(second);
  });

  it('creates a new branch from a commit (expected null), and refuses when it exists', async () => {
    const r = await repo.createCommit({
      branch: 'feature/x', parentSha: first, expectedBranchSha: null, author, message: 'on feature',
      changes: [{ action: 'create', path: 'feature.txt', content: buf('f\n') }],
    });
    expect(await repo.resolveBranch('feature/x')).toBe(r.sha);
    const again = repo.createCommit({ branch: 'feature/x', parentSha: first, expectedBranchSha: null, author, message: 'again', changes: [] });
    await expect(again).rejects.toBeInstanceOf(RefConflictError);
  });

  it('checks paths and names with typed errors', async () => {
    const base = { branch: 'master', parentSha: second, author, message: 'm' };
    await expect(repo.createCommit({ ...base, changes: [{ action: 'create', path: 'dir/run.sh', content: buf('') }] })).rejects.toBeInstanceOf(PathExistsError);
    await expect(repo.createCommit({ ...base, changes: [{ action: 'create', path: 'dir', content: buf('') }] })).rejects.toBeInstanceOf(PathExistsError);
    await expect(repo.createCommit({ ...base, changes: [{ action: 'create', path: 'dir/run.sh/x', content: buf('') }] })).rejects.toBeInstanceOf(PathExistsError);
    await expect(repo.createCommit({ ...base, changes: [{ action: 'update', path: 'missing.txt', content: buf('') }] })).rejects.toBeInstanceOf(PathNotFoundError);
    await expect(repo.createCommit({ ...base, changes: [{ action: 'delete', path: 'dir' }] })).rejects.toBeInstanceOf(PathNotFoundError);
    for (const bad of ['../x', 'a/../../x', '.git/config', '', 'a//b', 'x\ny']) {
      await expect(repo.createCommit({ ...base, changes: [{ action: 'create', path: bad, content: buf('') }] })).rejects.toBeInstanceOf(InvalidPathError);
    }
    await expect(repo.createCommit({ ...base, branch: 'bad..name', changes: [] })).rejects.toBeInstanceOf(InvalidRefNameError);
    await expect(
      repo.createCommit({ ...base, changes: [{ action: 'create', path: 'n', content: buf('') }, { action: 'create', path: 'n/m', content: buf('') }] }),
    ).rejects.toBeInstanceOf(PathExistsError);
    expect(await repo.resolveBranch('master')).toBe(second);
  });

  it('moves a file (keeping its content) and diffs it as a rename', async () => {
    const r = await repo.createCommit({
      branch: 'master', parentSha: second, author, message: 'Move',
      changes: [{ action: 'move', previousPath: 'a/b/c.txt', path: 'moved/c.txt' }],
    });
    const diff = await repo.diff(r.sha);
    expect(diff).toEqual([
      expect.objectContaining({ oldPath: 'a/b/c.txt', newPath: 'moved/c.txt', renamedFile: true, newFile: false, deletedFile: false, diff: '', additions: 0, deletions: 0 }),
    ]);
    expect(await repo.changedPaths(r.sha)).toEqual({ added: ['moved/c.txt'], modified: [], removed: [] });
    // many commits with one git process: the same answer per commit (a rename, deletions and the root commit)
    const commits = (await Promise.all([r.sha, second, first].map((sha) => repo.readCommit(sha)))).map((c) => c!);
    const many = await repo.changedPathsOfCommits(commits);
    expect([...many.keys()]).toEqual(commits.map((c) => c.sha));
    for (const c of commits) expect(many.get(c.sha), c.sha).toEqual(await repo.changedPaths(c.sha));
    expect(many.get(first)!.added.length).toBeGreaterThan(0);
    await repo.updateRef('refs/heads/master', second, r.sha); // put master back for the next tests
  });
});

describe('diff', () => {
  it('lists per-file changes with modes, flags, stats and GitLab-shaped patches', async () => {
    const d = await repo.diff(second);
    const byPath = Object.fromEntries(d.map((f) => [f.newPath, f]));
    expect(byPath['README.md']).toMatchObject({ deletedFile: true, newFile: false, aMode: '100644', bMode: '0', additions: 0, deletions: 1 });
    expect(byPath['README.md']!.diff).toMatch(/^--- a\/README.md\n\+\+\+ \/dev\/null\n@@ -1 \+0,0 @@\n-# Hello\n/);
    expect(byPath['a/b/c.txt']).toMatchObject({ newFile: true, aMode: '0', bMode: '100644', additions: 2, deletions: 0 });
    expect(byPath['dir/run.sh']).toMatchObject({ newFile: false, deletedFile: false, renamedFile: false, aMode: '100755', bMode: '100755', additions: 1, deletions: 1 });
    expect(byPath['dir/run.sh']!.diff).toContain('-echo hi\n+echo bye\n');
  });

  it('diffs a root commit against the empty tree, and between revisions', async () => {
    const d = await repo.diff(first);
    expect(d.map((f) => [f.newPath, f.newFile])).toEqual([['README.md', true], ['dir/run.sh', true]]);
    const between = await repo.diffBetween(first, second, ['dir']);
    expect(between.map((f) => f.newPath)).toEqual(['dir/run.sh']);
    await expect(repo.diff('nope')).rejects.toBeInstanceOf(RevisionNotFoundError);
  });

  it('flags binary files', async () => {
    const r = await repo.createCommit({
      branch: 'binary', parentSha: second, expectedBranchSha: null, author, message: 'bin',
      changes: [{ action: 'create', path: 'img.bin', content: Buffer.from([0, 1, 2, 0, 255, 254]) }],
    });
    const [f] = await repo.diff(r.sha);
    expect(f).toMatchObject({ binary: true, newFile: true, additions: 0, deletions: 0 });
    expect(f!.diff).toMatch(/^Binary files \/dev\/null and b\/img.bin differ/);
  });
});

describe('history and refs', () => {
  it('logs newest first with limit, offset, path and time filters, and counts', async () => {
    const log = await repo.log('master');
    expect(log.map((c) => c.sha)).toEqual([second, first]);
    expect((await repo.log('master', { limit: 1, offset: 1 })).map((c) => c.sha)).toEqual([first]);
    expect((await repo.log('master', { path: 'README.md' })).map((c) => c.sha)).toEqual([second, first]);
    expect((await repo.log('master', { path: 'a/b' })).map((c) => c.sha)).toEqual([second]);
    expect((await repo.log('master', { until: '2016-09-08T00:00:00Z' })).map((c) => c.sha)).toEqual([first]);
    expect((await repo.log('master', { since: new Date('2016-09-08T00:00:00Z') })).map((c) => c.sha)).toEqual([second]);
    expect(await repo.countCommits('master')).toBe(2);
    expect(await repo.countCommits('master', { path: 'a/b/c.txt' })).toBe(1);
    await expect(repo.log('does-not-exist')).rejects.toBeInstanceOf(RevisionNotFoundError);
    expect(await repo.log('master', { path: '*' })).toEqual([]); // literal pathspec, not a glob
  });

  it('resolves revisions and refuses unsafe ones', async () => {
    expect(await repo.resolveRef(second.slice(0, 8))).toBe(second);
    expect(await repo.resolveRef('master~1')).toBe(first);
    expect(await repo.resolveRef('master:README.md')).toBeNull();
    expect(await repo.resolveRef('--all')).toBeNull();
    expect(await repo.resolveRef('master\nHEAD')).toBeNull();
    expect(await repo.resolveRef(ZERO_SHA)).toBeNull();
  });

  it('answers ancestry and merge bases', async () => {
    expect(await repo.isAncestor(first, second)).toBe(true);
    expect(await repo.isAncestor(second, first)).toBe(false);
    expect(await repo.isAncestor('nope', first)).toBe(false);
    expect(await repo.mergeBase('master', 'feature/x')).toBe(first);
  });

  it('lists branches with commits, and tags lightweight and annotated', async () => {
    const branches = await repo.listBranches();
    expect(branches.map((b) => b.name)).toEqual(['binary', 'feature/x', 'master']);
    expect(branches[2]).toMatchObject({ name: 'master', sha: second, commit: { sha: second, message: 'Second\n' } });
    await repo.createTag('v1.0', first);
    const annotated = await repo.createTag('v2.0', second, { message: 'Release 2', tagger: { name: 'Tina', email: 'tina@example.com' } });
    expect(annotated).not.toBe(second);
    const tags = await repo.listTags();
    expect(tags.map((t) => [t.name, t.targetSha, t.message])).toEqual([['v1.0', first, null], ['v2.0', second, 'Release 2']]);
    expect(tags[1]).toMatchObject({ sha: annotated, tagger: { name: 'Tina' }, commit: { sha: second } });
    expect(await repo.findTag('v2.0')).toMatchObject({ targetSha: second, message: 'Release 2' });
    expect(await repo.findTag('v9')).toBeNull();
    expect(await repo.resolveRef('v2.0')).toBe(second);
    await expect(repo.createTag('v1.0', second)).rejects.toBeInstanceOf(RefConflictError);
    await expect(repo.createTag('bad tag', second)).rejects.toBeInstanceOf(InvalidRefNameError);
    await repo.deleteTag('v1.0');
    expect(await repo.findTag('v1.0')).toBeNull();
  });

  it('creates and deletes branches with compare-and-set', async () => {
    await repo.createBranch('tmp', first);
    await expect(repo.createBranch('tmp', second)).rejects.toBeInstanceOf(RefConflictError);
    await expect(repo.deleteBranch('tmp', second)).rejects.toBeInstanceOf(RefConflictError);
    await repo.deleteBranch('tmp');
    expect(await repo.findBranch('tmp')).toBeNull();
    expect(await repo.findBranch('master')).toMatchObject({ sha: second });
  });
});

describe('cat-file processes', () => {
  it('see refs and objects written by other processes after they started', async () => {
    const work = await workTree();
    await gitOk(work, ['remote', 'add', 'origin', repo.path]);
    await gitOk(work, ['fetch', '-q', 'origin', 'master']);
    await gitOk(work, ['checkout', '-q', '-b', 'master', 'FETCH_HEAD']);
    const sha = await commitFiles(work, { 'new.txt': 'from a client\n' }, 'client commit');
    await gitOk(work, ['push', '-q', 'origin', 'master']);
    expect(await repo.resolveRef('master')).toBe(sha);
    expect((await repo.readFileAt('master', 'new.txt'))!.content.toString()).toBe('from a client\n');
    const c = (await repo.readCommit(sha))!;
    expect(c.author).toMatchObject({ name: 'Test User', email: 'test@example.com' });
    rmSync(work, { recursive: true, force: true });
  });

  it('keeps author time zones and formats them as ISO with offset', async () => {
    const work = await workTree();
    const env = { GIT_AUTHOR_DATE: '2016-09-07T12:03:20+0200', GIT_COMMITTER_DATE: '2016-09-07T05:00:00-0530' };
    await gitOk(work, ['commit', '-q', '--allow-empty', '-m', 'tz'], { env });
    await gitOk(work, ['push', '-q', repo.path, 'HEAD:refs/heads/tz']);
    const c = (await repo.readCommit('tz'))!;
    expect(c.author.timezone).toBe('+0200');
    expect(isoDate(c.author)).toBe('2016-09-07T12:03:20.000+02:00');
    expect(isoDate(c.committer)).toBe('2016-09-07T05:00:00.000-05:30');
    rmSync(work, { recursive: true, force: true });
  });

  it('answer many concurrent reads in order, one process pair per repository', async () => {
    const shas = await Promise.all(Array.from({ length: 50 }, (_, i) => repo.resolveRef(i % 2 ? 'master' : first)));
    expect(new Set(shas).size).toBe(2);
    expect(openProcessCount()).toBeGreaterThanOrEqual(1);
    repo.close();
    expect(await repo.resolveRef(first)).toBe(first); // a closed pair restarts on demand
  });
});

describe('missing repository', () => {
  it('fails reads with GitError instead of hanging', async () => {
    const missing = new Repository(join(root, 'missing.git'));
    expect(missing.exists()).toBe(false);
    await expect(missing.resolveRef('master')).rejects.toBeInstanceOf(GitError);
    await expect(missing.listBranches()).rejects.toBeInstanceOf(GitError);
  });
});

describe('repository lifecycle', () => {
  it('copies refs and objects into a fork, and removes repositories', async () => {
    const forkPath = join(root, '2.git');
    await copyBareRepository(repo.path, forkPath, 'master');
    const fork = new Repository(forkPath);
    expect((await fork.listBranches()).map((b) => b.name)).toEqual((await repo.listBranches()).map((b) => b.name));
    expect(await fork.resolveRef('v2.0')).toBe(second);
    expect(await fork.headBranch()).toBe('master');
    const { stdout } = await fork.git(['config', '--get-regexp', '^remote\\.'], { okCodes: [0, 1] });
    expect(stdout.toString()).toBe('');
    await removeBareRepository(forkPath);
    expect(existsSync(forkPath)).toBe(false);
    await copyBareRepository(join(root, 'missing.git'), forkPath, 'main');
    expect(await new Repository(forkPath).headBranch()).toBe('main');
  });
});

describe('reference names', () => {
  it('follows check-ref-format', () => {
    for (const ok of ['master', 'feature/x', 'v1.0', 'fix-1_2', 'ünï']) expect(validBranchName(ok)).toBe(true);
    for (const bad of ['', 'HEAD', '-x', 'a..b', 'a b', 'a~1', 'a^', 'a:b', 'a?', 'a*', 'a[', 'a\\b', '/a', 'a/', 'a//b', 'a.', '.a', 'a/.b', 'a.lock', 'a@{1}', '@', 'refs/heads/x']) {
      expect(validBranchName(bad), bad).toBe(false);
    }
    expect(validTagName('v1.0.0')).toBe(true);
    expect(validTagName('v 1')).toBe(false);
  });
});
