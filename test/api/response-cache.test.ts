/**
 * GET answers kept as bytes until the next write (api/response-cache.ts): a second read is byte-for-byte the first
 * (body and pagination headers), a write of any kind is seen by the next read, and the key keeps callers and hosts apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let pid: number;

beforeAll(async () => {
  s = await startTestServer();
  [alice, bob] = await Promise.all([s.user('rcalice'), s.user('rcbob')]);
  for (const name of ['rc-one', 'rc-two', 'rc-three']) {
    const r = await s.api('POST', '/projects', alice, { name, visibility_level: 20 });
    pid = r.body.id;
  }
});
afterAll(async () => s?.close());

const get = (url: string, token: string, host = 'gantry.test') => s.app.inject({ method: 'GET', url: `/api/v3${url}`, headers: { 'private-token': token, host } });
const pageHeaders = (h: Record<string, unknown>) => ['x-total', 'x-total-pages', 'x-per-page', 'x-page', 'x-next-page', 'x-prev-page', 'link', 'content-type'].map((k) => h[k]);

describe('cached GET answers', () => {
  it('a repeated list read is byte-identical, headers included', async () => {
    const a = await get('/projects?per_page=2', alice.token);
    const b = await get('/projects?per_page=2', alice.token);
    expect(a.statusCode).toBe(200);
    expect(b.body).toBe(a.body);
    expect(pageHeaders(b.headers)).toEqual(pageHeaders(a.headers));
    expect(a.headers['x-total']).toBe('3');
    expect(String(a.headers.link)).toContain('http://gantry.test/api/v3/projects?');
  });

  it('the next read after a write sees it (list and single project)', async () => {
    const before = await get(`/projects/${pid}`, alice.token);
    expect((await s.api('PUT', `/projects/${pid}`, alice, { description: 'changed' })).status).toBe(200);
    const after = await get(`/projects/${pid}`, alice.token);
    expect(JSON.parse(after.body).description).toBe('changed');
    expect(after.body).not.toBe(before.body);
    await s.api('POST', '/projects', alice, { name: 'rc-four' });
    expect((await get('/projects?per_page=2', alice.token)).headers['x-total']).toBe('4');
  });

  it('callers and hosts do not share answers', async () => {
    const own = JSON.parse((await get(`/projects/${pid}`, alice.token)).body);
    const other = JSON.parse((await get(`/projects/${pid}`, bob.token)).body);
    expect(own.runners_token).toEqual(expect.any(String));
    expect(other.runners_token).toBeUndefined();
    expect(other.permissions).toEqual({ project_access: null, group_access: null });
    const elsewhere = await get('/projects?per_page=2', alice.token, 'other.example');
    expect(String(elsewhere.headers.link)).toContain('http://other.example/api/v3/projects?');
  });
});
