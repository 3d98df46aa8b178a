-- Project hook deliveries: a durable outbox. A row is written in the same transaction as the event that caused it
-- (push, issue, merge request, note, build, pipeline) and sent by the delivery worker (services/hook-deliveries.ts).
-- A pending row whose next_attempt_at has passed is due; claiming it moves next_attempt_at to the end of a lease and
-- sets locked_at, so no two senders post it at the same time, and a sender that died mid-send is retried after the
-- lease. delivered and failed are final.

CREATE TABLE hook_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  hook_id INTEGER NOT NULL REFERENCES project_hooks(id) ON DELETE CASCADE,
  event TEXT NOT NULL CHECK (event IN ('push', 'tag_push', 'issue', 'merge_request', 'note', 'build', 'pipeline')),
  -- the JSON body posted to the hook
  payload TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  -- set while a sender holds the row (the lease ends at next_attempt_at)
  locked_at TEXT,
  last_status_code INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  delivered_at TEXT
);
CREATE INDEX hook_deliveries_due ON hook_deliveries(status, next_attempt_at);
CREATE INDEX hook_deliveries_hook ON hook_deliveries(hook_id, id);
