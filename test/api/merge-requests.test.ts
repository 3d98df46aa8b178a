/**
 * Merge requests API on real git repositories: create (with labels, milestone, assignee), get, list filters and
 * pagination, commits, changes, update and close/reopen with notes/events/todos/hooks, delete, subscription, todo,
 * closes_issues, notes and award emoji, the older comments API and the deprecated singular routes, and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeProject } from '../helpers/fixtures.js';
import { insertIssue, insertMilestone, sqlRows } from '../helpers/collaboration.js';
import { commitTo } from '../helpers/repository.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let alice: TestUser; // owner
let bob: TestUser; // developer
let carol: TestUser; // reporter
let project: { id: number; path_with_namespace: string };
let featureSha: string;

const rows = (sql: string, ...args: unknown[]) => sqlRows(s.ctx, sql, args);
const count = async (sql: string, ...args: unknown[]) => Number((await sqlRows(s.ctx, sql, args))[0]!.n);
/** A statement through the data layer (either engine). */
const exec = (sql: string, ...args: unknown[]) => s.ctx.data.run(sql, args);
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { projects_limit: 100 });
  bob = await s.user('bob');
  carol = await s.user('carol');
  project = await makeProject(s, alice, 'shop');
  await addMemberAsync(s.ctx, { type: 'Project', id: project.id }, bob.id, 30);
  await addMemberAsync(s.ctx, { type: 'Project', id: project.id }, carol.id, 20);
  await commitTo(s.ctx, project.id, 'master', { 'README.md': 'hello\n' }, { message: 'Initial' });
  await commitTo(s.ctx, project.id, 'feature', { 'a.txt': 'a\n' }, { from: 'master', message: 'Add a' });
  featureSha = await commitTo(s.ctx, project.id, 'feature', { 'README.md': 'hello\nworld\n' }, { message: 'Extend readme\n\nCloses #1' });
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

/** Check the v3 MergeRequest shape and types. */
function expectShape(m: Record<string, unknown>): void {
  expect(Object.keys(m).sort()).toEqual([
    'assignee', 'author', 'created_at', 'description', 'downvotes', 'force_remove_source_branch', 'id', 'iid', 'labels', 'merge_commit_sha',
    'merge_status', 'merge_when_build_succeeds', 'milestone', 'project_id', 'sha', 'should_remove_source_branch', 'source_branch', 'source_project_id',
    'state', 'subscribed', 'target_branch', 'target_project_id', 'title', 'updated_at', 'upvotes', 'user_notes_count', 'web_url', 'work_in_progress',
  ]);
  expect(m).toMatchObject({
    id: expect.any(Number), iid: expect.any(Number), project_id: expect.any(Number), title: expect.any(String),
    state: expect.stringMatching(/^(opened|reopened|closed|merged)$/), created_at: expect.stringMatching(TIME), updated_at: expect.stringMatching(TIME),
    target_branch: expect.any(String), source_branch: expect.any(String), upvotes: expect.any(Number), downvotes: expect.any(Number),
    source_project_id: expect.any(Number), target_project_id: expect.any(Number), labels: expect.any(Array), work_in_progress: expect.any(Boolean),
    merge_when_build_succeeds: false, merge_status: expect.stringMatching(/^(unchecked|can_be_merged|cannot_be_merged)$/),
    subscribed: expect.any(Boolean), user_notes_count: expect.any(Number), should_remove_source_branch: expect.any(Boolean),
    force_remove_source_branch: expect.any(Boolean), web_url: expect.stringContaining('/merge_requests/'),
  });
  expect(m.author).toMatchObject({ id: expect.any(Number), username: expect.any(String), name: expect.any(String), state: 'active' });
}

let mrId: number;

