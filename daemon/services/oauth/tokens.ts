/**
 * Authorization codes and access tokens: issue a code after consent, trade it (once), the password and refresh-token
 * grants, revocation, token info, and the bearer-token lookup behind every API request. Only hashes are stored.
 */
import { createHash } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import type { Queries } from '../../db/layer/types.js';
import { UntilNextWrite } from '../../db/read-cache.js';
import {
  insertOauthGrant, insertOauthToken, liveOauthTokenScopes, oauthGrantByHash, oauthGrantExists, oauthTokenByHash, oauthTokenInContext,
  revokeOauthToken, revokeOauthTokensOfGrant, spendOauthGrant, userOfOauthToken,
} from '../../db/oauth.js';
import type { UserRow } from '../../db/schema.js';
import type { OauthAccessTokenRow, OauthApplicationRow } from '../../db/schema-oauth.js';
import { hashRecentToken, hashToken } from '../../secrets.js';
import { signIn } from '../users/users.js';
import { isPublicClient, randomSecret } from './applications.js';
import { oauthError, type OAuthError } from './errors.js';
import { DEFAULT_SCOPES, parseScopes, unknownScopes } from './scopes.js';

/** Access tokens live 7200 s (the spec; DECISIONS.md), refresh tokens until used or revoked. */
export const ACCESS_TOKEN_SECONDS = 7200;
/** Authorization codes live 10 minutes (RFC 6749 4.1.2 recommends at most 10). */
export const CODE_SECONDS = 600;

/** The clock of token and code expiry (ms since the epoch). */
const clock = () => Date.now();
const isoNow = () => new Date(clock()).toISOString();
const expiresAtMs = (row: { createdAt: string; expiresIn: number }) => Date.parse(row.createdAt) + row.expiresIn * 1000;

/** The token endpoint's answer (RFC 6749 5.1, with Doorkeeper's `created_at` in unix seconds). */
export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  created_at: number;
}

/**
 * The scopes of a request checked against what the server and the application allow: none asked gives the default
 * (`api`); an unknown one, or one the application was not registered with, is invalid_scope.
 */
export function requestedScopes(app: OauthApplicationRow | null, scope: string | undefined): string[] {
  const asked = parseScopes(scope);
  const scopes = asked.length ? asked : [DEFAULT_SCOPES];
  const allowed = app ? parseScopes(app.scopes) : null;
  const bad = [...unknownScopes(scopes), ...(allowed ? scopes.filter((s) => !allowed.includes(s)) : [])];
  if (bad.length) throw oauthError('invalid_scope', `Unknown or not allowed scope: ${[...new Set(bad)].join(' ')}; ask for "api" (or leave scope out)`);
  return scopes;
}

/** S256 of a PKCE verifier, base64url without padding (RFC 7636 4.2). */
export const pkceChallenge = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** What a code was issued for. */
export interface GrantParams {
  redirectUri: string;
  scopes: string[];
  codeChallenge?: string;
  codeChallengeMethod?: string;
}

/**
 * Issue an authorization code for `user` and `app` (after consent); returns the code, shown only in the redirect, or
 * null when the user or the application was deleted meanwhile (nothing is written).
 */
export async function createGrant(ctx: AppContext, user: UserRow, app: OauthApplicationRow, p: GrantParams): Promise<string | null> {
  const code = randomSecret();
  try {
    await insertOauthGrant(ctx.data, {
      resourceOwnerId: user.id, applicationId: app.id, tokenHash: hashToken(code), expiresIn: CODE_SECONDS, redirectUri: p.redirectUri,
      scopes: p.scopes.join(' '), codeChallenge: p.codeChallenge ?? null, codeChallengeMethod: p.codeChallenge ? p.codeChallengeMethod ?? 'S256' : null,
      createdAt: isoNow(),
    });
  } catch (e) {
    if (isForeignKeyViolation(e)) return null;
    throw e;
  }
  return code;
}

