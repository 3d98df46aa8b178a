-- System hooks and project services (GitLab 8.13's /hooks and /projects/:id/services/:slug), delivered through the
-- durable outbox of 0008: a hook_deliveries row now targets a project hook, a system hook or a project service
-- (exactly one of them), and its event is the name the sender gives it (push, project_create, slack ...).

CREATE TABLE system_hooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  url TEXT NOT NULL,
  token TEXT,
  -- 8.13's defaults (WebHook): pushes on, tag pushes off
  push_events INTEGER NOT NULL DEFAULT 1,
  tag_push_events INTEGER NOT NULL DEFAULT 0,
  enable_ssl_verification INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL
);

-- One row per project and service type (slack); `properties` is the service's JSON settings (webhook, channel...).
CREATE TABLE project_services (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 0,
  properties TEXT NOT NULL DEFAULT '{}',
  push_events INTEGER NOT NULL DEFAULT 1,
  issues_events INTEGER NOT NULL DEFAULT 1,
  merge_requests_events INTEGER NOT NULL DEFAULT 1,
  tag_push_events INTEGER NOT NULL DEFAULT 1,
  note_events INTEGER NOT NULL DEFAULT 1,
  build_events INTEGER NOT NULL DEFAULT 1,
  pipeline_events INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, type)
);

-- hook_deliveries again, with hook_id nullable and the two other targets (SQLite cannot alter a column: the table is
-- copied, ids and the AUTOINCREMENT high-water mark kept, since a delivery's Idempotency-Key derives from its id).
CREATE TABLE hook_deliveries_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  hook_id INTEGER REFERENCES project_hooks(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  -- the JSON body posted to the hook
  payload TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  -- set while a sender holds the row (the lease ends at next_attempt_at)
  locked_at TEXT,
  last_status_code INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  delivered_at TEXT,
  system_hook_id INTEGER REFERENCES system_hooks(id) ON DELETE CASCADE,
  service_id INTEGER REFERENCES project_services(id) ON DELETE CASCADE,
  CHECK ((hook_id IS NOT NULL) + (system_hook_id IS NOT NULL) + (service_id IS NOT NULL) = 1)
);
INSERT INTO hook_deliveries_new (id, hook_id, event, payload, status, attempts, next_attempt_at, locked_at, last_status_code, last_error, created_at, delivered_at)
  SELECT id, hook_id, event, payload, status, attempts, next_attempt_at, locked_at, last_status_code, last_error, created_at, delivered_at FROM hook_deliveries;
DELETE FROM sqlite_sequence WHERE name = 'hook_deliveries_new';
UPDATE sqlite_sequence SET name = 'hook_deliveries_new' WHERE name = 'hook_deliveries';
DROP TABLE hook_deliveries;
ALTER TABLE hook_deliveries_new RENAME TO hook_deliveries;
CREATE INDEX hook_deliveries_due ON hook_deliveries(status, next_attempt_at);
CREATE INDEX hook_deliveries_hook ON hook_deliveries(hook_id, id);
CREATE INDEX hook_deliveries_system_hook ON hook_deliveries(system_hook_id, id);
CREATE INDEX hook_deliveries_service ON hook_deliveries(service_id, id);
