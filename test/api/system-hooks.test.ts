/**
 * System hooks (GitLab 8.13 /hooks): the admin-only routes (list, add, test fire, delete) with every error and the
 * authorization of each caller, and real deliveries, received by a real HTTP receiver through the durable outbox, of
 * every event 8.13 sends: users, keys, projects (create, rename, transfer, destroy), project and group memberships,
 * groups, pushes and tag pushes; each delivery once, with X-Gitlab-Event `System Hook` and the hook's X-Gitlab-Token.
 * On either engine.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { sleep, startReceiver, waitUntil, type HookReceiver, type Received } from '../helpers/hook-receiver.js';
import { generateKeyPair } from '../helpers/ssh-keys.js';
import { startHookDeliveryWorker, type HookDeliveryWorker } from '../../daemon/services/hooks/deliveries.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let recv: HookReceiver;
let worker: HookDeliveryWorker;

beforeAll(async () => {
  s = await startTestServer();
  [alice, bob] = await Promise.all([s.user('alice'), s.user('bob')]);
  recv = await startReceiver();
  worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: 40, maxAttempts: 3, timeoutMs: 3000, log: () => undefined });
});

afterAll(async () => {
  await worker?.stop();
  await recv?.stop();
  await s?.close();
});

afterEach(async () => {
  // hooks of one test do not see the next test's events (their deliveries go with them)
  await s.ctx.data.run('DELETE FROM system_hooks');
});

async function addHook(path: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await s.api('POST', '/hooks', s.root, { url: `${recv.url}${path}`, ...extra });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
}

/** The events received on `path`, by event_name, in arrival order. */
const events = (path: string) => recv.to(path).map((r) => r.json().event_name as string);
/** The one request with this event on `path` (fails when there are none or several). */
function one(path: string, event: string): Received {
  const got = recv.to(path).filter((r) => r.json().event_name === event);
  expect(got.map((r) => r.json().event_name), `${event} on ${path}`).toEqual([event]);
  return got[0]!;
}
/** Wait until `path` has received each of `names` (once or more). */
const received = (path: string, ...names: string[]) => waitUntil(() => names.every((n) => events(path).includes(n)), `${names.join(', ')} on ${path}`);
/** No pending delivery is left (so nothing more can arrive). */
const drained = () => waitUntil(async () => !(await s.ctx.data.get("SELECT id FROM hook_deliveries WHERE status = 'pending' LIMIT 1")), 'the outbox to drain');

