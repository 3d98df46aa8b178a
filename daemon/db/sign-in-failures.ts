/**
 * The shared sign-in counters' data module (table sign_in_failures, PostgreSQL only: on SQLite the counters live in
 * memory, policy/sign-in-throttle.ts). Keys are SHA-256 hex of the address, the login and their pair; the rules of the
 * counts are decided inside each upsert under the row's lock, so whichever daemon counts the last failure decides.
 */
import type { Database, Queries } from './layer/types.js';

/**
 * The user's upsert of a failed password (its parameters named, numbered by the caller): the count in a row, forgotten
 * once lockTime has passed since the last failure (unless locked), and the lock at the limit.
 */
function failedUserSql(p: { user: string; now: string; limit: string; stale: string; lockEnd: string }): string {
  const count = `(CASE WHEN (f.ends_at IS NULL OR f.ends_at <= ${p.now}) AND f.last_failure_at < ${p.stale} THEN 1 ELSE f.failures + 1 END)`;
  return `INSERT INTO sign_in_failures AS f (scope, key_hash, failures, window_started_at, last_failure_at, ends_at)
VALUES ('user', ${p.user}, CASE WHEN 1 >= ${p.limit} THEN 0 ELSE 1 END, ${p.now}, ${p.now}, CASE WHEN 1 >= ${p.limit} THEN ${p.lockEnd} END)
ON CONFLICT (scope, key_hash) DO UPDATE SET
  failures = CASE WHEN ${count} >= ${p.limit} THEN 0 ELSE ${count} END,
  ends_at = CASE WHEN ${count} >= ${p.limit} THEN ${p.lockEnd} ELSE f.ends_at END,
  last_failure_at = ${p.now}`;
}

/** A failed password without a counted address: $1 user, $2 now, $3 limit, $4 last failure that still counts, $5 lock end. */
const FAILED_USER = failedUserSql({ user: '$1', now: '$2::timestamptz', limit: '$3::int', stale: '$4::timestamptz', lockEnd: '$5::timestamptz' });

/**
 * A failed password from a counted address, in one statement: the address's count in its window (a window older than
 * findTime starts again) and the ban at the limit (then a new window); that login's count from that address in the
 * same window (a 'pair', which succeeded() subtracts); and the user's upsert. Whichever daemon counts the last failure,
 * the limit is decided inside the upsert under the row's lock. $1 address, $2 pair, $3 user (key hashes), $4 now,
 * $5 start of a current window, $6 limit, $7 ban end, $8 last failure that still counts for the user, $9 lock end.
 */
const FAILED_WITH_ADDRESS = (() => {
  const [address, pair, user, now, win, limit, banEnd] = ['$1::text', '$2::text', '$3::text', '$4::timestamptz', '$5::timestamptz', '$6::int', '$7::timestamptz'];
  const count = `(CASE WHEN f.window_started_at <= ${win} THEN 1 ELSE f.failures + 1 END)`;
  return `WITH a AS (
  INSERT INTO sign_in_failures AS f (scope, key_hash, failures, window_started_at, last_failure_at, ends_at)
  VALUES ('address', ${address}, CASE WHEN 1 >= ${limit} THEN 0 ELSE 1 END, ${now}, ${now}, CASE WHEN 1 >= ${limit} THEN ${banEnd} END)
  ON CONFLICT (scope, key_hash) DO UPDATE SET
    failures = CASE WHEN ${count} >= ${limit} THEN 0 ELSE ${count} END,
    window_started_at = CASE WHEN f.window_started_at <= ${win} OR ${count} >= ${limit} THEN ${now} ELSE f.window_started_at END,
    ends_at = CASE WHEN ${count} >= ${limit} THEN ${banEnd} ELSE f.ends_at END,
    last_failure_at = ${now}
  RETURNING f.failures, f.window_started_at
), p AS (
  INSERT INTO sign_in_failures AS f (scope, key_hash, failures, window_started_at, last_failure_at)
  SELECT 'pair', ${pair}, CASE WHEN a.failures = 0 THEN 0 ELSE 1 END, a.window_started_at, ${now} FROM a
  ON CONFLICT (scope, key_hash) DO UPDATE SET
    failures = CASE WHEN excluded.failures = 0 THEN 0 WHEN f.window_started_at = excluded.window_started_at THEN f.failures + 1 ELSE 1 END,
    window_started_at = excluded.window_started_at,
    last_failure_at = ${now}
)
${failedUserSql({ user, now, limit, stale: '$8::timestamptz', lockEnd: '$9::timestamptz' })}`;
})();

