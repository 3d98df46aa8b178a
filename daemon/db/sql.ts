/** Small SQL text helpers shared by every raw query. */

/** A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (use with `ESCAPE '\'`). */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** `?,?,?` for an IN list of `values` (`NULL` when empty, so `x IN (NULL)` matches nothing). */
export const placeholders = (values: readonly unknown[]) => (values.length ? values.map(() => '?').join(',') : 'NULL');

/**
 * `(SELECT value FROM json_each(?))`: an IN list bound as one JSON array parameter (pass `idList(ids)`), so the
 * statement text is the same for any number of ids and its prepared statement is cached once.
 */
export const IN_IDS = '(SELECT value FROM json_each(?))';
/** The parameter for IN_IDS. */
export const idList = (ids: readonly number[]) => JSON.stringify(ids);
