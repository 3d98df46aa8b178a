/** Groups: lookup by path or id with the 404-for-hidden rule, list, create, update (with storage moves), delete, transfer. */
import { and, eq, inArray } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { members, namespaces, projects, type NamespaceRow, type ProjectRow, type UserRow } from '../db/schema.js';
import { forbidden, notFound, validationError } from '../errors.js';
import { canGroup, OWNER, visibleGroupsSql, visibleProjectsSql, type GroupAbility } from '../policy/permissions.js';
import { getSettings } from './settings.js';
import { deleteProjectRows, projectNamespace } from './projects.js';
import { removeProjectStorage, storageMoved } from './storage.js';
import { validPath } from './users.js';
import { likePattern } from '../db/sql.js';
import { toNamespace } from '../db/rows.js';

/** Find a group by path (case-insensitive) first, then by numeric id; null if absent. */
export function lookupGroup(ctx: AppContext, idOrPath: string | number): NamespaceRow | null {
  const text = String(idOrPath);
  const byPath = ctx.db.select().from(namespaces).where(and(eq(namespaces.kind, 'group'), eq(namespaces.path, text))).get();
  if (byPath) return byPath;
  if (!/^\d+$/.test(text)) return null;
  return ctx.db.select().from(namespaces).where(and(eq(namespaces.kind, 'group'), eq(namespaces.id, Number(text)))).get() ?? null;
}

/** The async twin of lookupGroup, on the data layer (both engines): path first (case-insensitive), then numeric id. */
export async function lookupGroupAsync(ctx: AppContext, idOrPath: string | number): Promise<NamespaceRow | null> {
  const text = String(idOrPath);
  const byPath = await ctx.data.get<Record<string, unknown>>(`SELECT * FROM namespaces WHERE kind = 'group' AND ${ctx.data.dialect.nocaseEq('path')}`, [text]);
  if (byPath) return toNamespace(byPath);
  if (!/^\d+$/.test(text)) return null;
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id > 2147483647) return null; // beyond PostgreSQL's integer ids: absent on both engines
  const byId = await ctx.data.get<Record<string, unknown>>(`SELECT * FROM namespaces WHERE kind = 'group' AND id = ?`, [id]);
  return byId ? toNamespace(byId) : null;
}

/**
 * Resolve a group `:id` for a caller: 404 `Group Not Found` when absent or hidden; 403 when visible but
 * `ability` (beyond reading) is not allowed.
 */
export function findGroup(ctx: AppContext, user: UserRow | null, idOrPath: string | number, ability: GroupAbility = 'read_group'): NamespaceRow {
  const group = lookupGroup(ctx, idOrPath);
  if (!group || !canGroup(ctx, user, 'read_group', group)) throw notFound('Group');
  if (ability !== 'read_group' && !canGroup(ctx, user, ability, group)) throw forbidden();
  return group;
}

/** A count and a page fetcher, for paginate(). */
export interface Listing<T> {
  count(): number;
  fetch(limit: number, offset: number): T[];
}

type Params = Record<string, string | number>;
const rowsToGroups = (rows: Record<string, unknown>[]) => rows.map(toNamespace);


/** A listing over `namespaces n` with a WHERE text and named params, ordered by id. */
function namespaceListing(ctx: AppContext, where: string, params: Params): Listing<NamespaceRow> {
  const db = ctx.db.$client;
  return {
    count: () => (db.prepare(`SELECT COUNT(*) AS c FROM namespaces n WHERE ${where}`).get(params) as { c: number }).c,
    fetch: (limit, offset) =>
      rowsToGroups(db.prepare(`SELECT n.* FROM namespaces n WHERE ${where} ORDER BY n.id LIMIT @limit OFFSET @offset`).all({ ...params, limit, offset }) as Record<string, unknown>[]),
  };
}

const MEMBER_ACTIVE = `(m.expires_at IS NULL OR m.expires_at >= date('now'))`;
/** SQL (text) over `namespaces n`: the groups `userId` is a direct, unexpired member of. */
const memberGroupsSql = (userId: number) =>
  `n.id IN (SELECT m.source_id FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ${Math.trunc(userId)} AND ${MEMBER_ACTIVE})`;

/**
 * GET /groups: admins see every group; others the groups they are a member of, or with `allAvailable` every
 * group they can read. `search` matches name or path.
 */
