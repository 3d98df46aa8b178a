/**
 * The OAuth data module: applications, authorization codes (grants), access tokens and the browser sessions of the
 * OAuth pages. Secrets are stored as their hashes, made by the services; the rules (PKCE, expiry, rotation, replay)
 * stay in services/oauth/. `q`: the database or a transaction.
 */
import type { Queries } from './layer/types.js';
import { toOauthAccessGrant, toOauthAccessToken, toOauthApplication, toUser } from './rows.js';
import type { UserRow } from './schema.js';
import type { OauthAccessGrantRow, OauthAccessTokenRow, OauthApplicationRow } from './schema-oauth.js';
import type { Listing } from './groups.js';

type Rec = Record<string, unknown>;

// ---- applications

/** The columns of a new (registered, not built-in) application. */
export type NewOauthApplication = Pick<OauthApplicationRow, 'name' | 'uid' | 'secretHash' | 'redirectUri' | 'scopes' | 'createdAt'> & { ownerId: number };

/** Insert a registered application. */
export async function insertOauthApplication(q: Queries, a: NewOauthApplication): Promise<OauthApplicationRow> {
  return toOauthApplication((await q.get<Rec>(
    `INSERT INTO oauth_applications (name, uid, secret_hash, redirect_uri, scopes, owner_id, builtin, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, FALSE, ?, ?) RETURNING *`,
    [a.name, a.uid, a.secretHash, a.redirectUri, a.scopes, a.ownerId, a.createdAt, a.createdAt],
  ))!);
}

