-- Build triggers (GitLab 8.13 Ci::Trigger, Ci::TriggerRequest): a project's trigger tokens and every use of them.
-- The token is shown again in the API (list, show), so it is kept sealed with the server secret (secrets.seal) and
-- looked up by its SHA-256. A deleted trigger keeps its row with deleted_at (8.13's acts_as_paranoid), so the
-- pipelines it started still know they were triggered; its token no longer works.
CREATE TABLE ci_triggers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  token_sealed TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX ci_triggers_project ON ci_triggers(project_id, id);

-- One row per accepted POST /projects/:id/trigger/builds: the pipeline it created and the variables it passed
-- (a JSON object of strings, sealed; NULL when none were given). The builds of that pipeline carry them to the runner.
CREATE TABLE ci_trigger_requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  trigger_id INTEGER NOT NULL REFERENCES ci_triggers(id) ON DELETE CASCADE,
  pipeline_id INTEGER NOT NULL REFERENCES pipelines(id) ON DELETE CASCADE,
  variables TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX ci_trigger_requests_trigger ON ci_trigger_requests(trigger_id, created_at);
CREATE INDEX ci_trigger_requests_pipeline ON ci_trigger_requests(pipeline_id);
