/**
 * What the collaboration services share about their database handles: the locks of the data-layer writes, and the
 * bounds of ids and LIMITs on both engines.
 */
import type { Queries } from '../../db/layer/types.js';
import { transactionLock } from '../../db/locks.js';

/** What an issue, merge request or note is, by GitLab's polymorphic (type, id) pair. */
export interface Target<T extends string = 'Issue' | 'MergeRequest'> {
  type: T;
  id: number;
}

/** Keys of the transaction locks below (the first half of PostgreSQL's two-integer advisory lock key). */
export const LOCKS = { issueIid: 0x6c0101, issue: 0x6c0102, todoTarget: 0x6c0103, mergeRequestTodoTarget: 0x6c0104, note: 0x6c0105, label: 0x6c0106, snippet: 0x6c0107 } as const;

/**
 * Serialise the writers of one thing (an issue, a project's iids, the todos of a target) until the end of the
 * transaction: on PostgreSQL a transaction-scoped advisory lock, after which every statement sees what the previous
 * holder committed (READ COMMITTED); on SQLite nothing to do (a write transaction holds the database alone).
 */
export async function lockAsync(tx: Queries, key: number, id: number): Promise<void> {
  await transactionLock(tx, key, id);
}

/** The LIMIT of "no limit" (both engines take a number there). */
export const MAX_ROWS = 2 ** 31 - 1;
/** Ids beyond PostgreSQL's integer columns match nothing (and must not reach a query there). */
export const INT_MAX = 2147483647;
