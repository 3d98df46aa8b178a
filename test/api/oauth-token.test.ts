/**
 * POST /oauth/token (every grant and error), code replay and expiry, refresh rotation, POST /oauth/revoke,
 * GET /oauth/token/info, and OAuth bearer tokens on the API (header, query, sudo, blocked users) and on git over HTTP.
 * Expiry is tested by ageing rows in the database (and, for the token cache, by moving Date's clock).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { authorizationCode, browse, CookieJar, makeApplication, pkcePair, signInAndAuthorize, tokenRequest, type TestApplication } from '../helpers/oauth.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let app: TestApplication;
let other: TestApplication;
const CB = 'https://client.test/cb';
const CLI_CB = 'http://127.0.0.1:49152/callback';
const TOKEN_KEYS = ['access_token', 'created_at', 'expires_in', 'refresh_token', 'scope', 'token_type'];

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice');
  bob = await s.user('bob');
  app = await makeApplication(s, alice);
  other = await makeApplication(s, bob, 'https://other.test/cb');
});
afterAll(async () => { await s.close(); });
afterEach(() => { vi.useRealTimers(); });

/** A token pair for alice through the authorization code grant of `app`. */
async function codeTokens(user = 'alice') {
  const { code } = await authorizationCode(s, app, CB, user);
  const r = await tokenRequest(s, { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: CB });
  expect(r.status).toBe(200);
  return r.body as { access_token: string; refresh_token: string };
}
const bearer = (token: string, path = '/user', headers: Record<string, string> = {}) =>
  s.api('GET', path, null, undefined, { authorization: `Bearer ${token}`, ...headers });
const age = (table: 'oauth_access_tokens' | 'oauth_access_grants', seconds: number) =>
  s.ctx.data.run(`UPDATE ${table} SET created_at = ?`, [new Date(Date.now() - seconds * 1000).toISOString()]);
const expectError = (r: { status: number; body: unknown }, status: number, error: string) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(Object.keys(r.body as object).sort()).toEqual(['error', 'error_description']);
  expect((r.body as { error: string }).error).toBe(error);
  expect((r.body as { error_description: string }).error_description.length).toBeGreaterThan(10);
};

