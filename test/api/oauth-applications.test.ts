/** /api/v3/applications: register (secret shown once), list (own; all for an admin), delete (revokes tokens), the setting. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { authorizationCode, makeApplication, tokenRequest } from '../helpers/oauth.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
const KEYS = ['application_id', 'application_name', 'callback_url', 'id', 'scopes'];

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice');
  bob = await s.user('bob');
});
afterAll(async () => { await s.close(); });

const setUserApps = (on: boolean) => s.api('PUT', '/application/settings', s.root, { user_oauth_applications: on });

describe('POST /applications', () => {
  it('registers an application; the secret is shown only in this answer and stored hashed', async () => {
    const r = await s.api('POST', '/applications', alice, { name: 'My tool', redirect_uri: 'https://tool.test/cb\nhttp://localhost:4000/cb' });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual([...KEYS, 'secret'].sort());
    expect(r.body).toMatchObject({ application_name: 'My tool', callback_url: 'https://tool.test/cb\nhttp://localhost:4000/cb', scopes: 'api' });
    expect(r.body.application_id).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.secret).toMatch(/^[0-9a-f]{64}$/);
    const list = await s.api('GET', '/applications', alice);
    expect(list.text).not.toContain(r.body.secret);
    expect(JSON.stringify((await s.ctx.data.all('SELECT * FROM oauth_applications')))).not.toContain(r.body.secret);
  });

  it('accepts urn:ietf:wg:oauth:2.0:oob and scopes=api', async () => {
    const r = await s.api('POST', '/applications', alice, { name: 'Desktop', redirect_uri: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'api' });
    expect(r.status).toBe(201);
    expect(r.body.callback_url).toBe('urn:ietf:wg:oauth:2.0:oob');
  });

  it('400 for a missing name or redirect_uri, a relative URI, a fragment, an unknown scope; nothing is created', async () => {
    const before = (await s.api('GET', '/applications', alice)).body.length;
    expect(await s.api('POST', '/applications', alice, { redirect_uri: 'https://x.test/cb' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "name" not given' } });
    expect(await s.api('POST', '/applications', alice, { name: 'x' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "redirect_uri" not given' } });
    for (const [uri, message] of [['/cb', 'must be an absolute URI.'], ['javascript:alert(1)', 'must be an absolute URI.'], ['https://x.test/cb#top', 'cannot contain a fragment.']]) {
      const r = await s.api('POST', '/applications', alice, { name: 'x', redirect_uri: uri });
      expect(r.status, uri).toBe(400);
      expect(r.body).toEqual({ message: { redirect_uri: [message] } });
    }
    expect((await s.api('POST', '/applications', alice, { name: 'x', redirect_uri: '  \n ' })).body).toEqual({ message: { redirect_uri: ["can't be blank"] } });
    const scope = await s.api('POST', '/applications', alice, { name: 'x', redirect_uri: 'https://x.test/cb', scopes: 'api sudo' });
    expect(scope.status).toBe(400);
    expect(scope.body.message.scopes[0]).toContain('sudo');
    expect((await s.api('POST', '/applications', alice, { name: 'n'.repeat(256), redirect_uri: 'https://x.test/cb' })).body).toEqual({ message: { name: ['is too long (maximum is 255 characters)'] } });
    expect((await s.api('GET', '/applications', alice)).body.length).toBe(before);
  });

  it('401 anonymous', async () => {
    expect(await s.api('POST', '/applications', null, { name: 'x', redirect_uri: 'https://x.test/cb' })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect((await s.api('GET', '/applications', null)).status).toBe(401);
    expect((await s.api('DELETE', '/applications/1', null)).status).toBe(401);
  });

  it('with user_oauth_applications off, only admins: others get 403 on every route', async () => {
    const mine = await makeApplication(s, bob);
    expect((await setUserApps(false)).status).toBe(200);
    try {
      const r = await s.api('POST', '/applications', bob, { name: 'x', redirect_uri: 'https://x.test/cb' });
      expect(r.status).toBe(403);
      expect(r.body.message).toContain('user_oauth_applications');
      expect((await s.api('GET', '/applications', bob)).status).toBe(403);
      expect((await s.api('DELETE', `/applications/${mine.id}`, bob)).status).toBe(403);
      expect((await s.api('POST', '/applications', s.root, { name: 'admin app', redirect_uri: 'https://x.test/cb' })).status).toBe(201);
    } finally {
      await setUserApps(true);
    }
  });
});

describe('GET /applications', () => {
  it('lists the caller\'s own applications, newest first, paginated; an admin sees all; never the built-in one', async () => {
    const carol = await s.user('carol');
    const a = await makeApplication(s, carol, 'https://a.test/cb');
    const b = await makeApplication(s, carol, 'https://b.test/cb');
    const r = await s.api('GET', '/applications?per_page=1', carol);
    expect(r.status).toBe(200);
    expect(r.headers['x-total']).toBe('2');
    expect(r.body.map((x: { id: number }) => x.id)).toEqual([b.id]);
    expect(Object.keys(r.body[0]).sort()).toEqual(KEYS);
    const all = await s.api('GET', '/applications?per_page=100', s.root);
    const ids = all.body.map((x: { id: number }) => x.id);
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(all.body.some((x: { application_id: string }) => x.application_id === 'gantry-cli')).toBe(false);
    expect((await s.api('GET', '/applications', alice)).body.some((x: { id: number }) => x.id === a.id)).toBe(false);
  });
});

describe('DELETE /applications/:id', () => {
  it('deletes one\'s own application: 204; its tokens and codes stop working', async () => {
    const app = await makeApplication(s, alice);
    const { code } = await authorizationCode(s, app, 'https://client.test/cb', 'alice');
    const second = await authorizationCode(s, app, 'https://client.test/cb', 'alice');
    const t = await tokenRequest(s, { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: 'https://client.test/cb' });
    expect((await s.api('GET', '/user', null, undefined, { authorization: `Bearer ${t.body.access_token}` })).status).toBe(200);
    const r = await s.api('DELETE', `/applications/${app.id}`, alice);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect((await s.api('GET', '/user', null, undefined, { authorization: `Bearer ${t.body.access_token}` })).status).toBe(401);
    const trade = await tokenRequest(s, { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code: second.code, redirect_uri: 'https://client.test/cb' });
    expect(trade.status).toBe(401);
    expect(trade.body.error).toBe('invalid_client');
    expect((await s.api('DELETE', `/applications/${app.id}`, alice)).status).toBe(404);
  });

  it('someone else\'s application is 404 (an admin may delete it); unknown and odd ids 404; the built-in one 403', async () => {
    const app = await makeApplication(s, alice);
    expect(await s.api('DELETE', `/applications/${app.id}`, bob)).toMatchObject({ status: 404, body: { message: '404 Application Not Found' } });
    expect((await s.api('DELETE', `/applications/${app.id}`, s.root)).status).toBe(204);
    for (const id of ['999999', '0', '-1', 'abc']) expect((await s.api('DELETE', `/applications/${id}`, alice)).status, id).toBe(id === 'abc' ? 400 : 404);
    const builtin = (await s.ctx.data.get("SELECT id FROM oauth_applications WHERE uid = 'gantry-cli'")) as { id: number };
    expect((await s.api('DELETE', `/applications/${builtin.id}`, alice)).status).toBe(404);
    const r = await s.api('DELETE', `/applications/${builtin.id}`, s.root);
    expect(r.status).toBe(403);
    expect(r.body.message).toContain('cannot be deleted');
  });
});

describe('deleting a user', () => {
  it('removes their applications, codes, tokens and sessions with them', async () => {
    const hank = await s.user('hank');
    const app = await makeApplication(s, hank);
    const { code } = await authorizationCode(s, app, 'https://client.test/cb', 'hank');
    const t = await tokenRequest(s, { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: 'https://client.test/cb' });
    expect(t.status).toBe(200);
    expect((await s.api('DELETE', `/users/${hank.id}`, s.root)).status).toBe(200);
    const left = async (table: string) => ((await s.ctx.data.get(`SELECT COUNT(*) AS n FROM ${table} WHERE ${table === 'oauth_applications' ? 'owner_id' : table === 'oauth_sessions' ? 'user_id' : 'resource_owner_id'} = ?`, [hank.id])) as { n: number }).n;
    for (const table of ['oauth_applications', 'oauth_access_grants', 'oauth_access_tokens', 'oauth_sessions']) expect(await left(table), table).toBe(0);
    expect((await s.api('GET', '/user', null, undefined, { authorization: `Bearer ${t.body.access_token}` })).status).toBe(401);
  });
});

describe('an owner deleted by another request during a registration', () => {
  it('answers 404 User Not Found and registers nothing, never a 500', async () => {
    const { createApplication } = await import('../../daemon/services/oauth/index.js');
    const { findUser: findUserAsync } = await import('../../daemon/services/users/users.js');
    const gone = await s.user('apps-vanishing');
    const stale = await findUserAsync(s.ctx, gone.id);
    expect((await s.api('DELETE', `/users/${gone.id}`, s.root)).status).toBe(200);
    await expect(createApplication(s.ctx, stale, { name: 'late', redirect_uri: 'https://late.test/cb' }))
      .rejects.toMatchObject({ statusCode: 404, body: { message: '404 User Not Found' } });
    expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM oauth_applications WHERE owner_id = ?', [gone.id])).toEqual({ n: 0 });
  });

  it('odd ids beyond PostgreSQL’s integer answer 404 as any missing application', async () => {
    const admin = s.root;
    for (const id of ['2147483648', '9007199254740991']) expect((await s.api('DELETE', `/applications/${id}`, admin)).status, id).toBe(404);
  });
});
