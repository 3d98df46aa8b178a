/** Small SQL text helpers shared by every raw query. */
import type { Queries } from './layer/types.js';

/** A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (use with `ESCAPE '\'`). */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** `?,?,?` for an IN list of `values` (`NULL` when empty, so `x IN (NULL)` matches nothing). */
export const placeholders = (values: readonly unknown[]) => (values.length ? values.map(() => '?').join(',') : 'NULL');

/**
 * The rows of `table` whose id is one of `ids` (repeats dropped; in no set order), read by joining from the id list
 * (Dialect.idList): on SQLite an `id IN (SELECT value FROM json_each(?))` builds a temporary index, with an 88 KiB
 * page cache of its own (mmap, page faults, munmap), for every statement.
 */
export function rowsWithIds<T = Record<string, unknown>>(q: Queries, table: string, ids: readonly number[]): Promise<T[]> {
  return q.all<T>(`SELECT t.* FROM ${q.dialect.idList('j')} CROSS JOIN ${table} t WHERE t.id = j.value`, [q.dialect.ids(ids)]);
}

/** A WHERE fragment and its positional arguments (the access rules' SQL, db/access.ts, handed to the list queries). */
export interface SqlCondition {
  sql: string;
  args: unknown[];
}
