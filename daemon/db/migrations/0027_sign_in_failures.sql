-- The failed sign-in throttle's counters (policy/sign-in-throttle.ts), for daemons that share them: on PostgreSQL every
-- daemon reads and counts here, so a ban made through one holds on all. A SQLite daemon is the only one on its file and
-- keeps its counters in memory (no write on the one writer per wrong password); the table exists so that both engines
-- have one schema. One row per counter: scope 'address' (a client address: failures in the current window, the ban),
-- 'user' (a user or an unknown login: failures in a row, the lock) and 'pair' (one login's failures from one address
-- in that address's current window, forgotten from the address's count when that login signs in). Keys are SHA-256
-- hex of the address or login key, never the text itself.
CREATE TABLE sign_in_failures (
  scope TEXT NOT NULL CHECK (scope IN ('address', 'user', 'pair')),
  key_hash TEXT NOT NULL,
  failures INTEGER NOT NULL DEFAULT 0,
  window_started_at TEXT NOT NULL,
  last_failure_at TEXT NOT NULL,
  -- when the ban (address) or the lock (user) ends; NULL or past: none
  ends_at TEXT,
  PRIMARY KEY (scope, key_hash)
);
