/**
 * Merge requests authorization: every caller on private, internal and public projects (list, get, create, update,
 * delete), authors, merge requests disabled, and merge requests from a fork into its upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ACTORS, expectedStatus, type Actor } from '../helpers/collaboration.js';
import { commitTo } from '../helpers/repository.js';
import { pushFiles } from '../helpers/ci.js';

let s: TestServer;
let cast: Cast;
const projects: Record<number, number> = {};
const mrs: Record<number, number> = {};

const as = (a: Actor): TestUser | null => (a === 'anonymous' ? null : cast[a]);

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'mz');
  for (const vis of [0, 10, 20]) {
    const p = await makeProject(s, cast.owner, `mr-authz-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    projects[vis] = p.id;
    await commitTo(s.ctx, p.id, 'master', { 'README.md': 'hi\n' });
    await commitTo(s.ctx, p.id, 'feature', { 'f.txt': 'f\n' }, { from: 'master' });
    for (const a of ACTORS) await commitTo(s.ctx, p.id, `c-${a}`, { [`${a}.txt`]: a }, { from: 'master' });
    const mr = await s.api('POST', `/projects/${p.id}/merge_requests`, cast.owner, { source_branch: 'feature', target_branch: 'master', title: 'Base MR' });
    mrs[vis] = mr.body.id;
  }
}, 60_000);
afterAll(async () => s.close());

describe.each([0, 10, 20])('visibility %i', (vis) => {
  it.each(ACTORS)('GET list, merge request, commits, changes and closes_issues as %s (guests and visible non-members)', async (actor) => {
    const base = `/projects/${projects[vis]}/merge_requests`;
    const expected = expectedStatus(actor, vis, 10, 200, true);
    expect((await s.api('GET', base, as(actor))).status).toBe(expected);
    for (const sub of ['', '/commits', '/changes', '/closes_issues', '/notes', '/award_emoji']) {
      expect((await s.api('GET', `${base}/${mrs[vis]}${sub}`, as(actor))).status).toBe(expected);
    }
  });

  it.each(ACTORS)('POST merge request as %s (developers and up; labels kept)', async (actor) => {
    const r = await s.api('POST', `/projects/${projects[vis]}/merge_requests`, as(actor), {
      source_branch: `c-${actor}`, target_branch: 'master', title: `by ${actor}`, labels: `l-${actor}`,
    });
    expect(r.status).toBe(expectedStatus(actor, vis, 30, 201, false));
    if (r.status === 201) expect(r.body.labels).toEqual([`l-${actor}`]);
  });

  it.each(ACTORS)('PUT someone else\'s merge request as %s (developers and up)', async (actor) => {
    const r = await s.api('PUT', `/projects/${projects[vis]}/merge_requests/${mrs[vis]}`, as(actor), { description: `edited by ${actor}` });
    expect(r.status).toBe(expectedStatus(actor, vis, 30, 200, false));
  });

  it.each(ACTORS)('subscription and todo as %s (whoever reads it)', async (actor) => {
    const base = `/projects/${projects[vis]}/merge_requests/${mrs[vis]}`;
    const expected = expectedStatus(actor, vis, 10, 201, true);
    expect((await s.api('POST', `${base}/subscription`, as(actor))).status).toBe(actor === 'owner' && expected === 201 ? 304 : expected);
    expect((await s.api('POST', `${base}/todo`, as(actor))).status).toBe(expected);
  });

  it.each(ACTORS)('DELETE as %s (owners and admins; 404 otherwise)', async (actor) => {
    const branch = `d-${actor}-${vis}`;
    await commitTo(s.ctx, projects[vis]!, branch, { 'd.txt': branch }, { from: 'master' });
    const mr = await s.api('POST', `/projects/${projects[vis]}/merge_requests`, cast.developer, { source_branch: branch, target_branch: 'master', title: 'Delete me' });
    const r = await s.api('DELETE', `/projects/${projects[vis]}/merge_requests/${mr.body.id}`, as(actor));
    const ok = actor === 'owner' || actor === 'admin';
    expect(r.status).toBe(actor === 'anonymous' ? 401 : ok ? 200 : 404);
  });
});

describe('authors', () => {
  it('the assignee (a reporter) may update and close; their labels are dropped', async () => {
    const p = projects[0]!;
    const mr = await s.api('POST', `/projects/${p}/merge_requests`, cast.owner, {
      source_branch: 'c-reporter', target_branch: 'master', title: 'Assigned to a reporter', assignee_id: cast.reporter.id,
    });
    expect(mr.status).toBe(201);
    const r = await s.api('PUT', `/projects/${p}/merge_requests/${mr.body.id}`, cast.reporter, { title: 'Renamed', labels: 'nope' });
    expect(r).toMatchObject({ status: 200, body: { title: 'Renamed', labels: [] } });
    expect((await s.api('PUT', `/projects/${p}/merge_requests/${mr.body.id}`, cast.reporter, { state_event: 'close' })).body.state).toBe('closed');
  });
});

describe('merge requests disabled', () => {
  it('answers 403 to those who see the project and 404 to the others', async () => {
    const p = await makeProject(s, cast.owner, 'no-mrs', { visibility: 20 });
    await addCastMembers(s.ctx, cast, p.id);
    await commitTo(s.ctx, p.id, 'master', { a: 'a' });
    await commitTo(s.ctx, p.id, 'topic', { b: 'b' }, { from: 'master' });
    const mr = await s.api('POST', `/projects/${p.id}/merge_requests`, cast.owner, { source_branch: 'topic', target_branch: 'master', title: 'Before' });
    expect(mr.status).toBe(201);
    expect((await s.api('PUT', `/projects/${p.id}`, cast.owner, { merge_requests_enabled: false })).status).toBe(200);
    for (const u of [cast.owner, cast.developer, cast.nonMember, cast.admin]) {
      expect((await s.api('GET', `/projects/${p.id}/merge_requests`, u)).status).toBe(403);
      expect((await s.api('GET', `/projects/${p.id}/merge_requests/${mr.body.id}`, u)).status).toBe(403);
      expect((await s.api('POST', `/projects/${p.id}/merge_requests`, u, { source_branch: 'topic', target_branch: 'master', title: 'x' })).status).toBe(403);
    }
    const priv = await makeProject(s, cast.owner, 'no-mrs-private', { visibility: 0, extra: { merge_requests_enabled: false } });
    expect((await s.api('GET', `/projects/${priv.id}/merge_requests`, cast.nonMember)).status).toBe(404);
  });
});

describe('from a fork into its upstream', () => {
  it('creates the merge request in the upstream (iid there), shows the fork\'s commits and refreshes on a push to the fork', async () => {
    const up = await makeProject(s, cast.owner, 'upstream', { visibility: 20 });
    await commitTo(s.ctx, up.id, 'master', { 'README.md': 'upstream\n' });
    const fork = await s.api('POST', `/projects/fork/${up.id}`, cast.nonMember);
    expect(fork.status).toBe(201);
    const first = await commitTo(s.ctx, fork.body.id, 'fix', { 'fix.txt': 'fix\n' }, { from: 'master', message: 'Fix it' });
    // a non-member may not open a merge request inside the upstream itself
    expect((await s.api('POST', `/projects/${up.id}/merge_requests`, cast.nonMember, { source_branch: 'master', target_branch: 'master', title: 'x' })).status).toBe(403);
    const r = await s.api('POST', `/projects/${fork.body.id}/merge_requests`, cast.nonMember, {
      source_branch: 'fix', target_branch: 'master', title: 'From my fork', target_project_id: up.id, labels: 'dropped',
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      iid: 1, project_id: up.id, source_project_id: fork.body.id, target_project_id: up.id, sha: first, merge_status: 'can_be_merged', labels: [],
      web_url: `http://gantry.test/${up.path_with_namespace}/merge_requests/1`,
    });
    // the same pair again: 409; a branch missing in the fork: 400
    expect((await s.api('POST', `/projects/${fork.body.id}/merge_requests`, cast.nonMember, {
      source_branch: 'fix', target_branch: 'master', title: 'Again', target_project_id: up.id,
    })).status).toBe(409);
    expect((await s.api('POST', `/projects/${fork.body.id}/merge_requests`, cast.nonMember, {
      source_branch: 'nope', target_branch: 'master', title: 'Again', target_project_id: up.id,
    })).status).toBe(400);
    const changes = await s.api('GET', `/projects/${up.id}/merge_requests/${r.body.id}/changes`, cast.owner);
    expect(changes.body.changes.map((c: { new_path: string }) => c.new_path)).toEqual(['fix.txt']);
    expect((await s.api('GET', `/projects/${fork.body.id}/merge_requests/${r.body.id}`, cast.nonMember)).status).toBe(404);
    const second = await pushFiles(s.ctx, fork.body.id, cast.nonMember.id, { 'more.txt': 'more\n' }, { branch: 'fix', message: 'More' });
    const after = await s.api('GET', `/projects/${up.id}/merge_requests/${r.body.id}`, cast.owner);
    expect(after.body).toMatchObject({ sha: second, merge_status: 'can_be_merged' });
    const commits = await s.api('GET', `/projects/${up.id}/merge_requests/${r.body.id}/commits`, cast.owner);
    expect(commits.body.map((c: { title: string }) => c.title)).toEqual(['More', 'Fix it']);
    // the author may edit it in the upstream, where they are no member
    expect((await s.api('PUT', `/projects/${up.id}/merge_requests/${r.body.id}`, cast.nonMember, { title: 'Renamed' })).status).toBe(200);
    // inside their own fork the fork's owner opens merge requests too
    await commitTo(s.ctx, fork.body.id, 'local', { 'l.txt': 'l' }, { from: 'master' });
    expect((await s.api('POST', `/projects/${fork.body.id}/merge_requests`, cast.nonMember, { source_branch: 'local', target_branch: 'master', title: 'Local' })).status).toBe(201);
  });
});
