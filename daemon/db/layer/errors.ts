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
