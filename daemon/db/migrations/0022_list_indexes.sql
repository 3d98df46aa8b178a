-- Lists that cost the page, not the offset (db/keyset.ts): the ordered walk of a list, its COUNT and the one pass that
-- takes its keyset bookmarks read index entries only, with each filter answered from the index.
-- GET /projects/:id/builds (type = 'build', optional scope on status), newest first.
CREATE INDEX commit_statuses_project_type ON commit_statuses(project_id, type, id, status);
-- GET /projects/:id/pipelines (optional scope on status), newest first; replaces pipelines(project_id, id), its prefix.
CREATE INDEX pipelines_project_status ON pipelines(project_id, id, status);
DROP INDEX pipelines_project;
-- GET /todos (state, then action, author, project and type filters; the target test needs target_type and target_id),
-- newest first; replaces todos(user_id, state, id), its prefix.
CREATE INDEX todos_user_state_list ON todos(user_id, state, id, target_type, target_id, action, author_id, project_id);
DROP INDEX todos_user_state;
