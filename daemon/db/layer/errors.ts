/** Database errors that services tell apart, on either engine. */

/** Whether an error is a unique-constraint violation (SQLite's SQLITE_CONSTRAINT_UNIQUE, PostgreSQL's 23505). */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Whether an error is a foreign-key violation (SQLite's SQLITE_CONSTRAINT_FOREIGNKEY, PostgreSQL's 23503). */
export function isForeignKeyViolation(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * The 400 message for a value the database refused as data (PostgreSQL's class 22, "data exception": a NUL character
 * in text, a number out of the column's range, an invalid date), or null for any other error. SQLite stores such
 * values as they are, so these arise on PostgreSQL only; they are the client's input, never a server error.
 */
export function dataExceptionMessage(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^22[0-9A-Z]{3}$/.test(code) || !(e instanceof Error)) return null;
  if (code === '22021' || code === '22P05') return '400 (Bad request) text must not contain NUL (\\u0000) characters';
  if (code === '22003') return '400 (Bad request) a number is out of range';
  if (code === '22007' || code === '22008') return '400 (Bad request) a date or time is invalid';
  return '400 (Bad request) a value is invalid';
}

/** Why a connection or a statement failed, in a few words (pg's AggregateError of a refused connection has no message of its own). */
export function errorReason(e: unknown): string {
  const err = e as NodeJS.ErrnoException & { errors?: unknown[] };
  if (err?.message) return err.message;
  const first = err?.errors?.[0] as Error | undefined;
  return first?.message || err?.code || String(e);
}