export function listGroups(ctx: AppContext, user: UserRow, opts: { search?: string; allAvailable?: boolean }): Listing<NamespaceRow> {
  const conds = [user.isAdmin ? `n.kind = 'group'` : opts.allAvailable ? visibleGroupsSql(user) : `n.kind = 'group' AND ${memberGroupsSql(user.id)}`];
  const params: Params = {};
  if (opts.search) {
    conds.push(`(n.name LIKE @search ESCAPE '\\' OR n.path LIKE @search ESCAPE '\\')`);
    params.search = likePattern(opts.search);
  }
  return namespaceListing(ctx, conds.join(' AND '), params);
}

/** GET /namespaces: admins see all; others their personal namespace and the groups they are a member of. */
export function listNamespaces(ctx: AppContext, user: UserRow, search?: string): Listing<NamespaceRow> {
  const uid = Math.trunc(user.id);
  const conds = [user.isAdmin ? '1' : `((n.kind = 'user' AND n.owner_id = ${uid}) OR (n.kind = 'group' AND ${memberGroupsSql(uid)}))`];
  const params: Params = {};
  if (search) {
    conds.push(`(n.name LIKE @search ESCAPE '\\' OR n.path LIKE @search ESCAPE '\\')`);
    params.search = likePattern(search);
  }
  return namespaceListing(ctx, conds.join(' AND '), params);
}

/** Filters of GET /groups/:id/projects (already validated). */
export interface GroupProjectFilters {
  archived?: boolean;
  visibility?: number;
  orderBy: 'id' | 'name' | 'path' | 'created_at' | 'updated_at' | 'last_activity_at';
  sort: 'asc' | 'desc';
  search?: string;
  ciEnabledFirst?: boolean;
}

/** Project rows of a query over `projects p` that selects `p.id`, in the query's order. */
function projectRows(ctx: AppContext, sqlText: string, params: Params): ProjectRow[] {
  const ids = (ctx.db.$client.prepare(sqlText).all(params) as { id: number }[]).map((r) => r.id);
  if (ids.length === 0) return [];
  const byId = new Map(ctx.db.select().from(projects).where(inArray(projects.id, ids)).all().map((p) => [p.id, p]));
  return ids.map((id) => byId.get(id)).filter((p): p is ProjectRow => p !== undefined);
}

/** GET /groups/:id/projects: the group's projects the caller can see, filtered and ordered. */
export function listGroupProjects(ctx: AppContext, user: UserRow, group: NamespaceRow, f: GroupProjectFilters): Listing<ProjectRow> {
  const conds = [`p.namespace_id = @ns`, visibleProjectsSql(user)];
  const params: Params = { ns: group.id };
  if (f.archived !== undefined) {
    conds.push(`p.archived = @archived`);
    params.archived = f.archived ? 1 : 0;
  }
  if (f.visibility !== undefined) {
    conds.push(`p.visibility_level = @visibility`);
    params.visibility = f.visibility;
  }
  if (f.search) {
    conds.push(`(p.name LIKE @search ESCAPE '\\' OR p.path LIKE @search ESCAPE '\\' OR p.description LIKE @search ESCAPE '\\')`);
    params.search = likePattern(f.search);
  }
  const where = conds.join(' AND ');
  const order = `${f.ciEnabledFirst ? 'p.builds_enabled DESC, ' : ''}p.${f.orderBy} ${f.sort === 'asc' ? 'ASC' : 'DESC'}, p.id ${f.sort === 'asc' ? 'ASC' : 'DESC'}`;
  return {
    count: () => (ctx.db.$client.prepare(`SELECT COUNT(*) AS c FROM projects p WHERE ${where}`).get(params) as { c: number }).c,
    fetch: (limit, offset) => projectRows(ctx, `SELECT p.id FROM projects p WHERE ${where} ORDER BY ${order} LIMIT @limit OFFSET @offset`, { ...params, limit, offset }),
  };
}

/** The group's own projects the viewer can see (GroupDetail.projects), oldest first. */
export function groupProjects(ctx: AppContext, viewer: UserRow, group: NamespaceRow): ProjectRow[] {
  return projectRows(ctx, `SELECT p.id FROM projects p WHERE p.namespace_id = @ns AND ${visibleProjectsSql(viewer)} ORDER BY p.id`, { ns: group.id });
}

