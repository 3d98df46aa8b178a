import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectHooksFor } from '../../daemon/services/hooks/project-hooks.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeProject } from '../helpers/fixtures.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let projectId: number;

const HOOK_KEYS = [
  'id', 'url', 'created_at', 'project_id', 'push_events', 'issues_events', 'merge_requests_events', 'tag_push_events', 'note_events',
  'build_events', 'pipeline_events', 'wiki_page_events', 'enable_ssl_verification',
];

beforeAll(async () => {
  s = await startTestServer();
  [alice, bob] = await Promise.all([s.user('alice'), s.user('bob')]);
  projectId = (await makeProject(s, alice, 'hooked', { visibility: 20 })).id;
});
afterAll(async () => { await s.close(); });

describe('project hooks', () => {
  it('POST adds a hook with defaults (push and ssl on) and never shows the token', async () => {
    const r = await s.api('POST', `/projects/${projectId}/hooks`, alice, { url: 'http://example.com/hook', token: 's3cret' });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual([...HOOK_KEYS].sort());
    expect(r.body).toMatchObject({
      url: 'http://example.com/hook', project_id: projectId, push_events: true, issues_events: false, merge_requests_events: false,
      tag_push_events: false, note_events: false, build_events: false, pipeline_events: false, wiki_page_events: false,
      enable_ssl_verification: true,
    });
    expect(r.text).not.toContain('s3cret');
    const row = await s.ctx.data.get<{ token: string }>('SELECT token FROM project_hooks WHERE id = ?', [r.body.id]);
    expect(row?.token).toBe('s3cret');
  });
  it('POST sets every boolean, from JSON or form values', async () => {
    const r = await s.api('POST', `/projects/${projectId}/hooks`, alice,
      'url=https%3A%2F%2Fci.example.org%2Fx&push_events=false&issues_events=true&merge_requests_events=1&tag_push_events=yes&note_events=true' +
      '&build_events=true&pipeline_events=true&wiki_page_events=true&enable_ssl_verification=0',
      { 'content-type': 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      url: 'https://ci.example.org/x', push_events: false, issues_events: true, merge_requests_events: true, tag_push_events: true,
      note_events: true, build_events: true, pipeline_events: true, wiki_page_events: true, enable_ssl_verification: false,
    });
    expect((await projectHooksFor(s.ctx, projectId, 'issues_events')).map((h) => h.id)).toEqual([r.body.id]);
  });
  it('400 without url, 422 for a URL that is not http(s)', async () => {
    expect((await s.api('POST', `/projects/${projectId}/hooks`, alice, {})).body).toEqual({ message: '400 (Bad request) "url" not given' });
    for (const url of ['ftp://example.com', 'not a url', 'javascript:alert(1)', 'http://']) {
      const r = await s.api('POST', `/projects/${projectId}/hooks`, alice, { url });
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ message: 'Invalid url given' });
    }
  });
  it('GET lists (paginated) and shows one; 404 for an unknown hook', async () => {
    const list = await s.api('GET', `/projects/${projectId}/hooks?per_page=1`, alice);
    expect(list.status).toBe(200);
    expect(list.body.length).toBe(1);
    expect(list.headers['x-total']).toBe('2');
    expect(list.headers.link).toContain('rel="next"');
    const one = await s.api('GET', `/projects/${projectId}/hooks/${list.body[0].id}`, alice);
    expect(one.body).toEqual(list.body[0]);
    expect((await s.api('GET', `/projects/${projectId}/hooks/9999`, alice)).status).toBe(404);
  });
  it('PUT edits (url required); DELETE is idempotent', async () => {
    const hook = (await s.api('POST', `/projects/${projectId}/hooks`, alice, { url: 'http://a.example/' })).body;
    const r = await s.api('PUT', `/projects/${projectId}/hooks/${hook.id}`, alice, { url: 'http://b.example/', note_events: true, push_events: false });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: hook.id, url: 'http://b.example/', note_events: true, push_events: false, enable_ssl_verification: true });
    expect((await s.api('PUT', `/projects/${projectId}/hooks/${hook.id}`, alice, { note_events: false })).body).toEqual({ message: '400 (Bad request) "url" not given' });
    expect((await s.api('PUT', `/projects/${projectId}/hooks/${hook.id}`, alice, { url: 'gopher://x' })).status).toBe(422);
    expect((await s.api('PUT', `/projects/${projectId}/hooks/9999`, alice, { url: 'http://c.example/' })).status).toBe(404);
    // ids beyond PostgreSQL's integer columns name no hook: 404 (and an idempotent empty 200 for DELETE), never a 500
    expect((await s.api('GET', `/projects/${projectId}/hooks/99999999999`, alice)).body).toEqual({ message: '404 Not found' });
    expect((await s.api('PUT', `/projects/${projectId}/hooks/99999999999`, alice, { url: 'http://c.example/' })).status).toBe(404);
    expect((await s.api('DELETE', `/projects/${projectId}/hooks/99999999999`, alice)).text).toBe('');
    const del = await s.api('DELETE', `/projects/${projectId}/hooks/${hook.id}`, alice);
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id: hook.id, url: 'http://b.example/' });
    const again = await s.api('DELETE', `/projects/${projectId}/hooks/${hook.id}`, alice);
    expect(again.status).toBe(200);
    expect(again.text).toBe('');
  });
  it('needs master: 403 for developers and non-members of a public project, 404 hidden, 401 anonymous', async () => {
    await addMemberAsync(s.ctx, { type: 'Project', id: projectId }, bob.id, 30);
    for (const [method, path] of [['GET', 'hooks'], ['GET', 'hooks/1'], ['POST', 'hooks'], ['PUT', 'hooks/1'], ['DELETE', 'hooks/1']] as const) {
      const r = await s.api(method, `/projects/${projectId}/${path}`, bob, {});
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ message: '403 Forbidden' });
      expect((await s.api(method, `/projects/${projectId}/${path}`, null)).status).toBe(401);
    }
    await addMemberAsync(s.ctx, { type: 'Project', id: projectId }, bob.id, 40);
    expect((await s.api('GET', `/projects/${projectId}/hooks`, bob)).status).toBe(200);
    const priv = await makeProject(s, alice, 'private-hooks');
    expect((await s.api('GET', `/projects/${priv.id}/hooks`, bob)).body).toEqual({ message: '404 Project Not Found' });
  });
  it("another project's hook is 404 through this project, and is left alone", async () => {
    const other = await makeProject(s, alice, 'other-hooks');
    const hook = (await s.api('POST', `/projects/${other.id}/hooks`, alice, { url: 'http://other.example/' })).body;
    expect((await s.api('GET', `/projects/${projectId}/hooks/${hook.id}`, alice)).status).toBe(404);
    expect((await s.api('PUT', `/projects/${projectId}/hooks/${hook.id}`, alice, { url: 'http://moved.example/' })).status).toBe(404);
    expect((await s.api('DELETE', `/projects/${projectId}/hooks/${hook.id}`, alice)).text).toBe('');
    expect((await s.api('GET', `/projects/${other.id}/hooks/${hook.id}`, alice)).body).toMatchObject({ url: 'http://other.example/' });
  });
  it('concurrent edits and a delete of one hook: each answer is a 200 or a 404, never a 500', async () => {
    const hook = (await s.api('POST', `/projects/${projectId}/hooks`, alice, { url: 'http://race.example/' })).body;
    const answers = await Promise.all([
      s.api('PUT', `/projects/${projectId}/hooks/${hook.id}`, alice, { url: 'http://race.example/1' }),
      s.api('DELETE', `/projects/${projectId}/hooks/${hook.id}`, alice),
      s.api('PUT', `/projects/${projectId}/hooks/${hook.id}`, alice, { url: 'http://race.example/2' }),
    ]);
    for (const a of answers) expect([200, 404]).toContain(a.status);
    expect((await s.api('GET', `/projects/${projectId}/hooks/${hook.id}`, alice)).status).toBe(404);
  });
  it('a hook added while its project is deleted: 201 or 404, never a 500, and no hook left behind', async () => {
    for (let i = 0; i < 3; i++) {
      const p = await makeProject(s, alice, `doomed-${i}`);
      const [added, deleted] = await Promise.all([
        s.api('POST', `/projects/${p.id}/hooks`, alice, { url: 'http://late.example/' }),
        s.api('DELETE', `/projects/${p.id}`, alice),
      ]);
      expect([201, 404]).toContain(added.status);
      expect(deleted.status).toBe(200);
      expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM project_hooks WHERE project_id = ?', [p.id])).toEqual({ n: 0 });
    }
  });
  it('hooks go away with their project', async () => {
    const p = await makeProject(s, alice, 'short-lived');
    await s.api('POST', `/projects/${p.id}/hooks`, alice, { url: 'http://x.example/' });
    await s.api('DELETE', `/projects/${p.id}`, alice);
    expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM project_hooks WHERE project_id = ?', [p.id])).toEqual({ n: 0 });
  });
});
