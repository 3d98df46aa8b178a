/**
 * The memberships' data module: members of projects and groups with their users, and the access requests. A source is
 * named by its `source_type` ('Project' or 'Namespace') and id. The rules (levels, who may add or remove, the last
 * owner) stay in services/projects/members.ts and access-requests.ts. `q`: the database or a transaction.
 */
import type { Dialect, Queries } from './layer/types.js';
import { memberActiveSql } from './access.js';
import { toAccessRequest, toMember, toUser, type AccessRequestRow } from './rows.js';
import type { MemberRow, UserRow } from './schema.js';
import { likePattern } from './sql.js';
import type { Listing } from './groups.js';

/** A members source: `source_type` and `source_id`. */
export type SourceKey = [type: string, id: number];

type Rec = Record<string, unknown>;

/** The member columns of a `members m JOIN users u` row, prefixed `m_` beside `u.*` (read back with toMember(row, 'm_')). */
const MEMBER_COLUMNS = ['id', 'source_type', 'source_id', 'user_id', 'access_level', 'expires_at', 'created_by_id', 'created_at', 'updated_at']
  .map((c) => `m.${c} AS m_${c}`).join(', ');
const MEMBERS_WITH_USERS = `SELECT u.*, ${MEMBER_COLUMNS} FROM members m JOIN users u ON u.id = m.user_id`;
const SOURCE = `m.source_type = ? AND m.source_id = ?`;
const toMemberWithUser = (r: Rec) => ({ member: toMember(r, 'm_'), user: toUser(r) });

/** A membership with its user. */
export interface MemberWithUser {
  member: MemberRow;
  user: UserRow;
}

/** Direct members of a source with their users, optionally searched by name, email or username (case-insensitive); by membership id. */
export function membersListing(source: SourceKey, query: string | undefined): Listing<MemberWithUser> {
  return {
    count: async (q) => {
      const w = membersWhere(q, source, query);
      return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM members m JOIN users u ON u.id = m.user_id WHERE ${w.sql}`, w.args))!.n);
    },
    fetch: async (q, limit, offset) => {
      const w = membersWhere(q, source, query);
      return (await q.all<Rec>(`${MEMBERS_WITH_USERS} WHERE ${w.sql} ORDER BY m.id LIMIT ? OFFSET ?`, [...w.args, limit, offset])).map(toMemberWithUser);
    },
  };
}

function membersWhere(q: Queries, source: SourceKey, query: string | undefined): { sql: string; args: unknown[] } {
  if (!query) return { sql: SOURCE, args: [...source] };
  const like = q.dialect.ilike;
  const pattern = likePattern(query);
  return {
    sql: `${SOURCE} AND (u.name ${like} ? ESCAPE '\\' OR u.email ${like} ? ESCAPE '\\' OR u.username ${like} ? ESCAPE '\\')`,
    args: [...source, pattern, pattern, pattern],
  };
}

/** The membership of `userId` in a source, with its user, or null. */
export async function memberWithUser(q: Queries, source: SourceKey, userId: number): Promise<MemberWithUser | null> {
  const row = await q.get<Rec>(`${MEMBERS_WITH_USERS} WHERE ${SOURCE} AND m.user_id = ?`, [...source, userId]);
  return row ? toMemberWithUser(row) : null;
}

/** Whether `userId` has a membership (any, expired too) in a source. */
export async function isMemberRow(q: Queries, source: SourceKey, userId: number): Promise<boolean> {
  return !!(await q.get(`SELECT 1 AS one FROM members WHERE source_type = ? AND source_id = ? AND user_id = ?`, [...source, userId]));
}

/** The user ids of a group's members at `level`. */
export async function groupMemberIdsAt(q: Queries, groupId: number, level: number): Promise<number[]> {
  return (await q.all<{ user_id: number }>(
    `SELECT m.user_id FROM members m WHERE m.source_type = 'Namespace' AND m.source_id = ? AND m.access_level = ?`, [groupId, level])).map((r) => r.user_id);
}

/** Insert a membership; null when `ifAbsent` and the user is a member already (otherwise a duplicate throws the unique violation). */
export async function insertMember(
  tx: Queries, source: SourceKey, userId: number, level: number, expires: string | null, createdById: number, at: string, ifAbsent = false,
): Promise<MemberRow | null> {
  const row = await tx.get<Rec>(
    `INSERT INTO members (source_type, source_id, user_id, access_level, expires_at, created_by_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)${ifAbsent ? ' ON CONFLICT (source_type, source_id, user_id) DO NOTHING' : ''} RETURNING *`,
    [...source, userId, level, expires, createdById, at, at],
  );
  return row ? toMember(row) : null;
}

/** Set a membership's level (and, unless undefined, its expiry); the row after, or null when gone. */
export async function updateMemberRow(q: Queries, memberId: number, level: number, expires: string | null | undefined, at: string): Promise<MemberRow | null> {
  const row = expires !== undefined
    ? await q.get<Rec>(`UPDATE members SET access_level = ?, updated_at = ?, expires_at = ? WHERE id = ? RETURNING *`, [level, at, expires, memberId])
    : await q.get<Rec>(`UPDATE members SET access_level = ?, updated_at = ? WHERE id = ? RETURNING *`, [level, at, memberId]);
  return row ? toMember(row) : null;
}

/** Delete a membership. */
export async function deleteMemberRow(q: Queries, memberId: number): Promise<void> {
  await q.run(`DELETE FROM members WHERE id = ?`, [memberId]);
}

// ---- access requests

/** An access request with its user. */
export interface AccessRequestWithUser {
  request: AccessRequestRow;
  user: UserRow;
}

const REQUEST_COLUMNS = ['id', 'source_type', 'source_id', 'user_id', 'requested_at'].map((c) => `r.${c} AS r_${c}`).join(', ');
const REQUESTS_WITH_USERS = `SELECT u.*, ${REQUEST_COLUMNS} FROM access_requests r JOIN users u ON u.id = r.user_id`;
const REQUEST_SOURCE = `r.source_type = ? AND r.source_id = ?`;
const toRequestWithUser = (r: Rec): AccessRequestWithUser => ({ request: toAccessRequest(r, 'r_'), user: toUser(r) });

/** The pending requests of a source with their users, oldest first. */
export function accessRequestsListing(source: SourceKey): Listing<AccessRequestWithUser> {
  return {
    count: async (q) => Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM access_requests r WHERE ${REQUEST_SOURCE}`, [...source]))!.n),
    fetch: async (q, limit, offset) =>
      (await q.all<Rec>(`${REQUESTS_WITH_USERS} WHERE ${REQUEST_SOURCE} ORDER BY r.id LIMIT ? OFFSET ?`, [...source, limit, offset])).map(toRequestWithUser),
  };
}

