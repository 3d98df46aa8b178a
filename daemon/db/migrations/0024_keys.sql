-- SSH keys, as GitLab 8.x's `keys` table with single-table inheritance: a user's key (type 'Key', user_id set) or a
-- deploy key (type 'DeployKey', user_id NULL; the projects it is enabled on are in deploy_keys_projects). The
-- fingerprint is 8.x's (MD5 of the key blob, colon-separated hex) and unique over both kinds, as 8.x validated it;
-- fingerprint_sha256 (OpenSSH's `SHA256:<base64>` form) is what the SSH server looks a presented key up by.
CREATE TABLE keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL CHECK (type IN ('Key', 'DeployKey')),
  user_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  key TEXT NOT NULL,
  key_type TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  fingerprint_sha256 TEXT NOT NULL,
  can_push INTEGER NOT NULL DEFAULT 0,
  last_used_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((type = 'Key') = (user_id IS NOT NULL))
);
CREATE UNIQUE INDEX keys_fingerprint ON keys (fingerprint);
CREATE UNIQUE INDEX keys_fingerprint_sha256 ON keys (fingerprint_sha256);
CREATE INDEX keys_user ON keys (user_id, id) WHERE user_id IS NOT NULL;

CREATE TABLE deploy_keys_projects (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  deploy_key_id INTEGER NOT NULL REFERENCES keys(id) ON DELETE CASCADE,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  UNIQUE (deploy_key_id, project_id)
);
CREATE INDEX deploy_keys_projects_project ON deploy_keys_projects (project_id, deploy_key_id);
