/**
 * OAuth and SSH keys across two gantryd processes on one PostgreSQL database and one data directory: every step of a
 * browser's sign-in may land on either daemon behind a load balancer, so nothing of it may live in one process. The
 * sign-in page comes from A, its form is posted to B with A's cookie and CSRF token, the consent is approved on A,
 * the code is traded on B and the token used on A; a refresh, a revocation and a sign-out made on one hold on the
 * other at once. Keys and deploy keys added through one are listed and used through the other, and the same key
 * added through both at once is one 201 and one 400. (The SSH server itself is not started on PostgreSQL yet, so the
 * keys are checked through the API.) Runs when GANTRY_TEST_DATABASE_URL is set; needs the build.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type Daemon } from './helpers.js';
import { startDaemonPair, type DaemonPair } from './database.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { CookieJar, csrfOf, pkcePair } from '../helpers/oauth.js';
import { generateKeyPair } from '../helpers/ssh-keys.js';

const PASSWORD = 'two-daemons-oauth-root-password';
const CB = 'https://client.test/cb';

/** A browser request to a daemon with the cookies of `jar` (kept from every answer); redirects are not followed. */
async function browse(jar: CookieJar, base: string, method: 'GET' | 'POST', path: string, form?: Record<string, string>) {
  const res = await fetch(`${base}${path}`, {
    method, redirect: 'manual',
    headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    body: form ? new URLSearchParams(form).toString() : undefined,
  });
  jar.take({ 'set-cookie': res.headers.getSetCookie() });
  return { status: res.status, location: res.headers.get('location'), body: await res.text() };
}

/** POST /oauth/token with form fields, parsed. */
async function token(base: string, fields: Record<string, string>) {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, body: await res.json() };
}

/** GET /api/v3/user with a bearer token. */
const me = async (base: string, accessToken: string) => {
  const res = await fetch(`${base}/api/v3/user`, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: res.status, body: res.status === 200 ? await res.json() : null };
};