/** Projects shared with the group (project_group_links) that the viewer can see (GroupDetail.shared_projects). */
export function sharedProjects(ctx: AppContext, viewer: UserRow, group: NamespaceRow): ProjectRow[] {
  return projectRows(
    ctx,
    `SELECT p.id FROM projects p JOIN project_group_links l ON l.project_id = p.id WHERE l.group_id = @ns AND ${visibleProjectsSql(viewer)} ORDER BY p.id`,
    { ns: group.id },
  );
}

/** Parameters of POST /groups and PUT /groups/:id. */
export interface GroupParams {
  name?: string;
  path?: string;
  description?: string;
  visibility_level?: number;
  lfs_enabled?: boolean;
  request_access_enabled?: boolean;
}

/** Paths a group may not take (GitLab 8.12 NamespaceValidator::RESERVED): they collide with web routes. */
const RESERVED_PATHS = new Set([
  '.well-known', 'admin', 'all', 'assets', 'ci', 'dashboard', 'files', 'groups', 'help', 'hooks', 'issues', 'merge_requests', 'new', 'notes',
  'profile', 'projects', 'public', 'repository', 'robots.txt', 's', 'search', 'services', 'snippets', 'teams', 'u', 'unsubscribes', 'users',
]);
const NAME_PATTERN = /^[\p{L}\p{N}\p{Pd}_. ]*$/u;
const LEVEL_NAMES: Record<number, string> = { 0: 'Private', 10: 'Internal', 20: 'Public' };

/** Field checks shared by create and update; returns the validation hash (empty when fine). */
export function validateGroupFields(ctx: AppContext, actor: UserRow, p: GroupParams, self: NamespaceRow | null): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const err = (k: string, m: string) => (errors[k] ??= []).push(m);
  const others = self ? `AND id <> ${Math.trunc(self.id)}` : '';
  if (p.name !== undefined) {
    if (!p.name.trim()) err('name', "can't be blank");
    else if (!NAME_PATTERN.test(p.name)) err('name', "can contain only letters, digits, '_', '.', dash and space.");
    else if (p.name.length > 255) err('name', 'is too long (maximum is 255 characters)');
    else if (ctx.db.$client.prepare(`SELECT 1 FROM namespaces WHERE name = ? ${others}`).get(p.name)) err('name', 'has already been taken');
  }
  if (p.path !== undefined) {
    if (!p.path) err('path', "can't be blank");
    else if (!validPath(p.path)) err('path', "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.");
    else if (RESERVED_PATHS.has(p.path.toLowerCase())) err('path', `${p.path} is a reserved name`);
    else if (ctx.db.$client.prepare(`SELECT 1 FROM namespaces WHERE path = ? COLLATE NOCASE ${others}`).get(p.path)) err('path', 'has already been taken');
  }
  if (p.description !== undefined && p.description.length > 255) err('description', 'is too long (maximum is 255 characters)');
  if (p.visibility_level !== undefined) {
    const level = p.visibility_level;
    if (![0, 10, 20].includes(level)) err('visibility_level', 'is not included in the list');
    else {
      const restricted = JSON.parse(getSettings(ctx).restrictedVisibilityLevels ?? '[]') as number[];
      if (!actor.isAdmin && restricted.includes(level)) err('visibility_level', `${LEVEL_NAMES[level]} has been restricted by your GitLab administrator`);
      else if (self && ctx.db.$client.prepare(`SELECT 1 FROM projects WHERE namespace_id = ? AND visibility_level > ?`).get(self.id, level)) {
        err('visibility_level', `${LEVEL_NAMES[level]!.toLowerCase()} is not allowed since there are projects with higher visibility.`);
      }
    }
  }
  return errors;
}

