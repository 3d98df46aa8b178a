/**
 * Pages whose cost does not grow with their offset, for every long ordered list (issues, projects, events, builds,
 * pipelines, commit statuses, todos, notes, users). Two tricks, both exact:
 * - a page past the middle of the list (its total known) is read backwards from the other end, so the last page costs
 *   what the first does;
 * - a page deeper than two bookmark steps starts from a keyset bookmark: the sort key and id of every 500th row, read
 *   in one pass over the list's index and cached until the next write (db/read-cache.ts). The page is then a range
 *   condition the index answers directly, plus an OFFSET of fewer than 500 rows.
 */
import type { SQL } from 'drizzle-orm';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import type { AppContext } from '../context.js';
import { UntilNextWrite } from './read-cache.js';
import { statement } from './statements.js';
import type { Queries } from './layer/types.js';

/** Rows between two keyset bookmarks of a long list. */
export const BOOKMARK_STEP = 500;

/** An ordered list: `SELECT <select> FROM <from> WHERE <where> ORDER BY <key> <dir>, <id> <dir>`. */
export interface KeysetList {
  /** FROM text, with the alias the other parts use (`issues i`). */
  from: string;
  /** WHERE text (`1` for every row) and its positional values. */
  where: string;
  values: unknown[];
  /** The sort column (`i.created_at`); the id column itself when the list is ordered by id only. */
  key: string;
  /** The unique tie-break column (`i.id`). */
  id: string;
  desc: boolean;
  /** The columns to read (default `<id> AS id`). */
  select?: string;
  /**
   * Whether the sort column may hold NULL. Row-value comparisons with NULL are never true, so such a list is read
   * from the nearer end but never from a bookmark.
   */
  nullable?: boolean;
}

/** Bookmarks of long lists: [key, id] of every BOOKMARK_STEP-th row in list order, exact until the next write. */
const bookmarks = new UntilNextWrite<[unknown, number][]>(200);

const orderOf = (l: KeysetList, dir: 'ASC' | 'DESC') => (l.key === l.id ? `${l.id} ${dir}` : `${l.key} ${dir}, ${l.id} ${dir}`);

/** The bookmarks of one ordered list (one pass over its index on first use after a write). */
function listBookmarks(ctx: AppContext, l: KeysetList, dir: 'ASC' | 'DESC'): [unknown, number][] {
  const key = `${l.from}\u0000${l.where}\u0000${orderOf(l, dir)}\u0000${JSON.stringify(l.values)}`;
  return bookmarks.get(ctx, key, () => {
    const marks: [unknown, number][] = [];
    let i = 0;
    const rows = statement(ctx, `SELECT ${l.key} AS k, ${l.id} AS id FROM ${l.from} WHERE ${l.where} ORDER BY ${orderOf(l, dir)}`).raw();
    for (const row of rows.iterate(...l.values) as Iterable<[unknown, number]>) {
      if (i++ % BOOKMARK_STEP === 0) marks.push(row);
    }
    return marks;
  });
}

/** Where a page starts: read forwards or from the other end, with what LIMIT and OFFSET (null: past the end). */
function pagePlan(l: KeysetList, limit: number, offset: number, total?: number): { reverse: boolean; lim: number; off: number; dir: 'ASC' | 'DESC' } | null {
  let reverse = false;
  let lim = limit;
  let off = offset;
  if (total !== undefined) {
    if (offset >= total) return null;
    if (offset > total / 2) {
      reverse = true;
      lim = Math.min(limit, total - offset);
      off = total - offset - lim;
    }
  }
  return { reverse, lim, off, dir: l.desc !== reverse ? 'DESC' : 'ASC' };
}

/** Whether a page that far in starts from a bookmark (when bookmarks are available). */
const wantsBookmark = (l: KeysetList, off: number) => off >= 2 * BOOKMARK_STEP && !l.nullable;

/** The SELECT of a planned page, starting from a bookmark of `marks` when given. */
function pageQuery(l: KeysetList, plan: NonNullable<ReturnType<typeof pagePlan>>, marks: [unknown, number][] | null): { sql: string; args: unknown[]; reverse: boolean } {
  const { dir, lim, reverse } = plan;
  let off = plan.off;
  let keyset = '';
  const keysetArgs: unknown[] = [];
  if (marks) {
    const step = Math.min(Math.floor(off / BOOKMARK_STEP), marks.length - 1);
    if (step > 0) {
      const [k, id] = marks[step]!;
      const op = dir === 'DESC' ? '<=' : '>=';
      // rows at or after the bookmark, in list order
      if (l.key === l.id) {
        keyset = ` AND ${l.id} ${op} ?`;
        keysetArgs.push(id);
      } else {
        keyset = ` AND (${l.key}, ${l.id}) ${op} (?, ?)`;
        keysetArgs.push(k, id);
      }
      off -= step * BOOKMARK_STEP;
    }
  }
  const sql = `SELECT ${l.select ?? `${l.id} AS id`} FROM ${l.from} WHERE ${l.where}${keyset} ORDER BY ${orderOf(l, dir)} LIMIT ? OFFSET ?`;
  return { sql, args: [...l.values, ...keysetArgs, lim, off], reverse };
}

