-- CI: pipelines, commit statuses (builds are commit statuses of type 'build', as in GitLab's STI table),
-- runners and their projects. "Latest" status per (pipeline, name) is the row with the highest id.

CREATE TABLE pipelines (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  ref TEXT,
  sha TEXT NOT NULL,
  before_sha TEXT,
  tag INTEGER NOT NULL DEFAULT 0,
  yaml_errors TEXT,
  status TEXT NOT NULL DEFAULT 'created',
  user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  duration INTEGER,
  started_at TEXT,
  finished_at TEXT,
  committed_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX pipelines_project ON pipelines(project_id, id);
CREATE INDEX pipelines_sha ON pipelines(project_id, sha);
CREATE INDEX pipelines_ref ON pipelines(project_id, ref, id);

CREATE TABLE runners (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  token_hash TEXT NOT NULL UNIQUE,
  description TEXT,
  name TEXT,
  version TEXT,
  revision TEXT,
  platform TEXT,
  architecture TEXT,
  active INTEGER NOT NULL DEFAULT 1,
  is_shared INTEGER NOT NULL DEFAULT 0,
  locked INTEGER NOT NULL DEFAULT 0,
  run_untagged INTEGER NOT NULL DEFAULT 1,
  tag_list TEXT NOT NULL DEFAULT '[]',
  contacted_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE runner_projects (
  runner_id INTEGER NOT NULL REFERENCES runners(id) ON DELETE CASCADE,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  PRIMARY KEY (runner_id, project_id)
);
CREATE INDEX runner_projects_project ON runner_projects(project_id);

CREATE TABLE commit_statuses (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL CHECK (type IN ('build', 'generic')),
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  pipeline_id INTEGER NOT NULL REFERENCES pipelines(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  stage TEXT,
  stage_idx INTEGER NOT NULL DEFAULT 0,
  ref TEXT,
  tag INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT 'created',
  description TEXT,
  target_url TEXT,
  allow_failure INTEGER NOT NULL DEFAULT 0,
  "when" TEXT NOT NULL DEFAULT 'on_success',
  user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  runner_id INTEGER REFERENCES runners(id) ON DELETE SET NULL,
  -- build-only columns
  commands TEXT,
  options TEXT,
  yaml_variables TEXT,
  tag_list TEXT NOT NULL DEFAULT '[]',
  environment TEXT,
  coverage REAL,
  coverage_regex TEXT,
  token_hash TEXT UNIQUE,
  trace_size INTEGER NOT NULL DEFAULT 0,
  artifacts_file TEXT,
  artifacts_size INTEGER,
  artifacts_expire_at TEXT,
  erased_at TEXT,
  erased_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  queued_at TEXT,
  started_at TEXT,
  finished_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX commit_statuses_pipeline ON commit_statuses(pipeline_id, name, id);
CREATE INDEX commit_statuses_project ON commit_statuses(project_id, id);
CREATE INDEX commit_statuses_queue ON commit_statuses(status, type, id);