/** Insert a new access token row (in the caller's transaction, `q`) and return the answer with the plain secrets. */
async function insertToken(q: Queries, userId: number, applicationId: number | null, grantId: number | null, scopes: string): Promise<TokenResponse> {
  const accessToken = randomSecret();
  const refreshToken = randomSecret();
  const createdAt = isoNow();
  await insertOauthToken(q, {
    resourceOwnerId: userId, applicationId, grantId, tokenHash: hashToken(accessToken), refreshTokenHash: hashToken(refreshToken),
    expiresIn: ACCESS_TOKEN_SECONDS, scopes, createdAt,
  });
  return {
    access_token: accessToken, token_type: 'bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refreshToken, scope: scopes,
    created_at: Math.floor(Date.parse(createdAt) / 1000),
  };
}

/** Parameters of the authorization_code grant. */
export interface CodeGrantParams {
  code?: string;
  redirectUri?: string;
  codeVerifier?: string;
}

const codeNotValid = () => oauthError('invalid_grant', 'The authorization code is not valid for this client: start the authorization again');

/**
 * Trade an authorization code for tokens (the client is already authenticated). A code works once, for 10 minutes,
 * for the client and redirect URI it was issued to; a code presented again revokes every token issued from it
 * (RFC 6749 4.1.2). With a PKCE challenge on the code, the verifier must match. The code is spent with a conditional
 * UPDATE, so two requests trading it at once (on one daemon or two) get one set of tokens, and the other is a replay.
 */
export async function exchangeCode(ctx: AppContext, app: OauthApplicationRow, p: CodeGrantParams): Promise<TokenResponse> {
  if (!p.code) throw oauthError('invalid_request', 'code is missing: send the code your redirect URI received');
  if (!p.redirectUri) throw oauthError('invalid_request', 'redirect_uri is missing: send the redirect_uri of the authorization request');
  const hash = hashToken(p.code);
  const redirectUri = p.redirectUri;
  // A refusal is returned, not thrown, from the transaction: the revocation of a replay must commit.
  let outcome: TokenResponse | OAuthError;
  try {
    outcome = await ctx.data.transaction(async (tx): Promise<TokenResponse | OAuthError> => {
      const grant = await oauthGrantByHash(tx, hash);
      if (!grant || grant.applicationId !== app.id) return codeNotValid();
      const replay = async () => {
        // Whoever holds the code may not be the client it was issued to; its tokens stop working.
        await revokeOauthTokensOfGrant(tx, grant.id, isoNow());
        return oauthError('invalid_grant', 'The authorization code was already used; the tokens issued for it are revoked. Start the authorization again');
      };
      if (grant.revokedAt) return replay();
      if (expiresAtMs(grant) <= clock()) return oauthError('invalid_grant', 'The authorization code has expired (codes are valid for 10 minutes): start the authorization again');
      if (grant.redirectUri !== redirectUri) {
        return oauthError('invalid_grant', 'redirect_uri does not match the one of the authorization request: send the same redirect_uri');
      }
      if (grant.codeChallenge) {
        if (!p.codeVerifier) return oauthError('invalid_request', 'code_verifier is missing: send the PKCE verifier of the code_challenge (RFC 7636)');
        if (pkceChallenge(p.codeVerifier) !== grant.codeChallenge) return oauthError('invalid_grant', 'code_verifier does not match the code_challenge of the authorization request');
      }
      if (!(await spendOauthGrant(tx, grant.id, isoNow()))) {
        // Another request traded it since the read above (a replay), or its user or application was deleted meanwhile.
        return (await oauthGrantExists(tx, grant.id)) ? replay() : codeNotValid();
      }
      return insertToken(tx, grant.resourceOwnerId, app.id, grant.id, grant.scopes);
    });
  } catch (e) {
    // The code's user or application was deleted between the read and the token's insert: the code is gone with them.
    if (isForeignKeyViolation(e)) throw codeNotValid();
    throw e;
  }
  if (outcome instanceof Error) throw outcome;
  return outcome;
}

const badCredentials = () => oauthError('invalid_grant', 'Invalid username or password (or the account is blocked): check them and try again', 401);

