-- Merge locks across daemons (SQLite's 0034): the daemon holding a merge request's lock and its last heartbeat; the
-- repair takes over only locks whose heartbeat is older than the lease.
ALTER TABLE merge_requests ADD COLUMN lock_owner text;
ALTER TABLE merge_requests ADD COLUMN lock_heartbeat_at timestamptz;
CREATE INDEX merge_requests_locked ON merge_requests (id) WHERE state = 'locked';