/** The registered applications (not the built-in one), all or those of `ownerId`, newest first. */
export function oauthApplicationsListing(ownerId: number | null): Listing<OauthApplicationRow> {
  const where = ownerId === null ? 'builtin = FALSE' : 'builtin = FALSE AND owner_id = ?';
  const args = ownerId === null ? [] : [ownerId];
  return {
    count: async (q) => Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM oauth_applications WHERE ${where}`, args))!.n),
    fetch: async (q, limit, offset) =>
      (await q.all<Rec>(`SELECT * FROM oauth_applications WHERE ${where} ORDER BY id DESC LIMIT ? OFFSET ?`, [...args, limit, offset])).map(toOauthApplication),
  };
}

/** An application by id, or null. */
export async function oauthApplicationById(q: Queries, id: number): Promise<OauthApplicationRow | null> {
  const row = await q.get<Rec>('SELECT * FROM oauth_applications WHERE id = ?', [id]);
  return row ? toOauthApplication(row) : null;
}

/** An application by client_id, or null. */
export async function oauthApplicationByUid(q: Queries, uid: string): Promise<OauthApplicationRow | null> {
  const row = await q.get<Rec>('SELECT * FROM oauth_applications WHERE uid = ?', [uid]);
  return row ? toOauthApplication(row) : null;
}

/** Delete an application (its codes and tokens cascade). */
export async function deleteOauthApplication(q: Queries, id: number): Promise<void> {
  await q.run('DELETE FROM oauth_applications WHERE id = ?', [id]);
}

// ---- codes

/** The columns of a new authorization code. */
export type NewOauthGrant = Pick<OauthAccessGrantRow,
  'resourceOwnerId' | 'applicationId' | 'tokenHash' | 'expiresIn' | 'redirectUri' | 'scopes' | 'codeChallenge' | 'codeChallengeMethod' | 'createdAt'>;

/** Insert an authorization code. */
export async function insertOauthGrant(q: Queries, g: NewOauthGrant): Promise<void> {
  await q.run(
    `INSERT INTO oauth_access_grants (resource_owner_id, application_id, token_hash, expires_in, redirect_uri, scopes, code_challenge,
       code_challenge_method, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [g.resourceOwnerId, g.applicationId, g.tokenHash, g.expiresIn, g.redirectUri, g.scopes, g.codeChallenge, g.codeChallengeMethod, g.createdAt],
  );
}

/** The code whose hash is `hash`, or null. */
export async function oauthGrantByHash(q: Queries, hash: string): Promise<OauthAccessGrantRow | null> {
  const row = await q.get<Rec>('SELECT * FROM oauth_access_grants WHERE token_hash = ?', [hash]);
  return row ? toOauthAccessGrant(row) : null;
}

/** Whether a code row exists. */
export async function oauthGrantExists(q: Queries, id: number): Promise<boolean> {
  return !!(await q.get('SELECT id FROM oauth_access_grants WHERE id = ?', [id]));
}

/** Spend a code at `at` unless spent already; whether this call spent it. */
export async function spendOauthGrant(q: Queries, id: number, at: string): Promise<boolean> {
  return (await q.run('UPDATE oauth_access_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id])).changes > 0;
}

// ---- tokens

/** The columns of a new access token. */
export type NewOauthToken = Pick<OauthAccessTokenRow,
  'resourceOwnerId' | 'applicationId' | 'grantId' | 'tokenHash' | 'refreshTokenHash' | 'expiresIn' | 'scopes' | 'createdAt'>;

/** Insert an access token. */
export async function insertOauthToken(q: Queries, t: NewOauthToken): Promise<void> {
  await q.run(
    `INSERT INTO oauth_access_tokens (resource_owner_id, application_id, grant_id, token_hash, refresh_token_hash, expires_in, scopes, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [t.resourceOwnerId, t.applicationId, t.grantId, t.tokenHash, t.refreshTokenHash, t.expiresIn, t.scopes, t.createdAt],
  );
}

/** Revoke a token at `at` unless revoked already; whether this call revoked it. */
export async function revokeOauthToken(q: Queries, id: number, at: string): Promise<boolean> {
  return (await q.run('UPDATE oauth_access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id])).changes > 0;
}

/** Revoke every token issued from a code. */
export async function revokeOauthTokensOfGrant(q: Queries, grantId: number, at: string): Promise<void> {
  await q.run('UPDATE oauth_access_tokens SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL', [at, grantId]);
}

/** The token whose access token (`token_hash`) or refresh token (`refresh_token_hash`) hashes to `hash`, or null. */
export async function oauthTokenByHash(q: Queries, column: 'token_hash' | 'refresh_token_hash', hash: string): Promise<OauthAccessTokenRow | null> {
  const row = await q.get<Rec>(`SELECT * FROM oauth_access_tokens WHERE ${column} = ?`, [hash]);
  return row ? toOauthAccessToken(row) : null;
}

/** A token with its user's state and its application's client_id and secret hash (null when it has none). */
export interface OauthTokenInContext {
  token: OauthAccessTokenRow;
  userState: string | null;
  applicationUid: string | null;
  applicationSecretHash: string | null;
}

/** The token whose access token (`token_hash`) or refresh token (`refresh_token_hash`) hashes to `hash`, in context; or null. */
export async function oauthTokenInContext(q: Queries, column: 'token_hash' | 'refresh_token_hash', hash: string): Promise<OauthTokenInContext | null> {
  const row = await q.get<Rec>(
    `SELECT t.*, u.state AS user_state, a.uid AS application_uid, a.secret_hash AS application_secret_hash FROM oauth_access_tokens t
       LEFT JOIN users u ON u.id = t.resource_owner_id LEFT JOIN oauth_applications a ON a.id = t.application_id
     WHERE t.${column} = ?`, [hash]);
  if (!row) return null;
  const text = (v: unknown) => (v as string | null) ?? null;
  return { token: toOauthAccessToken(row), userState: text(row.user_state), applicationUid: text(row.application_uid), applicationSecretHash: text(row.application_secret_hash) };
}

/** The user of an unrevoked access token whose hash is `hash`, with the token's creation and lifetime; or null. */
export async function userOfOauthToken(q: Queries, hash: string): Promise<{ user: UserRow; createdAt: string; expiresIn: number } | null> {
  const row = await q.get<Rec>(
    `SELECT u.*, t.created_at AS token_created_at, t.expires_in AS token_expires_in FROM oauth_access_tokens t JOIN users u ON u.id = t.resource_owner_id
     WHERE t.token_hash = ? AND t.revoked_at IS NULL`, [hash]);
  return row ? { user: toUser(row), createdAt: row.token_created_at as string, expiresIn: row.token_expires_in as number } : null;
}

/** The scopes of a user's unrevoked tokens for an application. */
export async function liveOauthTokenScopes(q: Queries, userId: number, applicationId: number): Promise<string[]> {
  return (await q.all<{ scopes: string }>(
    'SELECT scopes FROM oauth_access_tokens WHERE resource_owner_id = ? AND application_id = ? AND revoked_at IS NULL', [userId, applicationId]))
    .map((r) => r.scopes);
}

// ---- sessions

/** Start a session (stored as its hash), dropping the sessions ended by `createdAt`. */
export async function insertOauthSession(tx: Queries, tokenHash: string, userId: number, createdAt: string, expiresAt: string): Promise<void> {
  await tx.run('DELETE FROM oauth_sessions WHERE expires_at <= ?', [createdAt]);
  await tx.run('INSERT INTO oauth_sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)', [tokenHash, userId, createdAt, expiresAt]);
}

/** The user of a session not ended at `at`, or null. */
export async function userOfOauthSession(q: Queries, tokenHash: string, at: string): Promise<UserRow | null> {
  const row = await q.get('SELECT u.* FROM oauth_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_at > ?', [tokenHash, at]);
  return row ? toUser(row) : null;
}

/** End a session. */
export async function deleteOauthSession(q: Queries, tokenHash: string): Promise<void> {
  await q.run('DELETE FROM oauth_sessions WHERE token_hash = ?', [tokenHash]);
}