describe('grant_type=authorization_code', () => {
  it('trades a code for a bearer token pair (7200 s), no-store; the token authenticates as the user', async () => {
    const { code, location } = await authorizationCode(s, app, CB, 'alice');
    expect(new URL(location).searchParams.get('state')).toBe('st4te');
    expect(location.startsWith(`${CB}?`)).toBe(true);
    const before = Math.floor(Date.now() / 1000);
    const r = await tokenRequest(s, { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: CB });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(TOKEN_KEYS);
    expect(r.body).toMatchObject({ token_type: 'bearer', expires_in: 7200, scope: 'api' });
    expect(r.body.access_token).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.refresh_token).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.created_at).toBeGreaterThanOrEqual(before);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers.pragma).toBe('no-cache');
    expect(await bearer(r.body.access_token)).toMatchObject({ status: 200, body: { id: alice.id, username: 'alice' } });
    // only hashes are stored
    const dump = JSON.stringify((await s.ctx.data.all('SELECT * FROM oauth_access_tokens'))) + JSON.stringify((await s.ctx.data.all('SELECT * FROM oauth_access_grants')));
    for (const secret of [r.body.access_token, r.body.refresh_token, code]) expect(dump).not.toContain(secret);
    expect(JSON.stringify((await s.ctx.data.all('SELECT * FROM oauth_applications')))).not.toContain(app.secret);
  });

  it('takes a JSON body and HTTP Basic client credentials', async () => {
    const { code } = await authorizationCode(s, app, CB, 'alice');
    const basic = Buffer.from(`${app.application_id}:${app.secret}`).toString('base64');
    const r = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: CB }, { json: true, headers: { authorization: `Basic ${basic}` } });
    expect(r.status).toBe(200);
    expect(r.body.token_type).toBe('bearer');
  });

  it('401 invalid_client (with WWW-Authenticate) without client_id, for an unknown one, or a wrong secret', async () => {
    const { code } = await authorizationCode(s, app, CB, 'alice');
    for (const client of [{}, { client_id: 'nope', client_secret: 'x' }, { client_id: app.application_id }, { client_id: app.application_id, client_secret: other.secret }]) {
      const r = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: CB, ...client });
      expectError(r, 401, 'invalid_client');
      expect(String(r.headers['www-authenticate'])).toMatch(/^Bearer realm="Gantry", error="invalid_client"/);
    }
    // the code was not used up by the refusals
    expect((await tokenRequest(s, { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: CB })).status).toBe(200);
  });

  it('400 invalid_request without code or redirect_uri; invalid_grant for an unknown code, another client\'s, or another redirect_uri', async () => {
    const creds = { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret };
    expectError(await tokenRequest(s, { ...creds, redirect_uri: CB }), 400, 'invalid_request');
    const { code } = await authorizationCode(s, app, CB, 'alice');
    expectError(await tokenRequest(s, { ...creds, code }), 400, 'invalid_request');
    expectError(await tokenRequest(s, { ...creds, code: 'f'.repeat(64), redirect_uri: CB }), 400, 'invalid_grant');
    expectError(await tokenRequest(s, { ...creds, code, redirect_uri: 'https://client.test/other' }), 400, 'invalid_grant');
    expectError(await tokenRequest(s, { grant_type: 'authorization_code', client_id: other.application_id, client_secret: other.secret, code, redirect_uri: 'https://other.test/cb' }), 400, 'invalid_grant');
  });

  it('a code works once; replayed, it is refused and every token issued from it is revoked', async () => {
    const { code } = await authorizationCode(s, app, CB, 'alice');
    const fields = { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: CB };
    const first = await tokenRequest(s, fields);
    expect(first.status).toBe(200);
    // refreshed once: the chain still comes from the code
    const refreshed = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: app.application_id, client_secret: app.secret });
    expect(refreshed.status).toBe(200);
    expect((await bearer(refreshed.body.access_token)).status).toBe(200);
    const replay = await tokenRequest(s, fields);
    expectError(replay, 400, 'invalid_grant');
    expect(replay.body.error_description).toContain('already used');
    expect(await bearer(refreshed.body.access_token)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: app.application_id, client_secret: app.secret }), 400, 'invalid_grant');
  });

  it('a code expires after 10 minutes', async () => {
    const { code } = await authorizationCode(s, app, CB, 'alice');
    await age('oauth_access_grants', 601);
    const r = await tokenRequest(s, { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: CB });
    expectError(r, 400, 'invalid_grant');
    expect(r.body.error_description).toContain('expired');
  });
});

