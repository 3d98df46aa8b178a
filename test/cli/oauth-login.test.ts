/**
 * `gantry login --web` below the browser: the PKCE pair, the authorize URL, the loopback listener (a wrong state is
 * refused, an error redirect is shown clearly, a bad code, the timeout), and the OAuth profile's tokens against a real
 * daemon: sent as Bearer, refreshed when the stored expiry has passed (aged in the profile file) or on a 401, and a
 * refused refresh saying to sign in again. The browser step itself is test/e2e/oauth-cli-login.test.ts.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main.js';
import { authHeaders, needsRefresh, REFRESH_MARGIN_MS, resolveConnection } from '../../cli/client.js';
import { authorizeUrl, pkcePair, s256 } from '../../cli/login-web.js';
import { expiryOf } from '../../cli/oauth.js';
import { fakeIO, ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
const configPath = () => join(f.configDir, 'config.json');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const config = () => JSON.parse(readFileSync(configPath(), 'utf8'));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const writeConfig = (c: any) => writeFileSync(configPath(), JSON.stringify(c));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** POST form fields to the daemon's /oauth/token. */
async function token(fields: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${f.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
  return { status: res.status, body: await res.json() as Record<string, string> };
}

/** Tokens of root for the CLI's application (password grant: the browser step is the e2e test's). */
const rootTokens = () => token({ grant_type: 'password', username: 'root', password: ROOT_PASSWORD, client_id: 'gantry-cli' });

/** GET /api/v3/user with a Bearer token: the status. */
const bearerStatus = async (t: string) => (await fetch(`${f.url}/api/v3/user`, { headers: { authorization: `Bearer ${t}` } })).status;

/** Save an OAuth profile "web" (the active one) with these tokens and expiry. */
function saveOAuthProfile(access: string, refresh: string, expiresAt: string): void {
  const c = config();
  c.profiles.web = { url: f.url, token: access, username: 'root', tokenKind: 'oauth', refreshToken: refresh, tokenExpiresAt: expiresAt };
  c.active = 'web';
  writeConfig(c);
}

/** What the server's redirect would bring to the CLI's listener for this authorize URL (its state added): the status. */
async function redirectBack(url: URL, params: Record<string, string>): Promise<number> {
  const q = new URLSearchParams({ ...params, state: url.searchParams.get('state')! });
  return (await fetch(`${url.searchParams.get('redirect_uri')}?${q}`)).status;
}

/** `gantry login --web` running in the background: its IO, its exit code, and the authorize URL it printed. */
function startWebLogin(args: string[] = [], terminal?: { env: Record<string, string> }) {
  const io = fakeIO({ GANTRY_CONFIG_DIR: f.configDir, ...terminal?.env });
  io.stdoutIsTTY = Boolean(terminal);
  const done = run(['node', 'gantry', 'login', '--web', '--url', f.url, ...args], io);
  let finished = false;
  void done.then(() => { finished = true; });
  const url = (async () => {
    for (;;) {
      const line = /^(http\S+)$/m.exec(io.stdout);
      if (line) return new URL(line[1]!);
      if (finished) throw new Error(`login ended without a URL: ${io.stderr}`);
      await sleep(10);
    }
  })();
  return { io, done, url };
}

beforeAll(async () => {
  f = await startCliFixture();
  const r = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(r.code, r.stderr).toBe(0);
});

afterAll(async () => {
  await f?.close();
});

describe('PKCE (RFC 7636) and the authorize URL', () => {
  it('S256 is the base64url SHA-256 of the verifier (the RFC 7636 appendix B example)', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('a pair: a fresh 43-character verifier and its challenge', () => {
    const a = pkcePair();
    const b = pkcePair();
    expect(a.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.challenge).toBe(s256(a.verifier));
    expect(b.verifier).not.toBe(a.verifier);
  });

  it('the authorize URL names the CLI application, the loopback redirect, the state and the S256 challenge', () => {
    const u = new URL(authorizeUrl('https://g.example.com', 'http://127.0.0.1:5000/callback', 'st', 'ch'));
    expect(u.origin + u.pathname).toBe('https://g.example.com/oauth/authorize');
    expect(Object.fromEntries(u.searchParams)).toEqual({
      client_id: 'gantry-cli', redirect_uri: 'http://127.0.0.1:5000/callback', response_type: 'code', state: 'st', code_challenge: 'ch', code_challenge_method: 'S256',
    });
  });
});

describe('an OAuth profile as a connection', () => {
  const profile = { url: 'http://g', token: 'acc', tokenKind: 'oauth', refreshToken: 'ref', tokenExpiresAt: '2030-01-01T00:00:00.000Z' };
  const cfg = { active: 'p', profiles: { p: profile } };

  it('carries the refresh token and the expiry, and authenticates with Authorization: Bearer', () => {
    const c = resolveConnection({}, {}, cfg);
    expect(c.oauth).toEqual({ refreshToken: 'ref', expiresAt: Date.parse('2030-01-01T00:00:00.000Z') });
    expect(authHeaders(c)).toEqual({ authorization: 'Bearer acc' });
    // Another token for the same server (a flag) is not the profile's OAuth token.
    const flagged = resolveConnection({ token: 'x'.repeat(20) }, {}, cfg);
    expect(flagged.oauth).toBeUndefined();
    expect(authHeaders(flagged)).toEqual({ 'private-token': 'x'.repeat(20) });
  });

  it('needs a refresh from 60 s before the expiry on; never without an expiry', () => {
    const c = resolveConnection({}, {}, cfg);
    const at = c.oauth!.expiresAt!;
    expect(needsRefresh(c, at - REFRESH_MARGIN_MS - 1)).toBe(false);
    expect(needsRefresh(c, at - REFRESH_MARGIN_MS)).toBe(true);
    expect(needsRefresh(c, at + 1)).toBe(true);
    expect(needsRefresh({ ...c, oauth: { refreshToken: 'ref', expiresAt: null } })).toBe(false);
    expect(needsRefresh({ url: 'http://g', token: 't', profile: null })).toBe(false);
  });

  it('the stored expiry counts from the server\'s created_at', () => {
    const now = Date.parse('2026-01-01T00:00:10Z');
    expect(expiryOf({ access_token: 'a', token_type: 'bearer', expires_in: 7200, created_at: now / 1000 - 10 }, now)).toBe('2026-01-01T02:00:00.000Z');
    expect(expiryOf({ access_token: 'a', token_type: 'bearer', expires_in: 7200 }, now)).toBe('2026-01-01T02:00:10.000Z');
    expect(expiryOf({ access_token: 'a', token_type: 'bearer', expires_in: null }, now)).toBeUndefined();
  });
});

describe('gantry login --web: the loopback listener', () => {
  it('prints the URL when stdout is no terminal, refuses a wrong state, shows access_denied clearly, saves nothing', async () => {
    const before = config();
    const login = startWebLogin();
    const url = await login.url;
    const redirect = new URL(url.searchParams.get('redirect_uri')!);
    expect(redirect.hostname).toBe('127.0.0.1');
    expect(redirect.pathname).toBe('/callback');
    expect(Number(redirect.port)).toBeGreaterThan(0);
    expect(url.searchParams.get('client_id')).toBe('gantry-cli');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const state = url.searchParams.get('state')!;
    expect(state.length).toBeGreaterThanOrEqual(16);
    expect(login.io.stderr).toContain('Open this URL in a browser to sign in');
    expect(login.io.stderr).toContain('Waiting for the browser sign-in...');

    // Another address of the listener, then a redirect whose state is not this login's: refused, still waiting.
    expect((await fetch(new URL('/favicon.ico', redirect))).status).toBe(404);
    const forged = await fetch(`${redirect}?code=stolen&state=${state}x`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('the state does not match');
    expect(login.io.stderr).toContain('Refused an answer to the sign-in address whose state does not match');

    const denied = await fetch(`${redirect}?error=access_denied&error_description=The+user+denied&state=${encodeURIComponent(state)}`);
    expect(denied.status).toBe(400);
    expect(await denied.text()).toContain('Sign-in denied');
    expect(await login.done).toBe(1);
    expect(login.io.stderr).toContain('gantry: the sign-in was denied in the browser (access_denied)');
    expect(login.io.stderr).toContain('hint: run `gantry login --web` again and choose Authorize');
    expect(config()).toEqual(before);
    // The listener is gone.
    await expect(fetch(`${redirect}?state=${state}&code=late`)).rejects.toThrow();
  });

  it('on a terminal it opens the browser setting\'s program with the URL (and still prints it)', async () => {
    const opened = join(f.configDir, 'opened-url');
    const login = startWebLogin([], { env: { GANTRY_BROWSER: `printf %s >${opened}` } });
    const url = await login.url;
    expect(login.io.stderr).toContain('in your browser; if no page appeared, open the URL below');
    expect(login.io.stderr).not.toContain('Open this URL in a browser to sign in');
    expect(readFileSync(opened, 'utf8')).toBe(url.toString());
    expect(await redirectBack(url, { error: 'access_denied' })).toBe(400);
    expect(await login.done).toBe(1);
  });

  it('on a terminal without a browser that starts: says so and prints the URL to open', async () => {
    const login = startWebLogin([], { env: { GANTRY_BROWSER: '/nonexistent/browser' } });
    const url = await login.url;
    expect(login.io.stderr).toContain('Could not open a browser (/nonexistent/browser was not found)');
    expect(login.io.stderr).toContain('Open this URL in a browser to sign in');
    expect(await redirectBack(url, { error: 'access_denied' })).toBe(400);
    expect(await login.done).toBe(1);
  });

  it('--no-browser on a terminal prints the URL without starting anything', async () => {
    const opened = join(f.configDir, 'not-opened');
    const login = startWebLogin(['--no-browser'], { env: { GANTRY_BROWSER: `printf %s >${opened}` } });
    const url = await login.url;
    expect(login.io.stderr).toContain('Open this URL in a browser to sign in');
    expect(await redirectBack(url, { error: 'access_denied' })).toBe(400);
    expect(await login.done).toBe(1);
    expect(existsSync(opened)).toBe(false);
  });

  it('another error of the server is shown with its description', async () => {
    const login = startWebLogin();
    const url = await login.url;
    expect(await redirectBack(url, { error: 'invalid_scope', error_description: 'The scope "admin" is unknown' })).toBe(400);
    expect(await login.done).toBe(1);
    expect(login.io.stderr).toContain('gantry: the server refused the sign-in: invalid_scope (The scope "admin" is unknown)');
  });

  it('a code the server refuses: the browser and the terminal say the sign-in failed; nothing saved', async () => {
    const before = config();
    const login = startWebLogin();
    const url = await login.url;
    const page = await fetch(`${url.searchParams.get('redirect_uri')}?code=not-a-code&state=${encodeURIComponent(url.searchParams.get('state')!)}`);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('Sign-in failed');
    expect(await login.done).toBe(1);
    expect(login.io.stderr).toContain('gantry: the server refused the sign-in: invalid_grant');
    expect(login.io.stderr).toContain('hint: run `gantry login --web` again');
    expect(config()).toEqual(before);
  });

  it('gives up after --timeout with a clear message', async () => {
    const login = startWebLogin(['--timeout', '1']);
    await login.url;
    expect(await login.done).toBe(1);
    expect(login.io.stderr).toContain('gantry: no sign-in arrived from the browser within 1 second');
    expect(login.io.stderr).toContain('--timeout <seconds> gives more time');
  });

  it('--web with a password or a token is wrong usage', async () => {
    const r = await f.cli(['login', '--web', '--url', f.url, '--username', 'root']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--web signs in with the browser');
  });
});

describe('an OAuth profile: Bearer, refresh, sign in again', () => {
  it('uses the access token as a Bearer token; auth status shows the kind and the expiry, never the token', async () => {
    const t = await rootTokens();
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    saveOAuthProfile(t.body.access_token!, t.body.refresh_token!, expiresAt);
    const r = await f.cli(['auth', 'status']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^user: +root \(administrator\)$/m);
    expect(r.stdout).toContain('OAuth access token');
    expect(r.stdout).toMatch(new RegExp(`^expires: +${expiresAt.replace(/\./g, '\\.')} \\(refreshed by itself`, 'm'));
    expect(r.stdout + r.stderr).not.toContain(t.body.access_token);
    expect(r.stdout + r.stderr).not.toContain(t.body.refresh_token);
    const json = await f.cli(['auth', 'status', '--json']);
    expect(json.json()).toMatchObject({ token_kind: 'oauth', token_expires: expiresAt, user: 'root' });
    // Nothing was refreshed: the token is not near its expiry.
    expect(config().profiles.web.token).toBe(t.body.access_token);
  });

  it('an expired token (the stored expiry aged) is refreshed before the request and the new tokens saved (0600)', async () => {
    const t = await rootTokens();
    saveOAuthProfile(t.body.access_token!, t.body.refresh_token!, new Date(Date.now() - 1000).toISOString());
    const r = await f.cli(['project', 'list', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const p = config().profiles.web;
    expect(p.token).not.toBe(t.body.access_token);
    expect(p.refreshToken).not.toBe(t.body.refresh_token);
    expect(Date.parse(p.tokenExpiresAt)).toBeGreaterThan(Date.now() + 7000_000);
    expect(statSync(configPath()).mode & 0o777).toBe(0o600);
    // Rotation: the old pair is revoked, the new token works.
    expect(await bearerStatus(t.body.access_token!)).toBe(401);
    expect(await bearerStatus(p.token)).toBe(200);
    expect(r.stdout + r.stderr).not.toContain(p.token);
  });

  it('within 60 s of the expiry counts as expired', async () => {
    const t = await rootTokens();
    saveOAuthProfile(t.body.access_token!, t.body.refresh_token!, new Date(Date.now() + 30_000).toISOString());
    expect((await f.cli(['project', 'list'])).code).toBe(0);
    expect(config().profiles.web.token).not.toBe(t.body.access_token);
  });

  it('a 401 with an OAuth profile refreshes once and sends the request again', async () => {
    const t = await rootTokens();
    saveOAuthProfile('a-token-the-server-never-issued', t.body.refresh_token!, new Date(Date.now() + 3_600_000).toISOString());
    const r = await f.cli(['project', 'list', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const p = config().profiles.web;
    expect(p.token).not.toBe('a-token-the-server-never-issued');
    expect(await bearerStatus(p.token)).toBe(200);
  });

  it('gantry api and the project list use the Bearer token too', async () => {
    const r = await f.cli(['api', 'user', '--jq', '.username']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('root\n');
  });

  it('a refused refresh (revoked): the CLI says to sign in with the browser again', async () => {
    const t = await rootTokens();
    saveOAuthProfile(t.body.access_token!, t.body.refresh_token!, new Date(Date.now() - 1000).toISOString());
    const revoke = await fetch(`${f.url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: t.body.access_token!, client_id: 'gantry-cli' }) });
    expect(revoke.status).toBe(200);
    const r = await f.cli(['project', 'list']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`gantry: your sign-in to ${f.url} has expired or was revoked`);
    expect(r.stderr).toContain(`hint: run \`gantry login --web --url ${f.url}\` to sign in again`);
    // Not expired locally but revoked on the server: the 401, a refused refresh, the same advice.
    saveOAuthProfile(t.body.access_token!, t.body.refresh_token!, new Date(Date.now() + 3_600_000).toISOString());
    const again = await f.cli(['project', 'list']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('gantry login --web');
    const status = await f.cli(['auth', 'status']);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain('gantry login --web');
  });

  it('an OAuth access token from GANTRY_TOKEN or login --token (64 hex digits) is sent as Bearer, never refreshed', async () => {
    const t = await rootTokens();
    const env = { GANTRY_URL: f.url, GANTRY_TOKEN: t.body.access_token! };
    const status = await f.cli(['auth', 'status', '--json'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.json()).toMatchObject({ user: 'root', token_kind: 'oauth', token_source: 'GANTRY_TOKEN' });
    const saved = await f.cli(['login', '--url', f.url, '--token', t.body.access_token!, '--profile', 'bearer']);
    expect(saved.code, saved.stderr).toBe(0);
    expect(config().profiles.bearer).toMatchObject({ tokenKind: 'oauth', username: 'root' });
    expect((await f.cli(['--profile', 'bearer', 'project', 'list'])).code).toBe(0);
    const refused = await f.cli(['project', 'list'], { env: { GANTRY_URL: f.url, GANTRY_TOKEN: 'ab'.repeat(32) } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`gantry: ${f.url} refused the OAuth access token`);
    expect(refused.stderr).toContain('hint: get a new one, or sign in with `gantry login --web');
  });

  it('logout of an OAuth profile revokes its tokens on the server', async () => {
    const t = await rootTokens();
    saveOAuthProfile(t.body.access_token!, t.body.refresh_token!, new Date(Date.now() + 3_600_000).toISOString());
    const r = await f.cli(['logout', '--profile', 'web']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Revoked the OAuth token on ${f.url}.`);
    expect(config().profiles.web).toBeUndefined();
    expect(await bearerStatus(t.body.access_token!)).toBe(401);
    expect((await token({ grant_type: 'refresh_token', refresh_token: t.body.refresh_token!, client_id: 'gantry-cli' })).body.error).toBe('invalid_grant');
    // A server that does not answer: the profile is removed all the same, with a note.
    saveOAuthProfile(t.body.access_token!, t.body.refresh_token!, new Date(Date.now() + 3_600_000).toISOString());
    const c = config();
    c.profiles.web.url = 'http://127.0.0.1:9';
    writeConfig(c);
    const offline = await f.cli(['logout', '--profile', 'web']);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain('Could not revoke the OAuth token on http://127.0.0.1:9');
    expect(config().profiles.web).toBeUndefined();
  });

  it('a password login over an OAuth profile drops the refresh token and the expiry', async () => {
    const r = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin', '--profile', 'web'], { input: `${ROOT_PASSWORD}\n` });
    expect(r.code, r.stderr).toBe(0);
    const p = config().profiles.web;
    expect(p.tokenKind).toBe('private');
    expect(p.refreshToken).toBeUndefined();
    expect(p.tokenExpiresAt).toBeUndefined();
  });
});