/**
 * The password grant: username (or email) and password, checked by the one sign-in of services/users/users.ts. Wrong
 * credentials or a blocked user: invalid_grant, 401 (the issue asks for 401 on bad credentials); a user deleted
 * after the sign-in was checked is answered the same.
 */
export async function passwordGrant(
  ctx: AppContext, app: OauthApplicationRow | null, p: { username?: string; password?: string; scope?: string; address?: string },
): Promise<TokenResponse> {
  if (!p.username) throw oauthError('invalid_request', 'username is missing: send the username (or email) and password');
  if (!p.password) throw oauthError('invalid_request', 'password is missing: send the username (or email) and password');
  const scopes = requestedScopes(app, p.scope);
  // The client's address (for the per-address sign-in throttle) comes from the route; throttled: SignInThrottled.
  const user = await signIn(ctx, p.username, p.password, { address: p.address });
  if (!user) throw badCredentials();
  try {
    return await insertToken(ctx.data, user.id, app?.id ?? null, null, scopes.join(' '));
  } catch (e) {
    if (isForeignKeyViolation(e)) throw badCredentials(); // the user (or the application) was deleted meanwhile
    throw e;
  }
}

/**
 * The refresh_token grant: a new access token and a new refresh token; the old pair is revoked (rotation). A
 * token issued to a confidential application needs that application's credentials. The old token is revoked with a
 * conditional UPDATE, so two refreshes of one token at once (on one daemon or two) rotate it once; the other is refused.
 */
export async function refreshGrant(ctx: AppContext, app: OauthApplicationRow | null, p: { refreshToken?: string; scope?: string }): Promise<TokenResponse> {
  if (!p.refreshToken) throw oauthError('invalid_request', 'refresh_token is missing: send the refresh_token of your last token answer');
  const hash = hashToken(p.refreshToken);
  const invalid = () => oauthError('invalid_grant', 'The refresh token is invalid, revoked or was already used: sign in again');
  try {
    return await ctx.data.transaction(async (tx) => {
      const found = await oauthTokenInContext(tx, 'refresh_token_hash', hash);
      const old = found?.token ?? null;
      if (!old || old.revokedAt) throw invalid();
      if (old.applicationId !== null && old.applicationId !== app?.id) {
        // A confidential application's token: only that application, authenticated, may refresh it.
        if (!app && found!.applicationSecretHash) throw oauthError('invalid_client', 'This refresh token belongs to a confidential application: send its client_id and client_secret');
        throw invalid();
      }
      if (found!.userState !== 'active') throw invalid();
      let scopes = old.scopes;
      if (p.scope !== undefined && p.scope.trim() !== '') {
        const asked = parseScopes(p.scope);
        const had = parseScopes(old.scopes);
        if (asked.some((s) => !had.includes(s))) throw oauthError('invalid_scope', `A refresh may not widen the scopes: ask for at most "${old.scopes}"`);
        scopes = asked.join(' ');
      }
      if (!(await revokeOauthToken(tx, old.id, isoNow()))) throw invalid(); // refreshed (or revoked) by another request since the read above
      return insertToken(tx, old.resourceOwnerId, old.applicationId, old.grantId, scopes);
    });
  } catch (e) {
    if (isForeignKeyViolation(e)) throw invalid(); // the token's user or application was deleted meanwhile
    throw e;
  }
}

/** The token row of an access token or a refresh token, or null. */
async function findToken(ctx: AppContext, token: string, hint?: string): Promise<OauthAccessTokenRow | null> {
  const hash = hashToken(token);
  const order = hint === 'refresh_token' ? ['refresh_token_hash', 'token_hash'] as const : ['token_hash', 'refresh_token_hash'] as const;
  for (const column of order) {
    const row = await oauthTokenByHash(ctx.data, column, hash);
    if (row) return row;
  }
  return null;
}

/**
 * Revoke an access or refresh token (RFC 7009): unknown tokens, and tokens of another client, change nothing and
 * still answer 200 (Doorkeeper 4). A token of an application needs that client authenticated (a public client by
 * its client_id); a password-grant token without a client may be revoked by whoever holds it.
 */
