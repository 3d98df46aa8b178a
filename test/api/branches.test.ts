/** Branches API: list, show (names with `/`), create, delete, protect, unprotect; push processing, errors, authorization. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ACTORS, actorUser, commitTo, encodedPath, expectedStatus, pushEvents, repositoryOf, VISIBILITIES } from '../helpers/repository.js';

let s: TestServer;
let cast: Cast;
let project: { id: number; path_with_namespace: string };
let base: string;
let head: string;
const matrix: Record<number, number> = {};

const BRANCH_KEYS = ['name', 'commit', 'protected', 'developers_can_push', 'developers_can_merge'].sort();
const COMMIT_KEYS = [
  'id', 'message', 'parent_ids', 'authored_date', 'author_name', 'author_email', 'committed_date', 'committer_name', 'committer_email',
  'parents', 'tree', 'author',
].sort();

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'b');
  project = await makeProject(s, cast.owner, 'branches');
  await addCastMembers(s.ctx, cast, project.id);
  base = `/projects/${project.id}/repository/branches`;
  await commitTo(s.ctx, project.id, 'master', { 'README.md': 'one\n' }, { message: 'first' });
  head = await commitTo(s.ctx, project.id, 'master', { 'README.md': 'two\n' }, { message: 'second', author: { name: 'Ann', email: 'ann@example.com' } });
  for (const name of ['feature/deep/x', 'alpha', 'zeta']) await commitTo(s.ctx, project.id, name, { [`${name.replace(/\//g, '-')}.txt`]: name }, { from: 'master' });
  for (const vis of VISIBILITIES) {
    const p = await makeProject(s, cast.owner, `branches-matrix-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    await commitTo(s.ctx, p.id, 'master', { 'README.md': 'm\n' });
    matrix[vis] = p.id;
  }
});
afterAll(async () => { await s.close(); });

describe('GET branches', () => {
  it('lists branches sorted by name with protection flags and the commit superset, paginated', async () => {
    const r = await s.api('GET', base, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body.map((b: { name: string }) => b.name)).toEqual(['alpha', 'feature/deep/x', 'master', 'zeta']);
    expect(r.headers).toMatchObject({ 'x-total': '4', 'x-total-pages': '1', 'x-page': '1', 'x-per-page': '20', 'x-next-page': '', 'x-prev-page': '' });
    const master = r.body.find((b: { name: string }) => b.name === 'master');
    expect(Object.keys(master).sort()).toEqual(BRANCH_KEYS);
    expect(Object.keys(master.commit).sort()).toEqual(COMMIT_KEYS);
    const repo = await repositoryOf(s.ctx, project.id);
    const c = (await repo.readCommit(head))!;
    expect(master).toMatchObject({
      protected: true, developers_can_push: false, developers_can_merge: false,
      commit: {
        id: head, message: 'second\n', parent_ids: c.parents, parents: c.parents.map((id) => ({ id })), tree: c.tree,
        author_name: 'Ann', author_email: 'ann@example.com', author: { name: 'Ann', email: 'ann@example.com' },
        committer_name: 'Ann', committer_email: 'ann@example.com',
      },
    });
    expect(r.body.find((b: { name: string }) => b.name === 'alpha').protected).toBe(false);
    const p2 = await s.api('GET', `${base}?per_page=3&page=2`, cast.reporter);
    expect(p2.body.map((b: { name: string }) => b.name)).toEqual(['zeta']);
    expect(p2.headers).toMatchObject({ 'x-total': '4', 'x-total-pages': '2', 'x-prev-page': '1' });
  });
  it('shows one branch; names with / work encoded or not; 404 Branch Not Found', async () => {
    for (const path of ['feature%2Fdeep%2Fx', 'feature/deep/x']) {
      const r = await s.api('GET', `${base}/${path}`, cast.reporter);
      expect([r.status, r.body.name]).toEqual([200, 'feature/deep/x']);
    }
    expect((await s.api('GET', `/projects/${encodedPath(project)}/repository/branches/master`, cast.reporter)).body.commit.id).toBe(head);
    for (const name of ['nope', 'feature', 'feature/deep', 'bad..name']) {
      expect((await s.api('GET', `${base}/${name}`, cast.reporter)).body).toEqual({ message: '404 Branch Not Found' });
    }
  });
  it('an empty repository has no branches', async () => {
    const empty = await makeProject(s, cast.owner, 'branches-empty');
    const r = await s.api('GET', `/projects/${empty.id}/repository/branches`, cast.owner);
    expect([r.status, r.body, r.headers['x-total']]).toEqual([200, [], '0']);
  });
});

describe('POST branches', () => {
  it('creates a branch at a branch, tag or sha (201 RepoBranch) and processes it as a push', async () => {
    const r = await s.api('POST', base, cast.developer, { branch_name: 'topic/one', ref: 'master' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'topic/one', protected: false, commit: { id: head } });
    expect((await pushEvents(s, project.id))[0]).toMatchObject({ ref: 'refs/heads/topic/one', before: '0'.repeat(40), after: head, object_kind: 'push' });
    const repo = await repositoryOf(s.ctx, project.id);
    const first = (await repo.readCommit(head))!.parents[0]!;
    expect((await s.api('POST', base, cast.developer, { branch_name: 'from-sha', ref: first })).body.commit.id).toBe(first);
    await repo.createTag('t1', first);
    expect((await s.api('POST', base, cast.developer, { branch_name: 'from-tag', ref: 't1' })).body.commit.id).toBe(first);
    const form = await s.api('POST', base, cast.developer, 'branch_name=from-form&ref=master', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(201);
  });
  it('400 with GitLab\'s messages', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ branch_name: 'bad..name', ref: 'master' }, 'Branch name is invalid'],
      [{ branch_name: 'has space', ref: 'master' }, 'Branch name is invalid'],
      [{ branch_name: '-dash', ref: 'master' }, 'Branch name is invalid'],
      [{ branch_name: 'HEAD', ref: 'master' }, 'Branch name is invalid'],
      [{ branch_name: 'alpha', ref: 'master' }, 'Branch already exists'],
      [{ branch_name: 'fresh', ref: 'no-such-ref' }, 'Invalid reference name'],
      [{ branch_name: 'fresh', ref: 'master:README.md' }, 'Invalid reference name'],
      [{ branch_name: 'fresh' }, '400 (Bad request) "ref" not given'],
      [{ ref: 'master' }, '400 (Bad request) "branch_name" not given'],
    ];
    const events = (await pushEvents(s, project.id)).length;
    for (const [body, message] of cases) {
      const r = await s.api('POST', base, cast.developer, body);
      expect([body, r.status, r.body]).toEqual([body, 400, { message }]);
    }
    expect((await pushEvents(s, project.id)).length).toBe(events);
  });
  it('a developer cannot create a branch matching a protected rule', async () => {
    const t = new Date().toISOString();
    await s.ctx.data.run(`INSERT INTO protected_branches (project_id, name, created_at, updated_at) VALUES (?, 'release/*', ?, ?)`, [project.id, t, t]);
    const r = await s.api('POST', base, cast.developer, { branch_name: 'release/1.0', ref: 'master' });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('not allowed');
    const m = await s.api('POST', base, cast.master, { branch_name: 'release/1.0', ref: 'master' });
    expect([m.status, m.body.protected]).toEqual([201, true]);
  });
});

describe('DELETE branches', () => {
  it('deletes (200 {branch_name}) and processes it as a push', async () => {
    await s.api('POST', base, cast.developer, { branch_name: 'doomed/one', ref: 'master' });
    const r = await s.api('DELETE', `${base}/doomed/one`, cast.developer);
    expect([r.status, r.body]).toEqual([200, { branch_name: 'doomed/one' }]);
    expect(await (await repositoryOf(s.ctx, project.id)).resolveBranch('doomed/one')).toBeNull();
    expect((await pushEvents(s, project.id))[0]).toMatchObject({ ref: 'refs/heads/doomed/one', before: head, after: '0'.repeat(40) });
    await s.api('POST', base, cast.developer, { branch_name: 'doomed/two', ref: 'master' });
    expect((await s.api('DELETE', `${base}/doomed%2Ftwo`, cast.developer)).status).toBe(200);
  });
  it('404 No such branch; 405 for the default branch and protected branches', async () => {
    expect((await s.api('DELETE', `${base}/nope`, cast.developer)).body).toEqual({ message: 'No such branch' });
    expect((await s.api('DELETE', `${base}/nope`, cast.developer)).status).toBe(404);
    const headBranch = await s.api('DELETE', `${base}/master`, cast.master);
    expect([headBranch.status, headBranch.body]).toEqual([405, { message: 'Cannot remove HEAD branch' }]);
    const prot = await s.api('DELETE', `${base}/release/1.0`, cast.master);
    expect([prot.status, prot.body]).toEqual([405, { message: 'Protected branch cant be removed' }]);
  });
});

describe('protect and unprotect', () => {
  it('masters protect (flags default false) and unprotect; repeated calls are harmless', async () => {
    const p = await s.api('PUT', `${base}/alpha/protect`, cast.master);
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ name: 'alpha', protected: true, developers_can_push: false, developers_can_merge: false });
    const flags = await s.api('PUT', `${base}/alpha/protect`, cast.master, { developers_can_push: true, developers_can_merge: 'yes' });
    expect(flags.body).toMatchObject({ protected: true, developers_can_push: true, developers_can_merge: true });
    // on an existing rule a missing flag keeps its value; only an explicit false removes it
    expect((await s.api('PUT', `${base}/alpha/protect`, cast.master, { developers_can_merge: false })).body)
      .toMatchObject({ developers_can_push: true, developers_can_merge: false });
    expect((await s.api('GET', `${base}/alpha`, cast.reporter)).body.protected).toBe(true);
    expect((await s.api('DELETE', `${base}/alpha`, cast.master)).status).toBe(405);
    const u = await s.api('PUT', `${base}/alpha/unprotect`, cast.master);
    expect(u.body).toMatchObject({ name: 'alpha', protected: false, developers_can_push: false, developers_can_merge: false });
    expect((await s.api('PUT', `${base}/alpha/unprotect`, cast.master)).status).toBe(200);
  });
  it('works for names with / and answers 404 for a missing branch, 400 for a bad flag', async () => {
    const r = await s.api('PUT', `${base}/feature/deep/x/protect`, cast.master);
    expect([r.status, r.body.name, r.body.protected]).toEqual([200, 'feature/deep/x', true]);
    expect((await s.api('PUT', `${base}/feature%2Fdeep%2Fx/unprotect`, cast.master)).body.protected).toBe(false);
    expect((await s.api('PUT', `${base}/nope/protect`, cast.master)).body).toEqual({ message: '404 Branch Not Found' });
    expect((await s.api('PUT', `${base}/nope/unprotect`, cast.master)).body).toEqual({ message: '404 Branch Not Found' });
    expect((await s.api('PUT', `${base}/alpha`, cast.master)).status).toBe(404);
    expect((await s.api('PUT', `${base}/alpha/protect`, cast.master, { developers_can_push: 'maybe' })).status).toBe(400);
  });
  it('two protects of one branch at once both answer 200 and leave one rule', async () => {
    const both = await Promise.all([{ developers_can_push: true }, { developers_can_merge: true }].map((flags) => s.api('PUT', `${base}/zeta/protect`, cast.master, flags)));
    expect(both.map((r) => [r.status, r.body.protected])).toEqual([[200, true], [200, true]]);
    const rules = await s.ctx.data.all<{ name: string }>('SELECT name FROM protected_branches WHERE project_id = ? AND name = ?', [project.id, 'zeta']);
    expect(rules).toHaveLength(1);
    // each request's flag is kept: the second upsert keeps the first one's (a missing flag keeps its value)
    expect((await s.api('GET', `${base}/zeta`, cast.reporter)).body).toMatchObject({ protected: true, developers_can_push: true, developers_can_merge: true });
    expect((await s.api('PUT', `${base}/zeta/unprotect`, cast.master)).body.protected).toBe(false);
  });
  it('the default branch shows the default_branch_protection setting', async () => {
    await s.api('PUT', '/application/settings', s.root, { default_branch_protection: 1 });
    expect((await s.api('GET', `${base}/master`, cast.reporter)).body).toMatchObject({ protected: true, developers_can_push: true, developers_can_merge: true });
    await s.api('PUT', '/application/settings', s.root, { default_branch_protection: 0 });
    expect((await s.api('GET', `${base}/master`, cast.reporter)).body.protected).toBe(false);
    await s.api('PUT', '/application/settings', s.root, { default_branch_protection: 2 });
  });
});

describe('authorization', () => {
  for (const vis of VISIBILITIES) {
    it(`project of visibility ${vis}`, async () => {
      const b = `/projects/${matrix[vis]}/repository/branches`;
      for (const a of ACTORS) {
        const as = actorUser(cast, a);
        const read = expectedStatus(a, vis, 20, 200, true);
        expect([a, (await s.api('GET', b, as)).status]).toEqual([a, read]);
        expect([a, (await s.api('GET', `${b}/master`, as)).status]).toEqual([a, read]);
        const created = await s.api('POST', b, as, { branch_name: `by-${a}`, ref: 'master' });
        expect([a, created.status]).toEqual([a, expectedStatus(a, vis, 30, 201)]);
        const protect = await s.api('PUT', `${b}/master/protect`, as);
        expect([a, protect.status]).toEqual([a, expectedStatus(a, vis, 40, 200)]);
        const unprotect = await s.api('PUT', `${b}/master/unprotect`, as);
        expect([a, unprotect.status]).toEqual([a, expectedStatus(a, vis, 40, 200)]);
        if (created.status === 201) {
          expect([a, (await s.api('DELETE', `${b}/by-${a}`, as)).status]).toEqual([a, 200]);
        } else {
          expect([a, (await s.api('DELETE', `${b}/master`, as)).status]).toEqual([a, created.status]);
        }
      }
    });
  }
});
