/** Row types of the OAuth 2 provider's tables (migration 0025_oauth.sql is the source of truth). */

/** Registered OAuth applications (clients); `uid` is the client_id. */
export interface OauthApplicationRow {
  id: number;
  name: string;
  uid: string;
  /** SHA-256 of the client secret; NULL for a public client (gantry-cli). */
  secretHash: string | null;
  /** Redirect URIs, one per line. */
  redirectUri: string;
  /** Space-separated scopes the application may ask for. */
  scopes: string;
  ownerId: number | null;
  builtin: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Authorization codes (single use, 10 minutes). */
export interface OauthAccessGrantRow {
  id: number;
  resourceOwnerId: number;
  applicationId: number;
  tokenHash: string;
  expiresIn: number;
  redirectUri: string;
  scopes: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  createdAt: string;
  revokedAt: string | null;
}

/** Access tokens and their refresh tokens. */
export interface OauthAccessTokenRow {
  id: number;
  resourceOwnerId: number;
  applicationId: number | null;
  grantId: number | null;
  tokenHash: string;
  refreshTokenHash: string | null;
  expiresIn: number;
  scopes: string;
  createdAt: string;
  revokedAt: string | null;
}
