/**
 * The CLI as an OAuth client of its server: token requests at <url>/oauth/token for the built-in public application
 * `gantry-cli`, storing the tokens in a profile, and refreshing them. Loaded only by `gantry login --web` and when an
 * OAuth profile's token needs a refresh (client.ts).
 */
import { HttpClient } from '../shared/http.js';
import { ApiError, needsRefresh, toCliError, type Connection } from './client.js';
import { CliError } from './errors.js';
import { loadConfig, saveConfig, type Profile } from './profiles.js';

/** The client_id of the built-in application the CLI signs in as (public: no secret; PKCE required). */
export const CLI_CLIENT_ID = 'gantry-cli';

/** A successful answer of POST /oauth/token. */
export interface TokenAnswer {
  access_token: string;
  token_type: string;
  expires_in?: number | null;
  refresh_token?: string | null;
  scope?: string;
  created_at?: number;
}

/** The token endpoint refused (RFC 6749 5.2): `error` such as invalid_grant, and its description. */
export class OAuthError extends CliError {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string | null,
    hint: string | null,
  ) {
    super(`the server refused the sign-in: ${error}${description ? ` (${description})` : ''}`, hint);
  }
}

/** The error a person sees when an OAuth profile's tokens no longer work (a 401): sign in again in the browser. */
export function signInAgain(url: string, why = 'has expired or was revoked'): ApiError {
  return new ApiError(401, `your sign-in to ${url} ${why}`, `run \`gantry login --web --url ${url}\` to sign in again`);
}

/** POST form fields to <url>/oauth/token; the answer, or an OAuthError carrying the RFC 6749 error. */
export async function requestToken(url: string, fields: Record<string, string>): Promise<TokenAnswer> {
  const http = new HttpClient({ baseUrl: url });
  try {
    let status: number;
    let text: string;
    try {
      const res = await http.send('POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
      status = res.status;
      text = await res.body.text();
    } catch (e) {
      throw toCliError(e, url);
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      /* not JSON: handled below */
    }
    if (status === 200 && typeof body.access_token === 'string') return body as unknown as TokenAnswer;
    if (typeof body.error === 'string') {
      const description = typeof body.error_description === 'string' ? body.error_description : null;
      throw new OAuthError(status, body.error, description, null);
    }
    throw new CliError(`${url}/oauth/token answered HTTP ${status}`, status === 404
      ? 'this server has no OAuth sign-in; log in with `gantry login --username <name>` or a token instead'
      : 'the server failed; its log has the details (`gantry daemon logs`)');
  } finally {
    await http.close();
  }
}

/**
 * Revoke a profile's OAuth tokens on its server (RFC 7009, POST /oauth/revoke as the CLI's application): the refresh
 * token when there is one (its access token goes with it), else the access token. True when the server answered 200.
 */
export async function revokeProfileTokens(p: Profile): Promise<boolean> {
  const http = new HttpClient({ baseUrl: p.url, timeoutMs: 10_000 });
  try {
    const fields = p.refreshToken ? { token: p.refreshToken, token_type_hint: 'refresh_token' } : { token: p.token, token_type_hint: 'access_token' };
    const res = await http.send('POST', '/oauth/revoke', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, client_id: CLI_CLIENT_ID }).toString(),
    });
    await res.body.dump();
    return res.status === 200;
  } catch {
    return false;
  } finally {
    await http.close();
  }
}

/** When an access token of this answer expires (ISO 8601), counted from the server's created_at when it sent one. */
export function expiryOf(answer: TokenAnswer, now = Date.now()): string | undefined {
  if (typeof answer.expires_in !== 'number') return undefined;
  const start = typeof answer.created_at === 'number' ? Math.min(answer.created_at * 1000, now) : now;
  return new Date(start + answer.expires_in * 1000).toISOString();
}

/** The profile fields of an OAuth login: the access token, the refresh token and the expiry. */
export function oauthProfileFields(answer: TokenAnswer, now = Date.now()): Pick<Profile, 'token' | 'tokenKind' | 'refreshToken' | 'tokenExpiresAt'> {
  return { token: answer.access_token, tokenKind: 'oauth', refreshToken: answer.refresh_token ?? undefined, tokenExpiresAt: expiryOf(answer, now) };
}

/** The OAuth state of a connection as the profile holds it. */
function adopt(connection: Connection, p: Profile): void {
  connection.token = p.token;
  connection.oauth = { refreshToken: p.refreshToken ?? null, expiresAt: p.tokenExpiresAt ? Date.parse(p.tokenExpiresAt) : null };
}

/**
 * Refresh the access token of an OAuth connection with its refresh token (the refresh_token grant), save the new
 * tokens in its profile and use them; `force` refreshes a token that has not expired (the server refused it).
 * Refresh tokens rotate, so another gantry process may have refreshed first: the profile is read again, and its newer
 * token used (without a refresh) when it differs from the one this run started with.
 * Throws signInAgain() when the server refuses the refresh token.
 */
export async function refreshOAuthToken(env: NodeJS.ProcessEnv, connection: Connection, force = false): Promise<void> {
  if (!connection.oauth?.refreshToken) {
    throw new ApiError(401, `${connection.url} refused the OAuth access token`, `get a new one, or sign in with \`gantry login --web --url ${connection.url}\` (the CLI then refreshes its token by itself)`);
  }
  const name = connection.profile;
  const saved = name ? loadConfig(env).profiles[name] : undefined;
  if (saved?.tokenKind === 'oauth' && saved.token !== connection.token) {
    adopt(connection, saved);
    if (!needsRefresh(connection)) return;
  } else if (!force && !needsRefresh(connection)) return;
  const refreshToken = connection.oauth?.refreshToken;
  if (!refreshToken) throw signInAgain(connection.url, 'has expired');
  let answer: TokenAnswer;
  try {
    answer = await requestToken(connection.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLI_CLIENT_ID });
  } catch (e) {
    if (e instanceof OAuthError) {
      // Refused: perhaps another process rotated the refresh token just now; its tokens are in the file then.
      const again = name ? loadConfig(env).profiles[name] : undefined;
      if (again?.tokenKind === 'oauth' && again.refreshToken && again.refreshToken !== refreshToken) return adopt(connection, again);
      throw signInAgain(connection.url);
    }
    throw e;
  }
  const fields = oauthProfileFields(answer);
  if (!fields.refreshToken) fields.refreshToken = refreshToken;
  if (name) {
    const config = loadConfig(env);
    const p = config.profiles[name];
    if (p) {
      config.profiles[name] = { ...p, ...fields };
      saveConfig(env, config);
    }
  }
  adopt(connection, { url: connection.url, ...fields });
}
