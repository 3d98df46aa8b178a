import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { createPersonalAccessToken, findUser } from '../../daemon/services/users/users.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
const PAT_KEYS = ['active', 'created_at', 'expires_at', 'id', 'name', 'revoked', 'scopes', 'user_id'].sort();
const day = (offset: number) => new Date(Date.now() + offset * 86400000).toISOString().slice(0, 10);

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice');
  bob = await s.user('bob');
});
afterAll(async () => { await s.close(); });

describe('POST /user/personal_access_tokens', () => {
  it('creates a token for the caller, shown once, which authenticates', async () => {
    const r = await s.api('POST', '/user/personal_access_tokens', alice, { name: 'laptop' });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual([...PAT_KEYS, 'token'].sort());
    expect(r.body).toMatchObject({ name: 'laptop', revoked: false, active: true, expires_at: null, user_id: alice.id, scopes: ['api'] });
    expect(typeof r.body.id).toBe('number');
    expect(r.body.token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(r.body.token).not.toBe(alice.token);
    expect(r.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const me = await s.api('GET', '/user', r.body.token);
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(alice.id);

    const list = await s.api('GET', '/user/personal_access_tokens', alice);
    expect(list.text).not.toContain(r.body.token);
    const one = await s.api('GET', `/user/personal_access_tokens/${r.body.id}`, alice);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(PAT_KEYS);
  });

  it('takes expires_at as YYYY-MM-DD; the token works until that day', async () => {
    const r = await s.api('POST', '/user/personal_access_tokens', alice, { name: 'soon', expires_at: day(2) });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ expires_at: day(2), active: true });
    expect((await s.api('GET', '/user', r.body.token)).status).toBe(200);
  });

  it('expired tokens (yesterday, or today) do not authenticate and are inactive', async () => {
    for (const expires of [day(-1), day(0)]) {
      const r = await s.api('POST', '/user/personal_access_tokens', alice, { name: `expired ${expires}`, expires_at: expires });
      expect(r.status).toBe(201);
      expect(r.body.active).toBe(false);
      expect(await s.api('GET', '/user', r.body.token)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    }
  });

  it('400 for a missing name or a bad expires_at', async () => {
    expect(await s.api('POST', '/user/personal_access_tokens', alice, {})).toMatchObject({ status: 400, body: { message: '400 (Bad request) "name" not given' } });
    expect(await s.api('POST', '/user/personal_access_tokens', alice, { name: '' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "name" not given' } });
    for (const bad of ['tomorrow', '2030-02-31', '2030-13-01', '30-01-01', '2030-1-1', '0000-01-01']) {
      const r = await s.api('POST', '/user/personal_access_tokens', alice, { name: 'x', expires_at: bad });
      expect(r.status, bad).toBe(400);
      expect(r.body.message).toContain('"expires_at" is invalid');
    }
    const long = await s.api('POST', '/user/personal_access_tokens', alice, { name: 'n'.repeat(256) });
    expect(long.status).toBe(400);
    expect(long.body.message.name).toEqual(['is too long (maximum is 255 characters)']);
  });

  it('401 anonymous', async () => {
    expect(await s.api('POST', '/user/personal_access_tokens', null, { name: 'x' })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect((await s.api('GET', '/user/personal_access_tokens', null)).status).toBe(401);
    expect((await s.api('DELETE', '/user/personal_access_tokens/1', null)).status).toBe(401);
  });
});

describe('GET /user/personal_access_tokens', () => {
  it('lists only the caller\'s tokens, paginated, without secrets', async () => {
    const carol = await s.user('carol');
    const made: string[] = [];
    for (const name of ['a', 'b', 'c']) made.push((await s.api('POST', '/user/personal_access_tokens', carol, { name })).body.token);
    const r = await s.api('GET', '/user/personal_access_tokens?per_page=2', carol);
    expect(r.status).toBe(200);
    expect(r.body.map((t: { name: string }) => t.name)).toEqual(['a', 'b']);
    for (const t of r.body) expect(Object.keys(t).sort()).toEqual(PAT_KEYS);
    expect(r.headers['x-total']).toBe('3');
    expect(r.headers['x-total-pages']).toBe('2');
    expect(r.headers['x-next-page']).toBe('2');
    expect(String(r.headers.link)).toContain('rel="next"');
    for (const t of made) expect(r.text).not.toContain(t);
    const page2 = await s.api('GET', '/user/personal_access_tokens?per_page=2&page=2', carol);
    expect(page2.body.map((t: { name: string }) => t.name)).toEqual(['c']);
  });

  it('filters by state=active / inactive, with matching totals', async () => {
    const dave = await s.user('dave');
    const keep = await s.api('POST', '/user/personal_access_tokens', dave, { name: 'keep' });
    const gone = await s.api('POST', '/user/personal_access_tokens', dave, { name: 'gone' });
    await s.api('POST', '/user/personal_access_tokens', dave, { name: 'old', expires_at: day(-3) });
    await s.api('DELETE', `/user/personal_access_tokens/${gone.body.id}`, dave);
    const active = await s.api('GET', '/user/personal_access_tokens?state=active', dave);
    expect(active.body.map((t: { name: string }) => t.name)).toEqual(['keep']);
    expect(active.headers['x-total']).toBe('1');
    const inactive = await s.api('GET', '/user/personal_access_tokens?state=inactive', dave);
    expect(inactive.body.map((t: { name: string }) => t.name)).toEqual(['gone', 'old']);
    expect(inactive.headers['x-total']).toBe('2');
    expect((await s.api('GET', '/user/personal_access_tokens', dave)).body).toHaveLength(3);
    expect(keep.status).toBe(201);
  });

  it('404 for a token of someone else or an unknown id', async () => {
    const bobs = await s.api('POST', '/user/personal_access_tokens', bob, { name: 'bobs' });
    expect(await s.api('GET', `/user/personal_access_tokens/${bobs.body.id}`, alice)).toMatchObject({ status: 404, body: { message: '404 Personal Access Token Not Found' } });
    expect((await s.api('GET', '/user/personal_access_tokens/99999', alice)).status).toBe(404);
    expect((await s.api('GET', '/user/personal_access_tokens/abc', alice)).status).toBe(404);
  });
});

describe('DELETE /user/personal_access_tokens/:token_id', () => {
  it('revokes: the token stops authenticating and is listed as revoked', async () => {
    const t = await s.api('POST', '/user/personal_access_tokens', alice, { name: 'to revoke' });
    expect((await s.api('GET', '/user', t.body.token)).status).toBe(200);
    const r = await s.api('DELETE', `/user/personal_access_tokens/${t.body.id}`, alice);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: t.body.id, revoked: true, active: false });
    expect(r.body).not.toHaveProperty('token');
    expect(await s.api('GET', '/user', t.body.token)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect((await s.api('GET', `/user/personal_access_tokens/${t.body.id}`, alice)).body.revoked).toBe(true);
    // Revoking again is harmless; the private token is unaffected.
    expect((await s.api('DELETE', `/user/personal_access_tokens/${t.body.id}`, alice)).status).toBe(200);
    expect((await s.api('GET', '/user', alice)).status).toBe(200);
  });

  it('cannot revoke another user\'s token (404) and leaves it working', async () => {
    const t = await s.api('POST', '/user/personal_access_tokens', bob, { name: 'safe' });
    expect((await s.api('DELETE', `/user/personal_access_tokens/${t.body.id}`, alice)).status).toBe(404);
    expect((await s.api('GET', '/user', t.body.token)).status).toBe(200);
  });
});

describe('/users/:id/personal_access_tokens', () => {
  it('an admin creates, lists and revokes tokens of another user', async () => {
    const created = await s.api('POST', `/users/${bob.id}/personal_access_tokens`, s.root, { name: 'by admin', expires_at: day(30) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ user_id: bob.id, name: 'by admin', expires_at: day(30) });
    expect((await s.api('GET', '/user', created.body.token)).body.username).toBe('bob');
    const list = await s.api('GET', `/users/${bob.id}/personal_access_tokens`, s.root);
    expect(list.status).toBe(200);
    expect(list.body.some((t: { id: number }) => t.id === created.body.id)).toBe(true);
    expect(list.body.every((t: { user_id: number }) => t.user_id === bob.id)).toBe(true);
    expect(list.text).not.toContain(created.body.token);
    const one = await s.api('GET', `/users/${bob.id}/personal_access_tokens/${created.body.id}`, s.root);
    expect(one.body.id).toBe(created.body.id);
    const revoked = await s.api('DELETE', `/users/${bob.id}/personal_access_tokens/${created.body.id}`, s.root);
    expect(revoked.body.revoked).toBe(true);
    expect((await s.api('GET', '/user', created.body.token)).status).toBe(401);
  });

  it('a token id of another user under :id is 404', async () => {
    const alices = await s.api('POST', '/user/personal_access_tokens', alice, { name: 'alices' });
    expect((await s.api('DELETE', `/users/${bob.id}/personal_access_tokens/${alices.body.id}`, s.root)).status).toBe(404);
    expect((await s.api('GET', '/user', alices.body.token)).status).toBe(200);
  });

  it('non-admins get 403 for other users, and may use their own id', async () => {
    const bobs = await s.api('POST', '/user/personal_access_tokens', bob, { name: 'bobs2' });
    expect(await s.api('POST', `/users/${bob.id}/personal_access_tokens`, alice, { name: 'x' })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await s.api('GET', `/users/${bob.id}/personal_access_tokens`, alice)).status).toBe(403);
    expect((await s.api('GET', `/users/${bob.id}/personal_access_tokens/${bobs.body.id}`, alice)).status).toBe(403);
    expect((await s.api('DELETE', `/users/${bob.id}/personal_access_tokens/${bobs.body.id}`, alice)).status).toBe(403);
    expect((await s.api('GET', '/user', bobs.body.token)).status).toBe(200);
    expect((await s.api('GET', '/users/99999/personal_access_tokens', alice)).status).toBe(403);
    const own = await s.api('POST', `/users/${alice.id}/personal_access_tokens`, alice, { name: 'own' });
    expect(own.status).toBe(201);
    expect(own.body.user_id).toBe(alice.id);
  });

  it('404 for an unknown user (admin); 401 anonymous', async () => {
    expect(await s.api('GET', '/users/99999/personal_access_tokens', s.root)).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    expect((await s.api('POST', '/users/99999/personal_access_tokens', s.root, { name: 'x' })).status).toBe(404);
    expect((await s.api('GET', `/users/${bob.id}/personal_access_tokens`, null)).status).toBe(401);
  });
});

describe('a user deleted by another request between the lookup and the write', () => {
  it('creating their personal access token answers 404 and writes nothing, not a 500 (found by the fuzzer)', async () => {
    const gone = await s.user('pat-vanishing');
    const stale = (await findUser(s.ctx, gone.id))!;
    expect((await s.api('DELETE', `/users/${gone.id}`, s.root)).status).toBe(200);
    await expect(createPersonalAccessToken(s.ctx, stale, 'late', null)).rejects.toMatchObject({ statusCode: 404, body: { message: '404 User Not Found' } });
    expect(await s.ctx.data.get('SELECT 1 AS x FROM personal_access_tokens WHERE user_id = ?', [gone.id])).toBeUndefined();
  });
});
