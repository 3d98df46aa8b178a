/**
 * The users' data module: the statements over users, their personal namespaces and personal access tokens (the
 * rules stay in services/users/users.ts). Each function
 * takes `q` (the database or a transaction) first, so it runs the same on `ctx.data` or inside a transaction.
 */
import type { AppContext } from '../context.js';
import type { Dialect, Queries } from './layer/types.js';
import { toNamespace, toPersonalAccessToken, toUser } from './rows.js';
import type { NamespaceRow, PersonalAccessTokenRow, UserRow } from './schema.js';
import { likePattern } from './sql.js';
import { keysetPage } from './keyset.js';

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
  return new Map((await q.all(`SELECT u.* FROM ${q.dialect.idList('j')} CROSS JOIN users u WHERE u.id = j.value`, [q.dialect.ids(wanted)]))
    .map((u) => [u.id as number, toUser(u)]));
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
    `SELECT n.owner_id AS id, COUNT(*) AS n FROM ${q.dialect.idList('j')} CROSS JOIN namespaces n JOIN projects p ON p.namespace_id = n.id
     WHERE n.kind = 'user' AND n.owner_id = j.value GROUP BY n.owner_id`,
    [q.dialect.ids(userIds)],
  );
  return new Map(rows.map((r) => [Number(r.id), Number(r.n)]));
}

/**
 * Which of `email` / `username` another user (or, for a username, another namespace) already takes, case-insensitive:
 * 'email' first, then 'username', or null. `otherId`: the user being updated (0 on a create: ids start at 1).
 */
export async function takenUserField(q: Queries, email: string | undefined, username: string | undefined, otherId: number): Promise<'email' | 'username' | null> {
  const d = q.dialect;
  const parts: string[] = [];
  const args: unknown[] = [];
  if (email !== undefined) {
    parts.push(`SELECT 1 AS k FROM users WHERE ${d.nocaseEq('email')} AND id <> ?`);
    args.push(email, otherId);
  }
  if (username !== undefined) {
    parts.push(`SELECT 2 AS k FROM users WHERE ${d.nocaseEq('username')} AND id <> ?`);
    parts.push(`SELECT 2 AS k FROM namespaces WHERE ${d.nocaseEq('path')} AND NOT (kind = 'user' AND owner_id = ?)`);
    args.push(username, otherId, username, otherId);
  }
  if (!parts.length) return null;
  const taken = await q.get<{ k: number }>(`${parts.join(' UNION ALL ')} ORDER BY k LIMIT 1`, args);
  return taken ? (taken.k === 1 ? 'email' : 'username') : null;
}

/** The columns of a new `users` row (the rest take their defaults). */
export interface NewUser {
  email: string; username: string; name: string; passwordHash: string; privateTokenSalt: string; privateTokenHash: string;
  isAdmin: boolean; bio: string | null; location: string | null; skype: string; linkedin: string; twitter: string; websiteUrl: string;
  organization: string | null; projectsLimit: number; canCreateGroup: boolean; external: boolean; confirmedAt: string | null; createdAt: string;
}