describe('PKCE and the built-in gantry-cli application', () => {
  it('needs the verifier of the S256 challenge; no secret', async () => {
    const pk = pkcePair();
    const { code } = await authorizationCode(s, { application_id: 'gantry-cli' }, CLI_CB, 'alice', { code_challenge: pk.challenge, code_challenge_method: 'S256' });
    const base = { grant_type: 'authorization_code', client_id: 'gantry-cli', code, redirect_uri: CLI_CB };
    expectError(await tokenRequest(s, base), 400, 'invalid_request');
    expectError(await tokenRequest(s, { ...base, code_verifier: pkcePair().verifier }), 400, 'invalid_grant');
    const ok = await tokenRequest(s, { ...base, code_verifier: pk.verifier });
    expect(ok.status).toBe(200);
    expect((await bearer(ok.body.access_token)).body.username).toBe('alice');
    // the CLI refreshes with its client_id only
    const refreshed = await tokenRequest(s, { grant_type: 'refresh_token', client_id: 'gantry-cli', refresh_token: ok.body.refresh_token });
    expect(refreshed.status).toBe(200);
  });

  it('a confidential application may use PKCE too (the verifier is then required)', async () => {
    const pk = pkcePair();
    const { code } = await authorizationCode(s, app, CB, 'alice', { code_challenge: pk.challenge, code_challenge_method: 'S256' });
    const base = { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: CB };
    expectError(await tokenRequest(s, { ...base, code_verifier: 'wrong'.repeat(10) }), 400, 'invalid_grant');
    expect((await tokenRequest(s, { ...base, code_verifier: pk.verifier })).status).toBe(200);
  });

  it('the authorize request of gantry-cli without a challenge, or with method plain, goes back with invalid_request', async () => {
    const jar = new CookieJar();
    await signInAndAuthorize(s, jar, { client_id: app.application_id, redirect_uri: CB, response_type: 'code' }, 'alice');
    for (const extra of [{}, { code_challenge: pkcePair().challenge, code_challenge_method: 'plain' }, { code_challenge: 'short' }]) {
      const q = new URLSearchParams({ client_id: 'gantry-cli', redirect_uri: CLI_CB, response_type: 'code', state: 'x', ...extra });
      const r = await browse(s, jar, 'GET', `/oauth/authorize?${q}`);
      expect(r.statusCode, JSON.stringify(extra)).toBe(302);
      const to = new URL(String(r.headers.location));
      expect(to.origin + to.pathname).toBe(CLI_CB);
      expect(to.searchParams.get('error')).toBe('invalid_request');
      expect(to.searchParams.get('state')).toBe('x');
      expect(to.searchParams.get('code')).toBeNull();
    }
  });

  it('takes any loopback port and path on 127.0.0.1 and [::1], nothing else', async () => {
    const jar = new CookieJar();
    await signInAndAuthorize(s, jar, { client_id: app.application_id, redirect_uri: CB, response_type: 'code' }, 'alice');
    const challenge = pkcePair().challenge;
    const page = (redirect: string) => browse(s, jar, 'GET', `/oauth/authorize?${new URLSearchParams({ client_id: 'gantry-cli', redirect_uri: redirect, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' })}`);
    for (const good of ['http://127.0.0.1:1/x', 'http://127.0.0.1:65535/a/b?c=d', 'http://[::1]:8080/callback']) {
      const r = await page(good);
      expect(r.statusCode, good).toBe(200);
      expect(r.body).toContain('Gantry CLI');
    }
    for (const bad of ['http://localhost:8080/cb', 'https://127.0.0.1:8080/cb', 'http://127.0.0.2:8080/cb', 'http://evil.test/cb', 'http://127.0.0.1:80/cb#frag', 'http://u:p@127.0.0.1:9/cb']) {
      const r = await page(bad);
      expect(r.statusCode, bad).toBe(400);
      expect(r.headers.location).toBeUndefined();
    }
  });
});

