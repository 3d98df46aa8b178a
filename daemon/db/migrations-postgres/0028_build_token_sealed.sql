-- The plain token of a running build, sealed with the server secret (secrets.seal), so that any daemon masks it in
-- traces (SQLite's 0028). Cleared when the build stops running.
ALTER TABLE commit_statuses ADD COLUMN token_sealed text;
