/** Small SQL text helpers shared by every raw query. */

/** A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (use with `ESCAPE '\'`). */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** `?,?,?` for an IN list of `values` (`NULL` when empty, so `x IN (NULL)` matches nothing). */
export const placeholders = (values: readonly unknown[]) => (values.length ? values.map(() => '?').join(',') : 'NULL');


/** A WHERE fragment and its positional arguments (the access rules' SQL, db/access.ts, handed to the list queries). */
export interface SqlCondition {
  sql: string;
  args: unknown[];
}
