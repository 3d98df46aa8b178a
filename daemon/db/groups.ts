/**
 * The groups' data module: namespaces of kind `group` (and the namespaces list), their projects and their owners'
 * memberships. The visibility conditions come from the access rules (db/access.ts via policy/); the rules stay in
 * services/users/groups.ts. `q`: the database or a transaction.
 */
import type { Dialect, Queries } from './layer/types.js';
import { memberActiveSql, OWNER } from './access.js';
import { toNamespace, toProject } from './rows.js';
import type { NamespaceRow, ProjectRow } from './schema.js';
import { likePattern, type SqlCondition } from './sql.js';
import { insertMember } from './members.js';

type Rec = Record<string, unknown>;

/** A count and a page fetcher, for paginate() (both run in one snapshot). */
export interface Listing<T> {
  count(q: Queries): Promise<number>;
  fetch(q: Queries, limit: number, offset: number): Promise<T[]>;
}

/**
 * A group by path (case-insensitive) first, then by numeric id (`id`: a number that fits an id, else null); null if
 * absent. One statement; a UNION ALL rather than an OR: each half uses its index on both engines.
 */
export async function groupByPathOrId(q: Queries, path: string, id: number | null): Promise<NamespaceRow | null> {
  const byPath = `SELECT n.*, 0 AS by_id FROM namespaces n WHERE n.kind = 'group' AND ${q.dialect.nocaseEq('n.path')}`;
  const row = id !== null
    ? await q.get<Rec>(`SELECT * FROM (${byPath} UNION ALL SELECT n.*, 1 AS by_id FROM namespaces n WHERE n.kind = 'group' AND n.id = ?) t ORDER BY by_id LIMIT 1`, [path, id])
    : await q.get<Rec>(byPath, [path]);
  return row ? toNamespace(row) : null;
}

/** Whether the namespace holds a project that meets `visible` (over `projects p`). */
export async function namespaceHasProjectWhere(q: Queries, namespaceId: number, visible: SqlCondition): Promise<boolean> {
  return (await q.get(`SELECT 1 AS one FROM projects p WHERE p.namespace_id = ? AND ${visible.sql} LIMIT 1`, [namespaceId, ...visible.args])) !== undefined;
}

/** A listing over `namespaces n` meeting every condition, ordered by id. */
export function namespaceListing(conds: readonly SqlCondition[]): Listing<NamespaceRow> {
  const where = conds.map((c) => c.sql).join(' AND ');
  const args = conds.flatMap((c) => c.args);
  return {
    count: async (q) => Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM namespaces n WHERE ${where}`, args))!.n),
    fetch: async (q, limit, offset) =>
      (await q.all<Rec>(`SELECT n.* FROM namespaces n WHERE ${where} ORDER BY n.id LIMIT ? OFFSET ?`, [...args, limit, offset])).map(toNamespace),
  };
}

/** Over `namespaces n`: the groups the user is a direct, unexpired member of. */
export const memberGroupsWhere = (d: Dialect, userId: number): SqlCondition => ({
  sql: `n.kind = 'group' AND n.id IN (SELECT m.source_id FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND ${memberActiveSql(d)})`,
  args: [userId],
});

/** Over `namespaces n`: the user's personal namespace and the groups they are a direct, unexpired member of. */
export const ownNamespacesWhere = (d: Dialect, userId: number): SqlCondition => {
  const groups = memberGroupsWhere(d, userId);
  return { sql: `((n.kind = 'user' AND n.owner_id = ?) OR (${groups.sql}))`, args: [userId, ...groups.args] };
};

/** Over `namespaces n`: every group. */
export const allGroupsWhere: SqlCondition = { sql: `n.kind = 'group'`, args: [] };

/** `(n.name LIKE ? OR n.path LIKE ?)`, case-insensitive on both engines. */
export function nameOrPathLike(d: Dialect, search: string): SqlCondition {
  const pattern = likePattern(search);
  return { sql: `(n.name ${d.ilike} ? ESCAPE '\\' OR n.path ${d.ilike} ? ESCAPE '\\')`, args: [pattern, pattern] };
}

/** Filters of a group's projects list (already validated). */
export interface GroupProjectListFilters {
  archived?: boolean;
  visibility?: number;
  orderBy: 'id' | 'name' | 'path' | 'created_at' | 'updated_at' | 'last_activity_at';
  sort: 'asc' | 'desc';
  search?: string;
  ciEnabledFirst?: boolean;
}

/** The namespace's projects that meet `visible` (over `projects p`), filtered and ordered. */
export function groupProjectListing(d: Dialect, namespaceId: number, visible: SqlCondition, f: GroupProjectListFilters): Listing<ProjectRow> {
  const conds = [`p.namespace_id = ?`, visible.sql];
  const args: unknown[] = [namespaceId, ...visible.args];
  if (f.archived !== undefined) {
    conds.push(`p.archived = ?`);
    args.push(f.archived);
  }
  if (f.visibility !== undefined) {
    conds.push(`p.visibility_level = ?`);
    args.push(f.visibility);
  }
  if (f.search) {
    const pattern = likePattern(f.search);
    conds.push(`(p.name ${d.ilike} ? ESCAPE '\\' OR p.path ${d.ilike} ? ESCAPE '\\' OR p.description ${d.ilike} ? ESCAPE '\\')`);
    args.push(pattern, pattern, pattern);
  }
  const where = conds.join(' AND ');
  const dir = f.sort === 'asc' ? 'ASC' : 'DESC';
  const order = `${f.ciEnabledFirst ? 'p.builds_enabled DESC, ' : ''}p.${f.orderBy} ${dir}, p.id ${dir}`;
  return {
    count: async (q) => Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM projects p WHERE ${where}`, args))!.n),
    fetch: async (q, limit, offset) =>
      (await q.all<Rec>(`SELECT p.* FROM projects p WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`, [...args, limit, offset])).map(toProject),
  };
}

