-- The issue count trigger of 0018 on an update, fixed: its INSERT OR IGNORE of the new counts row took the conflict
-- resolution of the statement that fired it, and a foreign-key action fires it with ABORT. So deleting a user
-- (issues.author_id ON DELETE SET NULL moves their live issues to author 0) failed with "UNIQUE constraint failed:
-- issue_counts..." when the project already had a counts row for author 0 with that state: the second user deleted
-- whose issues sat in a project with an earlier deleted user's ones. An upsert is not a conflict resolution, so no
-- outer statement overrides it. Found by test/unit/postgres-schema.test.ts (the PostgreSQL trigger already upserts).
DROP TRIGGER issue_counts_update;
CREATE TRIGGER issue_counts_update AFTER UPDATE OF project_id, author_id, state, confidential, deleted_at ON issues BEGIN
  UPDATE issue_counts SET n = n - 1
    WHERE OLD.deleted_at IS NULL AND project_id = OLD.project_id AND author_id = COALESCE(OLD.author_id, 0) AND state = OLD.state AND confidential = (OLD.confidential != 0);
  INSERT INTO issue_counts (project_id, author_id, state, confidential, n)
    SELECT NEW.project_id, COALESCE(NEW.author_id, 0), NEW.state, NEW.confidential != 0, 1 WHERE NEW.deleted_at IS NULL
    ON CONFLICT (project_id, author_id, state, confidential) DO UPDATE SET n = n + 1;
END;
