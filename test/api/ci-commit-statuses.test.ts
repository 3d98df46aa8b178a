// Commit statuses: POST /projects/:id/statuses/:sha (8.x update-or-create rule) and GET .../commits/:sha/statuses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { pipelinesOf, pushFiles, rows } from '../helpers/ci.js';
import { commitStatusOf } from '../../daemon/services/repository/commits.js';
import { projectRepository } from '../../daemon/services/repository/repositories.js';

let s: TestServer;
let cast: Cast;
let pid: number;
let sha: string;
let featureSha: string;

const STATUS_KEYS = ['allow_failure', 'author', 'created_at', 'description', 'finished_at', 'id', 'name', 'ref', 'sha', 'started_at', 'status', 'target_url'];

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'cs');
  pid = (await makeProject(s, cast.owner, 'statuses')).id;
  await addCastMembers(s.ctx, cast, pid);
  sha = await pushFiles(s.ctx, pid, cast.owner.id, { 'README.md': 'hello' });
  featureSha = await pushFiles(s.ctx, pid, cast.owner.id, { 'f.txt': 'f' }, { branch: 'feature', from: 'master' });
});
afterAll(async () => s.close());

const post = (u: TestUser | null, commit: string, body: Record<string, unknown>, id = pid) => s.api('POST', `/projects/${id}/statuses/${commit}`, u, body);

