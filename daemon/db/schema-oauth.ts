/** Drizzle definitions of the OAuth 2 provider's tables (migration 0025_oauth.sql is the source of truth). */
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';

/** Registered OAuth applications (clients); `uid` is the client_id. */
export const oauthApplications = sqliteTable('oauth_applications', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  uid: text('uid').notNull(),
  /** SHA-256 of the client secret; NULL for a public client (gantry-cli). */
  secretHash: text('secret_hash'),
  /** Redirect URIs, one per line. */
  redirectUri: text('redirect_uri').notNull(),
  /** Space-separated scopes the application may ask for. */
  scopes: text('scopes').notNull(),
  ownerId: integer('owner_id'),
  builtin: integer('builtin', { mode: 'boolean' }).notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type OauthApplicationRow = typeof oauthApplications.$inferSelect;

/** Authorization codes (single use, 10 minutes). */
export const oauthAccessGrants = sqliteTable('oauth_access_grants', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  resourceOwnerId: integer('resource_owner_id').notNull(),
  applicationId: integer('application_id').notNull(),
  tokenHash: text('token_hash').notNull(),
  expiresIn: integer('expires_in').notNull(),
  redirectUri: text('redirect_uri').notNull(),
  scopes: text('scopes').notNull(),
  codeChallenge: text('code_challenge'),
  codeChallengeMethod: text('code_challenge_method'),
  createdAt: text('created_at').notNull(),
  revokedAt: text('revoked_at'),
});
export type OauthAccessGrantRow = typeof oauthAccessGrants.$inferSelect;

/** Access tokens and their refresh tokens. */
export const oauthAccessTokens = sqliteTable('oauth_access_tokens', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  resourceOwnerId: integer('resource_owner_id').notNull(),
  applicationId: integer('application_id'),
  grantId: integer('grant_id'),
  tokenHash: text('token_hash').notNull(),
  refreshTokenHash: text('refresh_token_hash'),
  expiresIn: integer('expires_in').notNull(),
  scopes: text('scopes').notNull(),
  createdAt: text('created_at').notNull(),
  revokedAt: text('revoked_at'),
});
export type OauthAccessTokenRow = typeof oauthAccessTokens.$inferSelect;

/** Browser sessions of the OAuth pages. */
export const oauthSessions = sqliteTable('oauth_sessions', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  tokenHash: text('token_hash').notNull(),
  userId: integer('user_id').notNull(),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at').notNull(),
});
