-- The failed sign-in throttle's counters (policy/sign-in-throttle.ts), shared by every daemon on this database: a ban
-- made through one holds on all. UNLOGGED: no WAL for a write per wrong password; a crash of the server empties it
-- (counters forgotten, as a daemon restart forgot them when they lived in memory), and replicas do not have it. One
-- row per counter: scope 'address' (a client address: failures in the current window, the ban), 'user' (a user or an
-- unknown login: failures in a row, the lock) and 'pair' (one login's failures from one address in that address's
-- current window, forgotten from the address's count when that login signs in). Keys are SHA-256 hex of the address
-- or login key, never the text itself. Expired rows are swept by a background worker.
CREATE UNLOGGED TABLE sign_in_failures (
  scope text NOT NULL CHECK (scope IN ('address', 'user', 'pair')),
  key_hash text NOT NULL,
  failures integer NOT NULL DEFAULT 0,
  window_started_at timestamptz NOT NULL,
  last_failure_at timestamptz NOT NULL,
  -- when the ban (address) or the lock (user) ends; NULL or past: none
  ends_at timestamptz,
  PRIMARY KEY (scope, key_hash)
);
