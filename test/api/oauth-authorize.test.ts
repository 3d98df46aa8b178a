/**
 * GET/POST /oauth/authorize and the sign-in/sign-out forms through app.inject: error pages that never redirect,
 * errors redirected once the redirect URI is trusted, sign-in (settings, blocked users), CSRF, the session cookie (its
 * end follows session_expire_delay; time is moved with vi.setSystemTime), consent (authorize, deny, skipped when
 * authorized before), the out-of-band code page.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { authorizationCode, browse, CookieJar, csrfOf, makeApplication, pkcePair, signInAndAuthorize, tokenRequest, type TestApplication } from '../helpers/oauth.js';

let s: TestServer;
let alice: TestUser;
let app: TestApplication;
const CB = 'https://client.test/cb';
const query = (extra: Record<string, string> = {}) => ({ client_id: app.application_id, redirect_uri: CB, response_type: 'code', state: 'xyz', ...extra });
const authorizeUrl = (extra: Record<string, string> = {}) => `/oauth/authorize?${new URLSearchParams(query(extra))}`;
const grants = async () => ((await s.ctx.data.get('SELECT COUNT(*) AS n FROM oauth_access_grants')) as { n: number }).n;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice');
  app = await makeApplication(s, alice, `${CB}\nurn:ietf:wg:oauth:2.0:oob\nhttps://client.test/with?x=1`);
});
afterAll(async () => { await s.close(); });
afterEach(() => { vi.useRealTimers(); });

describe('requests that must not redirect', () => {
  it('an unknown or missing client_id, or a redirect_uri not registered: a 400 page, no Location', async () => {
    const jar = new CookieJar();
    for (const url of [
      authorizeUrl({ client_id: 'nope' }),
      `/oauth/authorize?redirect_uri=${encodeURIComponent(CB)}&response_type=code`,
      authorizeUrl({ redirect_uri: 'https://evil.test/cb' }),
      authorizeUrl({ redirect_uri: `${CB}/../evil` }),
      authorizeUrl({ redirect_uri: `${CB}#x` }),
      `/oauth/authorize?client_id=${app.application_id}&response_type=code`,
    ]) {
      const r = await browse(s, jar, 'GET', url);
      expect(r.statusCode, url).toBe(400);
      expect(r.headers.location).toBeUndefined();
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.body).toMatch(/Unknown application|Redirect URI not registered/);
      expect(r.body).not.toContain('evil.test');
    }
  });
});

describe('errors sent back to a registered redirect URI (RFC 6749 4.1.2.1)', () => {
  it('unsupported_response_type, invalid_scope, invalid_request (PKCE plain), with the state', async () => {
    const jar = new CookieJar();
    for (const [extra, error] of [
      [{ response_type: 'token' }, 'unsupported_response_type'], [{ response_type: '' }, 'unsupported_response_type'],
      [{ scope: 'admin' }, 'invalid_scope'], [{ code_challenge: pkcePair().challenge, code_challenge_method: 'plain' }, 'invalid_request'],
    ] as const) {
      const r = await browse(s, jar, 'GET', authorizeUrl(extra));
      expect(r.statusCode, error).toBe(302);
      const to = new URL(String(r.headers.location));
      expect(to.origin + to.pathname).toBe(CB);
      expect(to.searchParams.get('error')).toBe(error);
      expect(to.searchParams.get('error_description')).toBeTruthy();
      expect(to.searchParams.get('state')).toBe('xyz');
    }
  });
});

describe('sign-in page', () => {
  it('is shown to a browser without a session: labelled fields, a CSRF token, safe headers, a CSRF cookie', async () => {
    const jar = new CookieJar();
    const r = await browse(s, jar, 'GET', authorizeUrl());
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('<label for="login">Username or email</label>');
    expect(r.body).toContain('<label for="password">Password</label>');
    expect(r.body).toContain('Test client');
    expect(r.body).toContain(`value="${app.application_id}"`);
    expect(csrfOf(r.body).length).toBeGreaterThan(20);
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['cache-control']).toBe('no-store');
    expect(String(r.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    const cookie = String(r.headers['set-cookie']);
    expect(cookie).toMatch(/^gantry_csrf=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Lax$/);
    const css = await s.app.inject({ method: 'GET', url: '/oauth/assets/oauth.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body).toContain(':focus-visible');
  });

  it('signs in by username or email; the session cookie is HttpOnly, SameSite=Lax, ends after session_expire_delay, stored hashed', async () => {
    for (const login of ['alice', 'alice@example.com']) {
      const jar = new CookieJar();
      const page = await browse(s, jar, 'GET', authorizeUrl());
      const r = await browse(s, jar, 'POST', '/oauth/sign_in', { ...query(), login, password: 'password123', authenticity_token: csrfOf(page.body) });
      expect(r.statusCode).toBe(303);
      expect(String(r.headers.location)).toBe(`authorize?${new URLSearchParams(query())}`);
      const cookie = String(r.headers['set-cookie']);
      expect(cookie).toMatch(/^gantry_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Expires=/);
      expect(cookie).not.toContain('Secure');
      const expires = Date.parse(/Expires=([^;]+)/.exec(cookie)![1]!);
      expect(Math.abs(expires - (Date.now() + 10080 * 60_000))).toBeLessThan(60_000);
      const session = jar.get('gantry_session')!;
      expect(JSON.stringify((await s.ctx.data.all('SELECT * FROM oauth_sessions')))).not.toContain(session);
      const consent = await browse(s, jar, 'GET', authorizeUrl());
      expect(consent.statusCode).toBe(200);
      expect(consent.body).toContain('Authorize <span class="app">Test client</span>?');
    }
  });

  it('a non-default session_expire_delay (5 minutes) sets the cookie\'s Expires and the stored end; past it, signed out', async () => {
    expect((await s.api('PUT', '/application/settings', s.root, { session_expire_delay: 5 })).body.session_expire_delay).toBe(5);
    try {
      const jar = new CookieJar();
      const page = await browse(s, jar, 'GET', authorizeUrl());
      const signedInAt = Date.now();
      const r = await browse(s, jar, 'POST', '/oauth/sign_in', { ...query(), login: 'alice', password: 'password123', authenticity_token: csrfOf(page.body) });
      expect(r.statusCode).toBe(303);
      const expires = Date.parse(/Expires=([^;]+)/.exec(String(r.headers['set-cookie']))![1]!);
      expect(Math.abs(expires - (signedInAt + 5 * 60_000))).toBeLessThan(2000); // Expires has whole seconds
      const row = (await s.ctx.data.get('SELECT created_at, expires_at FROM oauth_sessions ORDER BY id DESC LIMIT 1')) as { created_at: string; expires_at: string };
      expect(Date.parse(row.expires_at) - Date.parse(row.created_at)).toBe(5 * 60_000);
      // four minutes on: still signed in (the consent page); just past five: the sign-in page
      vi.setSystemTime(signedInAt + 4 * 60_000);
      expect((await browse(s, jar, 'GET', authorizeUrl())).body).toContain('Authorize <span class="app">Test client</span>?');
      vi.setSystemTime(Date.parse(row.expires_at) + 1000);
      expect((await browse(s, jar, 'GET', authorizeUrl())).body).toContain('name="password"');
    } finally {
      vi.useRealTimers();
      await s.api('PUT', '/application/settings', s.root, { session_expire_delay: 10080 });
    }
  });

  it('signing in again gives a new session id and ends the old one', async () => {
    const jar = new CookieJar();
    const page = await browse(s, jar, 'GET', authorizeUrl());
    await browse(s, jar, 'POST', '/oauth/sign_in', { ...query(), login: 'alice', password: 'password123', authenticity_token: csrfOf(page.body) });
    const first = jar.get('gantry_session')!;
    await browse(s, jar, 'POST', '/oauth/sign_in', { ...query(), login: 'alice', password: 'password123', authenticity_token: csrfOf(page.body) });
    expect(jar.get('gantry_session')).not.toBe(first);
    const old = await s.app.inject({ method: 'GET', url: authorizeUrl(), headers: { cookie: `gantry_session=${first}` } });
    expect(old.body).toContain('name="password"');
  });

  it('the cookie is Secure when the external URL is https', async () => {
    const original = s.ctx.externalUrl;
    s.ctx.externalUrl = () => 'https://gantry.example.com';
    try {
      const jar = new CookieJar();
      const page = await browse(s, jar, 'GET', authorizeUrl());
      expect(String(page.headers['set-cookie'])).toContain('; Secure');
      const r = await browse(s, jar, 'POST', '/oauth/sign_in', { ...query(), login: 'alice', password: 'password123', authenticity_token: csrfOf(page.body) });
      expect(String(r.headers['set-cookie'])).toMatch(/gantry_session=.*; Secure/);
    } finally {
      s.ctx.externalUrl = original;
    }
  });

  it('a wrong password, an unknown user, a blocked user: the page again with the error (401), no session', async () => {
    const blocked = await s.user('blocked');
    await s.api('PUT', `/users/${blocked.id}/block`, s.root);
    for (const [login, password] of [['alice', 'wrong-password'], ['nobody', 'password123'], ['blocked', 'password123']]) {
      const jar = new CookieJar();
      const page = await browse(s, jar, 'GET', authorizeUrl());
      const r = await browse(s, jar, 'POST', '/oauth/sign_in', { ...query(), login: login!, password: password!, authenticity_token: csrfOf(page.body) });
      expect(r.statusCode, login).toBe(401);
      expect(r.body).toContain('Invalid username, email or password');
      expect(r.body).toContain(`value="${login}"`);
      expect(r.body).not.toContain(password);
      expect(jar.get('gantry_session')).toBeUndefined();
    }
    const jar = new CookieJar();
    const page = await browse(s, jar, 'GET', authorizeUrl());
    const empty = await browse(s, jar, 'POST', '/oauth/sign_in', { ...query(), login: 'alice', password: '', authenticity_token: csrfOf(page.body) });
    expect(empty.statusCode).toBe(400);
  });

  it('after too many failed sign-ins: the page again with when to retry (429), not signed in even with the right password', async () => {
    await s.user('hasty');
    const jar = new CookieJar();
    const page = await browse(s, jar, 'GET', authorizeUrl());
    const attempt = (password: string) => browse(s, jar, 'POST', '/oauth/sign_in', { ...query(), login: 'hasty', password, authenticity_token: csrfOf(page.body) });
    for (let i = 0; i < 10; i++) expect((await attempt('wrong-password')).statusCode).toBe(401);
    const r = await attempt('password123');
    expect(r.statusCode).toBe(429);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    expect(r.body).toMatch(/Too many failed sign-ins for this account. Try again in \d+ minutes?\./);
    expect(r.body).toContain('name="password"');
    expect(jar.get('gantry_session')).toBeUndefined();
  });

  it('a forged or missing CSRF token, or no CSRF cookie: 422, not signed in', async () => {
    const jar = new CookieJar();
    const page = await browse(s, jar, 'GET', authorizeUrl());
    const token = csrfOf(page.body);
    for (const [form, j] of [
      [{ authenticity_token: `${token.slice(0, -2)}xx` }, jar], [{}, jar], [{ authenticity_token: token }, new CookieJar()],
    ] as const) {
      const r = await browse(s, j, 'POST', '/oauth/sign_in', { ...query(), login: 'alice', password: 'password123', ...form });
      expect(r.statusCode).toBe(422);
      expect(r.body).toContain('nothing was done');
      expect(j.get('gantry_session')).toBeUndefined();
    }
  });

  it('with signin_enabled off: the page says so (403) and the form is refused even with the right password', async () => {
    const jar = new CookieJar();
    const page = await browse(s, jar, 'GET', authorizeUrl());
    await s.api('PUT', '/application/settings', s.root, { signin_enabled: false });
    try {
      const shown = await browse(s, jar, 'GET', authorizeUrl());
      expect(shown.statusCode).toBe(403);
      expect(shown.body).toContain('signin_enabled');
      expect(shown.body).not.toContain('name="password"');
      const r = await browse(s, jar, 'POST', '/oauth/sign_in', { ...query(), login: 'alice', password: 'password123', authenticity_token: csrfOf(page.body) });
      expect(r.statusCode).toBe(403);
      expect(jar.get('gantry_session')).toBeUndefined();
    } finally {
      await s.api('PUT', '/application/settings', s.root, { signin_enabled: true });
    }
  });

  it('an ended session, or a user blocked since, sees the sign-in page again', async () => {
    const erin = await s.user('erin');
    const jar = new CookieJar();
    expect((await signInAndAuthorize(s, jar, query(), 'erin')).body).toContain('Authorize');
    await s.ctx.data.run('UPDATE oauth_sessions SET expires_at = ?', [new Date(Date.now() - 1000).toISOString()]);
    expect((await browse(s, jar, 'GET', authorizeUrl())).body).toContain('name="password"');
    expect((await signInAndAuthorize(s, jar, query(), 'erin')).body).toContain('Authorize');
    await s.api('PUT', `/users/${erin.id}/block`, s.root);
    expect((await browse(s, jar, 'GET', authorizeUrl())).body).toContain('name="password"');
  });
});

describe('consent', () => {
  it('names the application, its owner, the user and the access; Authorize redirects with code and state', async () => {
    const jar = new CookieJar();
    const consent = await signInAndAuthorize(s, jar, query(), 'alice');
    expect(consent.body).toContain('(registered by @alice)');
    expect(consent.body).toContain('@alice');
    expect(consent.body).toContain('Full access to the API as you');
    expect(consent.body).toContain('client.test');
    expect(consent.body).toMatch(/<button type="submit" name="decision" value="authorize"/);
    const r = await browse(s, jar, 'POST', '/oauth/authorize', { ...query(), decision: 'authorize', authenticity_token: csrfOf(consent.body) });
    expect(r.statusCode).toBe(302);
    const to = new URL(String(r.headers.location));
    expect(to.origin + to.pathname).toBe(CB);
    expect(to.searchParams.get('state')).toBe('xyz');
    expect(to.searchParams.get('code')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('Deny redirects with error=access_denied and the state; no code is issued', async () => {
    const jar = new CookieJar();
    const consent = await signInAndAuthorize(s, jar, query(), 'alice');
    const before = await grants();
    const r = await browse(s, jar, 'POST', '/oauth/authorize', { ...query(), decision: 'deny', authenticity_token: csrfOf(consent.body) });
    expect(r.statusCode).toBe(302);
    const to = new URL(String(r.headers.location));
    expect(to.searchParams.get('error')).toBe('access_denied');
    expect(to.searchParams.get('state')).toBe('xyz');
    expect(to.searchParams.get('code')).toBeNull();
    expect(await grants()).toBe(before);
  });

  it('a forged CSRF token, or one of another session: 422 and nothing done', async () => {
    const jar = new CookieJar();
    const consent = await signInAndAuthorize(s, jar, query(), 'alice');
    const otherJar = new CookieJar();
    const otherToken = csrfOf((await signInAndAuthorize(s, otherJar, query(), 'alice')).body);
    const before = await grants();
    for (const token of ['forged', otherToken, '']) {
      const r = await browse(s, jar, 'POST', '/oauth/authorize', { ...query(), decision: 'authorize', authenticity_token: token });
      expect(r.statusCode).toBe(422);
      expect(r.headers.location).toBeUndefined();
    }
    expect(await grants()).toBe(before);
    expect((await browse(s, jar, 'POST', '/oauth/authorize', { ...query(), decision: 'authorize', authenticity_token: csrfOf(consent.body) })).statusCode).toBe(302);
  });

  it('a redirect URI with a query keeps it; the code is added', async () => {
    const { location } = await authorizationCode(s, app, 'https://client.test/with?x=1', 'alice');
    const to = new URL(location);
    expect(to.searchParams.get('x')).toBe('1');
    expect(to.searchParams.get('code')).toBeTruthy();
  });

  it('is skipped when the user authorized the application before (a token not revoked), never for gantry-cli', async () => {
    const frank = await s.user('frank');
    const { code, jar } = await authorizationCode(s, app, CB, 'frank');
    const t = await tokenRequest(s, { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: CB });
    expect(t.status).toBe(200);
    const again = await browse(s, jar, 'GET', authorizeUrl());
    expect(again.statusCode).toBe(302);
    expect(new URL(String(again.headers.location)).searchParams.get('code')).toBeTruthy();
    await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: t.body.access_token, client_id: app.application_id, client_secret: app.secret } });
    expect((await browse(s, jar, 'GET', authorizeUrl())).statusCode).toBe(200);
    // the CLI: consent every time
    const pk = pkcePair();
    const cli = { client_id: 'gantry-cli', redirect_uri: 'http://127.0.0.1:4000/cb', response_type: 'code', code_challenge: pk.challenge, code_challenge_method: 'S256' };
    const c = await authorizationCode(s, { application_id: 'gantry-cli' }, cli.redirect_uri, 'frank', cli);
    expect((await tokenRequest(s, { grant_type: 'authorization_code', client_id: 'gantry-cli', code: c.code, redirect_uri: cli.redirect_uri, code_verifier: pk.verifier })).status).toBe(200);
    const page = await browse(s, c.jar, 'GET', `/oauth/authorize?${new URLSearchParams(cli)}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Authorize <span class="app">Gantry CLI</span>?');
    expect(frank.id).toBeGreaterThan(0);
  });

  it('urn:ietf:wg:oauth:2.0:oob: the code is shown on a page and trades with that redirect URI', async () => {
    const oob = 'urn:ietf:wg:oauth:2.0:oob';
    const jar = new CookieJar();
    const consent = await signInAndAuthorize(s, jar, query({ redirect_uri: oob }), 'alice');
    const r = await browse(s, jar, 'POST', '/oauth/authorize', { ...query({ redirect_uri: oob }), decision: 'authorize', authenticity_token: csrfOf(consent.body) });
    expect(r.statusCode).toBe(200);
    const code = /id="code"[^>]*value="([0-9a-f]{64})"/.exec(r.body)![1]!;
    expect((await tokenRequest(s, { grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: oob })).status).toBe(200);
    const denied = await browse(s, jar, 'POST', '/oauth/authorize', { ...query({ redirect_uri: oob }), decision: 'deny', authenticity_token: csrfOf(consent.body) });
    expect(denied.statusCode).toBe(400);
    expect(denied.body).toContain('access_denied');
  });

  it('escapes what applications and users wrote', async () => {
    const evil = await s.api('POST', '/applications', alice, { name: '<script>alert(1)</script>', redirect_uri: CB });
    const jar = new CookieJar();
    const consent = await signInAndAuthorize(s, jar, { client_id: evil.body.application_id, redirect_uri: CB, response_type: 'code', state: '"><b>x' }, 'alice');
    expect(consent.body).not.toContain('<script>');
    expect(consent.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(consent.body).toContain('value="&quot;&gt;&lt;b&gt;x"');
  });
});

describe('sign-out (POST /oauth/sign_out)', () => {
  it('ends the session and goes back to the sign-in page of the request; a forged token is 422', async () => {
    await s.user('gina'); // never authorized the application: the consent page is shown
    const jar = new CookieJar();
    const consent = await signInAndAuthorize(s, jar, query(), 'gina');
    const session = jar.get('gantry_session')!;
    expect((await browse(s, jar, 'POST', '/oauth/sign_out', { ...query(), authenticity_token: 'forged' })).statusCode).toBe(422);
    const r = await browse(s, jar, 'POST', '/oauth/sign_out', { ...query(), authenticity_token: csrfOf(consent.body) });
    expect(r.statusCode).toBe(303);
    expect(jar.get('gantry_session')).toBeUndefined();
    expect((await browse(s, jar, 'GET', authorizeUrl())).body).toContain('name="password"');
    // the old cookie value no longer signs anyone in
    const replay = await s.app.inject({ method: 'GET', url: authorizeUrl(), headers: { cookie: `gantry_session=${session}` } });
    expect(replay.body).toContain('name="password"');
  });
});
