/** OAuth test helpers: register an application, and walk the browser flow (sign-in, consent) through app.inject. */
import { createHash, randomBytes } from 'node:crypto';
import type { TestServer, TestUser } from './app.js';

/** A registered application as POST /applications answers it. */
export interface TestApplication {
  id: number;
  application_id: string;
  secret: string;
  callback_url: string;
}

/** Register an application as `owner` (redirect URI https://client.test/cb unless given). */
export async function makeApplication(s: TestServer, owner: TestUser, redirectUri = 'https://client.test/cb', extra: Record<string, unknown> = {}): Promise<TestApplication> {
  const r = await s.api('POST', '/applications', owner, { name: 'Test client', redirect_uri: redirectUri, ...extra });
  if (r.status !== 201) throw new Error(`application create failed: ${r.status} ${r.text}`);
  return r.body;
}

/** A PKCE verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A cookie jar for app.inject: remembers Set-Cookie headers, sends them back. */
export class CookieJar {
  private readonly values = new Map<string, string>();

  /** Take the cookies of a response. */
  take(headers: Record<string, unknown>): void {
    const set = headers['set-cookie'];
    for (const line of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair, ...attrs] = String(line).split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const expired = attrs.some((a) => /expires=thu, 01 jan 1970/i.test(a.trim()));
      if (expired) this.values.delete(name);
      else this.values.set(name, pair!.slice(eq + 1).trim());
    }
  }

  /** The Cookie header to send. */
  header(): string {
    return [...this.values].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(name: string): string | undefined {
    return this.values.get(name);
  }
}

/** The authenticity_token of the first form of a page. */
export function csrfOf(html: string): string {
  const m = /name="authenticity_token" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no CSRF token in page: ${html.slice(0, 300)}`);
  return m[1]!;
}

/** A browser's answer through app.inject, with its cookies kept in `jar`. */
export async function browse(s: TestServer, jar: CookieJar, method: 'GET' | 'POST', url: string, form?: Record<string, string>) {
  const res = await s.app.inject({
    method, url, headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
  });
  jar.take(res.headers);
  return res;
}

/** Sign `user` in through the sign-in page of an authorization request; returns the consent page. */
export async function signInAndAuthorize(s: TestServer, jar: CookieJar, query: Record<string, string>, login: string, password = 'password123') {
  const qs = new URLSearchParams(query).toString();
  const signInPage = await browse(s, jar, 'GET', `/oauth/authorize?${qs}`);
  if (!signInPage.body.includes('name="password"')) return signInPage; // already signed in
  const signedIn = await browse(s, jar, 'POST', '/oauth/sign_in', { ...query, login, password, authenticity_token: csrfOf(signInPage.body) });
  if (signedIn.statusCode !== 303) throw new Error(`sign-in failed: ${signedIn.statusCode} ${signedIn.body.slice(0, 300)}`);
  return browse(s, jar, 'GET', `/oauth/${signedIn.headers.location}`);
}

/**
 * Get an authorization code for `user`: sign in, approve the consent page; returns the code and the redirect URL.
 * `query` defaults to response_type=code and a state.
 */
export async function authorizationCode(s: TestServer, app: { application_id: string }, redirectUri: string, login: string, query: Record<string, string> = {}) {
  const jar = new CookieJar();
  const q = { client_id: app.application_id, redirect_uri: redirectUri, response_type: 'code', state: 'st4te', ...query };
  const consent = await signInAndAuthorize(s, jar, q, login);
  if (consent.statusCode === 302) return { code: new URL(String(consent.headers.location)).searchParams.get('code')!, location: String(consent.headers.location), jar };
  const answer = await browse(s, jar, 'POST', '/oauth/authorize', { ...q, decision: 'authorize', authenticity_token: csrfOf(consent.body) });
  if (answer.statusCode !== 302) throw new Error(`authorize failed: ${answer.statusCode} ${answer.body.slice(0, 300)}`);
  const location = String(answer.headers.location);
  return { code: new URL(location).searchParams.get('code')!, location, jar };
}

/** POST /oauth/token with form fields (or JSON with `json`), parsed. */
export async function tokenRequest(s: TestServer, fields: Record<string, string>, opts: { json?: boolean; headers?: Record<string, string> } = {}) {
  const res = await s.app.inject({
    method: 'POST', url: '/oauth/token',
    headers: { 'content-type': opts.json ? 'application/json' : 'application/x-www-form-urlencoded', ...opts.headers },
    payload: opts.json ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}