describe('grant_type=password', () => {
  it('signs in by username or email (with or without client credentials)', async () => {
    for (const fields of [{ username: 'alice' }, { username: 'alice@example.com' }, { username: 'alice', client_id: app.application_id, client_secret: app.secret }]) {
      const r = await tokenRequest(s, { grant_type: 'password', password: 'password123', ...fields });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(TOKEN_KEYS);
      expect((await bearer(r.body.access_token)).body.id).toBe(alice.id);
    }
  });

  it('401 invalid_grant for a wrong password, an unknown user, a blocked user', async () => {
    expectError(await tokenRequest(s, { grant_type: 'password', username: 'alice', password: 'wrong-password' }), 401, 'invalid_grant');
    expectError(await tokenRequest(s, { grant_type: 'password', username: 'nobody', password: 'password123' }), 401, 'invalid_grant');
    const carol = await s.user('carol');
    expect((await s.api('PUT', `/users/${carol.id}/block`, s.root)).status).toBe(200);
    expectError(await tokenRequest(s, { grant_type: 'password', username: 'carol', password: 'password123' }), 401, 'invalid_grant');
  });

  it('after too many failed sign-ins: 429 invalid_grant with Retry-After, even for the right password', async () => {
    await s.user('locked');
    for (let i = 0; i < 10; i++) expect((await tokenRequest(s, { grant_type: 'password', username: 'locked', password: 'wrong-password' })).status).toBe(401);
    const r = await tokenRequest(s, { grant_type: 'password', username: 'locked', password: 'password123' });
    expectError(r, 429, 'invalid_grant');
    expect(r.body.error_description).toMatch(/Too many failed sign-ins for this user: try again in \d+ seconds/);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('400 invalid_request without username or password; invalid_scope for an unknown scope; invalid_client for a wrong secret', async () => {
    expectError(await tokenRequest(s, { grant_type: 'password', password: 'password123' }), 400, 'invalid_request');
    expectError(await tokenRequest(s, { grant_type: 'password', username: 'alice' }), 400, 'invalid_request');
    expectError(await tokenRequest(s, { grant_type: 'password', username: 'alice', password: 'password123', scope: 'admin' }), 400, 'invalid_scope');
    expectError(await tokenRequest(s, { grant_type: 'password', username: 'alice', password: 'password123', client_id: app.application_id, client_secret: 'nope' }), 401, 'invalid_client');
  });
});

describe('grant_type=refresh_token', () => {
  it('rotates: a new pair; the old refresh token and the old access token stop working', async () => {
    const first = await codeTokens();
    const r = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: app.application_id, client_secret: app.secret });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(TOKEN_KEYS);
    expect(r.body.refresh_token).not.toBe(first.refresh_token);
    expect((await bearer(r.body.access_token)).status).toBe(200);
    expect((await bearer(first.access_token)).status).toBe(401);
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: app.application_id, client_secret: app.secret }), 400, 'invalid_grant');
  });

  it('works after the access token expired', async () => {
    const first = await codeTokens();
    await age('oauth_access_tokens', 7201);
    expect((await bearer(first.access_token)).status).toBe(401);
    const r = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: app.application_id, client_secret: app.secret });
    expect(r.status).toBe(200);
    expect((await bearer(r.body.access_token)).status).toBe(200);
  });

  it('a confidential application\'s token needs its credentials: 401 without, invalid_grant for another client', async () => {
    const first = await codeTokens();
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.refresh_token }), 401, 'invalid_client');
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: other.application_id, client_secret: other.secret }), 400, 'invalid_grant');
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: 'gantry-cli' }), 400, 'invalid_grant');
  });

  it('a password-grant token without a client refreshes without one; scopes cannot widen', async () => {
    const t = (await tokenRequest(s, { grant_type: 'password', username: 'alice', password: 'password123' })).body;
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: t.refresh_token, scope: 'api admin' }), 400, 'invalid_scope');
    const r = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: t.refresh_token });
    expect(r.status).toBe(200);
  });

  it('400 invalid_request without refresh_token; invalid_grant for an unknown one', async () => {
    expectError(await tokenRequest(s, { grant_type: 'refresh_token' }), 400, 'invalid_request');
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: 'nope' }), 400, 'invalid_grant');
  });
});

describe('POST /oauth/token: other errors', () => {
  it('400 invalid_request without grant_type; unsupported_grant_type for others; invalid_request for a malformed body; never 500', async () => {
    expectError(await tokenRequest(s, {}), 400, 'invalid_request');
    expectError(await tokenRequest(s, { grant_type: 'client_credentials' }), 400, 'unsupported_grant_type');
    expectError(await tokenRequest(s, { grant_type: 'implicit' }), 400, 'unsupported_grant_type');
    const bad = await s.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json' }, payload: '{"grant_type":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('invalid_request');
    const arrays = await s.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ grant_type: ['password'], username: {} }) });
    expect(arrays.statusCode).toBe(400);
  });
});

