-- Runner interface: the artifacts size limit (MB) of GitLab 8.x's application setting max_artifacts_size
-- (an upload must be strictly smaller).
ALTER TABLE application_settings ADD COLUMN max_artifacts_size INTEGER NOT NULL DEFAULT 100;