/** The namespace's projects, oldest first: all, or those that meet `visible` (over `projects p`). */
export async function namespaceProjects(q: Queries, namespaceId: number, visible: SqlCondition = { sql: 'TRUE', args: [] }): Promise<ProjectRow[]> {
  return (await q.all<Rec>(`SELECT p.* FROM projects p WHERE p.namespace_id = ? AND ${visible.sql} ORDER BY p.id`, [namespaceId, ...visible.args])).map(toProject);
}

/** The projects shared with a group (project_group_links) that meet `visible`, oldest first. */
export async function projectsSharedWith(q: Queries, groupId: number, visible: SqlCondition): Promise<ProjectRow[]> {
  return (await q.all<Rec>(
    `SELECT p.* FROM projects p JOIN project_group_links l ON l.project_id = p.id WHERE l.group_id = ? AND ${visible.sql} ORDER BY p.id`,
    [groupId, ...visible.args],
  )).map(toProject);
}

/** Whether a namespace other than `exceptId` has this name (exactly) / path (case-insensitive). */
export async function namespaceNameTaken(q: Queries, name: string, exceptId: number | null): Promise<boolean> {
  return !!(await q.get(`SELECT 1 AS taken FROM namespaces WHERE name = ?${exceptId !== null ? ' AND id <> ?' : ''}`, exceptId !== null ? [name, exceptId] : [name]));
}
export async function namespacePathTaken(q: Queries, path: string, exceptId: number | null): Promise<boolean> {
  return !!(await q.get(`SELECT 1 AS taken FROM namespaces WHERE ${q.dialect.nocaseEq('path')}${exceptId !== null ? ' AND id <> ?' : ''}`,
    exceptId !== null ? [path, exceptId] : [path]));
}

/** Whether the namespace holds a project more visible than `level`. */
export async function namespaceHasProjectAbove(q: Queries, namespaceId: number, level: number): Promise<boolean> {
  return !!(await q.get(`SELECT 1 AS higher FROM projects WHERE namespace_id = ? AND visibility_level > ?`, [namespaceId, level]));
}

/** The columns of a new group. */
export interface NewGroup {
  name: string; path: string; description: string; visibilityLevel: number; requestAccessEnabled: boolean; lfsEnabled: boolean; createdAt: string;
}

/** Insert a group (owner_id null: ownership lives in members) and its creator's owner membership; the group and the membership id. */
export async function insertGroupWithOwner(tx: Queries, g: NewGroup, ownerId: number): Promise<{ group: NamespaceRow; memberId: number }> {
  const group = toNamespace((await tx.get<Rec>(
    `INSERT INTO namespaces (name, path, kind, owner_id, description, visibility_level, share_with_group_lock, request_access_enabled, lfs_enabled, created_at, updated_at)
     VALUES (?, ?, 'group', NULL, ?, ?, FALSE, ?, ?, ?, ?) RETURNING *`,
    [g.name, g.path, g.description, g.visibilityLevel, g.requestAccessEnabled, g.lfsEnabled, g.createdAt, g.createdAt],
  ))!);
  const m = await insertMember(tx, ['Namespace', group.id], ownerId, OWNER, null, ownerId, g.createdAt);
  return { group, memberId: m!.id };
}

/** Set `namespaces` columns (names from the caller's own list) of one namespace; the row after, or null when gone. */
export async function updateNamespaceColumns(tx: Queries, id: number, set: readonly [string, unknown][]): Promise<NamespaceRow | null> {
  const row = await tx.get<Rec>(`UPDATE namespaces SET ${set.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ? RETURNING *`, [...set.map(([, v]) => v), id]);
  return row ? toNamespace(row) : null;
}

/** Delete a group's row with its memberships and access requests (its projects go first, by the caller). */
export async function deleteGroupRows(tx: Queries, groupId: number): Promise<void> {
  await tx.run(`DELETE FROM members WHERE source_type = 'Namespace' AND source_id = ?`, [groupId]);
  await tx.run(`DELETE FROM access_requests WHERE source_type = 'Namespace' AND source_id = ?`, [groupId]);
  await tx.run(`DELETE FROM namespaces WHERE id = ?`, [groupId]);
}

/** Whether the namespace holds a project whose path (first) or name is `path` / `name`, case-insensitive. */
export async function namespacePathOrNameClash(q: Queries, namespaceId: number, path: string, name: string): Promise<'path' | 'name' | null> {
  const d = q.dialect;
  const clash = await q.all<{ same_path: unknown; same_name: unknown }>(
    `SELECT CASE WHEN ${d.nocaseEq('path')} THEN 1 ELSE 0 END AS same_path, CASE WHEN ${d.nocaseEq('name')} THEN 1 ELSE 0 END AS same_name
     FROM projects WHERE namespace_id = ? AND (${d.nocaseEq('path')} OR ${d.nocaseEq('name')})`,
    [path, name, namespaceId, path, name],
  );
  if (clash.some((c) => !!c.same_path)) return 'path';
  return clash.some((c) => !!c.same_name) ? 'name' : null;
}

/** Move a project to a namespace; the row after, or null when gone. */
export async function setProjectNamespace(q: Queries, projectId: number, namespaceId: number, updatedAt: string): Promise<ProjectRow | null> {
  const row = await q.get<Rec>(`UPDATE projects SET namespace_id = ?, updated_at = ? WHERE id = ? RETURNING *`, [namespaceId, updatedAt, projectId]);
  return row ? toProject(row) : null;
}