describe('access token expiry', () => {
  it('an expired token answers 401 on the API, as any bad token', async () => {
    const t = await codeTokens();
    expect((await bearer(t.access_token)).status).toBe(200);
    await age('oauth_access_tokens', 7201);
    expect(await bearer(t.access_token)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
  });

  it('the token cache does not serve a token past its expiry (no database write in between)', async () => {
    const t = await codeTokens();
    expect((await bearer(t.access_token)).status).toBe(200);
    expect((await bearer(t.access_token)).status).toBe(200); // from the cache
    vi.setSystemTime(Date.now() + 7201 * 1000);
    expect((await bearer(t.access_token)).status).toBe(401);
  });
});

describe('POST /oauth/revoke', () => {
  it('revokes an access token (client authenticated): 200 {} and the token stops working', async () => {
    const t = await codeTokens();
    const r = await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: t.access_token, client_id: app.application_id, client_secret: app.secret } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({});
    expect((await bearer(t.access_token)).status).toBe(401);
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: app.application_id, client_secret: app.secret }), 400, 'invalid_grant');
  });

  it('revokes by refresh token (token_type_hint), with HTTP Basic client credentials', async () => {
    const t = await codeTokens();
    const basic = Buffer.from(`${app.application_id}:${app.secret}`).toString('base64');
    const r = await s.app.inject({ method: 'POST', url: '/oauth/revoke', headers: { authorization: `Basic ${basic}` }, payload: { token: t.refresh_token, token_type_hint: 'refresh_token' } });
    expect(r.statusCode).toBe(200);
    expect((await bearer(t.access_token)).status).toBe(401);
  });

  it('200 {} for unknown tokens; a token of another client (or without client auth) is not revoked', async () => {
    expect((await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: 'nope' } })).json()).toEqual({});
    const t = await codeTokens();
    for (const payload of [{ token: t.access_token }, { token: t.access_token, client_id: other.application_id, client_secret: other.secret }]) {
      const r = await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload });
      expect(r.statusCode).toBe(200);
    }
    expect((await bearer(t.access_token)).status).toBe(200);
    const wrong = await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: t.access_token, client_id: app.application_id, client_secret: 'wrong' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('invalid_client');
  });

  it('gantry-cli revokes with its client_id; a password-grant token without a client needs none', async () => {
    const pk = pkcePair();
    const { code } = await authorizationCode(s, { application_id: 'gantry-cli' }, CLI_CB, 'alice', { code_challenge: pk.challenge, code_challenge_method: 'S256' });
    const cli = (await tokenRequest(s, { grant_type: 'authorization_code', client_id: 'gantry-cli', code, redirect_uri: CLI_CB, code_verifier: pk.verifier })).body;
    await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: cli.access_token, client_id: 'gantry-cli' } });
    expect((await bearer(cli.access_token)).status).toBe(401);
    const pw = (await tokenRequest(s, { grant_type: 'password', username: 'alice', password: 'password123' })).body;
    await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: pw.access_token } });
    expect((await bearer(pw.access_token)).status).toBe(401);
  });
});

describe('GET /oauth/token/info', () => {
  it('describes a valid token', async () => {
    const t = await codeTokens();
    const r = await s.app.inject({ method: 'GET', url: '/oauth/token/info', headers: { authorization: `Bearer ${t.access_token}` } });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(Object.keys(body).sort()).toEqual(['application', 'created_at', 'expires_in_seconds', 'resource_owner_id', 'scopes']);
    expect(body).toMatchObject({ resource_owner_id: alice.id, scopes: ['api'], application: { uid: app.application_id } });
    expect(body.expires_in_seconds).toBeGreaterThan(7100);
    expect(body.expires_in_seconds).toBeLessThanOrEqual(7200);
    expect(Number.isInteger(body.created_at)).toBe(true);
  });

  it('401 invalid_token with WWW-Authenticate: missing, unknown, expired, revoked', async () => {
    const t = await codeTokens();
    const info = (token?: string) => s.app.inject({ method: 'GET', url: '/oauth/token/info', headers: token ? { authorization: `Bearer ${token}` } : {} });
    for (const r of [await info(), await info('nope')]) {
      expect(r.statusCode).toBe(401);
      expect(r.json()).toMatchObject({ error: 'invalid_token' });
      expect(String(r.headers['www-authenticate'])).toContain('error="invalid_token"');
    }
    await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: t.access_token, client_id: app.application_id, client_secret: app.secret } });
    expect((await info(t.access_token)).json().error_description).toContain('revoked');
    const u = await codeTokens();
    await age('oauth_access_tokens', 7201);
    expect((await info(u.access_token)).json().error_description).toContain('expired');
  });
});