/** Insert a user and their personal namespace (named and pathed after the username). */
export async function insertUserWithNamespace(tx: Queries, u: NewUser): Promise<UserRow> {
  const row = await tx.get(
    `INSERT INTO users (email, username, name, password_hash, private_token_salt, private_token_hash, is_admin, bio, location, skype,
       linkedin, twitter, website_url, organization, projects_limit, can_create_group, external, confirmed_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [
      u.email, u.username, u.name, u.passwordHash, u.privateTokenSalt, u.privateTokenHash, u.isAdmin, u.bio, u.location, u.skype,
      u.linkedin, u.twitter, u.websiteUrl, u.organization, u.projectsLimit, u.canCreateGroup, u.external, u.confirmedAt, u.createdAt, u.createdAt,
    ],
  );
  const user = toUser(row!);
  await tx.run(`INSERT INTO namespaces (name, path, kind, owner_id, created_at, updated_at) VALUES (?, ?, 'user', ?, ?, ?)`, [
    u.username, u.username, user.id, u.createdAt, u.createdAt,
  ]);
  return user;
}

/** Set `users` columns (column name -> value, names from the caller's own list) of one user; the row after, or null when gone. */
export async function updateUserColumns(tx: Queries, id: number, set: readonly [string, unknown][]): Promise<UserRow | null> {
  const row = await tx.get(`UPDATE users SET ${set.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ? RETURNING *`, [...set.map(([, v]) => v), id]);
  return row ? toUser(row) : null;
}

/** Rename a user's personal namespace (name and path) to `username`. */
export async function renameUserNamespace(tx: Queries, userId: number, username: string, at: string): Promise<void> {
  await tx.run(`UPDATE namespaces SET name = ?, path = ?, updated_at = ? WHERE kind = 'user' AND owner_id = ?`, [username, username, at, userId]);
}

/** Filters of the users list. */
export interface UserListFilters {
  search?: string;
  active?: boolean;
  blocked?: boolean;
}

/** The WHERE text and values of the users list over `users` (unaliased). */
export function usersWhere(d: Dialect, f: UserListFilters): { where: string; values: unknown[] } {
  const conds: string[] = [];
  const values: unknown[] = [];
  if (f.search) {
    const pattern = likePattern(f.search);
    conds.push(`(name ${d.ilike} ? ESCAPE '\\' OR email ${d.ilike} ? ESCAPE '\\' OR username ${d.ilike} ? ESCAPE '\\')`);
    values.push(pattern, pattern, pattern);
  }
  if (f.active) conds.push(`state = 'active'`);
  if (f.blocked) conds.push(`state = 'blocked'`);
  return { where: conds.length ? conds.join(' AND ') : 'TRUE', values };
}

/** The number of users the filters match. */
export async function countUsers(q: Queries, f: UserListFilters): Promise<number> {
  const w = usersWhere(q.dialect, f);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM users WHERE ${w.where}`, w.values))!.n);
}

/** One page of the users the filters match, by id, keyset-paged (db/keyset.ts). */
export async function usersPage(ctx: AppContext, q: Queries, f: UserListFilters, limit: number, offset: number, total?: number): Promise<UserRow[]> {
  const list = { from: 'users', ...usersWhere(q.dialect, f), key: 'id', id: 'id', desc: false, select: '*' };
  return (await keysetPage(ctx, q, list, limit, offset, total)).map(toUser);
}

/** Users with exactly this username, case-insensitive. */
export async function usersWithUsername(q: Queries, username: string): Promise<UserRow[]> {
  return (await q.all(`SELECT * FROM users WHERE ${q.dialect.nocaseEq('username')}`, [username])).map(toUser);
}

/** The user whose username (or, when `login` holds an '@', email) is `login`, case-insensitive, or null. */
export async function userByLogin(q: Queries, login: string): Promise<UserRow | null> {
  const raw = await q.get(`SELECT * FROM users WHERE ${q.dialect.nocaseEq(login.includes('@') ? 'email' : 'username')}`, [login]);
  return raw ? toUser(raw) : null;
}

/** Whether the user is the only owner (level 50) of some group. */
export async function isSoleGroupOwner(q: Queries, userId: number): Promise<boolean> {
  return !!(await q.get(
    `SELECT 1 AS one FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND m.access_level = 50
     AND (SELECT COUNT(*) FROM members o WHERE o.source_type = 'Namespace' AND o.source_id = m.source_id AND o.access_level = 50) = 1 LIMIT 1`,
    [userId],
  ));
}

/** The personal namespace (kind `user`) of a user, or null. */
export async function personalNamespace(q: Queries, userId: number): Promise<NamespaceRow | null> {
  const row = await q.get(`SELECT * FROM namespaces WHERE kind = 'user' AND owner_id = ?`, [userId]);
  return row ? toNamespace(row) : null;
}

/**
 * Delete a user row with their personal namespace `namespaceId` (when they have one); groups whose owner_id names the
 * user lose that owner rather than cascading away. The user's other rows cascade.
 */
export async function deleteUserRows(tx: Queries, userId: number, namespaceId: number | null): Promise<void> {
  if (namespaceId !== null) await tx.run('DELETE FROM namespaces WHERE id = ?', [namespaceId]);
  await tx.run(`UPDATE namespaces SET owner_id = NULL WHERE kind = 'group' AND owner_id = ?`, [userId]);
  await tx.run('DELETE FROM users WHERE id = ?', [userId]);
}

