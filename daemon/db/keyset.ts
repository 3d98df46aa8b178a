/**
 * Pages whose cost does not grow with their offset, for every long ordered list (issues, projects, events, builds,
 * pipelines, commit statuses, todos, notes, users). Two tricks, both exact:
 * - a page past the middle of the list (its total known) is read backwards from the other end, so the last page costs
 *   what the first does;
 * - a page deeper than two bookmark steps starts from a keyset bookmark: the sort key and id of every 500th row, read
 *   in one pass over the list's index and cached until the next write (db/read-cache.ts). The page is then a range
 *   condition the index answers directly, plus an OFFSET of fewer than 500 rows.
 */
import type { AppContext } from '../context.js';
import { UntilNextWrite } from './read-cache.js';
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

/**
 * The SELECT text and its values for one page, run on `q` (see keysetPage; exported for EXPLAIN QUERY PLAN checks
 * in tests). The bookmarks of a deep page are read on SQLite (one pass over the list's index on first use after a write).
 */
export async function keysetPageQuery(
  ctx: AppContext, q: Queries, l: KeysetList, limit: number, offset: number, total?: number, inSnapshot = true,
): Promise<{ sql: string; args: unknown[]; reverse: boolean } | null> {
  const plan = pagePlan(l, limit, offset, total);
  if (!plan) return null;
  let marks: [unknown, number][] | null = null;
  // Inside a write transaction nothing is cached, so a bookmark pass would cost more than the offset it saves.
  const conn = ctx.data.sqlite;
  if (wantsBookmark(l, plan.off) && q.dialect.name === 'sqlite' && conn && (inSnapshot || !conn.inTransaction())) {
    const key = `${l.from}\u0000${l.where}\u0000${orderOf(l, plan.dir)}\u0000${JSON.stringify(l.values)}`;
    marks = await bookmarks.getAsync(ctx, key, async () => {
      const rows = await q.all<{ k: unknown; id: number }>(`SELECT ${l.key} AS k, ${l.id} AS id FROM ${l.from} WHERE ${l.where} ORDER BY ${orderOf(l, plan.dir)}`, l.values);
      const out: [unknown, number][] = [];
      for (let i = 0; i < rows.length; i += BOOKMARK_STEP) out.push([rows[i]!.k, rows[i]!.id]);
      return out;
    }, inSnapshot);
  }
  return pageQuery(l, plan, marks);
}

/**
 * One page of an ordered list, in list order: `limit` rows from `offset`, run on `q` (ctx.data, or the snapshot of a
 * list's COUNT and page: `inSnapshot`). With `total` (the list's count), a page in the second half is read from the
 * end; on SQLite a page deeper than two bookmark steps from its end starts from a cached bookmark; on PostgreSQL (no
 * cache across daemons) a page reads from the nearer end with an OFFSET.
 */
export async function keysetPage<T = Record<string, unknown>>(
  ctx: AppContext, q: Queries, l: KeysetList, limit: number, offset: number, total?: number, inSnapshot = true,
): Promise<T[]> {
  const page = await keysetPageQuery(ctx, q, l, limit, offset, total, inSnapshot);
  if (!page) return [];
  const rows = await q.all<T>(page.sql, page.args);
  if (page.reverse) rows.reverse();
  return rows;
}

/** `rows` (loaded by id in any order) in the order of `ids`. */
export function inIdOrder<T extends { id: number }>(ids: readonly number[], rows: readonly T[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}