/** The pending request of `userId` for a source, with its user, or null. */
export async function accessRequestOf(q: Queries, source: SourceKey, userId: number): Promise<AccessRequestWithUser | null> {
  const row = await q.get<Rec>(`${REQUESTS_WITH_USERS} WHERE ${REQUEST_SOURCE} AND r.user_id = ?`, [...source, userId]);
  return row ? toRequestWithUser(row) : null;
}

/** Insert an access request; null when the user asked already. */
export async function insertAccessRequest(tx: Queries, source: SourceKey, userId: number, at: string): Promise<AccessRequestRow | null> {
  const row = await tx.get<Rec>(
    `INSERT INTO access_requests (source_type, source_id, user_id, requested_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (source_type, source_id, user_id) DO NOTHING RETURNING *`, [...source, userId, at]);
  return row ? toAccessRequest(row) : null;
}

/** Delete an access request by id; whether it was there. */
export async function deleteAccessRequest(q: Queries, requestId: number): Promise<boolean> {
  return !!(await q.get(`DELETE FROM access_requests WHERE id = ? RETURNING id`, [requestId]));
}

/** Delete the access request of `userId` for a source, if any. */
export async function deleteAccessRequestOf(q: Queries, source: SourceKey, userId: number): Promise<void> {
  await q.run(`DELETE FROM access_requests WHERE source_type = ? AND source_id = ? AND user_id = ?`, [...source, userId]);
}

/**
 * The users who hold an active access level on a project (the owner of its personal namespace, its members, the
 * members of its group and of the groups it is shared with while the share lasts), optionally those whose name,
 * email or username contains `search`; each once, by id.
 */
export function projectTeamListing(project: { id: number; namespaceId: number }, search: string | undefined): Listing<UserRow> {
  const where = (d: Dialect) => {
    const active = memberActiveSql(d);
    let sql = `u.id IN (
      SELECT n.owner_id FROM namespaces n WHERE n.id = ? AND n.kind = 'user'
      UNION SELECT m.user_id FROM members m WHERE m.source_type = 'Project' AND m.source_id = ? AND ${active}
      UNION SELECT m.user_id FROM members m WHERE m.source_type = 'Namespace' AND m.source_id = ? AND ${active}
      UNION SELECT m.user_id FROM project_group_links l
        JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.group_id AND ${active}
        WHERE l.project_id = ? AND (l.expires_at IS NULL OR l.expires_at >= ${d.today}))`;
    const args: unknown[] = [project.namespaceId, project.id, project.namespaceId, project.id];
    if (search) {
      const pattern = likePattern(search);
      sql += ` AND (u.name ${d.ilike} ? ESCAPE '\\' OR u.email ${d.ilike} ? ESCAPE '\\' OR u.username ${d.ilike} ? ESCAPE '\\')`;
      args.push(pattern, pattern, pattern);
    }
    return { sql, args };
  };
  return {
    count: async (q) => {
      const w = where(q.dialect);
      return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM users u WHERE ${w.sql}`, w.args))!.n);
    },
    fetch: async (q, limit, offset) => {
      const w = where(q.dialect);
      return (await q.all<Rec>(`SELECT u.* FROM users u WHERE ${w.sql} ORDER BY u.id LIMIT ? OFFSET ?`, [...w.args, limit, offset])).map((r) => toUser(r));
    },
  };
}