describe.skipIf(!TEST_DATABASE_URL)('OAuth and keys across two gantryd processes on one PostgreSQL database', () => {
  let a: Daemon;
  let b: Daemon;
  let pair: DaemonPair | undefined;
  let root: string;
  let olivia: { id: number; token: string };
  let client: { application_id: string; secret: string };
  const why = (r: { body: unknown }) => `${typeof r.body === 'string' ? r.body.slice(0, 500) : JSON.stringify(r.body)}\nA: ${a.stderr().slice(-3000)}\nB: ${b.stderr().slice(-3000)}`;

  beforeAll(async () => {
    pair = await startDaemonPair(TEST_DATABASE_URL!, PASSWORD, [], 'gantry-two-oauth-');
    ({ a, b } = pair);
    root = (await api(a.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
    const user = await api(a.url, 'POST', '/users', root, { username: 'olivia', email: 'olivia@example.com', name: 'Olivia', password: 'oliviapassword1' });
    expect(user.status, why(user)).toBe(201);
    const session = await api(b.url, 'POST', '/session', null, { login: 'olivia', password: 'oliviapassword1' });
    olivia = { id: user.body.id, token: session.body.private_token };
    const registered = await api(b.url, 'POST', '/applications', olivia.token, { name: 'Two-daemon client', redirect_uri: CB });
    expect(registered.status, why(registered)).toBe(201);
    client = registered.body;
  }, 90_000);

  afterAll(async () => {
    if (pair) expect(await pair.stop()).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
  });

  it('a sign-in started on A, posted to B, approved on A, traded on B: the token works on A; refresh, revoke and sign-out hold across', async () => {
    const jar = new CookieJar();
    const pkce = pkcePair();
    const query = {
      client_id: client.application_id, redirect_uri: CB, response_type: 'code', state: 'across', code_challenge: pkce.challenge, code_challenge_method: 'S256',
    };
    const qs = new URLSearchParams(query).toString();

    // A shows the sign-in page and sets the CSRF cookie its token is bound to.
    const signInPage = await browse(jar, a.url, 'GET', `/oauth/authorize?${qs}`);
    expect(signInPage.status, why(signInPage)).toBe(200);
    expect(signInPage.body).toContain('name="password"');
    expect(jar.get('gantry_csrf')).toBeTruthy();

    // B takes the form with A's cookie and token: the session it starts is a row.
    const signedIn = await browse(jar, b.url, 'POST', '/oauth/sign_in', { ...query, login: 'olivia', password: 'oliviapassword1', authenticity_token: csrfOf(signInPage.body) });
    expect(signedIn.status, why(signedIn)).toBe(303);
    expect(jar.get('gantry_session')).toBeTruthy();

    // B shows the consent page (the session made there), A takes the approval with its session-bound token.
    const consent = await browse(jar, b.url, 'GET', `/oauth/${signedIn.location}`);
    expect(consent.status, why(consent)).toBe(200);
    expect(consent.body).toContain('Authorize <span class="app">Two-daemon client</span>?');
    // A would show the same page to this browser (signed in there too) with the same token.
    const consentOnA = await browse(jar, a.url, 'GET', `/oauth/${signedIn.location}`);
    expect(csrfOf(consentOnA.body)).toBe(csrfOf(consent.body));
    const approved = await browse(jar, a.url, 'POST', '/oauth/authorize', { ...query, decision: 'authorize', authenticity_token: csrfOf(consent.body) });
    expect(approved.status, why(approved)).toBe(302);
    const redirect = new URL(approved.location!);
    expect(redirect.searchParams.get('state')).toBe('across');
    const code = redirect.searchParams.get('code')!;

    // B trades the code (issued on A); A takes the token at once.
    const fields = { grant_type: 'authorization_code', client_id: client.application_id, client_secret: client.secret, code, redirect_uri: CB, code_verifier: pkce.verifier };
    const traded = await token(b.url, fields);
    expect(traded.status, why(traded)).toBe(200);
    expect(await me(a.url, traded.body.access_token)).toMatchObject({ status: 200, body: { id: olivia.id, username: 'olivia' } });
    // The same code on A is a replay: refused, and the tokens issued for it revoked on both daemons.
    const replay = await token(a.url, fields);
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    for (const d of [a, b]) expect((await me(d.url, traded.body.access_token)).status).toBe(401);

    // A second authorization (the consent asked again: the replay revoked the app's tokens) approved on B, its code
    // traded on A, refreshed on A, revoked on B.
    const againQuery = { ...query, state: 'again' };
    const again = await browse(jar, b.url, 'GET', `/oauth/authorize?${new URLSearchParams(againQuery).toString()}`);
    expect(again.status, why(again)).toBe(200);
    const approvedOnB = await browse(jar, b.url, 'POST', '/oauth/authorize', { ...againQuery, decision: 'authorize', authenticity_token: csrfOf(again.body) });
    expect(approvedOnB.status, why(approvedOnB)).toBe(302);
    const code2 = new URL(approvedOnB.location!).searchParams.get('code')!;
    const pair = await token(a.url, { ...fields, code: code2 });
    expect(pair.status, why(pair)).toBe(200);
    const refreshed = await token(a.url, { grant_type: 'refresh_token', client_id: client.application_id, client_secret: client.secret, refresh_token: pair.body.refresh_token });
    expect(refreshed.status, why(refreshed)).toBe(200);
    expect((await me(b.url, pair.body.access_token)).status).toBe(401); // rotated on A: the old token is refused on B
    expect((await me(b.url, refreshed.body.access_token)).status).toBe(200);
    const info = await fetch(`${b.url}/oauth/token/info`, { headers: { authorization: `Bearer ${refreshed.body.access_token}` } });
    expect(await info.json()).toMatchObject({ resource_owner_id: olivia.id, scopes: ['api'], application: { uid: client.application_id } });
    const revoked = await fetch(`${b.url}/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshed.body.access_token, client_id: client.application_id, client_secret: client.secret }).toString(),
    });
    expect(revoked.status).toBe(200);
    expect((await me(a.url, refreshed.body.access_token)).status).toBe(401);

    // Signed out on A (with the session-bound token of a page from B): B shows the sign-in page again.
    const page = await browse(jar, b.url, 'GET', `/oauth/authorize?${qs}`);
    expect(page.body).toContain('Authorize <span class="app">'); // still signed in, on B too
    const out = await browse(jar, a.url, 'POST', '/oauth/sign_out', { ...query, authenticity_token: csrfOf(consent.body) });
    expect(out.status, why(out)).toBe(303);
    const after = await browse(jar, b.url, 'GET', `/oauth/authorize?${qs}`);
    expect(after.status).toBe(200);
    expect(after.body).toContain('name="password"');
  });

  it('the password grant on one daemon, the token on the other; one refresh token used on both at once rotates once', async () => {
    const t = await token(a.url, { grant_type: 'password', username: 'olivia', password: 'oliviapassword1' });
    expect(t.status, why(t)).toBe(200);
    expect((await me(b.url, t.body.access_token)).body).toMatchObject({ id: olivia.id });
    const answers = await Promise.all([a, b].map((d) => token(d.url, { grant_type: 'refresh_token', refresh_token: t.body.refresh_token })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  it('a key added through A is listed and found through B, deleted through B and gone on A; the same key through both at once: one 201, one 400', async () => {
    const pair = generateKeyPair('ed25519', { comment: 'olivia@two' });
    const added = await api(a.url, 'POST', '/user/keys', olivia.token, { title: 'laptop', key: pair.publicKey });
    expect(added.status, why(added)).toBe(201);
    expect((await api(b.url, 'GET', '/user/keys', olivia.token)).body).toEqual([added.body]);
    expect((await api(b.url, 'GET', `/keys/${added.body.id}`, root)).body).toMatchObject({ id: added.body.id, user: { id: olivia.id, username: 'olivia' } });
    expect((await api(b.url, 'GET', `/users/${olivia.id}/keys`, root)).body).toEqual([added.body]);
    // The key is taken on both daemons.
    const taken = await api(b.url, 'POST', '/user/keys', root, { title: 'mine?', key: pair.publicKey });
    expect(taken).toMatchObject({ status: 400, body: { message: { fingerprint: ['has already been taken'] } } });
    expect((await api(b.url, 'DELETE', `/user/keys/${added.body.id}`, olivia.token)).status).toBe(200);
    expect((await api(a.url, 'GET', '/user/keys', olivia.token)).body).toEqual([]);

    const raced = generateKeyPair('ed25519', { comment: 'raced@two' });
    const answers = await Promise.all([a, b].map((d) => api(d.url, 'POST', '/user/keys', olivia.token, { title: 'raced', key: raced.publicKey })));
    expect(answers.map((r) => r.status).sort(), why(answers[0]!)).toEqual([201, 400]);
    expect(answers.find((r) => r.status === 400)!.body).toEqual({ message: { fingerprint: ['has already been taken'] } });
    expect((await api(a.url, 'GET', '/user/keys', olivia.token)).body).toHaveLength(1);
  });

  it('a deploy key added on A is listed on B, enabled on another project through B, removed from both and gone', async () => {
    const first = await api(a.url, 'POST', '/projects', olivia.token, { name: 'deploy-one' });
    const second = await api(b.url, 'POST', '/projects', olivia.token, { name: 'deploy-two' });
    expect([first.status, second.status], why(first)).toEqual([201, 201]);
    const pair = generateKeyPair('ed25519', { comment: 'deploy@two' });
    const key = await api(a.url, 'POST', `/projects/${first.body.id}/deploy_keys`, olivia.token, { title: 'ci', key: pair.publicKey });
    expect(key.status, why(key)).toBe(201);
    expect((await api(b.url, 'GET', `/projects/${first.body.id}/deploy_keys`, olivia.token)).body).toEqual([key.body]);
    const enabled = await api(b.url, 'POST', `/projects/${second.body.id}/deploy_keys/${key.body.id}/enable`, olivia.token);
    expect(enabled.status, why(enabled)).toBe(201);
    expect((await api(a.url, 'GET', `/projects/${second.body.id}/keys/${key.body.id}`, olivia.token)).body).toEqual(key.body);
    expect((await api(a.url, 'GET', '/deploy_keys', root)).body).toEqual([key.body]);
    // Removed from both projects at once, one through each daemon: the key goes (no project uses it).
    const removed = await Promise.all([
      api(a.url, 'DELETE', `/projects/${first.body.id}/deploy_keys/${key.body.id}`, olivia.token),
      api(b.url, 'DELETE', `/projects/${second.body.id}/deploy_keys/${key.body.id}`, olivia.token),
    ]);
    expect(removed.map((r) => r.status)).toEqual([200, 200]);
    expect((await api(b.url, 'GET', '/deploy_keys', root)).body).toEqual([]);
    expect((await api(a.url, 'GET', `/keys/${key.body.id}`, root)).status).toBe(404);
  });
});