/** The SELECT text and its values for one page (exported for EXPLAIN QUERY PLAN checks in tests). */
export function keysetPageQuery(ctx: AppContext, l: KeysetList, limit: number, offset: number, total?: number): { sql: string; args: unknown[]; reverse: boolean } | null {
  const plan = pagePlan(l, limit, offset, total);
  if (!plan) return null;
  // Inside a transaction nothing is cached, so a bookmark pass would cost more than the offset it saves.
  const marks = wantsBookmark(l, plan.off) && !ctx.db.$client.inTransaction ? listBookmarks(ctx, l, plan.dir) : null;
  return pageQuery(l, plan, marks);
}

/**
 * The data-layer twin of keysetPage, run on `q` (ctx.data, or the snapshot of a list's COUNT and page: `inSnapshot`).
 * On SQLite deep pages start from the same cached bookmarks; on PostgreSQL (no cache across daemons) a page reads from
 * the nearer end with an OFFSET.
 */
export async function keysetPageAsync<T = Record<string, unknown>>(
  ctx: AppContext, q: Queries, l: KeysetList, limit: number, offset: number, total?: number, inSnapshot = true,
): Promise<T[]> {
  const plan = pagePlan(l, limit, offset, total);
  if (!plan) return [];
  let marks: [unknown, number][] | null = null;
  if (wantsBookmark(l, plan.off) && q.dialect.name === 'sqlite' && (inSnapshot || !ctx.db.$client.inTransaction)) {
    const key = `${l.from}\u0000${l.where}\u0000${orderOf(l, plan.dir)}\u0000${JSON.stringify(l.values)}`;
    marks = await bookmarks.getAsync(ctx, key, async () => {
      const rows = await q.all<{ k: unknown; id: number }>(`SELECT ${l.key} AS k, ${l.id} AS id FROM ${l.from} WHERE ${l.where} ORDER BY ${orderOf(l, plan.dir)}`, l.values);
      const out: [unknown, number][] = [];
      for (let i = 0; i < rows.length; i += BOOKMARK_STEP) out.push([rows[i]!.k, rows[i]!.id]);
      return out;
    }, inSnapshot);
  }
  const page = pageQuery(l, plan, marks);
  const rows = await q.all<T>(page.sql, page.args);
  if (page.reverse) rows.reverse();
  return rows;
}

/**
 * One page of an ordered list, in list order: `limit` rows from `offset`. With `total` (the list's count), a page in
 * the second half is read from the end; a page deeper than two bookmark steps from its end starts from a bookmark.
 * `read` may wrap the query (a cache of page ids); it gets the SQL text and values and must run them.
 */
export function keysetPage<T = Record<string, unknown>>(
  ctx: AppContext, l: KeysetList, limit: number, offset: number, total?: number,
  read: (sql: string, args: unknown[], run: () => T[]) => T[] = (_s, _a, run) => run(),
): T[] {
  const q = keysetPageQuery(ctx, l, limit, offset, total);
  if (!q) return [];
  const rows = [...read(q.sql, q.args, () => statement(ctx, q.sql).all(...q.args) as T[])];
  if (q.reverse) rows.reverse();
  return rows;
}

/** The ids of one page (see keysetPage). */
export function keysetPageIds(ctx: AppContext, l: KeysetList, limit: number, offset: number, total?: number): number[] {
  return keysetPage<{ id: number }>(ctx, { ...l, select: `${l.id} AS id` }, limit, offset, total).map((r) => r.id);
}

const dialect = new SQLiteSyncDialect();

/**
 * The WHERE text and values of a drizzle condition, for a KeysetList over the table itself (drizzle writes columns
 * table-qualified: `"commit_statuses"."id"`, so `from` is the quoted table name without an alias).
 */
export function drizzleWhere(where: SQL | undefined): { where: string; values: unknown[] } {
  if (!where) return { where: '1', values: [] };
  const q = dialect.sqlToQuery(where);
  return { where: q.sql, values: q.params };
}

/** `rows` (loaded by id in any order) in the order of `ids`. */
export function inIdOrder<T extends { id: number }>(ids: readonly number[], rows: readonly T[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/**
 * One page of a table ordered by id under a drizzle condition: the page's ids through keysetPageIds, then its rows
 * through `load` (one query by id), in list order.
 */
export function idOrderedPage<T extends { id: number }>(
  ctx: AppContext, table: string, where: SQL | undefined, desc: boolean, limit: number, offset: number, total: number | undefined,
  load: (ids: number[]) => T[],
): T[] {
  const w = drizzleWhere(where);
  const id = `"${table}"."id"`;
  const ids = keysetPageIds(ctx, { from: `"${table}"`, where: w.where, values: w.values, key: id, id, desc }, limit, offset, total);
  return ids.length ? inIdOrder(ids, load(ids)) : [];
}