describe('routes', () => {
  it('answers anonymous callers 401 and non-admins 403 on every route, and changes nothing', async () => {
    const id = await addHook('/authz');
    for (const [method, path, body] of [
      ['GET', '/hooks', undefined], ['POST', '/hooks', { url: `${recv.url}/x` }], ['GET', `/hooks/${id}`, undefined], ['DELETE', `/hooks/${id}`, undefined],
    ] as const) {
      const anon = await s.api(method, path, null, body);
      expect([method, path, anon.status, anon.body]).toEqual([method, path, 401, { message: '401 Unauthorized' }]);
      const user = await s.api(method, path, alice, body);
      expect([method, path, user.status, user.body]).toEqual([method, path, 403, { message: '403 Forbidden' }]);
    }
    expect((await s.api('GET', '/hooks', s.root)).body.map((h: { id: number }) => h.id)).toEqual([id]);
    await sleep(100);
    expect(recv.to('/authz')).toEqual([]);
  });

  it('adds a hook with 8.13 defaults, never shows the token, lists them oldest first with pagination', async () => {
    const r = await s.api('POST', '/hooks', s.root, { url: `${recv.url}/a`, token: 'sekret' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number), url: `${recv.url}/a`, created_at: expect.any(String), push_events: true, tag_push_events: false, enable_ssl_verification: true,
    });
    expect(JSON.stringify(r.body)).not.toContain('sekret');
    const b = await s.api('POST', '/hooks', s.root, { url: `${recv.url}/b`, push_events: false, tag_push_events: true, enable_ssl_verification: false });
    expect(b.body).toMatchObject({ push_events: false, tag_push_events: true, enable_ssl_verification: false });
    const list = await s.api('GET', '/hooks', s.root);
    expect(list.status).toBe(200);
    expect(list.body.map((h: { url: string }) => h.url)).toEqual([`${recv.url}/a`, `${recv.url}/b`]);
    const page = await s.api('GET', '/hooks?per_page=1&page=2', s.root);
    expect(page.body.map((h: { url: string }) => h.url)).toEqual([`${recv.url}/b`]);
    expect(page.headers['x-total']).toBe('2');
  });

  it('refuses a missing url (400) and one that is not http(s) (422), adding nothing', async () => {
    const missing = await s.api('POST', '/hooks', s.root, { token: 't' });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: '400 (Bad request) "url" not given' });
    const blank = await s.api('POST', '/hooks', s.root, { url: '' });
    expect(blank.status).toBe(400);
    for (const url of ['ftp://example.com/x', 'not a url', 'http://']) {
      const bad = await s.api('POST', '/hooks', s.root, { url });
      expect([url, bad.status, bad.body]).toEqual([url, 422, { message: 'Invalid url given' }]);
    }
    const wrongType = await s.api('POST', '/hooks', s.root, { url: `${recv.url}/x`, push_events: 'maybe' });
    expect(wrongType.status).toBe(400);
    expect((await s.api('GET', '/hooks', s.root)).body).toEqual([]);
  });

  it('GET /hooks/:id test-fires 8.13 sample payload to that hook only, once, with the headers', async () => {
    const id = await addHook('/test', { token: 'tok' });
    await addHook('/other');
    const r = await s.api('GET', `/hooks/${id}`, s.root);
    expect(r.status).toBe(200);
    const sample = { event_name: 'project_create', name: 'Ruby', path: 'ruby', project_id: 1, owner_name: 'Someone', owner_email: 'example@gitlabhq.com' };
    expect(r.body).toEqual(sample);
    await received('/test', 'project_create');
    await drained();
    const req = one('/test', 'project_create');
    expect(req.json()).toEqual(sample);
    expect(req.method).toBe('POST');
    expect(req.headers['x-gitlab-event']).toBe('System Hook');
    expect(req.headers['x-gitlab-token']).toBe('tok');
    expect(req.headers['content-type']).toBe('application/json');
    expect(recv.to('/other')).toEqual([]);
  });

  it('answers 404 for a hook that does not exist (test and delete), ids beyond int4 included', async () => {
    for (const id of [999999, 2147483648, 99999999999999]) {
      const t = await s.api('GET', `/hooks/${id}`, s.root);
      expect([id, t.status, t.body]).toEqual([id, 404, { message: '404 Not found' }]);
      const d = await s.api('DELETE', `/hooks/${id}`, s.root);
      expect([id, d.status, d.body]).toEqual([id, 404, { message: '404 System hook Not Found' }]);
    }
    const word = await s.api('GET', '/hooks/abc', s.root);
    expect([400, 404]).toContain(word.status);
    expect(word.body.message).toBeDefined();
  });

  it('deletes a hook (answering with it), after which it is gone and gets nothing', async () => {
    const id = await addHook('/gone');
    const d = await s.api('DELETE', `/hooks/${id}`, s.root);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ id, url: `${recv.url}/gone` });
    expect((await s.api('GET', '/hooks', s.root)).body).toEqual([]);
    expect((await s.api('DELETE', `/hooks/${id}`, s.root)).status).toBe(404);
    await s.user('after-delete');
    await sleep(150);
    expect(recv.to('/gone')).toEqual([]);
  });
});

