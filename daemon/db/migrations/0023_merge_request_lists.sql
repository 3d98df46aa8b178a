-- Merge request lists that cost the page, not the offset or the list's length: partial covering indexes over live (not
-- deleted) merge requests for the orders and the state filter of GET /projects/:id/merge_requests, and live counts
-- per (project, state) kept exact by triggers in the writing transaction, so X-Total is a few counter rows instead of
-- a count of every merge request.
CREATE INDEX merge_requests_live_target_created ON merge_requests(target_project_id, created_at, id, state) WHERE deleted_at IS NULL;
CREATE INDEX merge_requests_live_target_updated ON merge_requests(target_project_id, updated_at, id, state) WHERE deleted_at IS NULL;
CREATE INDEX merge_requests_live_target_state ON merge_requests(target_project_id, state, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE merge_request_counts (
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  state TEXT NOT NULL,
  n INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, state)
) WITHOUT ROWID;

INSERT INTO merge_request_counts (project_id, state, n)
  SELECT target_project_id, state, COUNT(*) FROM merge_requests WHERE deleted_at IS NULL GROUP BY target_project_id, state;

CREATE TRIGGER merge_request_counts_insert AFTER INSERT ON merge_requests WHEN NEW.deleted_at IS NULL BEGIN
  INSERT OR IGNORE INTO merge_request_counts (project_id, state) VALUES (NEW.target_project_id, NEW.state);
  UPDATE merge_request_counts SET n = n + 1 WHERE project_id = NEW.target_project_id AND state = NEW.state;
END;
CREATE TRIGGER merge_request_counts_update AFTER UPDATE OF target_project_id, state, deleted_at ON merge_requests BEGIN
  UPDATE merge_request_counts SET n = n - 1 WHERE OLD.deleted_at IS NULL AND project_id = OLD.target_project_id AND state = OLD.state;
  INSERT OR IGNORE INTO merge_request_counts (project_id, state) SELECT NEW.target_project_id, NEW.state WHERE NEW.deleted_at IS NULL;
  UPDATE merge_request_counts SET n = n + 1 WHERE NEW.deleted_at IS NULL AND project_id = NEW.target_project_id AND state = NEW.state;
END;
CREATE TRIGGER merge_request_counts_delete AFTER DELETE ON merge_requests WHEN OLD.deleted_at IS NULL BEGIN
  UPDATE merge_request_counts SET n = n - 1 WHERE project_id = OLD.target_project_id AND state = OLD.state;
END;

-- After a push to a target branch: the merge requests whose source head the push brought (merged by hand) are found
-- by that commit, not by reading every open merge request of the branch.
CREATE INDEX merge_request_diffs_head ON merge_request_diffs(head_commit_sha);
