-- Project snippets (GitLab 8.13 ProjectSnippet, API /projects/:id/snippets): a titled piece of code in a project with
-- its own visibility (0 private: project members; 10 internal: signed-in users who are not external; 20 public).
-- Their notes and award emoji are rows of `notes` and `award_emoji` with noteable/awardable type 'Snippet'.
-- A deleted author leaves the snippet to the project (author_id NULL; admins still edit it).
CREATE TABLE snippets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  author_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  title TEXT NOT NULL,
  file_name TEXT NOT NULL,
  content TEXT NOT NULL,
  visibility_level INTEGER NOT NULL CHECK (visibility_level IN (0, 10, 20)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
-- a project's list, newest first
CREATE INDEX snippets_project ON snippets(project_id, id);
