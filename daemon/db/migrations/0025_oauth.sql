-- OAuth 2 provider (GitLab 8.x used Doorkeeper's tables; these follow them). Every secret is stored as its SHA-256:
-- application secrets, authorization codes, access and refresh tokens, browser session ids.
--
-- An application: `uid` is the OAuth client_id; `secret_hash` is NULL for a public client (the built-in `gantry-cli`
-- application, which must use PKCE); `redirect_uri` holds one URI per line; `builtin` rows cannot be deleted.
CREATE TABLE oauth_applications (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  uid TEXT NOT NULL UNIQUE,
  secret_hash TEXT,
  redirect_uri TEXT NOT NULL,
  scopes TEXT NOT NULL DEFAULT 'api',
  owner_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
  builtin INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX oauth_applications_owner ON oauth_applications (owner_id, id);
-- The command-line client's application, on every installation: loopback redirect URIs with any port (RFC 8252 7.3).
INSERT INTO oauth_applications (name, uid, secret_hash, redirect_uri, scopes, owner_id, builtin, created_at, updated_at)
VALUES ('Gantry CLI', 'gantry-cli', NULL, 'http://127.0.0.1/' || char(10) || 'http://[::1]/', 'api', NULL, 1,
        strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

-- Authorization codes: single use (revoked_at set when traded), valid `expires_in` seconds after created_at.
CREATE TABLE oauth_access_grants (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  resource_owner_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  application_id INTEGER NOT NULL REFERENCES oauth_applications(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  expires_in INTEGER NOT NULL,
  redirect_uri TEXT NOT NULL,
  scopes TEXT NOT NULL,
  code_challenge TEXT,
  code_challenge_method TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX oauth_access_grants_application ON oauth_access_grants (application_id);

-- Access tokens with their refresh token. `grant_id` is the code a token (or the token it was refreshed from) was
-- issued for, so a replayed code revokes the whole chain; application_id is NULL for a password grant without a client.
CREATE TABLE oauth_access_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  resource_owner_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  application_id INTEGER REFERENCES oauth_applications(id) ON DELETE CASCADE,
  grant_id INTEGER REFERENCES oauth_access_grants(id) ON DELETE SET NULL,
  token_hash TEXT NOT NULL UNIQUE,
  refresh_token_hash TEXT UNIQUE,
  expires_in INTEGER NOT NULL,
  scopes TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX oauth_access_tokens_owner_application ON oauth_access_tokens (resource_owner_id, application_id);
CREATE INDEX oauth_access_tokens_grant ON oauth_access_tokens (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_access_tokens_application ON oauth_access_tokens (application_id);

-- Browser sessions of the sign-in and consent pages: the cookie's value is only stored hashed.
CREATE TABLE oauth_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  token_hash TEXT NOT NULL UNIQUE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX oauth_sessions_user ON oauth_sessions (user_id);
CREATE INDEX oauth_sessions_expires ON oauth_sessions (expires_at);
