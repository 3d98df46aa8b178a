-- Collaboration: issues, labels, milestones, notes, award emoji, subscriptions and todos.
-- Merge requests (their own migration) reuse the polymorphic tables here: label_links, notes, award_emoji,
-- subscriptions and todos name their target by (type, id) as GitLab 8.x did ('Issue', 'MergeRequest', 'Note', ...).

CREATE TABLE milestones (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  -- counts per project (1, 2, ...), as the project's issues do
  iid INTEGER NOT NULL,
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'closed')),
  -- YYYY-MM-DD
  due_date TEXT,
  start_date TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, iid),
  UNIQUE (project_id, title)
);

CREATE TABLE labels (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  -- #RRGGBB
  color TEXT NOT NULL,
  description TEXT,
  template INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, title)
);

CREATE TABLE issues (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  -- counts per project; a deleted or moved issue keeps its number (never reused)
  iid INTEGER NOT NULL,
  title TEXT NOT NULL,
  description TEXT,
  state TEXT NOT NULL DEFAULT 'opened' CHECK (state IN ('opened', 'closed')),
  confidential INTEGER NOT NULL DEFAULT 0,
  author_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  assignee_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  milestone_id INTEGER REFERENCES milestones(id) ON DELETE SET NULL,
  -- YYYY-MM-DD
  due_date TEXT,
  -- set on the old issue when it was moved to another project
  moved_to_id INTEGER REFERENCES issues(id) ON DELETE SET NULL,
  updated_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  closed_at TEXT,
  -- soft delete (DELETE /projects/:id/issues/:issue_id): hidden everywhere, the iid stays taken
  deleted_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, iid)
);
-- project lists (newest first, by state) and the caller's lists (GET /issues: authored or assigned)
CREATE INDEX issues_project_created ON issues(project_id, created_at, id);
CREATE INDEX issues_project_updated ON issues(project_id, updated_at, id);
CREATE INDEX issues_project_state_created ON issues(project_id, state, created_at, id);
CREATE INDEX issues_author_created ON issues(author_id, created_at, id);
CREATE INDEX issues_assignee ON issues(assignee_id, created_at, id);
CREATE INDEX issues_milestone ON issues(milestone_id);

-- labels on issues and merge requests
CREATE TABLE label_links (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
  target_type TEXT NOT NULL,
  target_id INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (target_type, target_id, label_id)
);
CREATE INDEX label_links_label ON label_links(label_id, target_type, target_id);

-- comments and system notes on issues, merge requests and snippets (commit comments stay in commit_notes)
CREATE TABLE notes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  noteable_type TEXT NOT NULL,
  noteable_id INTEGER NOT NULL,
  note TEXT NOT NULL,
  author_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  -- written by Gantry for a state change, assignment, label or milestone change, move ...
  system INTEGER NOT NULL DEFAULT 0,
  attachment TEXT,
  updated_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX notes_noteable ON notes(noteable_type, noteable_id, id);
CREATE INDEX notes_project ON notes(project_id, id);

CREATE TABLE award_emoji (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  awardable_type TEXT NOT NULL,
  awardable_id INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (awardable_type, awardable_id, name, user_id)
);
CREATE INDEX award_emoji_user ON award_emoji(user_id);

-- explicit subscriptions (subscribed = 1) and explicit unsubscriptions (0) of issues, merge requests and labels
CREATE TABLE subscriptions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  subscribable_type TEXT NOT NULL,
  subscribable_id INTEGER NOT NULL,
  subscribed INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (subscribable_type, subscribable_id, user_id)
);
CREATE INDEX subscriptions_user ON subscriptions(user_id, subscribable_type);

CREATE TABLE todos (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  -- whose todo it is
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  -- who caused it
  author_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  target_type TEXT NOT NULL CHECK (target_type IN ('Issue', 'MergeRequest')),
  target_id INTEGER NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('assigned', 'mentioned', 'build_failed', 'marked', 'approval_required')),
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
  -- the note that mentioned the user, when a note did
  note_id INTEGER REFERENCES notes(id) ON DELETE SET NULL,
  commit_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX todos_user_state ON todos(user_id, state, id);
CREATE INDEX todos_target ON todos(target_type, target_id, user_id);
