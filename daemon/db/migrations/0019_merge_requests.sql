-- Merge requests and their diffs (GitLab 8.x merge_requests and merge_request_diffs). Labels, notes, award emoji,
-- subscriptions and todos of a merge request live in the polymorphic collaboration tables (0012) with type
-- 'MergeRequest'.

CREATE TABLE merge_requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  -- the target project: iid counts there, the MR is listed there
  target_project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  iid INTEGER NOT NULL,
  -- the same project, or a fork of it
  source_project_id INTEGER REFERENCES projects(id) ON DELETE SET NULL,
  source_branch TEXT NOT NULL,
  target_branch TEXT NOT NULL,
  title TEXT NOT NULL,
  description TEXT,
  state TEXT NOT NULL DEFAULT 'opened' CHECK (state IN ('opened', 'reopened', 'closed', 'merged', 'locked')),
  merge_status TEXT NOT NULL DEFAULT 'unchecked' CHECK (merge_status IN ('unchecked', 'can_be_merged', 'cannot_be_merged')),
  author_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  assignee_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  milestone_id INTEGER REFERENCES milestones(id) ON DELETE SET NULL,
  -- merge when the head pipeline succeeds: who asked, and with which params (JSON: commit message, remove branch)
  merge_when_build_succeeds INTEGER NOT NULL DEFAULT 0,
  merge_user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  merge_params TEXT,
  merge_commit_sha TEXT,
  merge_error TEXT,
  should_remove_source_branch INTEGER NOT NULL DEFAULT 0,
  force_remove_source_branch INTEGER NOT NULL DEFAULT 0,
  updated_by_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  merged_at TEXT,
  closed_at TEXT,
  -- soft delete
  deleted_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (target_project_id, iid)
);
CREATE INDEX merge_requests_target_created ON merge_requests(target_project_id, created_at, id);
CREATE INDEX merge_requests_target_updated ON merge_requests(target_project_id, updated_at, id);
CREATE INDEX merge_requests_target_state ON merge_requests(target_project_id, state, created_at, id);
CREATE INDEX merge_requests_source ON merge_requests(source_project_id, source_branch, state);
CREATE INDEX merge_requests_target_branch ON merge_requests(target_project_id, target_branch, state);
CREATE INDEX merge_requests_author ON merge_requests(author_id, created_at, id);
CREATE INDEX merge_requests_assignee ON merge_requests(assignee_id);
CREATE INDEX merge_requests_milestone ON merge_requests(milestone_id);

-- One row per version of a merge request's diff: written at create and on every push to either branch.
CREATE TABLE merge_request_diffs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  merge_request_id INTEGER NOT NULL REFERENCES merge_requests(id) ON DELETE CASCADE,
  -- collected | empty (no commits between the branches) | overflow (cut: too many files) | unrelated (no merge base)
  state TEXT NOT NULL,
  base_commit_sha TEXT,
  head_commit_sha TEXT,
  start_commit_sha TEXT,
  -- JSON array of the commits (newest first): {id, message, author_name, author_email, authored_date, committer_name, committer_email, committed_date}
  commits TEXT NOT NULL DEFAULT '[]',
  commits_count INTEGER NOT NULL DEFAULT 0,
  real_size TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX merge_request_diffs_mr ON merge_request_diffs(merge_request_id, id);
