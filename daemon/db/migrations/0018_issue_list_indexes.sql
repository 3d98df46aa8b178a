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