export async function revokeToken(ctx: AppContext, client: OauthApplicationRow | null, token: string | undefined, hint?: string): Promise<void> {
  if (!token) return;
  const row = await findToken(ctx, token, hint);
  if (!row || row.revokedAt) return;
  if (row.applicationId !== null && row.applicationId !== client?.id) return;
  await revokeOauthToken(ctx.data, row.id, isoNow());
}

/** Why an access token does not authenticate, for GET /oauth/token/info and its WWW-Authenticate header. */
export type TokenProblem = 'unknown' | 'expired' | 'revoked';

/** An access token's row if it authenticates, else why not. */
export async function checkAccessToken(
  ctx: AppContext, token: string,
): Promise<{ row: OauthAccessTokenRow; applicationUid: string | null } | { problem: TokenProblem }> {
  const found = await oauthTokenInContext(ctx.data, 'token_hash', hashToken(token));
  if (!found) return { problem: 'unknown' };
  const row = found.token;
  if (row.revokedAt) return { problem: 'revoked' };
  if (expiresAtMs(row) <= clock()) return { problem: 'expired' };
  if (found.userState !== 'active') return { problem: 'revoked' };
  return { row, applicationUid: found.applicationUid };
}

/** Doorkeeper 4's token info: owner, scopes, seconds left, application, creation (unix seconds). */
export function tokenInfo(found: { row: OauthAccessTokenRow; applicationUid: string | null }) {
  const { row } = found;
  return {
    resource_owner_id: row.resourceOwnerId,
    scopes: parseScopes(row.scopes),
    expires_in_seconds: Math.max(0, Math.floor((expiresAtMs(row) - clock()) / 1000)),
    application: { uid: found.applicationUid },
    created_at: Math.floor(Date.parse(row.createdAt) / 1000),
  };
}

/** Access token hash -> its owner's row and the token's expiry (ms), for the data layer's bearer resolver. */
const bearerUsers = new UntilNextWrite<{ user: UserRow; expiresAt: number } | { user: null }>(1000, { postgres: true });

/**
 * The user an access token authenticates (not revoked, not expired; blocked users are returned for the caller to
 * refuse), or null: the API's bearer resolver on the data layer, one statement on either engine. On SQLite the answer
 * is kept until the next write (a revoke, a refresh, a block) as the private tokens' cache does; the expiry is compared
 * with the clock on every use, so a kept token stops working the moment it expires.
 */
export async function resolveAccessToken(ctx: AppContext, token: string, version?: string): Promise<UserRow | null> {
  const hash = hashRecentToken(token);
  const read = async (): Promise<{ user: UserRow; expiresAt: number } | { user: null }> => {
    const found = await userOfOauthToken(ctx.data, hash);
    if (!found) return { user: null };
    return { user: found.user, expiresAt: expiresAtMs(found) };
  };
  // on PostgreSQL kept only under the request's write version (authenticate reads it), else one statement
  const hit = !ctx.data.sqlite && version === undefined ? await read() : await bearerUsers.getAsync(ctx, hash, read, false, version);
  if (hit.user === null || hit.expiresAt <= clock()) return null;
  return hit.user;
}

/** resolveAccessToken's answer when it is kept and current (SQLite, nothing written since), else undefined. */
export function peekAccessToken(ctx: AppContext, token: string): UserRow | null | undefined {
  const hit = bearerUsers.peek(ctx, hashRecentToken(token));
  if (hit === undefined) return undefined;
  return hit.user === null || hit.expiresAt <= clock() ? null : hit.user;
}

/**
 * Whether `user` already authorized `app` for exactly these scopes (a token not revoked): the consent page is then
 * skipped, as Doorkeeper's matching_token?. Never for a public client (RFC 8252 8.6: anyone can claim its client_id).
 */
export async function alreadyAuthorized(ctx: AppContext, user: UserRow, app: OauthApplicationRow, scopes: string[]): Promise<boolean> {
  if (isPublicClient(app)) return false;
  const want = scopes.join(' ');
  return (await liveOauthTokenScopes(ctx.data, user.id, app.id)).some((s) => parseScopes(s).join(' ') === want);
}
