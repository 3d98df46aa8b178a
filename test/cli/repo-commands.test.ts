/** CLI repository nouns against a real daemon: repo clone-url/tree, file get/put/delete, commit list/show/diff, branch, status. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/app.js';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
const P = 'root/cli-repo';

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  expect((await f.cli(['project', 'create', 'cli-repo'])).code).toBe(0);
});
afterAll(async () => { await f.close(); });

describe('gantry file', () => {
  it('put creates then updates, from --content, --from-file and stdin; get prints or saves the bytes', async () => {
    const created = await f.cli(['file', 'put', P, 'README.md', '--content', '# Hello\n', '-m', 'Add readme']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe('Created README.md on master.\n');
    expect((await f.cli(['file', 'get', P, 'README.md'])).stdout).toBe('# Hello\n');

    const local = join(f.dataDir, 'local.bin');
    writeFileSync(local, Buffer.from([0, 1, 2, 250]));
    const bin = await f.cli(['file', 'put', P, 'data/blob.bin', '--from-file', local, '--json']);
    expect(bin.code, bin.stderr).toBe(0);
    expect(bin.json()).toEqual({ file_name: 'data/blob.bin', file_path: 'data/blob.bin', branch_name: 'master' });
    const out = join(f.dataDir, 'out.bin');
    const saved = await f.cli(['file', 'get', P, 'data/blob.bin', '-o', out]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(readFileSync(out)).toEqual(Buffer.from([0, 1, 2, 250]));

    const piped = await f.cli(['file', 'put', P, 'README.md'], { input: '# Hello again\n' });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toBe('Updated README.md on master.\n');
    const json = await f.cli(['file', 'get', P, 'README.md', '--json']);
    expect(json.json()).toMatchObject({ file_path: 'README.md', ref: 'master', encoding: 'base64', content: Buffer.from('# Hello again\n').toString('base64') });
  });
  it('reports API errors with hints and usage errors with exit code 2', async () => {
    const same = await f.cli(['file', 'put', P, 'README.md', '--content', '# Hello again\n']);
    expect(same.code).toBe(1);
    expect(same.stderr).toMatch(/^gantry: Your changes could not be committed, because the file has not been changed\nhint: /);
    const missing = await f.cli(['file', 'get', P, 'nope.txt']);
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([1, 'gantry: 404 File Not Found']);
    expect((await f.cli(['file', 'put', P, 'x', '--content', 'a', '--from-file', 'b'])).code).toBe(2);
    const noFile = await f.cli(['file', 'put', P, 'x', '--from-file', join(f.dataDir, 'absent')]);
    expect([noFile.code, noFile.stderr]).toEqual([1, `gantry: cannot read ${join(f.dataDir, 'absent')}: ENOENT\n`]);
    expect((await f.cli(['file', 'get', P])).code).toBe(2);
  });
  it('delete removes a file with a commit', async () => {
    expect((await f.cli(['file', 'put', P, 'tmp.txt', '--content', 'tmp'])).code).toBe(0);
    const del = await f.cli(['file', 'delete', P, 'tmp.txt', '-m', 'Remove tmp']);
    expect([del.code, del.stderr]).toEqual([0, 'Deleted tmp.txt on master.\n']);
    expect((await f.cli(['file', 'get', P, 'tmp.txt'])).code).toBe(1);
    expect((await f.cli(['file', 'delete', P, 'tmp.txt'])).code).toBe(1);
  });
});

describe('gantry repo', () => {
  it('clone-url prints the HTTP (or SSH) URL', async () => {
    const http = await f.cli(['repo', 'clone-url', P]);
    expect(http.stdout).toBe(`${f.url}/${P}.git\n`);
    const ssh = await f.cli(['repo', 'clone-url', P, '--ssh']);
    expect(ssh.stdout).toMatch(/^git@.+:root\/cli-repo\.git\n$/);
    expect((await f.cli(['repo', 'clone-url', 'root/nope'])).code).toBe(1);
  });
  it('tree lists files as a table or JSON', async () => {
    const t = await f.cli(['repo', 'tree', P]);
    expect(t.code, t.stderr).toBe(0);
    const [header, ...rows] = t.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^MODE\s+TYPE\s+ID\s+PATH$/);
    expect(rows.map((r) => r.split(/\s+/).pop())).toEqual(['data/', 'README.md']);
    const rec = await f.cli(['repo', 'tree', P, '--recursive', '--json']);
    expect(rec.json().map((e: { path: string }) => e.path)).toEqual(['data', 'README.md', 'data/blob.bin']);
  });
});

describe('gantry commit', () => {
  it('list, show and diff', async () => {
    const list = await f.cli(['commit', 'list', P]);
    expect(list.code, list.stderr).toBe(0);
    const [header, ...rows] = list.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^SHA\s+DATE\s+AUTHOR\s+TITLE$/);
    expect(rows.length).toBe(5);
    expect(rows[0]).toMatch(/^[0-9a-f]{8}\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+Administrator\s+Remove tmp$/);
    const json = (await f.cli(['commit', 'list', P, '--json', '--per-page', '2'])).json();
    expect(json.length).toBe(2);
    const readmeCommits = (await f.cli(['commit', 'list', P, '--path', 'README.md', '--json'])).json();
    expect(readmeCommits.map((c: { title: string }) => c.title)).toEqual(['Update README.md', 'Add readme']);

    const show = await f.cli(['commit', 'show', P, readmeCommits[0].id]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^commit:\\s+${readmeCommits[0].id}$`, 'm'));
    expect(show.stdout).toMatch(/^changes:\s+\+1 -1$/m);
    expect(show.stdout).toContain('\n    Update README.md\n');
    expect((await f.cli(['commit', 'show', P, 'master', '--json'])).json()).toMatchObject({ title: 'Remove tmp', stats: { deletions: 1 } });

    const diff = await f.cli(['commit', 'diff', P, readmeCommits[0].id]);
    expect(diff.stdout).toBe('diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# Hello\n+# Hello again\n');
    const first = await f.cli(['commit', 'diff', P, readmeCommits[1].id, '--json']);
    expect(first.json()[0]).toMatchObject({ new_file: true, new_path: 'README.md' });
    const bad = await f.cli(['commit', 'show', P, 'nope']);
    expect([bad.code, bad.stderr.split('\n')[0]]).toEqual([1, 'gantry: 404 Commit Not Found']);
    expect((await f.cli(['commit', 'list', P, '--since', 'yesterday'])).code).toBe(1);
  });
});

describe('gantry branch', () => {
  it('creates, lists, shows, protects, unprotects and deletes branches (names with /)', async () => {
    const created = await f.cli(['branch', 'create', P, 'feature/one']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toMatch(/^Created branch feature\/one at [0-9a-f]{8}\.\n$/);
    const list = await f.cli(['branch', 'list', P]);
    const [header, ...rows] = list.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^NAME\s+COMMIT\s+PROTECTED\s+DEV PUSH\s+DEV MERGE\s+UPDATED\s+TITLE$/);
    expect(rows.map((r) => r.split(/\s+/).slice(0, 3))).toEqual([['feature/one', expect.any(String), 'no'], ['master', expect.any(String), 'yes']]);

    const protectedBranch = await f.cli(['branch', 'protect', P, 'feature/one', '--developers-can-push', '--json']);
    expect(protectedBranch.code, protectedBranch.stderr).toBe(0);
    expect(protectedBranch.json()).toMatchObject({ name: 'feature/one', protected: true, developers_can_push: true, developers_can_merge: false });
    expect((await f.cli(['branch', 'protect', P, 'feature/one', '--no-developers-can-push', '--json'])).json().developers_can_push).toBe(false);
    const refused = await f.cli(['branch', 'delete', P, 'feature/one']);
    expect([refused.code, refused.stderr.split('\n')[0]]).toEqual([1, 'gantry: Protected branch cant be removed']);
    const un = await f.cli(['branch', 'unprotect', P, 'feature/one']);
    expect([un.code, un.stderr]).toEqual([0, 'Unprotected branch feature/one.\n']);
    expect((await f.cli(['branch', 'show', P, 'feature/one', '--json'])).json().protected).toBe(false);
    expect((await f.cli(['branch', 'show', P, 'feature/one'])).stdout).toMatch(/^protected:\s+no$/m);
    const del = await f.cli(['branch', 'delete', P, 'feature/one']);
    expect([del.code, del.stderr]).toEqual([0, 'Deleted branch feature/one.\n']);
    const gone = await f.cli(['branch', 'delete', P, 'feature/one']);
    expect([gone.code, gone.stderr.split('\n')[0]]).toEqual([1, 'gantry: No such branch']);
    expect((await f.cli(['branch', 'create', P, 'bad..name'])).stderr.split('\n')[0]).toBe('gantry: Branch name is invalid');
  });
});

describe('gantry status', () => {
  // Commit statuses are the CI room's: on PostgreSQL once that room is ported.
  it('sets and lists commit statuses', async () => {
    const sha = (await f.cli(['commit', 'show', P, 'master', '--json'])).json().id as string;
    const set = await f.cli(['status', 'set', P, sha, 'running', '--name', 'lint', '--description', 'linting', '--target-url', 'https://ci.example.com/1']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toBe(`Status lint of ${sha.slice(0, 8)} is running.\n`);
    expect((await f.cli(['status', 'set', P, sha, 'success', '--name', 'lint', '--json'])).json()).toMatchObject({ name: 'lint', status: 'success' });
    const list = await f.cli(['status', 'list', P, sha]);
    expect(list.code, list.stderr).toBe(0);
    const [header, ...rows] = list.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+STATUS\s+REF\s+CREATED\s+DESCRIPTION\s+URL$/);
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatch(/^\d+\s+lint\s+success\s+master\s+/);
    const every = await f.cli(['status', 'list', P, sha, '--every', '--json']);
    expect(every.json().length).toBeGreaterThanOrEqual(1);
    expect((await f.cli(['commit', 'show', P, sha, '--json'])).json().status).toBe('success');
    expect((await f.cli(['status', 'set', P, sha, 'bogus'])).code).toBe(2);
  });
});