describe('POST /projects/:id/merge_requests', () => {
  it('creates a merge request with labels on the fly, a milestone, an assignee (201), its diff, event, todos and hook', async () => {
    const hook = await s.api('POST', `/projects/${project.id}/hooks`, alice, { url: 'http://127.0.0.1:9/hook', merge_requests_events: true, push_events: false });
    const m = await insertMilestone(s.ctx, project.id, { title: 'v1' });
    const r = await s.api('POST', `/projects/${project.id}/merge_requests`, alice, {
      source_branch: 'feature', target_branch: 'master', title: 'Add a', description: 'Please review @carol', labels: 'feature, ui',
      milestone_id: m.id, assignee_id: bob.id,
    });
    expect(r.status).toBe(201);
    expectShape(r.body);
    mrId = r.body.id;
    expect(r.body).toMatchObject({
      iid: 1, project_id: project.id, source_project_id: project.id, target_project_id: project.id, state: 'opened', title: 'Add a',
      source_branch: 'feature', target_branch: 'master', labels: ['feature', 'ui'], assignee: { id: bob.id }, author: { id: alice.id },
      milestone: { id: m.id, title: 'v1' }, merge_status: 'can_be_merged', sha: featureSha, merge_commit_sha: null, work_in_progress: false,
      subscribed: true, web_url: `http://gantry.test/${project.path_with_namespace}/merge_requests/1`,
    });
    const diffs = await rows(`SELECT * FROM merge_request_diffs WHERE merge_request_id = ?`, mrId);
    expect(diffs).toHaveLength(1);
    expect(diffs[0]).toMatchObject({ state: 'collected', head_commit_sha: featureSha, commits_count: 2, real_size: '2' });
    expect(await rows(`SELECT user_id, action FROM todos WHERE target_type = 'MergeRequest' AND target_id = ? ORDER BY user_id`, mrId))
      .toEqual([{ user_id: bob.id, action: 'assigned' }, { user_id: carol.id, action: 'mentioned' }]);
    const events = await s.api('GET', `/projects/${project.id}/events`, alice);
    expect(events.body[0]).toMatchObject({ action_name: 'opened', target_type: 'MergeRequest', target_id: mrId, target_title: 'Add a' });
    const payload = JSON.parse((await rows(`SELECT payload FROM hook_deliveries WHERE hook_id = ?`, hook.body.id))[0]!.payload);
    expect(payload).toMatchObject({
      object_kind: 'merge_request', user: { username: 'alice' }, project: { path_with_namespace: project.path_with_namespace },
      repository: { name: 'shop' }, assignee: { username: 'bob' }, labels: [{ title: 'feature' }, { title: 'ui' }],
      object_attributes: {
        id: mrId, iid: 1, action: 'open', state: 'opened', source_branch: 'feature', target_branch: 'master', work_in_progress: false,
        url: `http://gantry.test/${project.path_with_namespace}/merge_requests/1`, source: { path_with_namespace: project.path_with_namespace },
        target: { path_with_namespace: project.path_with_namespace }, last_commit: { id: featureSha, message: 'Extend readme\n\nCloses #1\n' },
      },
    });
    expect(payload.object_attributes.last_commit.url).toContain(`/commit/${featureSha}`);
    expect(await count(`SELECT COUNT(*) AS n FROM labels WHERE project_id = ? AND title IN ('feature', 'ui')`, project.id)).toBe(2);
  });

  it('refuses missing params (400), missing branches (400), the same branch (422) and a duplicate (409), writing nothing', async () => {
    const before = await count(`SELECT COUNT(*) AS n FROM merge_requests`);
    const labels = await count(`SELECT COUNT(*) AS n FROM labels`);
    const post = (body: Record<string, unknown>) => s.api('POST', `/projects/${project.id}/merge_requests`, bob, body);
    expect(await post({ target_branch: 'master', title: 'x' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "source_branch" not given' } });
    expect(await post({ source_branch: 'feature', title: 'x' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "target_branch" not given' } });
    expect(await post({ source_branch: 'feature', target_branch: 'master' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "title" not given' } });
    expect(await post({ source_branch: 'nope', target_branch: 'master', title: 'x', labels: 'new-label' }))
      .toMatchObject({ status: 400, body: { message: { source_branch: ['does not exist'] } } });
    expect(await post({ source_branch: 'feature', target_branch: 'gone', title: 'x' })).toMatchObject({ status: 400, body: { message: { target_branch: ['does not exist'] } } });
    expect(await post({ source_branch: 'master', target_branch: 'master', title: 'x' }))
      .toMatchObject({ status: 422, body: { error: ['You can not use same project/branch for source and target'] } });
    expect(await post({ source_branch: 'feature', target_branch: 'master', title: 'again', labels: 'dup-label' }))
      .toMatchObject({ status: 409, body: { message: ['Cannot Create: This merge request already exists: ["Add a"]'] } });
    expect((await post({ source_branch: 'feature', target_branch: 'master', title: 'x'.repeat(256) })).status).toBe(400);
    const big = await post({ source_branch: 'feature', target_branch: 'master', title: 'Big', description: 'a'.repeat(1024 * 1024) });
    expect(big.status).toBe(400);
    expect(big.body.message.description[0]).toMatch(/too long/);
    expect(await post({ source_branch: 'feature', target_branch: 'master', title: 'x', target_project_id: 999999 }))
      .toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    const other = await makeProject(s, alice, 'not-upstream');
    expect(await s.api('POST', `/projects/${project.id}/merge_requests`, alice, { source_branch: 'feature', target_branch: 'master', title: 'x', target_project_id: other.id }))
      .toMatchObject({ status: 422, body: { error: ['Source project is not a fork of the target project'] } });
    expect(await count(`SELECT COUNT(*) AS n FROM merge_requests`)).toBe(before);
    expect(await count(`SELECT COUNT(*) AS n FROM labels`)).toBe(labels);
  });

  it('drops labels, milestone and assignee for callers without admin_merge_request; iid counts per project', async () => {
    await commitTo(s.ctx, project.id, 'second', { 'b.txt': 'b\n' }, { from: 'master' });
    const r = await s.api('POST', `/projects/${project.id}/merge_requests`, bob, { source_branch: 'second', target_branch: 'master', title: 'WIP: second' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ iid: 2, work_in_progress: true, author: { id: bob.id } });
    // a reporter may not create (403)
    expect((await s.api('POST', `/projects/${project.id}/merge_requests`, carol, { source_branch: 'second', target_branch: 'master', title: 'x' })).status).toBe(403);
  });
});

describe('GET /projects/:id/merge_requests/:merge_request_id', () => {
  it('answers the merge request; 404 `Not found` for unknown, foreign or odd ids; 401 anonymous', async () => {
    const r = await s.api('GET', `/projects/${project.id}/merge_requests/${mrId}`, carol);
    expect(r.status).toBe(200);
    expectShape(r.body);
    expect(r.body.subscribed).toBe(false);
    expect(await s.api('GET', `/projects/${project.id}/merge_requests/999999`, carol)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect((await s.api('GET', `/projects/${project.id}/merge_requests/abc`, carol)).status).toBe(404);
    const other = await makeProject(s, alice, 'foreign');
    expect((await s.api('GET', `/projects/${other.id}/merge_requests/${mrId}`, alice)).status).toBe(404);
    expect((await s.api('GET', `/projects/${project.id}/merge_requests/${mrId}`, null)).status).toBe(401);
  });

  it('serves the deprecated singular route as an alias', async () => {
    const r = await s.api('GET', `/projects/${project.id}/merge_request/${mrId}`, carol);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(mrId);
    const c = await s.api('GET', `/projects/${project.id}/merge_request/${mrId}/commits`, carol);
    expect(c.body).toHaveLength(2);
  });
});

describe('GET /projects/:id/merge_requests', () => {
  let p: { id: number };
  const ids: number[] = [];
  beforeAll(async () => {
    p = await makeProject(s, alice, 'listing');
    await addMemberAsync(s.ctx, { type: 'Project', id: p.id }, bob.id, 30);
    await commitTo(s.ctx, p.id, 'master', { 'r': '1' });
    for (let n = 1; n <= 5; n++) {
      await commitTo(s.ctx, p.id, `b${n}`, { [`f${n}`]: `${n}` }, { from: 'master' });
      const r = await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: `b${n}`, target_branch: 'master', title: `L${n}` });
      ids.push(r.body.id);
    }
    await s.api('PUT', `/projects/${p.id}/merge_requests/${ids[1]}`, alice, { state_event: 'close' });
    await s.api('PUT', `/projects/${p.id}/merge_requests/${ids[2]}`, alice, { state_event: 'close' });
    await s.api('PUT', `/projects/${p.id}/merge_requests/${ids[2]}`, alice, { state_event: 'reopen' });
    await exec(`UPDATE merge_requests SET state = 'merged' WHERE id = ?`, ids[3]);
    await exec(`UPDATE merge_requests SET updated_at = '2000-01-01T00:00:00.000Z' WHERE id = ?`, ids[4]);
  });

  it('lists newest first with pagination headers', async () => {
    const r = await s.api('GET', `/projects/${p.id}/merge_requests?per_page=2&page=2`, bob);
    expect(r.status).toBe(200);
    expect(r.body.map((m: { title: string }) => m.title)).toEqual(['L3', 'L2']);
    expect(r.headers).toMatchObject({ 'x-total': '5', 'x-total-pages': '3', 'x-per-page': '2', 'x-page': '2', 'x-next-page': '3', 'x-prev-page': '1' });
    expect(String(r.headers.link)).toContain('rel="next"');
    r.body.forEach(expectShape);
  });

  it('filters by state (opened includes reopened), iid, and orders by updated_at/asc', async () => {
    const titles = async (q: string) => (await s.api('GET', `/projects/${p.id}/merge_requests?${q}`, bob)).body.map((m: { title: string }) => m.title);
    expect(await titles('state=opened')).toEqual(['L5', 'L3', 'L1']);
    expect(await titles('state=closed')).toEqual(['L2']);
    expect(await titles('state=merged')).toEqual(['L4']);
    expect(await titles('state=all')).toHaveLength(5);
    expect(await titles('state=bogus')).toHaveLength(5);
    expect(await titles('iid[]=1&iid[]=3')).toEqual(['L3', 'L1']);
    expect(await titles('iid=2')).toEqual(['L2']);
    expect(await titles('sort=asc')).toEqual(['L1', 'L2', 'L3', 'L4', 'L5']);
    expect((await titles('order_by=updated_at&sort=asc'))[0]).toBe('L5');
    expect(await titles('order_by=nonsense&sort=nonsense')).toEqual(['L5', 'L4', 'L3', 'L2', 'L1']);
    const reopened = (await s.api('GET', `/projects/${p.id}/merge_requests?iid=3`, bob)).body[0];
    expect(reopened.state).toBe('reopened');
  });

  it('answers an empty page with headers', async () => {
    const r = await s.api('GET', `/projects/${p.id}/merge_requests?iid=99`, bob);
    expect(r.body).toEqual([]);
    expect(r.headers).toMatchObject({ 'x-total': '0', 'x-total-pages': '0', 'x-page': '1' });
  });
});

describe('commits and changes', () => {
  it('lists the commits of the source not in the target, newest first (paginated)', async () => {
    const r = await s.api('GET', `/projects/${project.id}/merge_requests/${mrId}/commits`, carol);
    expect(r.status).toBe(200);
    expect(r.body.map((c: { title: string }) => c.title)).toEqual(['Extend readme', 'Add a']);
    expect(r.body[0]).toEqual({
      id: featureSha, short_id: featureSha.slice(0, 8), title: 'Extend readme', author_name: 'Fixture Author', author_email: 'fixture@example.com',
      created_at: expect.any(String), message: 'Extend readme\n\nCloses #1\n',
    });
    expect(r.headers['x-total']).toBe('2');
  });

  it('answers the merge request with its changes', async () => {
    const r = await s.api('GET', `/projects/${project.id}/merge_requests/${mrId}/changes`, carol);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(mrId);
    expect(r.body.overflow).toBe(false);
    const byPath = Object.fromEntries(r.body.changes.map((c: { new_path: string }) => [c.new_path, c]));
    expect(byPath['a.txt']).toEqual({
      old_path: 'a.txt', new_path: 'a.txt', a_mode: '0', b_mode: '100644', new_file: true, renamed_file: false, deleted_file: false, too_large: false,
      diff: expect.stringContaining('+a'),
    });
    expect(byPath['README.md']).toMatchObject({ new_file: false, a_mode: '100644', b_mode: '100644', diff: expect.stringMatching(/^--- a\/README.md\n\+\+\+ b\/README.md\n@@/) });
  });

  it('cuts a huge file with too_large (and an empty diff), renames and deletions flagged', async () => {
    const p = await makeProject(s, alice, 'huge');
    await commitTo(s.ctx, p.id, 'master', { 'old.txt': 'same content here\n'.repeat(20), 'gone.txt': 'x\n' });
    await commitTo(s.ctx, p.id, 'big', { 'big.txt': 'line of text\n'.repeat(20000), 'gone.txt': null, 'old.txt': null, 'new.txt': 'same content here\n'.repeat(20) }, { from: 'master' });
    const mr = await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: 'big', target_branch: 'master', title: 'Big' });
    const r = await s.api('GET', `/projects/${p.id}/merge_requests/${mr.body.id}/changes`, alice);
    const byPath = Object.fromEntries(r.body.changes.map((c: { new_path: string }) => [c.new_path, c]));
    expect(byPath['big.txt']).toMatchObject({ too_large: true, diff: '', new_file: true });
    expect(byPath['gone.txt']).toMatchObject({ deleted_file: true, b_mode: '0', too_large: false });
    expect(byPath['new.txt']).toMatchObject({ renamed_file: true, old_path: 'old.txt', too_large: false });
  });
});

describe('merge status', () => {
  it('is cannot_be_merged for conflicts and unrelated histories (never a 500), can_be_merged again after a fixing push', async () => {
    const p = await makeProject(s, alice, 'conflicts');
    await commitTo(s.ctx, p.id, 'master', { 'f.txt': 'base\n' });
    await commitTo(s.ctx, p.id, 'topic', { 'f.txt': 'topic\n' }, { from: 'master' });
    await commitTo(s.ctx, p.id, 'master', { 'f.txt': 'master\n' });
    await commitTo(s.ctx, p.id, 'orphan', { 'other.txt': 'unrelated\n' });
    const c = await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: 'topic', target_branch: 'master', title: 'Conflicting' });
    expect(c).toMatchObject({ status: 201, body: { merge_status: 'cannot_be_merged' } });
    const u = await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: 'orphan', target_branch: 'master', title: 'Unrelated' });
    expect(u).toMatchObject({ status: 201, body: { merge_status: 'cannot_be_merged' } });
    expect(await rows(`SELECT state FROM merge_request_diffs WHERE merge_request_id = ?`, u.body.id)).toEqual([{ state: 'unrelated' }]);
    expect((await s.api('GET', `/projects/${p.id}/merge_requests/${u.body.id}/changes`, alice)).status).toBe(200);
    expect((await s.api('GET', `/projects/${p.id}/merge_requests/${u.body.id}/commits`, alice)).body).toHaveLength(1);
    // set back to unchecked: GET rechecks lazily
    await exec(`UPDATE merge_requests SET merge_status = 'unchecked' WHERE id = ?`, c.body.id);
    expect((await s.api('GET', `/projects/${p.id}/merge_requests/${c.body.id}`, alice)).body.merge_status).toBe('cannot_be_merged');
    // the list does not run git: it answers the stored status
    await exec(`UPDATE merge_requests SET merge_status = 'unchecked' WHERE id = ?`, c.body.id);
    expect((await s.api('GET', `/projects/${p.id}/merge_requests?iid=1`, alice)).body[0].merge_status).toBe('unchecked');
  });
});

describe('refresh after a push', () => {
  it('writes a new diff version on a push to the source, with a note, the update hook (oldrev) and a new merge status', async () => {
    const { pushFiles } = await import('../helpers/ci.js');
    const p = await makeProject(s, alice, 'refresh');
    await commitTo(s.ctx, p.id, 'master', { 'f.txt': 'base\n' });
    const first = await commitTo(s.ctx, p.id, 'topic', { 'g.txt': 'g\n' }, { from: 'master' });
    const hook = await s.api('POST', `/projects/${p.id}/hooks`, alice, { url: 'http://127.0.0.1:9/hook', merge_requests_events: true, push_events: false });
    const mr = (await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: 'topic', target_branch: 'master', title: 'T' })).body;
    expect(mr.merge_status).toBe('can_be_merged');
    const second = await pushFiles(s.ctx, p.id, bob.id, { 'h.txt': 'h\n' }, { branch: 'topic', message: 'Add h' });
    let r = await s.api('GET', `/projects/${p.id}/merge_requests/${mr.id}`, alice);
    expect(r.body).toMatchObject({ sha: second, merge_status: 'can_be_merged' });
    expect(await rows(`SELECT head_commit_sha, commits_count FROM merge_request_diffs WHERE merge_request_id = ? ORDER BY id`, mr.id))
      .toEqual([{ head_commit_sha: first, commits_count: 1 }, { head_commit_sha: second, commits_count: 2 }]);
    expect(await rows(`SELECT note FROM notes WHERE noteable_type = 'MergeRequest' AND noteable_id = ? AND system = TRUE`, mr.id))
      .toEqual([{ note: `Added 1 commit:\n\n* ${second.slice(0, 8)} - Add h` }]);
    const payloads = (await rows(`SELECT payload FROM hook_deliveries WHERE hook_id = ? ORDER BY id`, hook.body.id)).map((d) => JSON.parse(d.payload));
    expect(payloads.map((x) => x.object_attributes.action)).toEqual(['open', 'update']);
    expect(payloads[1].object_attributes).toMatchObject({ oldrev: first, last_commit: { id: second } });
    expect(payloads[1].user.username).toBe('bob');
    // a conflicting push to the target: unchecked, then cannot_be_merged when read; no commits note and (8.x
    // reload_merge_requests) no new diff version, since the push brought none of the merge request's commits
    await pushFiles(s.ctx, p.id, alice.id, { 'h.txt': 'other\n' }, { branch: 'master' });
    expect(await rows(`SELECT merge_status FROM merge_requests WHERE id = ?`, mr.id)).toEqual([{ merge_status: 'unchecked' }]);
    r = await s.api('GET', `/projects/${p.id}/merge_requests/${mr.id}`, alice);
    expect(r.body.merge_status).toBe('cannot_be_merged');
    expect(await count(`SELECT COUNT(*) AS n FROM merge_request_diffs WHERE merge_request_id = ?`, mr.id)).toBe(2);
    expect(await count(`SELECT COUNT(*) AS n FROM notes WHERE noteable_type = 'MergeRequest' AND noteable_id = ?`, mr.id)).toBe(1);
    // the source head ref 8.x kept in the target repository
    const { repositoryOf } = await import('../helpers/repository.js');
    expect(await (await repositoryOf(s.ctx, p.id)).resolveRef('refs/merge-requests/1/head')).toBe(second);
  });
});

