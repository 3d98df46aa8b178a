-- Issue lists that cost the page, not the offset: partial covering indexes over live (not deleted) issues, so the
-- ordered walk of GET /projects/:id/issues and GET /issues (and their COUNT) reads index entries only, with the
-- state, confidentiality and author/assignee tests answered from the index. They replace the 0012 list indexes,
-- which covered deleted issues too and sent every filtered row to the table.
CREATE INDEX issues_live_project_created ON issues(project_id, created_at, id, state, confidential, author_id, assignee_id, milestone_id)
  WHERE deleted_at IS NULL;
CREATE INDEX issues_live_project_updated ON issues(project_id, updated_at, id, state, confidential, author_id, assignee_id, milestone_id)
  WHERE deleted_at IS NULL;
CREATE INDEX issues_live_project_state_created ON issues(project_id, state, created_at, id, confidential, author_id, assignee_id)
  WHERE deleted_at IS NULL;
CREATE INDEX issues_live_author_created ON issues(author_id, created_at, id, project_id, state) WHERE deleted_at IS NULL;
CREATE INDEX issues_live_author_updated ON issues(author_id, updated_at, id, project_id, state) WHERE deleted_at IS NULL;
DROP INDEX issues_project_created;
DROP INDEX issues_project_updated;
DROP INDEX issues_project_state_created;
DROP INDEX issues_author_created;

-- Live issue counts per (project, author, state, confidentiality), kept exact by triggers in the writing transaction,
-- so X-Total of the unfiltered lists, GET /issues and open_issues_count cost a few rows instead of a count of every
-- issue. Filtered lists (labels, milestone, iid, groups) still count their matches.
CREATE TABLE issue_counts (
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  -- 0 when the author's account is gone
  author_id INTEGER NOT NULL,
  state TEXT NOT NULL,
  confidential INTEGER NOT NULL,
  n INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, author_id, state, confidential)
) WITHOUT ROWID;
CREATE INDEX issue_counts_author ON issue_counts(author_id, project_id);
-- the few live confidential issues, to add a non-reporter's own ones to the counts
CREATE INDEX issues_live_confidential ON issues(project_id, state, author_id, assignee_id) WHERE deleted_at IS NULL AND confidential = 1;

INSERT INTO issue_counts (project_id, author_id, state, confidential, n)
  SELECT project_id, COALESCE(author_id, 0), state, confidential != 0, COUNT(*) FROM issues WHERE deleted_at IS NULL
  GROUP BY project_id, COALESCE(author_id, 0), state, confidential != 0;

CREATE TRIGGER issue_counts_insert AFTER INSERT ON issues WHEN NEW.deleted_at IS NULL BEGIN
  INSERT OR IGNORE INTO issue_counts (project_id, author_id, state, confidential) VALUES (NEW.project_id, COALESCE(NEW.author_id, 0), NEW.state, NEW.confidential != 0);
  UPDATE issue_counts SET n = n + 1
    WHERE project_id = NEW.project_id AND author_id = COALESCE(NEW.author_id, 0) AND state = NEW.state AND confidential = (NEW.confidential != 0);
END;
CREATE TRIGGER issue_counts_update AFTER UPDATE OF project_id, author_id, state, confidential, deleted_at ON issues BEGIN
  UPDATE issue_counts SET n = n - 1
    WHERE OLD.deleted_at IS NULL AND project_id = OLD.project_id AND author_id = COALESCE(OLD.author_id, 0) AND state = OLD.state AND confidential = (OLD.confidential != 0);
  INSERT OR IGNORE INTO issue_counts (project_id, author_id, state, confidential)
    SELECT NEW.project_id, COALESCE(NEW.author_id, 0), NEW.state, NEW.confidential != 0 WHERE NEW.deleted_at IS NULL;
  UPDATE issue_counts SET n = n + 1
    WHERE NEW.deleted_at IS NULL AND project_id = NEW.project_id AND author_id = COALESCE(NEW.author_id, 0) AND state = NEW.state AND confidential = (NEW.confidential != 0);
END;
CREATE TRIGGER issue_counts_delete AFTER DELETE ON issues WHEN OLD.deleted_at IS NULL BEGIN
  UPDATE issue_counts SET n = n - 1
    WHERE project_id = OLD.project_id AND author_id = COALESCE(OLD.author_id, 0) AND state = OLD.state AND confidential = (OLD.confidential != 0);
END;
