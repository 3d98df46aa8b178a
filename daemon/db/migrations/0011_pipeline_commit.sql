-- The commit message and author of a pipeline's sha, read from git when the pipeline is created, so the build and
-- pipeline hook payloads (built inside the transaction that changes a status) need no git access.
ALTER TABLE pipelines ADD COLUMN commit_message TEXT;
ALTER TABLE pipelines ADD COLUMN commit_author_name TEXT;
ALTER TABLE pipelines ADD COLUMN commit_author_email TEXT;
