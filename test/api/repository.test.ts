/** Repository browsing API: tree, blobs, raw_blobs, archive formats, compare, contributors; errors and authorization. */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ACTORS, actorUser, commitTo, encodedPath, expectedStatus, repositoryOf, VISIBILITIES } from '../helpers/repository.js';

let s: TestServer;
let cast: Cast;
let project: { id: number; path_with_namespace: string };
let base: string;
let c1: string;
let c2: string;
let c3: string;
let side: string;
const matrix: Record<number, number> = {};

const ann = { name: 'Ann', email: 'ann@example.com' };
const bob = { name: 'Bob', email: 'bob@example.com' };

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'r');
  project = await makeProject(s, cast.owner, 'browse');
  await addCastMembers(s.ctx, cast, project.id);
  base = `/projects/${project.id}/repository`;
  c1 = await commitTo(s.ctx, project.id, 'master', {
    'README.md': '# Browse\n', 'src/main.ts': 'main\n', 'src/lib/util.ts': 'util\n', 'bin/data': Buffer.from([0, 1, 2, 3]), 'a.txt': 'a\n',
  }, { message: 'first', author: ann });
  c2 = await commitTo(s.ctx, project.id, 'master', { 'src/main.ts': 'main 2\n' }, { message: 'second', author: bob });
  side = await commitTo(s.ctx, project.id, 'side', { 'side.txt': 'side\n' }, { from: c1, message: 'side work', author: ann });
  c3 = await commitTo(s.ctx, project.id, 'master', { 'a.txt': null, 'docs/new.md': 'new\n' }, { message: 'third', author: ann });
  for (const vis of VISIBILITIES) {
    const p = await makeProject(s, cast.owner, `browse-matrix-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    await commitTo(s.ctx, p.id, 'master', { 'README.md': 'm\n' });
    await commitTo(s.ctx, p.id, 'other', { 'o.txt': 'o\n' }, { from: 'master' });
    matrix[vis] = p.id;
  }
});
afterAll(async () => { await s.close(); });

/** A raw (binary-safe) GET. */
async function rawGet(path: string, as: TestUser = cast.reporter) {
  const res = await s.app.inject({ method: 'GET', url: `/api/v3${path}`, headers: { 'private-token': as.token } });
  return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
}

describe('GET tree', () => {
  it('lists the root of the default branch: trees first, then blobs, with id, name, type, mode and path', async () => {
    const r = await s.api('GET', `${base}/tree`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body.map((e: { name: string }) => e.name)).toEqual(['bin', 'docs', 'src', 'README.md']);
    const repo = await repositoryOf(s.ctx, project.id);
    const readme = (await repo.entryAt(c3, 'README.md'))!;
    expect(r.body[3]).toEqual({ id: readme.sha, name: 'README.md', type: 'blob', mode: '100644', path: 'README.md' });
    expect(r.body[0]).toMatchObject({ type: 'tree', mode: '040000', path: 'bin' });
    expect(r.headers).toMatchObject({ 'x-total': '4', 'x-page': '1' });
  });
  it('lists a directory at a ref, and recursively', async () => {
    const src = await s.api('GET', `${base}/tree?path=src&ref_name=${c1}`, cast.reporter);
    expect(src.body.map((e: { path: string }) => e.path)).toEqual(['src/lib', 'src/main.ts']);
    const old = await s.api('GET', `${base}/tree?ref_name=side`, cast.reporter);
    expect(old.body.map((e: { name: string }) => e.name)).toEqual(['bin', 'src', 'README.md', 'a.txt', 'side.txt']);
    const rec = await s.api('GET', `${base}/tree?recursive=true&per_page=100`, cast.reporter);
    expect(rec.body.map((e: { path: string }) => e.path)).toEqual(['bin', 'docs', 'src', 'src/lib', 'README.md', 'bin/data', 'docs/new.md', 'src/lib/util.ts', 'src/main.ts']);
    const recSrc = await s.api('GET', `${base}/tree?recursive=1&path=src/`, cast.reporter);
    expect(recSrc.body.map((e: { path: string }) => e.path)).toEqual(['src/lib', 'src/lib/util.ts', 'src/main.ts']);
    const page = await s.api('GET', `${base}/tree?recursive=true&per_page=4&page=2`, cast.reporter);
    expect(page.body.length).toBe(4);
    expect(page.headers).toMatchObject({ 'x-total': '9', 'x-total-pages': '3' });
  });
  it('a path that is not a directory lists nothing; an unknown ref or empty repository is 404 Tree Not Found', async () => {
    for (const path of ['nope', 'README.md', '../x']) {
      expect((await s.api('GET', `${base}/tree?path=${path}`, cast.reporter)).body).toEqual([]);
      expect((await s.api('GET', `${base}/tree?path=${path}&recursive=true`, cast.reporter)).body).toEqual([]);
    }
    expect((await s.api('GET', `${base}/tree?ref_name=nope`, cast.reporter)).body).toEqual({ message: '404 Tree Not Found' });
    const empty = await makeProject(s, cast.owner, 'browse-empty');
    const r = await s.api('GET', `/projects/${empty.id}/repository/tree`, cast.owner);
    expect([r.status, r.body]).toEqual([404, { message: '404 Tree Not Found' }]);
  });
});

describe('blobs and raw blobs', () => {
  it('GET blobs/:sha?filepath= serves the raw file at a commit, branch or tag', async () => {
    const r = await rawGet(`${base}/blobs/${c1}?filepath=src/main.ts`);
    expect([r.status, r.body.toString(), r.headers['content-type']]).toEqual([200, 'main\n', 'text/plain; charset=utf-8']);
    expect((await rawGet(`${base}/blobs/master?filepath=src/main.ts`)).body.toString()).toBe('main 2\n');
    const bin = await rawGet(`${base}/blobs/master?filepath=bin/data`);
    expect([bin.body, bin.headers['content-type']]).toEqual([Buffer.from([0, 1, 2, 3]), 'application/octet-stream']);
  });
  it('blobs: 404 Commit Not Found / File Not Found, 400 without filepath', async () => {
    expect((await s.api('GET', `${base}/blobs/nope?filepath=README.md`, cast.reporter)).body).toEqual({ message: '404 Commit Not Found' });
    expect((await s.api('GET', `${base}/blobs/master?filepath=a.txt`, cast.reporter)).body).toEqual({ message: '404 File Not Found' });
    expect((await s.api('GET', `${base}/blobs/master?filepath=src`, cast.reporter)).body).toEqual({ message: '404 File Not Found' });
    expect((await s.api('GET', `${base}/blobs/master`, cast.reporter)).body).toEqual({ message: '400 (Bad request) "filepath" not given' });
  });
  it('GET raw_blobs/:sha serves a blob by id; 404 Blob Not Found otherwise', async () => {
    const repo = await repositoryOf(s.ctx, project.id);
    const blob = (await repo.entryAt(c1, 'README.md'))!.sha;
    const r = await rawGet(`${base}/raw_blobs/${blob}`);
    expect([r.status, r.body.toString()]).toEqual([200, '# Browse\n']);
    const tree = (await repo.entryAt(c1, 'src'))!.sha;
    for (const id of ['f'.repeat(40), c1, tree, 'master', 'master:README.md']) {
      expect((await s.api('GET', `${base}/raw_blobs/${encodeURIComponent(id)}`, cast.reporter)).body).toEqual({ message: '404 Blob Not Found' });
    }
  });
});

describe('archive', () => {
  it('streams tar.gz by default with <project>-<sha> as file name and prefix', async () => {
    const r = await rawGet(`${base}/archive`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/gzip');
    expect(r.headers['content-disposition']).toBe(`attachment; filename="browse-${c3}.tar.gz"`);
    const file = join(s.dataDir, 'a.tar.gz');
    writeFileSync(file, r.body);
    const names = execFileSync('tar', ['-tzf', file]).toString().trim().split('\n').sort();
    expect(names).toContain(`browse-${c3}/README.md`);
    expect(names).toContain(`browse-${c3}/src/lib/util.ts`);
    expect(names).not.toContain(`browse-${c3}/a.txt`);
  });
  it('serves tar, zip and bz2 formats and any sha, branch or tag', async () => {
    const tar = await rawGet(`${base}/archive.tar?sha=${c1}`);
    expect([tar.status, tar.headers['content-type'], tar.body.subarray(257, 262).toString()]).toEqual([200, 'application/x-tar', 'ustar']);
    expect(tar.headers['content-disposition']).toBe(`attachment; filename="browse-${c1}.tar"`);
    expect(tar.body.includes(Buffer.from(`browse-${c1}/a.txt`))).toBe(true);
    const zip = await rawGet(`${base}/archive.zip?sha=side`);
    expect([zip.status, zip.headers['content-type'], zip.body.subarray(0, 2).toString()]).toEqual([200, 'application/zip', 'PK']);
    expect(zip.headers['content-disposition']).toBe(`attachment; filename="browse-${side}.zip"`);
    for (const suffix of ['tar.bz2', 'tbz2', 'bz2']) {
      const bz = await rawGet(`${base}/archive.${suffix}`);
      expect([bz.status, bz.body.subarray(0, 3).toString()]).toEqual([200, 'BZh']);
    }
    for (const suffix of ['tar.gz', 'tgz', 'gz']) {
      const gz = await rawGet(`${base}/archive.${suffix}?sha=${c2}`);
      expect(gunzipSync(gz.body).subarray(257, 262).toString()).toBe('ustar');
    }
  });
  it('404 File Not Found for an unknown sha or an empty repository; unknown formats are unknown routes', async () => {
    expect((await s.api('GET', `${base}/archive?sha=nope`, cast.reporter)).body).toEqual({ message: '404 File Not Found' });
    const empty = await makeProject(s, cast.owner, 'browse-empty-archive');
    expect((await s.api('GET', `/projects/${empty.id}/repository/archive`, cast.owner)).body).toEqual({ message: '404 File Not Found' });
    expect((await s.api('GET', `${base}/archive.rar`, cast.reporter)).body).toEqual({ message: '404 Not Found' });
  });
});

describe('compare', () => {
  it('lists commits (oldest first), the newest as commit, and diffs from the merge base', async () => {
    const r = await s.api('GET', `${base}/compare?from=${c1}&to=master`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body.commits.map((c: { id: string }) => c.id)).toEqual([c2, c3]);
    expect(r.body.commit).toMatchObject({ id: c3, title: 'third', short_id: c3.slice(0, 8) });
    expect(r.body.diffs.map((d: { new_path: string }) => d.new_path).sort()).toEqual(['a.txt', 'docs/new.md', 'src/main.ts']);
    expect(r.body.diffs.find((d: { old_path: string }) => d.old_path === 'a.txt')).toMatchObject({ deleted_file: true, b_mode: '0' });
    expect(r.body).toMatchObject({ compare_timeout: false, compare_same_ref: false });
    // side branched off c1: comparing master to side shows only side's work (three-dot semantics)
    const fromMaster = await s.api('GET', `${base}/compare?from=master&to=side`, cast.reporter);
    expect(fromMaster.body.commits.map((c: { id: string }) => c.id)).toEqual([side]);
    expect(fromMaster.body.diffs.map((d: { new_path: string }) => d.new_path)).toEqual(['side.txt']);
  });
  it('the same ref compares empty; unknown refs are 404; from and to are required', async () => {
    const same = await s.api('GET', `${base}/compare?from=master&to=${c3}`, cast.reporter);
    expect(same.body).toEqual({ commit: null, commits: [], diffs: [], compare_timeout: false, compare_same_ref: true });
    expect((await s.api('GET', `${base}/compare?from=nope&to=master`, cast.reporter)).body).toEqual({ message: '404 Commit Not Found' });
    expect((await s.api('GET', `${base}/compare?from=master&to=nope`, cast.reporter)).status).toBe(404);
    expect((await s.api('GET', `${base}/compare?to=master`, cast.reporter)).body).toEqual({ message: '400 (Bad request) "from" not given' });
    expect((await s.api('GET', `${base}/compare?from=master`, cast.reporter)).body).toEqual({ message: '400 (Bad request) "to" not given' });
  });
});

describe('contributors', () => {
  it('groups the default branch\'s commits by author email (additions and deletions are 0, as in GitLab 8.12)', async () => {
    const r = await s.api('GET', `${base}/contributors`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { name: 'Ann', email: 'ann@example.com', commits: 2, additions: 0, deletions: 0 },
      { name: 'Bob', email: 'bob@example.com', commits: 1, additions: 0, deletions: 0 },
    ]);
    expect(r.headers['x-total']).toBe('2');
    const empty = await makeProject(s, cast.owner, 'browse-empty-contrib');
    expect((await s.api('GET', `/projects/${empty.id}/repository/contributors`, cast.owner)).body).toEqual([]);
  });
});

describe('authorization', () => {
  for (const vis of VISIBILITIES) {
    it(`project of visibility ${vis}`, async () => {
      const b = `/projects/${matrix[vis]}/repository`;
      for (const a of ACTORS) {
        const as = actorUser(cast, a);
        const want = expectedStatus(a, vis, 20, 200, true);
        for (const path of ['tree', 'blobs/master?filepath=README.md', 'archive.tar', 'compare?from=master&to=other', 'contributors']) {
          const r = await s.api('GET', `${b}/${path}`, as);
          expect([a, path, r.status]).toEqual([a, path, want]);
        }
      }
    });
  }
  it('accepts the URL-encoded project path', async () => {
    expect((await s.api('GET', `/projects/${encodedPath(project)}/repository/tree`, cast.reporter)).status).toBe(200);
  });
});