/** A counter row: its scope, its count and the end of its ban or lock. */
export interface SignInFailureRow {
  scope: string;
  failures: number;
  ends_at: string | null;
}

/** The rows of an address, a user and their pair (keys: hashes; '' for none), in one read. */
export async function signInFailureRows(q: Queries, addressKey: string | null, userKey: string, pairKey: string | null): Promise<SignInFailureRow[]> {
  return q.all<SignInFailureRow>(
    `SELECT scope, failures, ends_at FROM sign_in_failures
      WHERE (scope = 'address' AND key_hash = $1) OR (scope = 'user' AND key_hash = $2) OR (scope = 'pair' AND key_hash = $3)`,
    [addressKey ?? '', userKey, pairKey ?? ''],
  );
}

/** The times and limit of a failed password (ISO text); `stale`: the last failure that still counts for the user. */
interface FailureTimes {
  now: string;
  limit: number;
  stale: string;
  lockEnd: string;
}

/** Count a failed password of `user` without a counted address. */
export async function countFailedUser(q: Queries, f: FailureTimes & { user: string }): Promise<void> {
  await q.run(FAILED_USER, [f.user, f.now, f.limit, f.stale, f.lockEnd]);
}

/** Count a failed password from a counted address: the address, the pair and the user in one statement. */
export async function countFailedWithAddress(
  q: Queries, f: FailureTimes & { address: string; pair: string; user: string; windowStart: string; banEnd: string },
): Promise<void> {
  await q.run(FAILED_WITH_ADDRESS, [f.address, f.pair, f.user, f.now, f.windowStart, f.limit, f.banEnd, f.stale, f.lockEnd]);
}

/** A success: the user's count starts again; the address forgets this login's failures in its current window. */
export async function forgetSignInFailures(q: Queries, userKey: string, pairKey: string | null, addressKey: string | null): Promise<void> {
  await q.run(
    `WITH u AS (DELETE FROM sign_in_failures WHERE scope = 'user' AND key_hash = $1),
          p AS (DELETE FROM sign_in_failures WHERE scope = 'pair' AND key_hash = $2 RETURNING failures, window_started_at)
     UPDATE sign_in_failures f SET failures = GREATEST(f.failures - p.failures, 0) FROM p
      WHERE f.scope = 'address' AND f.key_hash = $3 AND f.window_started_at = p.window_started_at`,
    [userKey, pairKey ?? '', addressKey ?? ''],
  );
}

/** pg_advisory_xact_lock key of the sweep (any constant, the same on every daemon). */
const SWEEP_LOCK_KEY = 74_117_027;

/**
 * Delete the rows that no longer hold anything (bans and locks over at `now`, users whose last failure is before
 * `userStale`, windows that started at or before `windowStale`), one daemon at a time: the others skip (0).
 */
export async function sweepSignInFailures(db: Database, now: string, userStale: string, windowStale: string): Promise<number> {
  return db.transaction(async (tx) => {
    const lock = await tx.get<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1::bigint) AS ok', [SWEEP_LOCK_KEY]);
    if (!lock?.ok) return 0;
    const r = await tx.run(
      `DELETE FROM sign_in_failures WHERE (ends_at IS NULL OR ends_at <= $1)
         AND CASE WHEN scope = 'user' THEN last_failure_at < $2 ELSE window_started_at <= $3 END`,
      [now, userStale, windowStale],
    );
    return r.changes;
  });
}
