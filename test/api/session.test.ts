import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';

let s: TestServer;
let alice: TestUser;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { email: 'Alice.Smith@Example.com' });
});
afterAll(async () => { await s.close(); });

describe('POST /session', () => {
  it('signs in with a username: 201 UserLogin with the private token', async () => {
    const r = await s.api('POST', '/session', null, { login: 'alice', password: 'password123' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id: alice.id, username: 'alice', name: 'alice', state: 'active', is_admin: false, email: 'Alice.Smith@Example.com' });
    expect(typeof r.body.private_token).toBe('string');
    expect(r.body.private_token.length).toBeGreaterThanOrEqual(20);
    expect(r.body.private_token).toBe(alice.token);
    for (const k of ['projects_limit', 'can_create_group', 'can_create_project', 'two_factor_enabled', 'external', 'identities', 'web_url', 'avatar_url', 'created_at']) {
      expect(r.body).toHaveProperty(k);
    }
    expect(typeof r.body.current_sign_in_at).toBe('string');
    expect(r.body).not.toHaveProperty('password_hash');
    expect(r.body).not.toHaveProperty('password');
  });

  it('returns the same private token on every sign-in (derived, never stored)', async () => {
    const a = await s.api('POST', '/session', null, { login: 'alice', password: 'password123' });
    const b = await s.api('POST', '/session', null, { email: 'alice.smith@example.com', password: 'password123' });
    expect(a.body.private_token).toBe(b.body.private_token);
    expect((await s.api('GET', '/user', a.body.private_token)).body.id).toBe(alice.id);
  });

  it('matches username and email case-insensitively', async () => {
    expect((await s.api('POST', '/session', null, { login: 'ALICE', password: 'password123' })).status).toBe(201);
    expect((await s.api('POST', '/session', null, { login: 'ALICE.smith@EXAMPLE.com', password: 'password123' })).status).toBe(201);
    expect((await s.api('POST', '/session', null, { email: 'alice.SMITH@example.COM', password: 'password123' })).status).toBe(201);
  });

  it('prefers email over login when both are sent', async () => {
    const r = await s.api('POST', '/session', null, { login: 'root', email: 'alice.smith@example.com', password: 'password123' });
    expect(r.status).toBe(201);
    expect(r.body.username).toBe('alice');
    const wrong = await s.api('POST', '/session', null, { login: 'alice', email: 'admin@example.com', password: 'password123' });
    expect(wrong.status).toBe(401);
  });

  it('accepts form-encoded bodies', async () => {
    const r = await s.api('POST', '/session', null, `login=root&password=${ROOT_PASSWORD}`, FORM);
    expect(r.status).toBe(201);
    expect(r.body.is_admin).toBe(true);
    expect(r.body.private_token).toBe(s.root.token);
  });

  it('also reads the fields from the query string, as GitLab merged params', async () => {
    const r = await s.api('POST', '/session?login=alice&password=password123', null);
    expect(r.status).toBe(201);
    expect(r.body.username).toBe('alice');
  });

  it('answers 401 for a wrong password, an unknown user or a wrong email', async () => {
    for (const body of [
      { login: 'alice', password: 'wrongpassword' },
      { login: 'nobody', password: 'password123' },
      { email: 'nobody@example.com', password: 'password123' },
      { login: 'alice', password: 'PASSWORD123' },
    ]) {
      const r = await s.api('POST', '/session', null, body);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ message: '401 Unauthorized' });
    }
  });

  it('answers 400 when login or password is missing or blank', async () => {
    expect(await s.api('POST', '/session', null, { password: 'password123' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "login" not given' } });
    expect(await s.api('POST', '/session', null, { login: '', password: 'x' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "login" not given' } });
    expect(await s.api('POST', '/session', null, { login: 'alice' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "password" not given' } });
    expect(await s.api('POST', '/session', null, { login: 'alice', password: '' })).toMatchObject({ status: 400, body: { message: '400 (Bad request) "password" not given' } });
    expect((await s.api('POST', '/session', null)).status).toBe(400);
  });

  it('refuses a blocked user and lets them in again once unblocked', async () => {
    const bob = await s.user('bob');
    expect((await s.api('PUT', `/users/${bob.id}/block`, s.root)).status).toBe(200);
    const blocked = await s.api('POST', '/session', null, { login: 'bob', password: 'password123' });
    expect(blocked.status).toBe(401);
    expect(blocked.body).toEqual({ message: '401 Unauthorized' });
    expect((await s.api('PUT', `/users/${bob.id}/unblock`, s.root)).status).toBe(200);
    const ok = await s.api('POST', '/session', null, { login: 'bob', password: 'password123' });
    expect(ok.status).toBe(201);
    expect(ok.body.private_token).toBe(bob.token);
  });

  it('records sign-in times', async () => {
    const first = await s.api('POST', '/session', null, { login: 'alice', password: 'password123' });
    const second = await s.api('POST', '/session', null, { login: 'alice', password: 'password123' });
    expect(second.body.last_sign_in_at).toBe(first.body.current_sign_in_at);
    expect(Date.parse(second.body.current_sign_in_at)).toBeGreaterThanOrEqual(Date.parse(first.body.current_sign_in_at));
  });

  it('needs no token and ignores an invalid one', async () => {
    const r = await s.api('POST', '/session', 'not-a-token', { login: 'alice', password: 'password123' });
    expect(r.status).toBe(201);
  });
});

describe('GET /user', () => {
  it('returns UserFull of the caller without the private token', async () => {
    const r = await s.api('GET', '/user', alice);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: alice.id, username: 'alice', email: 'Alice.Smith@Example.com', is_admin: false, projects_limit: 10, can_create_project: true });
    expect(r.body).not.toHaveProperty('private_token');
    expect(r.body.web_url).toBe('http://gantry.test/alice');
    expect(r.body.avatar_url).toMatch(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/);
  });

  it('answers 401 without or with a bad token', async () => {
    expect(await s.api('GET', '/user', null)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await s.api('GET', '/user', 'garbage')).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
  });

  it('accepts the .json suffix', async () => {
    expect((await s.api('GET', '/user.json', alice)).body.id).toBe(alice.id);
  });
});

describe('server basics', () => {
  it('GET /-/health answers without a token', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/-/health' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ status: 'ok' });
  });

  it('unknown API routes answer 404 JSON', async () => {
    const r = await s.api('GET', '/nope', s.root);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 Not Found' });
  });

  it('serves the OpenAPI document without a token, with the user routes', async () => {
    const r = await s.api('GET', '/openapi.json', null);
    expect(r.status).toBe(200);
    for (const p of ['/api/v3/users', '/api/v3/session', '/api/v3/user/personal_access_tokens', '/api/v3/application/settings']) {
      expect(r.body.paths[p]).toBeDefined();
    }
  });
});
