-- The plain token of a running build, sealed with the server secret (secrets.seal), so that any daemon sharing the
-- database and the data directory can mask it in traces sent with the runner's token (services/build-tokens.ts kept
-- it in the memory of the daemon that handed the build out). Cleared when the build stops running.
ALTER TABLE commit_statuses ADD COLUMN token_sealed TEXT;
