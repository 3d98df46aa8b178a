/** Transaction locks on either engine (the writers of one thing serialised until the end of the transaction). */
import type { Queries } from './layer/types.js';

/**
 * On PostgreSQL a transaction-scoped advisory lock on (key, id), after which every statement sees what the previous
 * holder committed (READ COMMITTED); on SQLite nothing to do (a write transaction holds the database alone).
 */
export async function transactionLock(tx: Queries, key: number, id: number): Promise<void> {
  if (tx.dialect.name === 'postgres') await tx.get(`SELECT pg_advisory_xact_lock(CAST(? AS integer), CAST(? AS integer))`, [key, id]);
}