describe('refresh after a push to the target branch', () => {
  it('reloads only the merge requests whose source head the push brought (merged by hand); the others stay unchecked', async () => {
    const { processPush } = await import('../../daemon/services/repository/push.js');
    const { repositoryOf } = await import('../helpers/repository.js');
    const { lookupProjectAsync } = await import('../../daemon/services/projects/projects.js');
    const p = await makeProject(s, alice, 'by-hand');
    const base = await commitTo(s.ctx, p.id, 'master', { 'f.txt': 'base\n' });
    const topicHead = await commitTo(s.ctx, p.id, 'topic', { 't.txt': 't\n' }, { from: 'master' });
    await commitTo(s.ctx, p.id, 'other', { 'o.txt': 'o\n' }, { from: 'master' });
    const merged = (await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: 'topic', target_branch: 'master', title: 'T' })).body;
    const untouched = (await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: 'other', target_branch: 'master', title: 'O' })).body;
    const versions = (id: number) => count(`SELECT COUNT(*) AS n FROM merge_request_diffs WHERE merge_request_id = ?`, id);
    expect([await versions(merged.id), await versions(untouched.id)]).toEqual([1, 1]);
    // master fast-forwarded to topic by a push (the merge request merged by hand)
    const repo = await repositoryOf(s.ctx, p.id);
    await repo.updateRef('refs/heads/master', topicHead, base);
    const { toUser } = await import('../../daemon/db/rows.js');
    const user = toUser((await s.ctx.data.get<Record<string, unknown>>('SELECT * FROM users WHERE id = ?', [alice.id]))!);
    await processPush(s.ctx, (await lookupProjectAsync(s.ctx, p.id))!, user, [{ ref: 'refs/heads/master', before: base, after: topicHead }]);
    expect(await versions(merged.id)).toBe(2);
    expect(await rows(`SELECT commits_count FROM merge_request_diffs WHERE merge_request_id = ? ORDER BY id DESC LIMIT 1`, merged.id)).toEqual([{ commits_count: 0 }]);
    expect(await versions(untouched.id)).toBe(1);
    expect(await rows(`SELECT merge_status FROM merge_requests WHERE id = ?`, untouched.id)).toEqual([{ merge_status: 'unchecked' }]);
  });
});