/** Set a user's state (`active` / `blocked`). */
export async function setUserStateRow(q: Queries, userId: number, state: string, at: string): Promise<void> {
  await q.run('UPDATE users SET state = ?, updated_at = ? WHERE id = ?', [state, at, userId]);
}

/** Record a sign-in: the previous current sign-in becomes the last one. */
export async function recordSignIn(q: Queries, userId: number, lastSignInAt: string, currentSignInAt: string): Promise<void> {
  await q.run('UPDATE users SET last_sign_in_at = ?, current_sign_in_at = ? WHERE id = ?', [lastSignInAt, currentSignInAt, userId]);
}

/**
 * A personal access token is active: not revoked and not expired, as portable SQL over `personal_access_tokens`
 * (unaliased columns), with one `?` to bind to today's date (the daemon's clock, as policy's tokenActive()).
 */
const TOKEN_ACTIVE = '(revoked = FALSE AND (expires_at IS NULL OR expires_at > ?))';

/** Insert a personal access token (stored as its hash); its id. */
export async function insertPersonalAccessToken(q: Queries, t: Omit<PersonalAccessTokenRow, 'id' | 'revoked'>): Promise<number> {
  const r = await q.run(
    'INSERT INTO personal_access_tokens (user_id, name, token_hash, expires_at, revoked, created_at) VALUES (?, ?, ?, ?, FALSE, ?) RETURNING id',
    [t.userId, t.name, t.tokenHash, t.expiresAt, t.createdAt],
  );
  return r.lastId!;
}

/** A count and a page fetcher over a user's personal access tokens, all or only the `active`/`inactive` ones on `today`, by id. */
export function personalAccessTokensList(userId: number, state: 'active' | 'inactive' | undefined, today: string) {
  const where = state === 'active' ? ` AND ${TOKEN_ACTIVE}` : state === 'inactive' ? ` AND NOT ${TOKEN_ACTIVE}` : '';
  const args: unknown[] = state ? [userId, today] : [userId];
  return {
    count: async (q: Queries) =>
      Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM personal_access_tokens WHERE user_id = ?${where}`, args))!.n),
    fetch: async (q: Queries, limit: number, offset: number) =>
      (await q.all(`SELECT * FROM personal_access_tokens WHERE user_id = ?${where} ORDER BY id LIMIT ? OFFSET ?`, [...args, limit, offset]))
        .map(toPersonalAccessToken),
  };
}

/** One of a user's personal access tokens, or null. */
export async function personalAccessTokenOf(q: Queries, userId: number, tokenId: number): Promise<PersonalAccessTokenRow | null> {
  const row = await q.get('SELECT * FROM personal_access_tokens WHERE id = ? AND user_id = ?', [tokenId, userId]);
  return row ? toPersonalAccessToken(row) : null;
}

/** Revoke a personal access token (idempotent). */
export async function revokePersonalAccessTokenRow(q: Queries, tokenId: number): Promise<void> {
  await q.run('UPDATE personal_access_tokens SET revoked = TRUE WHERE id = ?', [tokenId]);
}

/** The active users whose lower-cased username is one of `lowerNames` (at most 500: SQLite's bound-parameter limit). */
export async function activeUsersByLowerUsernames(q: Queries, lowerNames: readonly string[]): Promise<UserRow[]> {
  if (!lowerNames.length) return [];
  const marks = lowerNames.map(() => '?').join(',');
  return (await q.all<Record<string, unknown>>(`SELECT * FROM users WHERE lower(username) IN (${marks}) AND state = 'active'`, [...lowerNames])).map(toUser);
}

/** Whether any user exists (a fresh install has none). */
export async function anyUserExists(q: Queries): Promise<boolean> {
  return !!(await q.get('SELECT id FROM users LIMIT 1'));
}

/** Whether a user has exactly this username (case-sensitive: the bootstrap's `root`). */
export async function usernameExists(q: Queries, username: string): Promise<boolean> {
  return !!(await q.get('SELECT id FROM users WHERE username = ?', [username]));
}
