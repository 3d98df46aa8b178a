-- Access requests (GitLab 8.13 members with requested_at): a user asking to join a project or a group. Kept apart
-- from `members` so that a request never gives access (no query over members can count it); approval moves the row
-- into `members` in one transaction. One request per user and source.
CREATE TABLE access_requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source_type TEXT NOT NULL CHECK (source_type IN ('Project', 'Namespace')),
  source_id INTEGER NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  requested_at TEXT NOT NULL,
  UNIQUE (source_type, source_id, user_id)
);
CREATE INDEX access_requests_user ON access_requests(user_id);

-- Issue boards (GitLab 8.13 Board and List): one board per project with its backlog and done lists (no position)
-- and label lists at positions 0, 1, ... (a label once per board).
CREATE TABLE boards (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL UNIQUE REFERENCES projects(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE board_lists (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  board_id INTEGER NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
  label_id INTEGER REFERENCES labels(id) ON DELETE CASCADE,
  list_type TEXT NOT NULL CHECK (list_type IN ('backlog', 'label', 'done')),
  position INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (board_id, label_id)
);
CREATE INDEX board_lists_label ON board_lists(label_id);

-- Projects that exist already get their board now, as new projects do at creation.
INSERT INTO boards (project_id, created_at, updated_at) SELECT id, created_at, created_at FROM projects;
INSERT INTO board_lists (board_id, list_type, created_at, updated_at) SELECT id, 'backlog', created_at, created_at FROM boards;
INSERT INTO board_lists (board_id, list_type, created_at, updated_at) SELECT id, 'done', created_at, created_at FROM boards;
