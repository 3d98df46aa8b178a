/**
 * The users' data module: every statement that reads users by id, and their personal projects' counts. Each function
 * takes `q` (the database or a transaction) first, so it runs the same on `ctx.data` or inside a transaction.
 */
import type { Queries } from './layer/types.js';
import { toUser } from './rows.js';
import type { UserRow } from './schema.js';

/** The distinct non-null ids of a list. */
export function distinctIds(ids: readonly (number | null | undefined)[]): number[] {
  return [...new Set(ids.filter((i): i is number => typeof i === 'number'))];
}

/** One user by id (ids the database handed out: a caller's id is checked for range first), or null. */
export async function userById(q: Queries, id: number | null): Promise<UserRow | null> {
  if (id === null) return null;
  const row = await q.get('SELECT * FROM users WHERE id = ?', [id]);
  return row ? toUser(row) : null;
}

/** Users by id, loaded in one query (for presenting lists); nulls and repeats are skipped. */
export async function usersByIds(q: Queries, ids: readonly (number | null | undefined)[]): Promise<Map<number, UserRow>> {
  const wanted = distinctIds(ids);
  if (!wanted.length) return new Map();
  return new Map((await q.all(`SELECT * FROM users WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(wanted)])).map((u) => [u.id as number, toUser(u)]));
}

/** The number of projects in a user's personal namespace (can_create_project). */
export async function personalProjectCount(q: Queries, userId: number): Promise<number> {
  const row = await q.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.kind = 'user' AND n.owner_id = ?`, [userId],
  );
  return Number(row?.n ?? 0);
}

/** personalProjectCount of several users in one statement: user id -> count (users without projects are absent). */
export async function personalProjectCounts(q: Queries, userIds: readonly number[]): Promise<Map<number, number>> {
  if (!userIds.length) return new Map();
  const rows = await q.all<{ id: number; n: number }>(
    `SELECT n.owner_id AS id, COUNT(*) AS n FROM projects p JOIN namespaces n ON n.id = p.namespace_id
     WHERE n.kind = 'user' AND n.owner_id IN ${q.dialect.inIds} GROUP BY n.owner_id`,
    [q.dialect.ids(userIds)],
  );
  return new Map(rows.map((r) => [Number(r.id), Number(r.n)]));
}

/** The active users whose lower-cased username is one of `lowerNames` (at most 500: SQLite's bound-parameter limit). */
export async function activeUsersByLowerUsernames(q: Queries, lowerNames: readonly string[]): Promise<UserRow[]> {
  if (!lowerNames.length) return [];
  const marks = lowerNames.map(() => '?').join(',');
  return (await q.all<Record<string, unknown>>(`SELECT * FROM users WHERE lower(username) IN (${marks}) AND state = 'active'`, [...lowerNames])).map(toUser);
}
