/**
 * GET answers kept as bytes until the next write (api/response-cache.ts): a second read is byte-for-byte the first
 * (body and pagination headers), a write of any kind is seen by the next read, and the key keeps callers and hosts apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { writeVersionAsync } from '../../daemon/db/read-cache.js';
import { countStatements } from '../helpers/collaboration.js';
import { makeApplication, tokenRequest } from '../helpers/oauth.js';

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

  it('sends a kept answer before validation, and still checks access first and refuses a bad query every time', async () => {
    const issues = `/projects/${pid}/issues?per_page=1&state=opened`;
    expect((await s.api('POST', `/projects/${pid}/issues`, alice, { title: 'kept issue' })).status).toBe(201);
    const lists = [issues, `/projects/${pid}/merge_requests?per_page=1`, '/issues?per_page=1', `/projects/${pid}`, '/projects/owned?simple=true'];
    for (const url of lists) {
      const a = await get(url, alice.token);
      const b = await get(url, alice.token);
      expect([url, a.statusCode]).toEqual([url, 200]);
      expect([url, b.body, pageHeaders(b.headers)]).toEqual([url, a.body, pageHeaders(a.headers)]);
    }
    // a private project's kept answer: its route's access check runs before the kept answer is looked up
    const hidden = (await s.api('POST', '/projects', alice, { name: 'rc-hidden', visibility_level: 0 })).body.id;
    expect((await get(`/projects/${hidden}/issues`, alice.token)).statusCode).toBe(200);
    expect((await get(`/projects/${hidden}/issues`, alice.token)).statusCode).toBe(200);
    expect((await get(`/projects/${hidden}/issues`, bob.token)).statusCode).toBe(404);
    expect((await get(`/projects/${hidden}`, bob.token)).statusCode).toBe(404);
    // a query validation refuses is never kept: the same 400 each time
    for (let i = 0; i < 2; i++) {
      const bad = await get(`/projects/${pid}/merge_requests?iid=first`, alice.token);
      expect(bad.statusCode).toBe(400);
      expect(JSON.parse(bad.body).message).toMatch(/^400 \(Bad request\) "iid/);
    }
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
        // the version is the server's, across its databases: another test file writing elsewhere on the same
        // PostgreSQL server at that moment makes one read a miss, so a hit is looked for over a few reads
        let fewest = Infinity;
        for (let i = 0; i < 10 && fewest >= missed; i++) {
          statements = 0;
          const again = await read('cold.example');
          expect(again.body).toBe(first.body);
          fewest = Math.min(fewest, statements);
        }
        expect(fewest).toBeLessThan(missed);
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

/**
 * The kept answers of a project's issue and merge request lists and the caches under them (the token's user, the
 * OAuth bearer's user, the project and the caller's level): read through one server, written through another on the
 * same database (PostgreSQL: two daemons; SQLite: the one server, there is no other), the next read sees every write.
 */
describe('kept list answers and the caches under them, written elsewhere', () => {
  let reader: TestServer;
  let carol: TestUser;
  let list: number;
  beforeAll(async () => {
    reader = onPostgres ? await startTestServer({ databaseUrl: s.ctx.config.databaseUrl! }) : s;
    carol = await s.user('rccarol');
    list = (await s.api('POST', '/projects', alice, { name: 'rc-lists' })).body.id; // private
    expect((await s.api('POST', `/projects/${list}/members`, alice, { user_id: carol.id, access_level: 30 })).status).toBe(201);
    await s.api('POST', `/projects/${list}/issues`, alice, { title: 'first' });
  });
  afterAll(async () => { if (reader !== s) await reader?.close(); });

  const read = (url: string, headers: Record<string, string>) => reader.app.inject({ method: 'GET', url: `/api/v3${url}`, headers });
  const issues = () => `/projects/${list}/issues?per_page=20`;

  it('a kept page costs one statement on PostgreSQL (the version) and no table read on SQLite, private token and bearer alike', async () => {
    const app = await makeApplication(s, alice);
    const grant = await tokenRequest(s, { grant_type: 'password', username: 'rccarol', password: 'password123', client_id: app.application_id, client_secret: app.secret });
    expect(grant.status).toBe(200);
    for (const headers of [{ 'private-token': carol.token }, { authorization: `Bearer ${grant.body.access_token}` }]) {
      for (const url of [issues(), `/projects/${list}/merge_requests?per_page=20`, `/projects/${list}`]) {
        const first = await read(url, headers);
        expect(first.statusCode).toBe(200);
        // On PostgreSQL the version is the server's snapshot: a write by another test file's database moves it and makes
        // a read a miss. So a read is judged only when the version stood still from before the read that keeps the
        // answer (uncounted) to after the counted one (read through the other server, outside the counted window);
        // tried until one such pair is seen.
        let n = Infinity;
        let judged = false;
        for (const until = Date.now() + 5_000; !judged && Date.now() < until;) {
          const before = onPostgres ? await writeVersionAsync(s.ctx) : '';
          expect((await read(url, headers)).body).toBe(first.body);
          let again;
          n = await countStatements(reader.ctx, async () => { again = await read(url, headers); });
          expect(again!.body).toBe(first.body);
          judged = !onPostgres || (await writeVersionAsync(s.ctx)) === before;
          if (!judged) await new Promise((r) => setTimeout(r, 10));
        }
        expect(judged).toBe(true);
        // PostgreSQL: the version only; SQLite: no table read, only the write counter (`SELECT total_changes()`,
        // in memory) of each cache consulted: the token's user, the project and level, the answer
        if (onPostgres) expect(n).toBe(1);
        else expect(n).toBeLessThanOrEqual(3);
      }
    }
  }, 60_000);

  it('sees an issue created, a member removed and a user blocked through the other server at once', async () => {
    const asCarol = { 'private-token': carol.token };
    expect(JSON.parse((await read(issues(), asCarol)).body)).toHaveLength(1);
    await s.api('POST', `/projects/${list}/issues`, alice, { title: 'second' });
    expect(JSON.parse((await read(issues(), asCarol)).body).map((i: { title: string }) => i.title)).toEqual(['second', 'first']);
    expect((await read(issues(), asCarol)).statusCode).toBe(200);
    expect((await s.api('DELETE', `/projects/${list}/members/${carol.id}`, alice)).status).toBe(200);
    expect((await read(issues(), asCarol)).statusCode).toBe(404);
    expect((await read(`/projects/${list}`, asCarol)).statusCode).toBe(404);
    const kept = await read('/projects?per_page=20', asCarol);
    expect(kept.statusCode).toBe(200);
    expect((await s.api('PUT', `/users/${carol.id}/block`, s.root)).status).toBe(200);
    expect((await read('/projects?per_page=20', asCarol)).statusCode).toBe(401);
  });

  it('refuses a bearer token revoked through the other server at once', async () => {
    const app = await makeApplication(s, alice);
    const t = (await tokenRequest(s, { grant_type: 'password', username: 'rcalice', password: 'password123', client_id: app.application_id, client_secret: app.secret })).body;
    const headers = { authorization: `Bearer ${t.access_token}` };
    expect((await read(issues(), headers)).statusCode).toBe(200);
    expect((await read(issues(), headers)).statusCode).toBe(200);
    const r = await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: t.access_token, client_id: app.application_id, client_secret: app.secret } });
    expect(r.statusCode).toBe(200);
    expect((await read(issues(), headers)).statusCode).toBe(401);
  });
});
