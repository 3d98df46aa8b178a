-- Repository API storage: comments on commits (GitLab's notes with noteable_type 'Commit', kept apart from the
-- issue and merge request notes) and tag releases (release notes attached to a tag name).

CREATE TABLE commit_notes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  -- the full sha of the commit commented on
  commit_sha TEXT NOT NULL,
  note TEXT NOT NULL,
  -- set only for a comment on one line of the commit's diff
  path TEXT,
  line INTEGER,
  line_type TEXT CHECK (line_type IS NULL OR line_type IN ('new', 'old')),
  author_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX commit_notes_commit ON commit_notes(project_id, commit_sha, id);

CREATE TABLE releases (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  tag_name TEXT NOT NULL,
  description TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, tag_name)
);
