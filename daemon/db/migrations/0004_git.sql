-- Git hosting: explicitly protected branches (the default branch is also protected by the
-- default_branch_protection setting, computed at push time, see services/protected-branches.ts).

CREATE TABLE protected_branches (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  -- a branch name, or a pattern with `*` wildcards (release/*)
  name TEXT NOT NULL,
  developers_can_push INTEGER NOT NULL DEFAULT 0,
  developers_can_merge INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, name)
);
