-- Projects: indexes for the project lists (a page of 20 out of 10,000 must stay well under 10 ms).
-- The fork count of every listed project is looked up by forked_from_id.
CREATE INDEX projects_forked_from ON projects(forked_from_id);
-- One index per list order (order_by=name, path, updated_at, last_activity_at; created_at and id exist), so that a
-- page is read in order instead of sorting every visible project.
CREATE INDEX projects_name ON projects(name);
CREATE INDEX projects_path ON projects(path);
CREATE INDEX projects_updated ON projects(updated_at);
CREATE INDEX projects_last_activity ON projects(last_activity_at);
