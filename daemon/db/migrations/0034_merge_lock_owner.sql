-- Merge locks across daemons (docs/design/postgres.md, "Several daemons": the repair rule): a locked merge request
-- names the daemon holding its lock (a random id per process) and when that daemon last showed it is alive; the repair
-- at start and the periodic sweep take over only locks whose heartbeat is older than the lease (their owner died).
ALTER TABLE merge_requests ADD COLUMN lock_owner TEXT;
ALTER TABLE merge_requests ADD COLUMN lock_heartbeat_at TEXT;
-- the sweep reads the locked ones (a handful) without scanning every merge request
CREATE INDEX merge_requests_locked ON merge_requests (id) WHERE state = 'locked';