describe('bearer tokens on the API', () => {
  it('Authorization: Bearer, access_token in the query and in the body authenticate as the owner', async () => {
    const t = await codeTokens();
    expect((await bearer(t.access_token)).body.id).toBe(alice.id);
    expect((await s.api('GET', `/user?access_token=${t.access_token}`, null)).body.id).toBe(alice.id);
    const created = await s.api('POST', '/projects', null, { name: 'by-bearer', access_token: t.access_token });
    expect(created.status).toBe(201);
    expect(created.body.owner.id).toBe(alice.id);
  });

  it('an unknown bearer token is 401 {"message":"401 Unauthorized"}', async () => {
    expect(await bearer('f'.repeat(64))).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
  });

  it('sudo as for private tokens: an admin\'s bearer token may act as another user, others get 403', async () => {
    const rootToken = (await tokenRequest(s, { grant_type: 'password', username: 'root', password: 'rootpassword123' })).body.access_token;
    expect((await bearer(rootToken, '/user', { sudo: 'bob' })).body.username).toBe('bob');
    expect((await bearer(rootToken, '/users?per_page=100')).status).toBe(200);
    const t = await codeTokens();
    expect(await bearer(t.access_token, '/user', { sudo: 'bob' })).toMatchObject({ status: 403, body: { message: '403 Forbidden - Must be admin to use sudo' } });
    expect((await bearer(t.access_token, '/users/1/block')).status).toBe(404); // GET of an admin action: not a route
    expect((await s.api('PUT', `/users/${bob.id}/block`, null, undefined, { authorization: `Bearer ${t.access_token}` })).status).toBe(403);
  });

  it('an admin-only route: an admin\'s bearer token 200, a non-admin\'s 403 (header or access_token alike)', async () => {
    const rootToken = (await tokenRequest(s, { grant_type: 'password', username: 'root', password: 'rootpassword123' })).body.access_token;
    const settings = await bearer(rootToken, '/application/settings');
    expect(settings.status).toBe(200);
    expect(settings.body).toHaveProperty('session_expire_delay');
    expect((await s.api('GET', `/application/settings?access_token=${rootToken}`, null)).status).toBe(200);
    const t = await codeTokens();
    expect(await bearer(t.access_token, '/application/settings')).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await s.api('GET', `/application/settings?access_token=${t.access_token}`, null)).status).toBe(403);
  });

  it('a revoked or an expired token sent as ?access_token= answers 401, as in the header', async () => {
    const query = (token: string) => s.api('GET', `/user?access_token=${token}`, null);
    const revoked = await codeTokens();
    expect((await query(revoked.access_token)).status).toBe(200);
    await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: revoked.access_token, client_id: app.application_id, client_secret: app.secret } });
    expect(await query(revoked.access_token)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    const expired = await codeTokens();
    expect((await query(expired.access_token)).status).toBe(200);
    await age('oauth_access_tokens', 7201);
    expect(await query(expired.access_token)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    // the bearer_token param too
    expect((await s.api('GET', `/user?bearer_token=${expired.access_token}`, null)).status).toBe(401);
  });

  it('a blocked user\'s token answers 401; unblocked it works again', async () => {
    const dave = await s.user('dave');
    const t = (await tokenRequest(s, { grant_type: 'password', username: 'dave', password: 'password123' })).body;
    expect((await bearer(t.access_token)).status).toBe(200);
    await s.api('PUT', `/users/${dave.id}/block`, s.root);
    expect((await bearer(t.access_token)).status).toBe(401);
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: t.refresh_token }), 400, 'invalid_grant');
    await s.api('PUT', `/users/${dave.id}/unblock`, s.root);
    expect((await bearer(t.access_token)).status).toBe(200);
  });

  it('git over HTTP takes oauth2:<access token>', async () => {
    const project = await makeProject(s, alice, 'oauth-git');
    const t = await codeTokens();
    const refs = (user: string, password: string) => s.app.inject({
      method: 'GET', url: `/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`,
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    });
    expect((await refs('oauth2', t.access_token)).statusCode).toBe(200);
    expect((await refs('oauth2', 'f'.repeat(64))).statusCode).toBe(401);
    const bobs = (await tokenRequest(s, { grant_type: 'password', username: 'bob', password: 'password123' })).body;
    expect((await refs('oauth2', bobs.access_token)).statusCode).toBe(404);
    await age('oauth_access_tokens', 7201);
    expect((await refs('oauth2', t.access_token)).statusCode).toBe(401);
  });
});