describe('PUT /projects/:id/merge_requests/:merge_request_id', () => {
  it('updates fields with system notes, retargets, closes and reopens (state reopened) with events, todos done and hooks', async () => {
    const p = await makeProject(s, alice, 'updates');
    await commitTo(s.ctx, p.id, 'master', { 'f.txt': 'base\n' });
    await commitTo(s.ctx, p.id, 'stable', { 's.txt': 's\n' }, { from: 'master' });
    await commitTo(s.ctx, p.id, 'topic', { 'g.txt': 'g\n' }, { from: 'master' });
    await addMemberAsync(s.ctx, { type: 'Project', id: p.id }, bob.id, 30);
    const hook = await s.api('POST', `/projects/${p.id}/hooks`, alice, { url: 'http://127.0.0.1:9/hook', merge_requests_events: true, push_events: false });
    const mr = (await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: 'topic', target_branch: 'master', title: 'T', assignee_id: bob.id })).body;
    const m = await insertMilestone(s.ctx, p.id, { title: 'M' });
    let r = await s.api('PUT', `/projects/${p.id}/merge_requests/${mr.id}`, alice, {
      title: 'T2', description: 'now', target_branch: 'stable', labels: 'x', milestone_id: m.id, assignee_id: 0,
    });
    expect(r.status).toBe(200);
    expectShape(r.body);
    expect(r.body).toMatchObject({ title: 'T2', description: 'now', target_branch: 'stable', labels: ['x'], milestone: { id: m.id }, assignee: null });
    const notes = (await rows(`SELECT note FROM notes WHERE noteable_type = 'MergeRequest' AND noteable_id = ? ORDER BY id`, mr.id)).map((n) => n.note);
    expect(notes).toEqual(expect.arrayContaining([
      'Changed title: **T** → **T2**', 'Target branch changed from `master` to `stable`', 'Assignee removed', `Milestone changed to %${m.iid}`,
    ]));
    expect((await rows(`SELECT start_commit_sha FROM merge_request_diffs WHERE merge_request_id = ? ORDER BY id DESC LIMIT 1`, mr.id))[0]!.start_commit_sha)
      .toBe(await (await import('../helpers/repository.js')).repositoryOf(s.ctx, p.id).then((repo) => repo.resolveBranch('stable')));
    // bob closes: his todo on it is done, closed event, close hook
    r = await s.api('PUT', `/projects/${p.id}/merge_requests/${mr.id}`, bob, { state_event: 'close' });
    expect(r.body.state).toBe('closed');
    expect(await rows(`SELECT state FROM todos WHERE user_id = ? AND target_id = ? AND target_type = 'MergeRequest'`, bob.id, mr.id)).toEqual([{ state: 'done' }]);
    r = await s.api('PUT', `/projects/${p.id}/merge_requests/${mr.id}`, bob, { state_event: 'reopen' });
    expect(r.body.state).toBe('reopened');
    const events = (await s.api('GET', `/projects/${p.id}/events`, alice)).body.filter((e: { target_type: string }) => e.target_type === 'MergeRequest');
    expect(events.map((e: { action_name: string }) => e.action_name)).toEqual(['opened', 'closed', 'opened']);
    const actions = (await rows(`SELECT payload FROM hook_deliveries WHERE hook_id = ? ORDER BY id`, hook.body.id)).map((d) => JSON.parse(d.payload).object_attributes.action);
    expect(actions).toEqual(['open', 'update', 'close', 'reopen']);
    expect((await rows(`SELECT note FROM notes WHERE noteable_id = ? AND noteable_type = 'MergeRequest' ORDER BY id DESC LIMIT 2`, mr.id)).map((n) => n.note))
      .toEqual(['Status changed to reopened', 'Status changed to closed']);
    // labels alone (no column of the merge request changes): 200, a system note naming the labels by id (8.13's text)
    const before = r.body.updated_at as string;
    r = await s.api('PUT', `/projects/${p.id}/merge_requests/${mr.id}`, alice, { labels: 'x,y' });
    expect(r.status).toBe(200);
    expect(r.body.labels).toEqual(['x', 'y']);
    expect(r.body.updated_at >= before).toBe(true);
    const y = (await rows(`SELECT id FROM labels WHERE project_id = ? AND title = 'y'`, p.id))[0]!.id;
    expect((await rows(`SELECT note FROM notes WHERE noteable_id = ? AND noteable_type = 'MergeRequest' ORDER BY id DESC LIMIT 1`, mr.id))[0]!.note)
      .toBe(`Added ~${y} label`);
  });

  it('answers 400 for source_branch, a bad state_event, a missing target branch; 409 for a duplicate pair; 403 for a reporter', async () => {
    const put = (body: Record<string, unknown>, as = alice) => s.api('PUT', `/projects/${project.id}/merge_requests/${mrId}`, as, body);
    expect(await put({ source_branch: 'other' })).toMatchObject({ status: 400, body: { message: 'Source branch cannot be changed' } });
    expect(await put({ state_event: 'explode' })).toMatchObject({ status: 400, body: { message: { state_event: ['is invalid'] } } });
    expect(await put({ target_branch: 'nowhere' })).toMatchObject({ status: 400, body: { message: { target_branch: ['does not exist'] } } });
    expect(await put({ target_branch: 'feature' })).toMatchObject({ status: 422 });
    expect((await put({ title: 'Hi' }, carol)).status).toBe(403);
    expect((await put({ description: 'x'.repeat(1024 * 1024) })).status).toBe(400);
    // another open MR feature -> second would duplicate `feature -> second`? create one then retarget onto its pair
    const dup = await s.api('POST', `/projects/${project.id}/merge_requests`, alice, { source_branch: 'feature', target_branch: 'second', title: 'Dup' });
    expect(dup.status).toBe(201);
    expect(await put({ target_branch: 'second' })).toMatchObject({ status: 409 });
    expect((await s.api('GET', `/projects/${project.id}/merge_requests/${mrId}`, alice)).body.target_branch).toBe('master');
    // the author may update without developer rights
    await s.api('DELETE', `/projects/${project.id}/merge_requests/${dup.body.id}`, alice);
  });
});

