-- A merge in progress (8.x `locked` state): when the lock was taken and the state to go back to when the merge is
-- refused or the daemon stopped before writing the target branch. The merging user is merge_user_id; the merge
-- commit about to be published is merge_commit_sha, so a restart can tell a finished merge from an unfinished one.
ALTER TABLE merge_requests ADD COLUMN locked_at TEXT;
ALTER TABLE merge_requests ADD COLUMN lock_state TEXT;