describe('races between requests (one daemon or several)', () => {
  it('one code traded twice at once: one 200, one invalid_grant (a replay), and the tokens issued for it revoked', async () => {
    const { code } = await authorizationCode(s, app, CB, 'alice');
    const fields = { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: CB };
    const answers = await Promise.all([tokenRequest(s, fields), tokenRequest(s, fields)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expectError(answers.find((r) => r.status === 400)!, 400, 'invalid_grant');
    const issued = answers.find((r) => r.status === 200)!.body;
    expect((await bearer(issued.access_token)).status).toBe(401);
    // one token pair was issued for the code (its grant is the newest)
    expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM oauth_access_tokens WHERE grant_id = (SELECT MAX(id) FROM oauth_access_grants)')).toEqual({ n: 1 });
  });

  it('one refresh token used twice at once: one new pair (200), the other invalid_grant', async () => {
    const t = await codeTokens();
    const fields = { grant_type: 'refresh_token', client_id: app.application_id, client_secret: app.secret, refresh_token: t.refresh_token };
    const answers = await Promise.all([tokenRequest(s, fields), tokenRequest(s, fields)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expectError(answers.find((r) => r.status === 400)!, 400, 'invalid_grant');
    expect((await bearer(answers.find((r) => r.status === 200)!.body.access_token)).status).toBe(200);
    expect((await bearer(t.access_token)).status).toBe(401);
  });

  it('a code, a session or a token for a user deleted meanwhile: refused as for an unknown user, nothing written, never a 500', async () => {
    const { createGrant, createSession } = await import('../../daemon/services/oauth/index.js');
    const { findUser: findUserAsync } = await import('../../daemon/services/users/users.js');
    const { toOauthApplication } = await import('../../daemon/db/rows.js');
    const gone = await s.user('oauth-vanishing');
    const stale = await findUserAsync(s.ctx, gone.id);
    const client = toOauthApplication((await s.ctx.data.get('SELECT * FROM oauth_applications WHERE uid = ?', [app.application_id]))!);
    const t = await tokenRequest(s, { grant_type: 'password', username: 'oauth-vanishing', password: 'password123' });
    expect(t.status).toBe(200);
    expect((await s.api('DELETE', `/users/${gone.id}`, s.root)).status).toBe(200);
    expect(await createGrant(s.ctx, stale, client, { redirectUri: CB, scopes: ['api'] })).toBeNull();
    expect(await createSession(s.ctx, stale)).toBeNull();
    for (const table of ['oauth_access_grants', 'oauth_sessions']) {
      expect(await s.ctx.data.get(`SELECT COUNT(*) AS n FROM ${table} WHERE ${table === 'oauth_sessions' ? 'user_id' : 'resource_owner_id'} = ?`, [gone.id])).toEqual({ n: 0 });
    }
    expectError(await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: t.body.refresh_token }), 400, 'invalid_grant');
    expect((await bearer(t.body.access_token)).status).toBe(401);
  });
});

describe('a NUL character in a parameter (PostgreSQL refuses it as text)', () => {
  it('is invalid_request (400) on PostgreSQL and the usual answer on SQLite, never a 500; the sign-in page says Bad request', async () => {
    const client = await tokenRequest(s, { grant_type: 'password', client_id: 'a\u0000b', client_secret: 'x', username: 'alice', password: 'password123' });
    expectError(client, onPostgres ? 400 : 401, onPostgres ? 'invalid_request' : 'invalid_client');
    const user = await tokenRequest(s, { grant_type: 'password', username: 'al\u0000ice', password: 'password123' });
    expectError(user, onPostgres ? 400 : 401, onPostgres ? 'invalid_request' : 'invalid_grant');
    const jar = new CookieJar();
    const page = await browse(s, jar, 'GET', `/oauth/authorize?client_id=a%00b&redirect_uri=${encodeURIComponent(CB)}&response_type=code`);
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain(onPostgres ? 'Bad request' : 'Unknown application');
  });
});