describe('DELETE /projects/:id/merge_requests/:merge_request_id', () => {
  it('soft deletes for owners (raw record), 404 for developers and absent ids', async () => {
    await commitTo(s.ctx, project.id, 'doomed', { 'd.txt': 'd' }, { from: 'master' });
    const mr = (await s.api('POST', `/projects/${project.id}/merge_requests`, bob, { source_branch: 'doomed', target_branch: 'master', title: 'Doomed' })).body;
    expect(await s.api('DELETE', `/projects/${project.id}/merge_requests/${mr.id}`, bob)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    const r = await s.api('DELETE', `/projects/${project.id}/merge_requests/${mr.id}`, alice);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: mr.id, title: 'Doomed', author_id: bob.id, deleted_at: expect.stringMatching(TIME) });
    expect((await s.api('GET', `/projects/${project.id}/merge_requests/${mr.id}`, alice)).status).toBe(404);
    expect((await s.api('DELETE', `/projects/${project.id}/merge_requests/${mr.id}`, alice)).status).toBe(404);
    expect(await count(`SELECT COUNT(*) AS n FROM merge_requests WHERE id = ?`, mr.id)).toBe(1);
  });
});

describe('subscription and todo', () => {
  it('subscribes (201, then 304), unsubscribes (200, then 304); marks a todo (201, then 304) that GET /todos shows', async () => {
    const base = `/projects/${project.id}/merge_requests/${mrId}`;
    let r = await s.api('POST', `${base}/subscription`, carol);
    expect(r.status).toBe(201);
    expect(r.body.subscribed).toBe(true);
    expect((await s.api('POST', `${base}/subscription`, carol)).status).toBe(304);
    r = await s.api('DELETE', `${base}/subscription`, carol);
    expect(r).toMatchObject({ status: 200, body: { subscribed: false } });
    expect((await s.api('DELETE', `${base}/subscription`, carol)).status).toBe(304);
    expect((await s.api('POST', `/projects/${project.id}/merge_requests/999999/subscription`, carol)).status).toBe(404);
    await s.api('DELETE', `/todos`, alice);
    r = await s.api('POST', `${base}/todo`, alice);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ action_name: 'marked', target_type: 'MergeRequest', state: 'pending', body: expect.any(String) });
    expect(r.body.target).toMatchObject({ id: mrId, source_branch: 'feature' });
    expect(r.body.target_url).toBe(`http://gantry.test/${project.path_with_namespace}/merge_requests/1`);
    expect((await s.api('POST', `${base}/todo`, alice)).status).toBe(304);
    const todos = await s.api('GET', `/todos?type=MergeRequest`, alice);
    expect(todos.body.map((t: { target: { id: number } }) => t.target.id)).toContain(mrId);
    expectShape(todos.body[0].target);
  });
});

