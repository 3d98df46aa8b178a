-- Environments and deployments (GitLab 8.13 Environment, Deployment; API /projects/:id/environments and /deployments).
-- An environment is created by the API or by the first successful build whose job names it (`environment:` in
-- .gitlab-ci.yml); `state` is 8.13's state machine (a job with `action: stop` stops it). Names are unique per project
-- (the index answers a race between two creates as the validation does). Deleting an environment deletes its
-- deployments (8.13 left them pointing at nothing). A deployment's `deployable_id` is the build that made it: unique,
-- so a build's success handled twice (or by two daemons) records one deployment.
CREATE TABLE environments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  external_url TEXT,
  -- the first part of a name with a `/` (review/app -> review), as 8.13's set_environment_type
  environment_type TEXT,
  state TEXT NOT NULL DEFAULT 'available' CHECK (state IN ('available', 'stopped')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, name)
);

CREATE TABLE deployments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  -- counts per project (1, 2, ...), handed out by deployment_iids
  iid INTEGER NOT NULL,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  environment_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  ref TEXT NOT NULL,
  tag INTEGER NOT NULL DEFAULT 0,
  sha TEXT NOT NULL,
  user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  deployable_id INTEGER REFERENCES commit_statuses(id) ON DELETE SET NULL,
  on_stop TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, iid),
  UNIQUE (deployable_id)
);
CREATE INDEX deployments_environment ON deployments (environment_id, id);

-- The last deployment iid of each project: an upsert hands out the next one, so two builds of a project succeeding
-- at once (two daemons) each get their own iid instead of one failing on UNIQUE (project_id, iid).
CREATE TABLE deployment_iids (
  project_id INTEGER PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  last_iid INTEGER NOT NULL
);
