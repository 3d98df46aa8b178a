-- Project secret variables (GitLab 8.x Ci::Variable, API /projects/:id/variables): handed to the runner with every
-- build of the project as {key, value, public: false}. `value` holds the value sealed with the server secret
-- (Secrets.seal, AES-256-GCM), never the plain text.
CREATE TABLE ci_variables (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, key)
);