describe('closes_issues', () => {
  it('lists the issues named in the title, description and commit messages, only readable ones, only into the default branch', async () => {
    const other = await makeProject(s, alice, 'elsewhere', { visibility: 10 });
    const hidden = await makeProject(s, s.root, 'hidden-proj');
    const i1 = await insertIssue(s.ctx, project.id, { title: 'One' });
    const i2 = await insertIssue(s.ctx, project.id, { title: 'Two' });
    await insertIssue(s.ctx, project.id, { title: 'Three' });
    const o1 = await insertIssue(s.ctx, other.id, { title: 'Other' });
    await insertIssue(s.ctx, hidden.id, { title: 'Hidden' });
    await s.api('PUT', `/projects/${project.id}/merge_requests/${mrId}`, alice, {
      title: 'Fixes #2', description: `resolves ${other.path_with_namespace}#1 and ${hidden.path_with_namespace}#1; see #3`,
    });
    const r = await s.api('GET', `/projects/${project.id}/merge_requests/${mrId}/closes_issues`, carol);
    expect(r.status).toBe(200);
    expect(r.body.map((i: { id: number }) => i.id)).toEqual([i2.id, o1.id, i1.id]);
    expect(r.headers['x-total']).toBe('3');
    expect(r.body[0]).toMatchObject({ iid: 2, title: 'Two', confidential: false });
    // into another branch: nothing (8.x)
    const second = (await s.api('GET', `/projects/${project.id}/merge_requests?iid=2`, alice)).body[0];
    await s.api('PUT', `/projects/${project.id}/merge_requests/${second.id}`, alice, { description: 'Closes #1' });
    await s.api('PUT', `/projects/${project.id}/merge_requests/${second.id}`, alice, { target_branch: 'feature' });
    expect((await s.api('GET', `/projects/${project.id}/merge_requests/${second.id}/closes_issues`, alice)).body).toEqual([]);
  });
});