describe('POST /projects/:id/statuses/:sha', () => {
  it('creates a status (201) with defaults: name "default", ref = the default branch containing the commit', async () => {
    const r = await post(cast.developer, sha, { state: 'pending', target_url: 'http://ci.example/1', description: 'queued' });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(STATUS_KEYS);
    expect(r.body).toMatchObject({
      sha, ref: 'master', name: 'default', status: 'pending', target_url: 'http://ci.example/1', description: 'queued', allow_failure: false,
      started_at: null, finished_at: null, author: { id: cast.developer.id, username: cast.developer.username },
    });
    const [p] = await pipelinesOf(s.ctx, pid);
    expect(p).toMatchObject({ ref: 'master', sha, status: 'pending' });
    expect(await commitStatusOf(s.ctx, pid, sha)).toBe('pending');
  });

  it('updates the caller\'s running or pending status of that name; a finished one gives a new record', async () => {
    const a = await post(cast.developer, sha, { state: 'pending', context: 'ci/jenkins' });
    const b = await post(cast.developer, sha, { state: 'running', context: 'ci/jenkins', description: 'building' });
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(b.body).toMatchObject({ name: 'ci/jenkins', status: 'running', description: 'building' });
    expect(typeof b.body.started_at).toBe('string');
    const c = await post(cast.developer, sha, { state: 'success', name: 'ci/jenkins' });
    expect(c.body.id).toBe(a.body.id);
    expect(c.body.status).toBe('success');
    expect(typeof c.body.finished_at).toBe('string');
    const d = await post(cast.developer, sha, { state: 'failed', name: 'ci/jenkins' });
    expect(d.body.id).not.toBe(a.body.id);
    expect(d.body.status).toBe('failed');
    // another user's status of the same name is not reused
    const e = await post(cast.master, sha, { state: 'running', name: 'ci/other' });
    const f = await post(cast.developer, sha, { state: 'running', name: 'ci/other' });
    expect(f.body.id).not.toBe(e.body.id);
  });

  it('impossible moves are 400 with the state machine text and change nothing', async () => {
    await post(cast.developer, sha, { state: 'pending', name: 'twice' });
    const r = await post(cast.developer, sha, { state: 'pending', name: 'twice' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Cannot transition status via :enqueue from :pending (Reason(s): Status cannot transition via "enqueue")' });
    await post(cast.developer, sha, { state: 'running', name: 'run-twice' });
    const rr = await post(cast.developer, sha, { state: 'running', name: 'run-twice', description: 'changed?' });
    expect(rr.status).toBe(400);
    expect(rr.body.message).toBe('Cannot transition status via :run from :running (Reason(s): Status cannot transition via "run")');
    const list = await s.api('GET', `/projects/${pid}/repository/commits/${sha}/statuses?name=run-twice`, cast.developer);
    expect(list.body[0].description).toBeNull();
  });

  it('validates state, the commit and the ref', async () => {
    const missing = await post(cast.developer, sha, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: '400 (Bad request) "state" not given' });
    const bad = await post(cast.developer, sha, { state: 'created' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'invalid state' });
    const unknown = await post(cast.developer, 'c'.repeat(40), { state: 'success' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Commit Not Found' });
    // a commit no branch contains
    const { project } = await rows(s.ctx, pid, cast.owner.id);
    const repo = projectRepository(s.ctx, project);
    const lonely = await pushFiles(s.ctx, pid, cast.owner.id, { 'l.txt': 'l' }, { branch: 'lonely', from: 'master' });
    await repo.createTag('keep-lonely', lonely);
    await repo.deleteBranch('lonely');
    const noRef = await post(cast.developer, lonely, { state: 'success' });
    expect(noRef.status).toBe(404);
    expect(noRef.body).toEqual({ message: '404 References for commit Not Found' });
    // an explicit ref is taken as given
    const given = await post(cast.developer, lonely, { state: 'success', ref: 'keep-lonely' });
    expect(given.status).toBe(201);
    expect(given.body.ref).toBe('keep-lonely');
  });

  it('a commit only on another branch defaults to that branch; statuses join the push pipeline of (ref, sha)', async () => {
    const r = await post(cast.developer, featureSha, { state: 'success' });
    expect(r.body.ref).toBe('feature');
    const ci = await pushFiles(s.ctx, pid, cast.owner.id, { '.gitlab-ci.yml': 'a:\n  script: x\n' }, { branch: 'withci', from: 'master' });
    const before = (await pipelinesOf(s.ctx, pid)).length;
    const st = await post(cast.developer, ci, { state: 'failed', ref: 'withci', name: 'external' });
    expect(st.status).toBe(201);
    expect((await pipelinesOf(s.ctx, pid)).length).toBe(before);
    const p = (await pipelinesOf(s.ctx, pid)).find((x) => x.sha === ci)!;
    // build a pending + a failed external status: the composite is running (8.13 rule 6)
    expect(p.status).toBe('running');
    expect(await commitStatusOf(s.ctx, pid, ci)).toBe('running');
  });

  it('authorization: developer or higher', async () => {
    expect((await post(null, sha, { state: 'success' })).status).toBe(401);
    expect((await post(cast.nonMember, sha, { state: 'success' })).status).toBe(404);
    for (const u of [cast.guest, cast.reporter]) expect((await post(u, sha, { state: 'success' })).status).toBe(403);
    for (const u of [cast.developer, cast.master, cast.owner, cast.admin]) expect((await post(u, sha, { state: 'success', name: `by-${u.username}` })).status).toBe(201);
    const pub = (await makeProject(s, cast.owner, 'statuses-public', { visibility: 20 })).id;
    const pubSha = await pushFiles(s.ctx, pub, cast.owner.id, { 'a.txt': 'a' });
    expect((await post(cast.nonMember, pubSha, { state: 'success' }, pub)).status).toBe(403);
  });
});

describe('GET /projects/:id/repository/commits/:sha/statuses', () => {
  let gsha: string;
  beforeAll(async () => {
    gsha = await pushFiles(s.ctx, pid, cast.owner.id, { '.gitlab-ci.yml': 'rspec:\n  stage: test\n  script: x\n' }, { branch: 'listing', from: 'master' });
    await post(cast.developer, gsha, { state: 'running', name: 'ext', ref: 'listing' });
    await post(cast.developer, gsha, { state: 'success', name: 'ext', ref: 'listing' });
    await post(cast.developer, gsha, { state: 'failed', name: 'ext', ref: 'listing' });
    await post(cast.developer, gsha, { state: 'pending', name: 'other', ref: 'other-ref' });
  });
  const get = (q: string, u: TestUser = cast.reporter) => s.api('GET', `/projects/${pid}/repository/commits/${gsha}/statuses${q}`, u);

  it('lists the latest status per name and pipeline, builds included', async () => {
    const r = await get('');
    expect(r.status).toBe(200);
    expect(r.headers['x-total']).toBe('3');
    expect(r.body.map((x: { name: string; status: string }) => `${x.name}:${x.status}`)).toEqual(['rspec:pending', 'ext:failed', 'other:pending']);
    expect(Object.keys(r.body[0]).sort()).toEqual(STATUS_KEYS);
    expect(r.body[0]).toMatchObject({ sha: gsha, ref: 'listing', allow_failure: false });
  });

  it('all=true lists older statuses too; ref, ref_name, stage and name filter; pagination', async () => {
    expect((await get('?all=true')).body.length).toBe(4);
    expect((await get('?all=1')).body.length).toBe(4);
    expect((await get('?ref=other-ref')).body.map((x: { name: string }) => x.name)).toEqual(['other']);
    expect((await get('?ref_name=other-ref')).body.map((x: { name: string }) => x.name)).toEqual(['other']);
    expect((await get('?stage=test')).body.map((x: { name: string }) => x.name)).toEqual(['rspec']);
    expect((await get('?stage=external&all=true')).body.length).toBe(3);
    expect((await get('?name=ext&all=true')).body.map((x: { status: string }) => x.status)).toEqual(['success', 'failed']);
    const page = await get('?per_page=1&page=2');
    expect(page.body.length).toBe(1);
    expect(page.headers).toMatchObject({ 'x-total': '3', 'x-total-pages': '3', 'x-page': '2', 'x-next-page': '3', 'x-prev-page': '1' });
    expect(page.headers.link).toContain('rel="next"');
  });

  it('a commit without statuses lists []; an unknown sha is 404 Commit Not Found', async () => {
    const r = await s.api('GET', `/projects/${pid}/repository/commits/${featureSha}/statuses?name=nothing`, cast.reporter);
    expect(r.body).toEqual([]);
    const u = await s.api('GET', `/projects/${pid}/repository/commits/${'d'.repeat(40)}/statuses`, cast.reporter);
    expect(u.status).toBe(404);
    expect(u.body).toEqual({ message: '404 Commit Not Found' });
  });

  it('authorization: read_commit_status', async () => {
    const path = `/projects/${pid}/repository/commits/${gsha}/statuses`;
    expect((await s.api('GET', path, null)).status).toBe(401);
    expect((await s.api('GET', path, cast.nonMember)).status).toBe(404);
    expect((await s.api('GET', path, cast.guest)).status).toBe(403);
    for (const u of [cast.reporter, cast.developer, cast.master, cast.owner, cast.admin]) expect((await s.api('GET', path, u)).status).toBe(200);
    const internal = (await makeProject(s, cast.owner, 'statuses-internal', { visibility: 10, extra: { public_builds: false } })).id;
    const isha = await pushFiles(s.ctx, internal, cast.owner.id, { 'a.txt': 'a' });
    expect((await s.api('GET', `/projects/${internal}/repository/commits/${isha}/statuses`, cast.nonMember)).status).toBe(200);
    expect((await s.api('GET', `/projects/${internal}/repository/commits/${isha}/statuses`, cast.external)).status).toBe(404);
  });
});
