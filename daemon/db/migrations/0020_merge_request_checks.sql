-- Merge status checks: a counter bumped whenever merge_status goes back to unchecked (a push to either branch, a new
-- target branch), so a check that ran git against older heads never writes its stale answer over a newer reset.
ALTER TABLE merge_requests ADD COLUMN merge_status_version INTEGER NOT NULL DEFAULT 0;
