/**
 * GET answers kept as bytes until the next write (api/response-cache.ts): a second read is byte-for-byte the first
 * (body and pagination headers), a write of any kind is seen by the next read, and the key keeps callers and hosts apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';

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

  it.runIf(onPostgres)('on PostgreSQL: kept under the snapshot, and a write through another daemon is seen at once', async () => {
    // a second app on the same database: another daemon, with caches of its own
    const other = await startTestServer({ databaseUrl: s.ctx.config.databaseUrl! });
    try {
      const read = (host = 'gantry.test') => other.app.inject({ method: 'GET', url: `/api/v3/projects/${pid}`, headers: { 'private-token': alice.token, host } });
      // a hit runs fewer statements than the answer it saves (the version instead of the presenter's)
      let statements = 0;
      const count = <F extends (...a: never[]) => unknown>(f: F) => ((...a: Parameters<F>) => {
        statements++;
        return f.apply(other.ctx.data, a);
      }) as unknown as F;
      const data = other.ctx.data as unknown as Record<'get' | 'all' | 'run', (...a: never[]) => unknown>;
      const originals = { get: data.get, all: data.all, run: data.run };
      for (const k of ['get', 'all', 'run'] as const) data[k] = count(originals[k]);
      try {
        const first = await read('cold.example');
        const missed = statements;
        statements = 0;
        const second = await read('cold.example');
        expect(second.body).toBe(first.body);
        expect(statements).toBeLessThan(missed);
      } finally {
        Object.assign(data, originals);
      }
      const before = JSON.parse((await read()).body);
      expect(JSON.parse((await read()).body)).toEqual(before);
      for (const description of ['written elsewhere', 'and again']) {
        expect((await s.api('PUT', `/projects/${pid}`, alice, { description })).status).toBe(200);
        expect(JSON.parse((await read()).body).description).toBe(description);
      }
      expect((await s.api('POST', `/projects/${pid}/star`, bob)).status).toBe(201);
      expect(JSON.parse((await read()).body).star_count).toBe(before.star_count + 1);
    } finally {
      await other.close();
    }
  });
});