/** Create a group; the creator becomes its owner (50). 403 unless the actor may create groups. */
export function createGroup(ctx: AppContext, actor: UserRow, p: GroupParams & { name: string; path: string }): NamespaceRow {
  if (!actor.canCreateGroup && !actor.isAdmin) throw forbidden();
  const visibility = p.visibility_level ?? getSettings(ctx).defaultGroupVisibility;
  const errors = validateGroupFields(ctx, actor, { ...p, visibility_level: visibility }, null);
  if (Object.keys(errors).length) throw validationError(errors);
  const t = now();
  // owner_id stays null for groups: ownership lives in members, and the users foreign key would cascade.
  return ctx.db.transaction((tx) => {
    const group = tx
      .insert(namespaces)
      .values({
        name: p.name, path: p.path, kind: 'group', ownerId: null, description: p.description ?? '', visibilityLevel: visibility,
        lfsEnabled: p.lfs_enabled ?? true, requestAccessEnabled: p.request_access_enabled ?? false, createdAt: t, updatedAt: t,
      })
      .returning()
      .get();
    tx.insert(members).values({ sourceType: 'Namespace', sourceId: group.id, userId: actor.id, accessLevel: OWNER, createdById: actor.id, createdAt: t, updatedAt: t }).run();
    return group;
  });
}

/** Update a group; a path change moves the storage of every project of the group once the rename is committed. */
export async function updateGroup(ctx: AppContext, actor: UserRow, group: NamespaceRow, p: GroupParams): Promise<NamespaceRow> {
  const errors = validateGroupFields(ctx, actor, p, group);
  if (Object.keys(errors).length) throw validationError(errors);
  const set: Partial<NamespaceRow> = { updatedAt: now() };
  if (p.name !== undefined) set.name = p.name;
  if (p.path !== undefined) set.path = p.path;
  if (p.description !== undefined) set.description = p.description;
  if (p.visibility_level !== undefined) set.visibilityLevel = p.visibility_level;
  if (p.lfs_enabled !== undefined) set.lfsEnabled = p.lfs_enabled;
  if (p.request_access_enabled !== undefined) set.requestAccessEnabled = p.request_access_enabled;
  const { updated, moved } = ctx.db.transaction((tx) => {
    const updated = tx.update(namespaces).set(set).where(eq(namespaces.id, group.id)).returning().get();
    const moved = updated.path !== group.path ? tx.select().from(projects).where(eq(projects.namespaceId, group.id)).all() : [];
    return { updated, moved };
  });
  for (const project of moved) await storageMoved(ctx, project, `${group.path}/${project.path}`, `${updated.path}/${project.path}`);
  return updated;
}

/** Delete a group with its members and projects (rows first, then the projects' storage). */
export async function deleteGroup(ctx: AppContext, group: NamespaceRow): Promise<void> {
  const projectIds = ctx.db.transaction((tx) => {
    const owned = tx.select().from(projects).where(eq(projects.namespaceId, group.id)).all();
    for (const project of owned) deleteProjectRows(ctx, project);
    tx.delete(members).where(and(eq(members.sourceType, 'Namespace'), eq(members.sourceId, group.id))).run();
    tx.delete(namespaces).where(eq(namespaces.id, group.id)).run();
    return owned.map((p) => p.id);
  });
  await removeProjectStorage(ctx, projectIds);
}

/** Move a project into a group's namespace (admin action); 400 with the validation hash when it cannot go there. */
export async function transferProject(ctx: AppContext, group: NamespaceRow, project: ProjectRow): Promise<ProjectRow> {
  const from = projectNamespace(ctx, project);
  const errors: Record<string, string[]> = {};
  if (from.id === group.id) errors.namespace = ['Project is already in this namespace.'];
  else {
    const clash = ctx.db.$client
      .prepare(`SELECT path = ? COLLATE NOCASE AS same_path, name = ? COLLATE NOCASE AS same_name FROM projects WHERE namespace_id = ? AND (path = ? COLLATE NOCASE OR name = ? COLLATE NOCASE)`)
      .all(project.path, project.name, group.id, project.path, project.name) as { same_path: number; same_name: number }[];
    if (clash.some((c) => c.same_path)) errors.namespace = ['Project with same path in target namespace already exists'];
    else if (clash.some((c) => c.same_name)) errors.name = ['has already been taken'];
    if (project.visibilityLevel > group.visibilityLevel) {
      errors.visibility_level = [`${LEVEL_NAMES[project.visibilityLevel]!.toLowerCase()} is not allowed in a ${LEVEL_NAMES[group.visibilityLevel]!.toLowerCase()} group.`];
    }
  }
  if (Object.keys(errors).length) throw validationError(errors);
  const moved = ctx.db.update(projects).set({ namespaceId: group.id, updatedAt: now() }).where(eq(projects.id, project.id)).returning().get();
  await storageMoved(ctx, moved, `${from.path}/${project.path}`, `${group.path}/${project.path}`);
  return moved;
}