describe('notes, award emoji and the older comments API', () => {
  it('comments through notes with the note hook, awards emoji, and serves /comments (plural and singular)', async () => {
    const hook = await s.api('POST', `/projects/${project.id}/hooks`, alice, { url: 'http://127.0.0.1:9/n', note_events: true, push_events: false });
    const base = `/projects/${project.id}/merge_requests/${mrId}`;
    const dave = await s.user('dave');
    await addMemberAsync(s.ctx, { type: 'Project', id: project.id }, dave.id, 10);
    const n = await s.api('POST', `${base}/notes`, carol, { body: 'Looks good @dave' });
    expect(n.status).toBe(201);
    expect(n.body).toMatchObject({ body: 'Looks good @dave', noteable_type: 'MergeRequest', noteable_id: mrId, author: { id: carol.id } });
    const payload = JSON.parse((await rows(`SELECT payload FROM hook_deliveries WHERE hook_id = ?`, hook.body.id))[0]!.payload);
    expect(payload).toMatchObject({ object_kind: 'note', merge_request: { id: mrId, iid: 1, source_branch: 'feature' }, object_attributes: { noteable_type: 'MergeRequest' } });
    expect(payload.object_attributes.url).toContain('/merge_requests/1#note_');
    expect(await rows(`SELECT action FROM todos WHERE user_id = ? AND note_id = ?`, dave.id, n.body.id)).toEqual([{ action: 'mentioned' }]);
    const list = await s.api('GET', `${base}/notes`, carol);
    expect(list.body.some((x: { id: number }) => x.id === n.body.id)).toBe(true);
    const a = await s.api('POST', `${base}/award_emoji`, carol, { name: 'thumbsup' });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ name: 'thumbsup', awardable_type: 'MergeRequest', awardable_id: mrId });
    expect((await s.api('GET', base, carol)).body).toMatchObject({ upvotes: 1, user_notes_count: expect.any(Number) });
    const c = await s.api('POST', `/projects/${project.id}/merge_request/${mrId}/comments`, bob, { note: 'Older API' });
    expect(c).toMatchObject({ status: 201, body: { note: 'Older API', author: { id: bob.id, username: 'bob' } } });
    expect(await s.api('POST', `${base}/comments`, bob, {})).toMatchObject({ status: 400, body: { message: '400 (Bad request) "note" not given' } });
    const comments = await s.api('GET', `${base}/comments`, carol);
    expect(comments.status).toBe(200);
    expect(comments.body.map((x: { note: string }) => x.note)).toContain('Older API');
    expect(comments.headers['x-total']).toBeDefined();
    const events = (await s.api('GET', `/projects/${project.id}/events`, alice)).body;
    const commented = events.find((e: { action_name: string }) => e.action_name === 'commented on');
    expect(commented).toMatchObject({ target_type: 'Note', target_title: 'Fixes #2' });
    // the `note` of a comment event on a merge request, on either engine (the kind's loadManyAsync)
    expect(commented).toMatchObject({ note: { body: 'Older API', noteable_type: 'MergeRequest', noteable_id: mrId, author: { username: 'bob' } } });
  });
});

