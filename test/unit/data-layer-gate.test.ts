/**
 * The context on either engine (daemon/app.ts, daemon/db/layer/open.ts): every route runs on SQLite and on PostgreSQL
 * (the engine gate that answered 501 for rooms not yet ported is gone), and the context has one way to the database,
 * ctx.data. Runs on both engines (npm test runs every file on each).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('both engines', () => {
  it('runs on the engine the tests asked for', () => {
    expect(s.ctx.data.dialect.name).toBe(onPostgres ? 'postgres' : 'sqlite');
  });

  it('serves health, the OpenAPI document and the slice on either engine', async () => {
    expect((await s.app.inject({ method: 'GET', url: '/-/health' })).json()).toEqual({ status: 'ok' });
    expect((await s.app.inject({ method: 'GET', url: '/api/v3/openapi.json' })).statusCode).toBe(200);
    expect((await s.api('GET', '/user', s.root)).body).toMatchObject({ username: 'root', is_admin: true });
    expect((await s.api('GET', '/application/settings', s.root)).status).toBe(200);
  });

  it('keeps 404 for a path that names no route', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/api/v3/no-such-thing' });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ message: '404 Not Found' });
  });

  it('hands the routes the data layer alone: no synchronous SQLite handle on the context', () => {
    expect(Object.keys(s.ctx)).not.toContain('db');
    // the SQLite connection state serves the caches exact until the next write; PostgreSQL has none
    expect(s.ctx.data.sqlite === undefined).toBe(onPostgres);
  });

  it('gates nothing: a route of every room answers as it does on SQLite (no 501)', async () => {
    for (const path of ['/projects/1/issues', '/projects/1/merge_requests', '/projects/1/pipelines', '/projects/1/hooks', '/projects/1/repository/branches']) {
      expect((await s.api('GET', path, s.root)).status, path).toBe(404);
    }
    const git = await s.app.inject({ method: 'GET', url: '/root/nothing.git/info/refs?service=git-upload-pack' });
    expect(git.statusCode).not.toBe(501);
  });
});