describe('events', () => {
  it('user_create and user_destroy (with the key_destroy of her keys)', async () => {
    await addHook('/users', { push_events: false });
    const carol = await s.user('carol', { name: 'Carol C' });
    await received('/users', 'user_create');
    const created = one('/users', 'user_create').json();
    expect(created).toEqual({
      event_name: 'user_create', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/), updated_at: expect.any(String),
      name: 'Carol C', email: 'carol@example.com', user_id: carol.id, username: 'carol',
    });
    expect(one('/users', 'user_create').headers['x-gitlab-event']).toBe('System Hook');
    const key = await s.api('POST', `/users/${carol.id}/keys`, s.root, { title: 'k', key: generateKeyPair('ed25519').publicKey });
    expect(key.status).toBe(201);
    expect((await s.api('DELETE', `/users/${carol.id}`, s.root)).status).toBe(200);
    await received('/users', 'user_destroy');
    await drained();
    // her key went with her: key_destroy before user_destroy
    expect(events('/users')).toEqual(['user_create', 'key_create', 'key_destroy', 'user_destroy']);
    expect(one('/users', 'key_destroy').json()).toMatchObject({ id: key.body.id, username: 'carol' });
    expect(one('/users', 'user_destroy').json()).toMatchObject({ event_name: 'user_destroy', user_id: carol.id, username: 'carol', email: 'carol@example.com' });
  });

  it('key_create and key_destroy for a user key', async () => {
    await addHook('/keys', { push_events: false });
    const pair = generateKeyPair('ed25519');
    const k = await s.api('POST', '/user/keys', alice, { title: 'laptop', key: pair.publicKey });
    expect(k.status).toBe(201);
    await received('/keys', 'key_create');
    expect(one('/keys', 'key_create').json()).toEqual({
      event_name: 'key_create', created_at: expect.any(String), updated_at: expect.any(String), key: pair.publicKey, id: k.body.id, username: 'alice',
    });
    expect((await s.api('DELETE', `/user/keys/${k.body.id}`, alice)).status).toBe(200);
    await received('/keys', 'key_destroy');
    await drained();
    expect(one('/keys', 'key_destroy').json()).toMatchObject({ event_name: 'key_destroy', id: k.body.id, username: 'alice', key: pair.publicKey });
    // a refused key sends nothing
    expect((await s.api('POST', '/user/keys', alice, { title: 'bad', key: 'ssh-rsa nope' })).status).toBe(400);
    await drained();
    expect(events('/keys')).toEqual(['key_create', 'key_destroy']);
  });

  it('project and membership events: create (with the owner), rename, members added and removed, transfer, destroy', async () => {
    await addHook('/projects', { push_events: false });
    const p = await makeProject(s, alice, 'Sys Hooked');
    await received('/projects', 'project_create', 'user_add_to_team');
    expect(events('/projects')).toEqual(['project_create', 'user_add_to_team']);
    expect(one('/projects', 'project_create').json()).toEqual({
      event_name: 'project_create', created_at: expect.any(String), updated_at: expect.any(String),
      name: 'Sys Hooked', path: 'sys-hooked', path_with_namespace: 'alice/sys-hooked', project_id: p.id,
      owner_name: 'alice', owner_email: 'alice@example.com', project_visibility: 'private',
    });
    expect(one('/projects', 'user_add_to_team').json()).toMatchObject({
      event_name: 'user_add_to_team', project_name: 'Sys Hooked', project_path: 'sys-hooked', project_path_with_namespace: 'alice/sys-hooked',
      project_id: p.id, user_username: 'alice', user_name: 'alice', user_email: 'alice@example.com', user_id: alice.id, access_level: 'Master',
      project_visibility: 'private',
    });

    expect((await s.api('PUT', `/projects/${p.id}`, alice, { path: 'renamed' })).status).toBe(200);
    await received('/projects', 'project_rename');
    expect(one('/projects', 'project_rename').json()).toMatchObject({
      event_name: 'project_rename', path: 'renamed', path_with_namespace: 'alice/renamed', old_path_with_namespace: 'alice/sys-hooked', project_id: p.id,
    });
    // a change that is not a rename sends nothing
    expect((await s.api('PUT', `/projects/${p.id}`, alice, { description: 'just words' })).status).toBe(200);

    expect((await s.api('POST', `/projects/${p.id}/members`, alice, { user_id: bob.id, access_level: 30 })).status).toBe(201);
    await received('/projects', 'user_add_to_team');
    await waitUntil(() => events('/projects').filter((e) => e === 'user_add_to_team').length === 2, 'the second user_add_to_team');
    const added = recv.to('/projects').filter((r) => r.json().event_name === 'user_add_to_team')[1]!.json();
    expect(added).toMatchObject({ user_username: 'bob', user_id: bob.id, access_level: 'Developer', project_path_with_namespace: 'alice/renamed' });
    expect((await s.api('DELETE', `/projects/${p.id}/members/${bob.id}`, alice)).status).toBe(200);
    await received('/projects', 'user_remove_from_team');
    expect(one('/projects', 'user_remove_from_team').json()).toMatchObject({ user_username: 'bob', access_level: 'Developer', project_id: p.id });

    const g = await s.api('POST', '/groups', s.root, { name: 'Hook Group', path: 'hook-group' });
    expect(g.status).toBe(201);
    expect((await s.api('POST', `/groups/${g.body.id}/projects/${p.id}`, s.root)).status).toBe(201);
    await received('/projects', 'project_transfer');
    expect(one('/projects', 'project_transfer').json()).toMatchObject({
      event_name: 'project_transfer', path_with_namespace: 'hook-group/renamed', old_path_with_namespace: 'alice/renamed',
      owner_name: 'Hook Group', owner_email: '',
    });

    expect((await s.api('DELETE', `/projects/${p.id}`, s.root)).status).toBe(200);
    await received('/projects', 'project_destroy');
    await drained();
    expect(one('/projects', 'project_destroy').json()).toMatchObject({ event_name: 'project_destroy', project_id: p.id, path_with_namespace: 'hook-group/renamed' });
    // every event once, in the order of the changes
    expect(events('/projects')).toEqual([
      'project_create', 'user_add_to_team', 'project_rename', 'user_add_to_team', 'user_remove_from_team', 'group_create', 'user_add_to_group',
      'project_transfer', 'user_remove_from_team', 'project_destroy',
    ]);
    expect([...recv.countsByKey('/projects').values()].every((n) => n === 1)).toBe(true);
  });

  it('group events: create (with its owner), members added and removed, destroy', async () => {
    await addHook('/groups', { push_events: false, token: 'gt' });
    const g = await s.api('POST', '/groups', alice, { name: 'Team', path: 'team' });
    expect(g.status).toBe(201);
    await received('/groups', 'group_create', 'user_add_to_group');
    expect(one('/groups', 'group_create').json()).toEqual({
      event_name: 'group_create', created_at: expect.any(String), updated_at: expect.any(String), name: 'Team', path: 'team', group_id: g.body.id,
      owner_name: 'alice', owner_email: 'alice@example.com',
    });
    expect(one('/groups', 'group_create').headers['x-gitlab-token']).toBe('gt');
    expect(one('/groups', 'user_add_to_group').json()).toMatchObject({
      event_name: 'user_add_to_group', group_name: 'Team', group_path: 'team', group_id: g.body.id, user_username: 'alice', user_id: alice.id,
      user_email: 'alice@example.com', user_name: 'alice', group_access: 'Owner',
    });
    expect((await s.api('POST', `/groups/${g.body.id}/members`, alice, { user_id: bob.id, access_level: 20 })).status).toBe(201);
    await waitUntil(() => events('/groups').filter((e) => e === 'user_add_to_group').length === 2, 'bob added');
    // a refused add (already a member) sends nothing
    expect((await s.api('POST', `/groups/${g.body.id}/members`, alice, { user_id: bob.id, access_level: 20 })).status).toBe(409);
    expect((await s.api('DELETE', `/groups/${g.body.id}/members/${bob.id}`, alice)).status).toBe(200);
    await received('/groups', 'user_remove_from_group');
    expect(one('/groups', 'user_remove_from_group').json()).toMatchObject({ user_username: 'bob', group_access: 'Reporter', group_id: g.body.id });
    expect((await s.api('DELETE', `/groups/${g.body.id}`, alice)).status).toBe(200);
    await received('/groups', 'group_destroy');
    await drained();
    expect(one('/groups', 'group_destroy').json()).toMatchObject({ event_name: 'group_destroy', group_id: g.body.id, name: 'Team', path: 'team' });
    expect(events('/groups')).toEqual([
      'group_create', 'user_add_to_group', 'user_add_to_group', 'user_remove_from_group', 'user_remove_from_group', 'group_destroy',
    ]);
  });

  it('pushes go to hooks with push_events and tag pushes to hooks with tag_push_events, without commits', async () => {
    const p = await makeProject(s, alice, 'Pushed');
    await addHook('/push');
    await addHook('/tags', { push_events: false, tag_push_events: true });
    await addHook('/none', { push_events: false });
    const f = await s.api('POST', `/projects/${p.id}/repository/files`, alice, {
      file_path: 'README.md', branch_name: 'master', content: 'hello\n', commit_message: 'First',
    });
    expect(f.status, f.text).toBe(201);
    await received('/push', 'push');
    const push = one('/push', 'push').json();
    expect(push).toMatchObject({
      object_kind: 'push', event_name: 'push', ref: 'refs/heads/master', user_username: 'alice', project_id: p.id, commits: [], total_commits_count: 0,
    });
    expect(one('/push', 'push').headers['x-gitlab-event']).toBe('System Hook');
    const t = await s.api('POST', `/projects/${p.id}/repository/tags`, alice, { tag_name: 'v1', ref: 'master', message: 'Release' });
    expect(t.status, t.text).toBe(201);
    await received('/tags', 'tag_push');
    await drained();
    expect(one('/tags', 'tag_push').json()).toMatchObject({ object_kind: 'tag_push', ref: 'refs/tags/v1', commits: [], total_commits_count: 0, message: '' });
    expect(events('/push')).toEqual(['push']);
    expect(events('/tags')).toEqual(['tag_push']);
    expect(recv.to('/none')).toEqual([]);
  });
});