describe('merge request hooks delivered', () => {
  it('posts the 8.x payload with the Merge Request Hook header to a real receiver', async () => {
    const { startReceiver, waitUntil } = await import('../helpers/hook-receiver.js');
    const { startHookDeliveryWorker } = await import('../../daemon/services/hooks/deliveries.js');
    const recv = await startReceiver();
    const worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: 40, maxAttempts: 3, concurrency: 1, pollMs: 100, log: () => undefined });
    try {
      const p = await makeProject(s, alice, 'hooked');
      await commitTo(s.ctx, p.id, 'master', { a: 'a' });
      const head = await commitTo(s.ctx, p.id, 'topic', { b: 'b' }, { from: 'master', message: 'Topic' });
      await s.api('POST', `/projects/${p.id}/hooks`, alice, { url: `${recv.url}/mr`, merge_requests_events: true, push_events: false });
      const mr = (await s.api('POST', `/projects/${p.id}/merge_requests`, alice, { source_branch: 'topic', target_branch: 'master', title: 'Hooked' })).body;
      await s.api('PUT', `/projects/${p.id}/merge_requests/${mr.id}`, alice, { state_event: 'close' });
      await waitUntil(() => recv.to(`/mr`).length >= 2, 'two merge request hooks');
      const got = recv.to('/mr');
      expect(got.map((r) => r.headers['x-gitlab-event'])).toEqual(['Merge Request Hook', 'Merge Request Hook']);
      const [open, close] = got.map((r) => r.json());
      expect(open).toMatchObject({
        object_kind: 'merge_request', user: { name: 'alice', username: 'alice' },
        object_attributes: { iid: 1, action: 'open', state: 'opened', last_commit: { id: head, author: { name: 'Fixture Author' } }, work_in_progress: false },
      });
      expect(Object.keys(open.object_attributes)).toEqual(expect.arrayContaining([
        'id', 'target_branch', 'source_branch', 'source_project_id', 'author_id', 'assignee_id', 'title', 'created_at', 'updated_at', 'milestone_id',
        'state', 'merge_status', 'target_project_id', 'iid', 'description', 'source', 'target', 'last_commit', 'work_in_progress', 'url', 'action',
      ]));
      expect(close.object_attributes).toMatchObject({ action: 'close', state: 'closed' });
    } finally {
      await worker.stop();
      await recv.stop();
    }
  });
});
