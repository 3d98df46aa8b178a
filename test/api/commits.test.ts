/** Commits API: history (filters, pagination from page 1), one commit (stats, status), diff, raw blob, comments, authorization. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ACTORS, actorUser, commitTo, encodedPath, expectedStatus, repositoryOf, VISIBILITIES } from '../helpers/repository.js';

let s: TestServer;
let cast: Cast;
let project: { id: number; path_with_namespace: string };
let base: string;
const sha: Record<string, string> = {};
const matrix: Record<number, { id: number; sha: string }> = {};

const LIST_KEYS = ['id', 'short_id', 'title', 'author_name', 'author_email', 'created_at', 'message', 'allow_failure'].sort();
const DETAIL_KEYS = ['id', 'short_id', 'title', 'author_name', 'author_email', 'created_at', 'message', 'committed_date', 'authored_date', 'parent_ids', 'stats', 'status'].sort();
const author = { name: 'Ann Author', email: 'ann@example.com' };

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'c');
  project = await makeProject(s, cast.owner, 'commits');
  await addCastMembers(s.ctx, cast, project.id);
  base = `/projects/${project.id}/repository/commits`;
  const at = (d: string) => ({ author, date: new Date(d) });
  sha.c1 = await commitTo(s.ctx, project.id, 'master', { 'README.md': 'a\nb\nc\n' }, { message: 'first', ...at('2016-01-01T10:00:00Z') });
  sha.c2 = await commitTo(s.ctx, project.id, 'master', { 'README.md': 'a\nB\nc\nd\n' }, { message: 'second\n\nwith a body', ...at('2016-02-01T10:00:00Z') });
  sha.c3 = await commitTo(s.ctx, project.id, 'master', { 'docs/x.md': 'x\n' }, { message: 'third', ...at('2016-03-01T10:00:00Z') });
  for (let i = 4; i <= 25; i++) {
    sha[`c${i}`] = await commitTo(s.ctx, project.id, 'master', { 'loop.txt': `${i}\n` }, { message: `loop ${i}`, ...at(`2016-04-${String(i).padStart(2, '0')}T10:00:00Z`) });
  }
  await commitTo(s.ctx, project.id, 'feature/x', { 'feature.txt': 'f\n' }, { from: 'master', message: 'feature' });
  const repo = await repositoryOf(s.ctx, project.id);
  await repo.createTag('v1.0', sha.c2!, { message: 'Version 1.0' });
  for (const vis of VISIBILITIES) {
    const p = await makeProject(s, cast.owner, `commits-matrix-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    matrix[vis] = { id: p.id, sha: await commitTo(s.ctx, p.id, 'master', { 'README.md': 'one\n' }) };
  }
});
afterAll(async () => { await s.close(); });

describe('GET /projects/:id/repository/commits', () => {
  it('lists the default branch newest first, paginated from page 1 with every header', async () => {
    const r = await s.api('GET', base, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(20);
    expect(r.body[0].id).toBe(sha.c25);
    expect(Object.keys(r.body[0]).sort()).toEqual(LIST_KEYS);
    expect(r.headers).toMatchObject({ 'x-total': '25', 'x-total-pages': '2', 'x-per-page': '20', 'x-page': '1', 'x-next-page': '2', 'x-prev-page': '' });
    expect(r.headers.link).toContain('rel="next"');
    expect(r.headers.link).toContain('rel="last"');
    const p2 = await s.api('GET', `${base}?page=2`, cast.reporter);
    expect(p2.body.map((c: { id: string }) => c.id)).toEqual([sha.c5, sha.c4, sha.c3, sha.c2, sha.c1]);
    expect(p2.headers).toMatchObject({ 'x-page': '2', 'x-next-page': '', 'x-prev-page': '1' });
    const small = await s.api('GET', `${base}?per_page=3&page=3`, cast.reporter);
    expect(small.body.map((c: { id: string }) => c.id)).toEqual([sha.c19, sha.c18, sha.c17]);
    expect((await s.api('GET', `${base}?page=9`, cast.reporter)).body).toEqual([]);
  });
  it('shows commit fields as GitLab does', async () => {
    const r = await s.api('GET', `${base}?ref_name=${sha.c2}`, cast.reporter);
    expect(r.body).toEqual([
      {
        id: sha.c2, short_id: sha.c2!.slice(0, 8), title: 'second', author_name: 'Ann Author', author_email: 'ann@example.com',
        created_at: expect.stringMatching(/^2016-02-01T\d{2}:00:00\.000[+-]\d{2}:\d{2}$/), message: 'second\n\nwith a body\n', allow_failure: false,
      },
      expect.objectContaining({ id: sha.c1, title: 'first' }),
    ]);
    expect(new Date(r.body[0].created_at).toISOString()).toBe('2016-02-01T10:00:00.000Z');
  });
  it('titles longer than 100 characters are cut to 80 and an ellipsis, as GitLab does', async () => {
    const long = 'x'.repeat(120);
    await commitTo(s.ctx, project.id, 'long-title', { 'long.txt': 'l' }, { from: sha.c1, message: `${long}\n\nbody` });
    const r = await s.api('GET', `${base}/long-title`, cast.reporter);
    expect(r.body.title).toBe(`${'x'.repeat(80)}…`);
    expect(r.body.message).toBe(`${long}\n\nbody\n`);
  });
  it('filters by ref_name (branch with a slash, tag), since, until and path', async () => {
    const ids = async (q: string) => (await s.api('GET', `${base}?per_page=100&${q}`, cast.reporter)).body.map((c: { id: string }) => c.id);
    expect((await ids('ref_name=feature/x')).length).toBe(26);
    expect(await ids('ref_name=v1.0')).toEqual([sha.c2, sha.c1]);
    expect((await ids('since=2016-02-15T00:00:00Z')).length).toBe(23);
    expect(await ids('until=2016-02-15T00:00:00Z')).toEqual([sha.c2, sha.c1]);
    expect(await ids('since=2016-01-15T00:00:00Z&until=2016-03-15T00:00:00Z')).toEqual([sha.c3, sha.c2]);
    expect(await ids('path=docs')).toEqual([sha.c3]);
    expect(await ids('path=README.md&ref_name=master')).toEqual([sha.c2, sha.c1]);
    const counted = await s.api('GET', `${base}?path=README.md`, cast.reporter);
    expect(counted.headers['x-total']).toBe('2');
  });
  it('400 for since/until that are not ISO 8601', async () => {
    for (const [k, v] of [['since', 'yesterday'], ['until', '2016-13-45'], ['since', '12345']]) {
      const r = await s.api('GET', `${base}?${k}=${v}`, cast.reporter);
      expect([r.status, r.body]).toEqual([400, { message: `"${k}" must be a timestamp in ISO 8601 format: YYYY-MM-DDTHH:MM:SSZ` }]);
    }
  });
  it('an unknown ref or an empty repository lists nothing', async () => {
    const r = await s.api('GET', `${base}?ref_name=nope`, cast.reporter);
    expect([r.status, r.body, r.headers['x-total']]).toEqual([200, [], '0']);
    const empty = await makeProject(s, cast.owner, 'commits-empty');
    const e = await s.api('GET', `/projects/${empty.id}/repository/commits`, cast.owner);
    expect([e.status, e.body, e.headers['x-total'], e.headers['x-total-pages']]).toEqual([200, [], '0', '0']);
  });

  it('a path that climbs out of the repository lists nothing (was 500; found by the fuzzer)', async () => {
    for (const path of ['../', '..', 'a/../../b', '/../x']) {
      const r = await s.api('GET', `${base}?path=${encodeURIComponent(path)}`, cast.reporter);
      expect([path, r.status, r.body, r.headers['x-total']]).toEqual([path, 200, [], '0']);
    }
  });
});

describe('GET /projects/:id/repository/commits/:sha', () => {
  it('shows one commit with parents, dates, stats and status', async () => {
    const r = await s.api('GET', `${base}/${sha.c2}`, cast.reporter);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(DETAIL_KEYS);
    expect(r.body).toMatchObject({ id: sha.c2, title: 'second', parent_ids: [sha.c1], stats: { additions: 2, deletions: 1, total: 3 }, status: null });
    expect(new Date(r.body.authored_date).toISOString()).toBe('2016-02-01T10:00:00.000Z');
    const root = await s.api('GET', `${base}/${sha.c1}`, cast.reporter);
    expect(root.body).toMatchObject({ parent_ids: [], stats: { additions: 3, deletions: 0, total: 3 } });
  });
  it('accepts a short sha, a branch (also with a slash) and a tag', async () => {
    expect((await s.api('GET', `${base}/${sha.c2!.slice(0, 10)}`, cast.reporter)).body.id).toBe(sha.c2);
    expect((await s.api('GET', `${base}/master`, cast.reporter)).body.id).toBe(sha.c25);
    expect((await s.api('GET', `${base}/feature%2Fx`, cast.reporter)).body.title).toBe('feature');
    expect((await s.api('GET', `${base}/v1.0`, cast.reporter)).body.id).toBe(sha.c2);
  });
  it('404 Commit Not Found for an unknown revision', async () => {
    for (const rev of ['nope', 'f'.repeat(40), 'master~100', 'master:README.md']) {
      const r = await s.api('GET', `${base}/${encodeURIComponent(rev)}`, cast.reporter);
      expect([rev, r.status, r.body]).toEqual([rev, 404, { message: '404 Commit Not Found' }]);
    }
  });
  it('status is null without pipelines, else the combined status of the commit\'s pipelines (rows written directly)', async () => {
    expect((await s.api('GET', `${base}/${sha.c2}`, cast.reporter)).body.status).toBeNull();
    const t = new Date().toISOString();
    const pipeline = (status: string) => s.ctx.data.run(
      'INSERT INTO pipelines (project_id, ref, sha, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [project.id, 'master', sha.c2, status, t, t],
    );
    await pipeline('success');
    expect((await s.api('GET', `${base}/${sha.c2}`, cast.reporter)).body.status).toBe('success');
    await pipeline('running');
    expect((await s.api('GET', `${base}/${sha.c2}`, cast.reporter)).body.status).toBe('running');
  });
  // The commit statuses API is the CI room's: on PostgreSQL once that room is ported.
  it('status is the combined status of the commit\'s pipelines', async () => {
    const posted = await s.api('POST', `/projects/${project.id}/statuses/${sha.c3}`, cast.developer, { state: 'success', name: 'lint', ref: 'master' });
    expect(posted.status).toBe(201);
    expect((await s.api('GET', `${base}/${sha.c3}`, cast.reporter)).body.status).toBe('success');
    await s.api('POST', `/projects/${project.id}/statuses/${sha.c3}`, cast.developer, { state: 'failed', name: 'test', ref: 'master' });
    expect((await s.api('GET', `${base}/${sha.c3}`, cast.reporter)).body.status).toBe('failed');
  });
});

describe('GET /projects/:id/repository/commits/:sha/diff and /blob', () => {
  it('lists the diff items (paginated)', async () => {
    const r = await s.api('GET', `${base}/${sha.c2}/diff`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([{
      old_path: 'README.md', new_path: 'README.md', a_mode: '100644', b_mode: '100644',
      diff: expect.stringContaining('@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n'), new_file: false, renamed_file: false, deleted_file: false,
    }]);
    expect(r.headers['x-total']).toBe('1');
    const root = await s.api('GET', `${base}/${sha.c1}/diff`, cast.reporter);
    expect(root.body[0]).toMatchObject({ new_file: true, a_mode: '0', b_mode: '100644' });
    expect((await s.api('GET', `${base}/nope/diff`, cast.reporter)).body).toEqual({ message: '404 Commit Not Found' });
  });
  it('serves a raw file at a commit', async () => {
    const r = await s.api('GET', `${base}/${sha.c1}/blob?filepath=README.md`, cast.reporter);
    expect([r.status, r.text, r.headers['content-type']]).toEqual([200, 'a\nb\nc\n', 'text/plain; charset=utf-8']);
    expect((await s.api('GET', `${base}/${sha.c1}/blob?filepath=docs/x.md`, cast.reporter)).body).toEqual({ message: '404 File Not Found' });
    expect((await s.api('GET', `${base}/nope/blob?filepath=README.md`, cast.reporter)).body).toEqual({ message: '404 Commit Not Found' });
    expect((await s.api('GET', `${base}/${sha.c1}/blob`, cast.reporter)).body).toEqual({ message: '400 (Bad request) "filepath" not given' });
  });
});

describe('commit comments', () => {
  const comments = (rev: string) => `${base}/${rev}/comments`;
  it('POST adds a comment (201); without a placeable line, path, line and line_type are null', async () => {
    const r = await s.api('POST', comments(sha.c2!), cast.guest, { note: 'Nice commit' });
    expect(r.status).toBe(403); // a guest of a private project has no repository access
    const ok = await s.api('POST', comments(sha.c2!), cast.reporter, { note: 'Nice commit' });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ note: 'Nice commit', path: null, line: null, line_type: null, created_at: expect.any(String) });
    expect(ok.body.author).toMatchObject({ id: cast.reporter.id, username: cast.reporter.username, state: 'active', created_at: expect.any(String) });
    expect(Object.keys(ok.body).sort()).toEqual(['author', 'created_at', 'line', 'line_type', 'note', 'path']);
  });
  it('a line comment needs the full sha, a path and an added line of the diff, and line_type new', async () => {
    const post = (rev: string, extra: Record<string, unknown>) => s.api('POST', comments(rev), cast.developer, { note: 'line', ...extra });
    const placed = await post(sha.c2!, { path: 'README.md', line: 2, line_type: 'new' });
    expect(placed.body).toMatchObject({ path: 'README.md', line: 2, line_type: 'new' });
    expect((await post(sha.c2!.toUpperCase(), { path: 'README.md', line: 4, line_type: 'new' })).body).toMatchObject({ path: 'README.md', line: 4 });
    const unplaced: Record<string, unknown>[] = [
      { path: 'README.md', line: 1, line_type: 'new' }, // a context line
      { path: 'README.md', line: 2, line_type: 'old' },
      { path: 'README.md', line: 2 },
      { path: 'other.md', line: 2, line_type: 'new' },
      { line: 2, line_type: 'new' },
    ];
    for (const extra of unplaced) {
      const r = await post(sha.c2!, extra);
      expect([extra, r.status, r.body.path, r.body.line, r.body.line_type]).toEqual([extra, 201, null, null, null]);
    }
    for (const rev of ['v1.0', sha.c2!.slice(0, 12)]) {
      const r = await post(rev, { path: 'README.md', line: 2, line_type: 'new' });
      expect([r.status, r.body.path, r.body.line]).toEqual([201, null, null]);
    }
  });
  it('GET lists the comments of the commit however it is named, oldest first, paginated', async () => {
    const all = await s.api('GET', comments(sha.c2!), cast.reporter);
    expect(all.status).toBe(200);
    expect(all.headers['x-total']).toBe(String(all.body.length));
    expect(all.body.length).toBe(10);
    expect(all.body[0].note).toBe('Nice commit');
    const viaTag = await s.api('GET', `${comments('v1.0')}?per_page=3&page=2`, cast.reporter);
    expect(viaTag.body).toEqual(all.body.slice(3, 6));
    expect(viaTag.headers).toMatchObject({ 'x-total': '10', 'x-total-pages': '4', 'x-page': '2' });
    expect((await s.api('GET', comments(sha.c1!), cast.reporter)).body).toEqual([]);
  });
  it('records a commented-on event and queues note hooks with GitLab\'s payload', async () => {
    // The hook row is written directly (the hooks API is another room's).
    const hook = { body: (await s.ctx.data.get<{ id: number }>(
      `INSERT INTO project_hooks (project_id, url, push_events, note_events, created_at) VALUES (?, 'http://hooks.example/notes', FALSE, TRUE, ?) RETURNING id`,
      [project.id, new Date().toISOString()],
    ))! };
    const r = await s.api('POST', comments(sha.c2!), cast.developer, { note: 'hooked', path: 'README.md', line: 2, line_type: 'new' });
    expect(r.status).toBe(201);
    const event = await s.ctx.data.get(`SELECT action, target_type, target_title, author_id FROM events WHERE project_id = ? ORDER BY id DESC LIMIT 1`, [project.id]);
    expect(event).toEqual({ action: 'commented', target_type: 'Note', target_title: 'second', author_id: cast.developer.id });
    const delivery = (await s.ctx.data.get<{ event: string; payload: string }>(`SELECT event, payload FROM hook_deliveries WHERE hook_id = ? ORDER BY id DESC LIMIT 1`, [hook.body.id]))!;
    expect(delivery.event).toBe('note');
    const payload = JSON.parse(delivery.payload);
    expect(payload).toMatchObject({
      object_kind: 'note', project_id: project.id, user: { username: cast.developer.username },
      object_attributes: { note: 'hooked', noteable_type: 'Commit', commit_id: sha.c2, path: 'README.md', line: 2, line_type: 'new', url: expect.stringContaining(`/commit/${sha.c2}#note_`) },
      commit: { id: sha.c2, message: 'second\n\nwith a body\n', author: { name: 'Ann Author', email: 'ann@example.com' } },
      project: { path_with_namespace: project.path_with_namespace },
    });
  });
  it('400 without a note, 404 for an unknown commit', async () => {
    expect((await s.api('POST', comments(sha.c2!), cast.reporter, {})).body).toEqual({ message: '400 (Bad request) "note" not given' });
    expect((await s.api('POST', comments(sha.c2!), cast.reporter, { note: '' })).body).toEqual({ message: '400 (Bad request) "note" not given' });
    expect((await s.api('POST', comments('nope'), cast.reporter, { note: 'x' })).body).toEqual({ message: '404 Commit Not Found' });
    expect((await s.api('GET', comments('nope'), cast.reporter)).body).toEqual({ message: '404 Commit Not Found' });
  });
});

describe('authorization', () => {
  for (const vis of VISIBILITIES) {
    it(`reads and comments on a project of visibility ${vis}`, async () => {
      const { id, sha: head } = matrix[vis]!;
      for (const a of ACTORS) {
        const as = actorUser(cast, a);
        const want = expectedStatus(a, vis, 20, 200, true);
        expect([a, (await s.api('GET', `/projects/${id}/repository/commits`, as)).status]).toEqual([a, want]);
        expect([a, (await s.api('GET', `/projects/${id}/repository/commits/${head}`, as)).status]).toEqual([a, want]);
        expect([a, (await s.api('GET', `/projects/${id}/repository/commits/${head}/diff`, as)).status]).toEqual([a, want]);
        const posted = await s.api('POST', `/projects/${id}/repository/commits/${head}/comments`, as, { note: `from ${a}` });
        expect([a, posted.status]).toEqual([a, expectedStatus(a, vis, 20, 201, true)]);
      }
    });
  }
  it('works with the URL-encoded project path', async () => {
    expect((await s.api('GET', `/projects/${encodedPath(project)}/repository/commits/${sha.c1}`, cast.reporter)).status).toBe(200);
  });
});
