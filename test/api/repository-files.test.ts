/** Repository files API: read at a ref, create/update/delete as commits, errors, branch rules, authorization, concurrency. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ACTORS, actorUser, commitTo, encodedPath, expectedStatus, pushEvents, repositoryOf, VISIBILITIES } from '../helpers/repository.js';

let s: TestServer;
let cast: Cast;
let project: { id: number; path_with_namespace: string };
let base: string;
const matrix: Record<number, number> = {};

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'f');
  project = await makeProject(s, cast.owner, 'files', { visibility: 0 });
  await addCastMembers(s.ctx, cast, project.id);
  base = `/projects/${project.id}/repository/files`;
  await commitTo(s.ctx, project.id, 'master', { 'README.md': '# Files\n', 'docs/guide.md': 'guide\n', 'bin/blob': Buffer.from([0, 1, 2, 255]) });
  await commitTo(s.ctx, project.id, 'dev', { 'dev.txt': 'dev\n' }, { from: 'master' });
  for (const vis of VISIBILITIES) {
    const p = await makeProject(s, cast.owner, `files-matrix-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    await commitTo(s.ctx, p.id, 'master', { 'README.md': 'matrix\n' });
    await commitTo(s.ctx, p.id, 'dev', { 'dev.txt': 'dev\n' }, { from: 'master' });
    matrix[vis] = p.id;
  }
});
afterAll(async () => { await s.close(); });

const write = (method: 'POST' | 'PUT' | 'DELETE', body: Record<string, unknown>, as = cast.master, projectRef: string | number = project.id) =>
  s.api(method, `/projects/${projectRef}/repository/files`, as, body);

describe('GET /projects/:id/repository/files', () => {
  it('returns the file with base64 content, blob, commit and last commit ids', async () => {
    const repo = await repositoryOf(s.ctx, project.id);
    const head = (await repo.resolveBranch('dev'))!;
    const r = await s.api('GET', `${base}?file_path=docs/guide.md&ref=dev`, cast.reporter);
    expect(r.status).toBe(200);
    const blob = await repo.readFileAt(head, 'docs/guide.md');
    const lastTouch = (await repo.log('master', { path: 'docs/guide.md', limit: 1 }))[0]!.sha;
    expect(r.body).toEqual({
      file_name: 'guide.md', file_path: 'docs/guide.md', size: 6, encoding: 'base64', content: Buffer.from('guide\n').toString('base64'),
      ref: 'dev', blob_id: blob!.sha, commit_id: head, last_commit_id: lastTouch,
    });
    expect(lastTouch).not.toBe(head);
  });
  it('reads binary files, by sha, tag-free refs and URL-encoded project paths', async () => {
    const head = (await (await repositoryOf(s.ctx, project.id)).resolveBranch('master'))!;
    const r = await s.api('GET', `/projects/${encodedPath(project)}/repository/files?file_path=bin/blob&ref=${head}`, cast.reporter);
    expect(r.status).toBe(200);
    expect(Buffer.from(r.body.content, 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(r.body.commit_id).toBe(head);
  });
  it('404 for an unknown ref or file, 400 without file_path or ref', async () => {
    expect((await s.api('GET', `${base}?file_path=README.md&ref=nope`, cast.reporter)).body).toEqual({ message: '404 Commit Not Found' });
    for (const path of ['missing.txt', 'docs', '../etc/passwd', 'docs/guide.md/x']) {
      const r = await s.api('GET', `${base}?file_path=${encodeURIComponent(path)}&ref=master`, cast.reporter);
      expect([r.status, r.body]).toEqual([404, { message: '404 File Not Found' }]);
    }
    expect((await s.api('GET', `${base}?ref=master`, cast.reporter)).body).toEqual({ message: '400 (Bad request) "file_path" not given' });
    expect((await s.api('GET', `${base}?file_path=README.md`, cast.reporter)).body).toEqual({ message: '400 (Bad request) "ref" not given' });
  });
});

describe('POST, PUT, DELETE /projects/:id/repository/files', () => {
  it('POST creates a commit by the caller on the branch (201) and processes it as a push', async () => {
    const repo = await repositoryOf(s.ctx, project.id);
    const before = (await repo.resolveBranch('dev'))!;
    const r = await write('POST', { file_path: 'new/file.txt', branch_name: 'dev', content: 'hello\n', commit_message: 'Add file' }, cast.developer);
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ file_name: 'new/file.txt', file_path: 'new/file.txt', branch_name: 'dev' });
    const after = (await repo.resolveBranch('dev'))!;
    const commit = (await repo.readCommit(after))!;
    expect(commit.parents).toEqual([before]);
    expect(commit.message).toBe('Add file\n');
    expect(commit.author).toMatchObject({ name: cast.developer.username, email: `${cast.developer.username}@example.com` });
    expect((await repo.readFileAt(after, 'new/file.txt'))!.content.toString()).toBe('hello\n');
    const event = (await pushEvents(s, project.id))[0]!;
    expect(event).toMatchObject({ ref: 'refs/heads/dev', before, after, object_kind: 'push', total_commits_count: 1 });
  });
  it('PUT updates (200), base64 content is decoded, author_name/author_email are honoured', async () => {
    const r = await write('PUT', {
      file_path: 'new/file.txt', branch_name: 'dev', content: Buffer.from([1, 2, 3]).toString('base64'), encoding: 'base64',
      commit_message: 'Binary now', author_name: 'Someone Else', author_email: 'else@example.com',
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ file_name: 'new/file.txt', file_path: 'new/file.txt', branch_name: 'dev' });
    const repo = await repositoryOf(s.ctx, project.id);
    const head = (await repo.resolveBranch('dev'))!;
    expect((await repo.readFileAt(head, 'new/file.txt'))!.content).toEqual(Buffer.from([1, 2, 3]));
    expect((await repo.readCommit(head))!.author).toMatchObject({ name: 'Someone Else', email: 'else@example.com' });
  });
  it('DELETE removes the file (200), with the fields in a body or in the query string', async () => {
    const r = await write('DELETE', { file_path: 'new/file.txt', branch_name: 'dev', commit_message: 'Remove' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ file_name: 'new/file.txt', file_path: 'new/file.txt', branch_name: 'dev' });
    const repo = await repositoryOf(s.ctx, project.id);
    expect(await repo.readFileAt('dev', 'new/file.txt')).toBeNull();
    await write('POST', { file_path: 'q.txt', branch_name: 'dev', content: 'q', commit_message: 'q' });
    const q = await s.api('DELETE', `${base}?file_path=q.txt&branch_name=dev&commit_message=rm`, cast.master);
    expect(q.status).toBe(200);
    expect(await repo.readFileAt('dev', 'q.txt')).toBeNull();
  });
  it('400 "<attr>" not given for each missing field', async () => {
    const full = { file_path: 'a.txt', branch_name: 'dev', content: 'a', commit_message: 'm' };
    for (const key of Object.keys(full)) {
      const body: Record<string, unknown> = { ...full };
      delete body[key];
      for (const method of ['POST', 'PUT'] as const) {
        expect((await write(method, body)).body).toEqual({ message: `400 (Bad request) "${key}" not given` });
      }
      if (key !== 'content') expect((await write('DELETE', body)).body).toEqual({ message: `400 (Bad request) "${key}" not given` });
    }
    expect((await write('POST', { ...full, commit_message: '' })).body).toEqual({ message: '400 (Bad request) "commit_message" not given' });
  });
  it('400 with a plain message for every commit that cannot be made, and nothing changes', async () => {
    const repo = await repositoryOf(s.ctx, project.id);
    const head = await repo.resolveBranch('dev');
    const events = (await pushEvents(s, project.id)).length;
    const cases: [string, Record<string, unknown>, string][] = [
      ['POST', { file_path: 'README.md', content: 'x' }, 'A file with this name already exists'],
      ['POST', { file_path: 'README.md/inner', content: 'x' }, 'A file with this name already exists'],
      ['POST', { file_path: '../escape.txt', content: 'x' }, 'Your changes could not be committed, because the file path is invalid'],
      ['POST', { file_path: 'a/../b.txt', content: 'x' }, 'Your changes could not be committed, because the file path is invalid'],
      ['POST', { file_path: '/abs.txt', content: 'x' }, 'Your changes could not be committed, because the file path is invalid'],
      ['POST', { file_path: '.git/config', content: 'x' }, 'Your changes could not be committed, because the file path is invalid'],
      ['POST', { file_path: 'x.txt', content: 'x', branch_name: 'nope' }, 'You can only create or edit files when you are on a branch'],
      ['POST', { file_path: 'x.txt', content: 'x', branch_name: 'bad..name' }, 'Branch name is invalid'],
      ['PUT', { file_path: 'README.md', content: '# Files\n' }, 'Your changes could not be committed, because the file has not been changed'],
      ['PUT', { file_path: 'missing.txt', content: 'x' }, 'You are attempting to update a file that does not exist'],
      ['PUT', { file_path: 'docs', content: 'x' }, 'You are attempting to update a file that does not exist'],
      ['PUT', { file_path: 'README.md', content: 'x', branch_name: 'nope' }, 'You can only create or edit files when you are on a branch'],
      ['DELETE', { file_path: 'missing.txt' }, 'You are attempting to delete a file that does not exist'],
      ['DELETE', { file_path: '../README.md' }, 'Your changes could not be committed, because the file path is invalid'],
    ];
    for (const [method, extra, message] of cases) {
      const r = await write(method as 'POST', { branch_name: 'dev', commit_message: 'm', ...extra });
      expect([method, extra, r.status, r.body]).toEqual([method, extra, 400, { message }]);
    }
    const bad = await write('POST', { file_path: 'e.txt', branch_name: 'dev', content: 'x', encoding: 'rot13', commit_message: 'm' });
    expect(bad.body).toEqual({ message: '400 (Bad request) "encoding" does not have a valid value' });
    const notB64 = await write('POST', { file_path: 'e.txt', branch_name: 'dev', content: '@@@', encoding: 'base64', commit_message: 'm' });
    expect(notB64.body).toEqual({ message: '400 (Bad request) "content" is not valid base64' });
    // NUL bytes git cannot store (were 500; found by the fuzzer)
    const nulMessage = await write('POST', { file_path: 'n.txt', branch_name: 'dev', content: 'x', commit_message: 'a\u0000b' });
    expect(nulMessage).toMatchObject({ status: 400, body: { message: '400 (Bad request) a commit or tag message may not contain a NUL byte' } });
    const nulAuthor = await write('POST', { file_path: 'n.txt', branch_name: 'dev', content: 'x', commit_message: 'm', author_name: 'a\u0000b', author_email: 'a@example.com' });
    expect(nulAuthor).toMatchObject({ status: 400, body: { message: '400 (Bad request) an author name or email may not contain a NUL byte' } });
    expect(await repo.resolveBranch('dev')).toBe(head);
    expect((await pushEvents(s, project.id)).length).toBe(events);
  });
  it('accepts form bodies', async () => {
    const r = await s.api('POST', base, cast.master, 'file_path=form.txt&branch_name=dev&content=from+a+form&commit_message=form',
      { 'content-type': 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(201);
    expect((await (await repositoryOf(s.ctx, project.id)).readFileAt('dev', 'form.txt'))!.content.toString()).toBe('from a form');
  });
});

describe('empty repositories', () => {
  it('creating the first file creates the branch; other writes need an existing branch', async () => {
    const empty = await makeProject(s, cast.owner, 'files-empty');
    await addCastMembers(s.ctx, cast, empty.id);
    const path = `/projects/${empty.id}/repository/files`;
    expect((await s.api('PUT', path, cast.master, { file_path: 'a', branch_name: 'master', content: 'a', commit_message: 'm' })).body)
      .toEqual({ message: 'You can only create or edit files when you are on a branch' });
    expect((await s.api('GET', `${path}?file_path=a&ref=master`, cast.master)).body).toEqual({ message: '404 Commit Not Found' });
    // a developer may create the (protected) default branch of an empty repository, as with a first git push
    const r = await s.api('POST', path, cast.developer, { file_path: 'README', branch_name: 'master', content: 'first', commit_message: 'Initial' });
    expect(r.status).toBe(201);
    const repo = await repositoryOf(s.ctx, empty.id);
    const head = (await repo.resolveBranch('master'))!;
    expect((await repo.readCommit(head))!.parents).toEqual([]);
    expect((await pushEvents(s, empty.id))[0]).toMatchObject({ ref: 'refs/heads/master', before: '0'.repeat(40), after: head });
    // now the default branch is protected: developers may not push to it
    expect((await s.api('PUT', path, cast.developer, { file_path: 'README', branch_name: 'master', content: 'x', commit_message: 'm' })).body)
      .toEqual({ message: 'You are not allowed to push into this branch' });
  });
});

describe('branch protection', () => {
  it('developers cannot write to protected branches; masters can; developers_can_push lets them', async () => {
    const body = { file_path: 'protected.txt', branch_name: 'master', content: 'p', commit_message: 'm' };
    expect((await write('POST', body, cast.developer)).body).toEqual({ message: 'You are not allowed to push into this branch' });
    expect((await write('POST', body, cast.master)).status).toBe(201);
    expect((await s.api('PUT', `/projects/${project.id}/repository/branches/dev/protect`, cast.master)).status).toBe(200);
    const dev = { file_path: 'dev.txt', branch_name: 'dev', content: 'changed', commit_message: 'm' };
    expect((await write('PUT', dev, cast.developer)).status).toBe(400);
    expect((await s.api('PUT', `/projects/${project.id}/repository/branches/dev/protect`, cast.master, { developers_can_push: true })).status).toBe(200);
    expect((await write('PUT', dev, cast.developer)).status).toBe(200);
    await s.api('PUT', `/projects/${project.id}/repository/branches/dev/unprotect`, cast.master);
  });
  it('archived projects refuse writes (403)', async () => {
    const p = await makeProject(s, cast.owner, 'files-archived');
    await commitTo(s.ctx, p.id, 'master', { a: 'a' });
    // Archived directly (the archive route is the projects room's).
    await s.ctx.data.run('UPDATE projects SET archived = TRUE WHERE id = ?', [p.id]);
    expect((await write('POST', { file_path: 'b', branch_name: 'master', content: 'b', commit_message: 'm' }, cast.owner, p.id)).status).toBe(403);
    expect((await s.api('GET', `/projects/${p.id}/repository/files?file_path=a&ref=master`, cast.owner)).status).toBe(200);
  });
});

describe('authorization', () => {
  for (const vis of VISIBILITIES) {
    it(`reads and writes on a project of visibility ${vis}`, async () => {
      for (const a of ACTORS) {
        const as = actorUser(cast, a);
        const read = await s.api('GET', `/projects/${matrix[vis]}/repository/files?file_path=README.md&ref=master`, as);
        expect([a, read.status]).toEqual([a, expectedStatus(a, vis, 20, 200, true)]);
        const created = await s.api('POST', `/projects/${matrix[vis]}/repository/files`, as, { file_path: `by-${a}.txt`, branch_name: 'dev', content: a, commit_message: a });
        expect([a, created.status]).toEqual([a, expectedStatus(a, vis, 30, 201)]);
        if (read.status === 403) expect(read.body).toEqual({ message: '403 Forbidden' });
        if (read.status === 404) expect(read.body).toEqual({ message: '404 Project Not Found' });
        if (read.status === 401) expect(read.body).toEqual({ message: '401 Unauthorized' });
      }
    });
  }
});

describe('concurrency', () => {
  it('20 parallel PUTs to one file: each lands or gets 400, history stays linear, nothing is lost', async () => {
    const p = await makeProject(s, cast.owner, 'files-race');
    await commitTo(s.ctx, p.id, 'master', { 'race.txt': 'start\n' });
    const repo = await repositoryOf(s.ctx, p.id);
    const start = (await repo.resolveBranch('master'))!;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      s.api('PUT', `/projects/${p.id}/repository/files`, cast.owner, { file_path: 'race.txt', branch_name: 'master', content: `writer ${i}\n`, commit_message: `writer ${i}` })));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((c) => c === 200 || c === 400), statuses.join(',')).toBe(true);
    const landed = statuses.filter((c) => c === 200).length;
    expect(landed).toBeGreaterThanOrEqual(1);
    for (const r of results) if (r.status === 400) expect(typeof r.body.message).toBe('string');
    // linear: walking first parents from the head reaches the start in exactly `landed` steps, each with one parent
    const head = (await repo.resolveBranch('master'))!;
    const chain: string[] = [];
    let sha = head;
    while (sha !== start) {
      const c = (await repo.readCommit(sha))!;
      expect(c.parents.length).toBe(1);
      chain.push(c.message.trim());
      sha = c.parents[0]!;
    }
    expect(chain.length).toBe(landed);
    expect(await repo.countCommits('master')).toBe(1 + landed);
    // the file holds the last landed writer's content
    const last = chain[0]!.replace('writer ', '');
    expect((await repo.readFileAt(head, 'race.txt'))!.content.toString()).toBe(`writer ${last}\n`);
    expect((await pushEvents(s, p.id)).length).toBe(landed);
  });
});
