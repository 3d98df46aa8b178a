/** Groups: lookup by path or id with the 404-for-hidden rule, list, create, update (with storage moves), delete, transfer. */
import { groupSystemData, memberSystemData, projectSystemData, queueMemberRemovals, queueSystemHooks } from '../hooks/system-hooks.js';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import type { NamespaceRow, ProjectRow, UserRow } from '../../db/schema.js';
import { forbidden, notFound, unauthorized, validationError } from '../../errors.js';
import {
  groupAbilityAtLevel, groupAbilityWithoutProjects, groupAccessLevelAsync, visibleGroupsWhere, visibleProjectsWhere, type GroupAbility,
  type SqlCondition,
} from '../../policy/permissions.js';
import { getSettings } from '../instance/settings.js';
import { deleteProjectRowsIn } from '../projects/projects.js';
import { removeProjectStorage, storageMoved } from '../repository/storage.js';
import { validPath } from './users.js';
import {
  allGroupsWhere, deleteGroupRows, groupByPathOrId, groupProjectListing, insertGroupWithOwner, memberGroupsWhere, nameOrPathLike,
  namespaceHasProjectAbove, namespaceHasProjectWhere, namespaceListing, namespaceNameTaken, namespacePathOrNameClash, namespacePathTaken,
  namespaceProjects, ownNamespacesWhere, projectsSharedWith, setProjectNamespace, updateNamespaceColumns, type GroupProjectListFilters,
  type Listing,
} from '../../db/groups.js';
import { namespaceById, projectIdsInNamespace } from '../../db/projects.js';

export type { Listing };

/**
 * Find a group by path (case-insensitive) first, then by numeric id; null if absent. On the data layer (both
 * engines), in one statement (a numeric text may match either; the path match is preferred). A UNION ALL rather than an OR: each
 * half uses its index on both engines (SQLite scanned the table for the OR).
 */
export async function lookupGroup(ctx: AppContext, idOrPath: string | number): Promise<NamespaceRow | null> {
  const text = String(idOrPath);
  const id = /^\d+$/.test(text) ? Number(text) : NaN;
  // beyond PostgreSQL's integer ids no group has the id on either engine: only the path can match
  return groupByPathOrId(ctx.data, text, Number.isSafeInteger(id) && id <= 2147483647 ? id : null);
}

/**
 * Resolve a group `:id` for a caller, on the data layer: 404 `Group Not Found` when absent or hidden; 403 when visible
 * but `ability` (beyond reading) is not allowed. The caller's access level in the group is read at most once (both
 * checks share it).
 */
export async function findGroup(ctx: AppContext, user: UserRow | null, idOrPath: string | number, ability: GroupAbility = 'read_group'): Promise<NamespaceRow> {
  const group = await lookupGroup(ctx, idOrPath);
  if (!group) throw notFound('Group');
  let level: number | undefined;
  const can = async (a: GroupAbility) => {
    const decided = groupAbilityWithoutProjects(user, a, group);
    if (decided !== undefined) return decided;
    level ??= await groupAccessLevelAsync(ctx, user, group);
    const atLevel = groupAbilityAtLevel(user!, a, group, level);
    if (atLevel !== 'projects') return atLevel;
    return namespaceHasProjectWhere(ctx.data, group.id, visibleProjectsWhere(ctx.data.dialect, user!));
  };
  if (!(await can('read_group'))) throw notFound('Group');
  if (ability !== 'read_group' && !(await can(ability))) throw forbidden();
  return group;
}

/**
 * GET /groups: admins see every group; others the groups they are a member of, or with `allAvailable` every
 * group they can read. `search` matches name or path.
 */
export function listGroups(ctx: AppContext, user: UserRow, opts: { search?: string; allAvailable?: boolean }): Listing<NamespaceRow> {
  const d = ctx.data.dialect;
  const conds: SqlCondition[] = [user.isAdmin ? allGroupsWhere : opts.allAvailable ? visibleGroupsWhere(d, user) : memberGroupsWhere(d, user.id)];
  if (opts.search) conds.push(nameOrPathLike(d, opts.search));
  return namespaceListing(conds);
}

/** GET /namespaces: admins see all; others their personal namespace and the groups they are a member of. */
export function listNamespaces(ctx: AppContext, user: UserRow, search?: string): Listing<NamespaceRow> {
  const d = ctx.data.dialect;
  const conds: SqlCondition[] = [user.isAdmin ? { sql: 'TRUE', args: [] } : ownNamespacesWhere(d, user.id)];
  if (search) conds.push(nameOrPathLike(d, search));
  return namespaceListing(conds);
}

/** Filters of GET /groups/:id/projects (already validated). */
export type GroupProjectFilters = GroupProjectListFilters;

/** GET /groups/:id/projects: the group's projects the caller can see, filtered and ordered. */
export function listGroupProjects(ctx: AppContext, user: UserRow, group: NamespaceRow, f: GroupProjectFilters): Listing<ProjectRow> {
  return groupProjectListing(ctx.data.dialect, group.id, visibleProjectsWhere(ctx.data.dialect, user), f);
}

/** The group's own projects the viewer can see (GroupDetail.projects), oldest first. One statement. */
export async function groupProjects(ctx: AppContext, viewer: UserRow, group: NamespaceRow): Promise<ProjectRow[]> {
  return namespaceProjects(ctx.data, group.id, visibleProjectsWhere(ctx.data.dialect, viewer));
}

/** Projects shared with the group (project_group_links) that the viewer can see (GroupDetail.shared_projects). One statement. */
export async function sharedProjects(ctx: AppContext, viewer: UserRow, group: NamespaceRow): Promise<ProjectRow[]> {
  return projectsSharedWith(ctx.data, group.id, visibleProjectsWhere(ctx.data.dialect, viewer));
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
export async function validateGroupFields(ctx: AppContext, actor: UserRow, p: GroupParams, self: NamespaceRow | null): Promise<Record<string, string[]>> {
  const errors: Record<string, string[]> = {};
  const err = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (p.name !== undefined) {
    if (!p.name.trim()) err('name', "can't be blank");
    else if (!NAME_PATTERN.test(p.name)) err('name', "can contain only letters, digits, '_', '.', dash and space.");
    else if (p.name.length > 255) err('name', 'is too long (maximum is 255 characters)');
    else if (await namespaceNameTaken(ctx.data, p.name, self?.id ?? null)) err('name', 'has already been taken');
  }
  if (p.path !== undefined) {
    if (!p.path) err('path', "can't be blank");
    else if (!validPath(p.path)) err('path', "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.");
    else if (RESERVED_PATHS.has(p.path.toLowerCase())) err('path', `${p.path} is a reserved name`);
    else if (await namespacePathTaken(ctx.data, p.path, self?.id ?? null)) err('path', 'has already been taken');
  }
  if (p.description !== undefined && p.description.length > 255) err('description', 'is too long (maximum is 255 characters)');
  if (p.visibility_level !== undefined) {
    const level = p.visibility_level;
    if (![0, 10, 20].includes(level)) err('visibility_level', 'is not included in the list');
    else {
      const restricted = JSON.parse((await getSettings(ctx)).restrictedVisibilityLevels ?? '[]') as number[];
      if (!actor.isAdmin && restricted.includes(level)) err('visibility_level', `${LEVEL_NAMES[level]} has been restricted by your GitLab administrator`);
      else if (self && (await namespaceHasProjectAbove(ctx.data, self.id, level))) {
        err('visibility_level', `${LEVEL_NAMES[level]!.toLowerCase()} is not allowed since there are projects with higher visibility.`);
      }
    }
  }
  return errors;
}

/**
 * The validation answer for a path taken between the check and the write (two requests at once: the checks run
 * before the transaction, the unique index on namespaces.path is the last guard on either engine).
 */
async function pathTakenOnConflict<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (e) {
    if (isUniqueViolation(e)) throw validationError({ path: ['has already been taken'] });
    throw e;
  }
}

/** Create a group; the creator becomes its owner (50). 403 unless the actor may create groups. */
export async function createGroup(ctx: AppContext, actor: UserRow, p: GroupParams & { name: string; path: string }): Promise<NamespaceRow> {
  if (!actor.canCreateGroup && !actor.isAdmin) throw forbidden();
  const visibility = p.visibility_level ?? (await getSettings(ctx)).defaultGroupVisibility;
  const errors = await validateGroupFields(ctx, actor, { ...p, visibility_level: visibility }, null);
  if (Object.keys(errors).length) throw validationError(errors);
  const t = now();
  // owner_id stays null for groups: ownership lives in members, and the users foreign key would cascade.
  return pathTakenOnConflict(ctx.data.transaction(async (tx) => {
    const { group, memberId } = await insertGroupWithOwner(tx, {
      name: p.name, path: p.path, description: p.description ?? '', visibilityLevel: visibility,
      requestAccessEnabled: p.request_access_enabled ?? true, lfsEnabled: p.lfs_enabled ?? true, createdAt: t,
    }, actor.id);
    // system hooks: group_create, then the creator's membership (user_add_to_group)
    await queueSystemHooks(tx, () => groupSystemData(tx, group.id, 'create'));
    await queueSystemHooks(tx, () => memberSystemData(tx, memberId, 'create'));
    return group;
  })).catch((e: unknown) => {
    throw isForeignKeyViolation(e) ? unauthorized() : e; // the acting user was deleted meanwhile: nothing is written
  });
}

/** Update a group; a path change moves the storage of every project of the group once the rename is committed. */
export async function updateGroup(ctx: AppContext, actor: UserRow, group: NamespaceRow, p: GroupParams): Promise<NamespaceRow> {
  const errors = await validateGroupFields(ctx, actor, p, group);
  if (Object.keys(errors).length) throw validationError(errors);
  const sets: [string, unknown][] = [['updated_at', now()]];
  const set = (column: string, value: unknown) => {
    if (value !== undefined) sets.push([column, value]);
  };
  set('name', p.name);
  set('path', p.path);
  set('description', p.description);
  set('visibility_level', p.visibility_level);
  set('lfs_enabled', p.lfs_enabled);
  set('request_access_enabled', p.request_access_enabled);
  const { updated, moved } = await pathTakenOnConflict(ctx.data.transaction(async (tx) => {
    const updated = await updateNamespaceColumns(tx, group.id, sets);
    if (!updated) throw notFound('Group'); // deleted by another request since it was found
    const moved = updated.path !== group.path ? await namespaceProjects(tx, group.id) : [];
    return { updated, moved };
  }));
  for (const project of moved) await storageMoved(ctx, project, `${group.path}/${project.path}`, `${updated.path}/${project.path}`);
  return updated;
}

/** Delete a group with its members and projects (rows first in one transaction, then the projects' storage). */
export async function deleteGroup(ctx: AppContext, group: NamespaceRow): Promise<void> {
  const projectIds = await ctx.data.transaction(async (tx) => {
    const owned = await projectIdsInNamespace(tx, group.id);
    for (const id of owned) await deleteProjectRowsIn(tx, id);
    // system hooks (read before the rows go): the memberships, then group_destroy
    await queueMemberRemovals(tx, { sourceType: 'Namespace', sourceId: group.id });
    await queueSystemHooks(tx, () => groupSystemData(tx, group.id, 'destroy'));
    await deleteGroupRows(tx, group.id);
    return owned;
  });
  await removeProjectStorage(ctx, projectIds);
}

/**
 * Move a project into a group's namespace (admin action); 400 with the validation hash when it cannot go there.
 * The storage moves after the commit; when that fails the row is put back in its old namespace.
 */
export async function transferProject(ctx: AppContext, group: NamespaceRow, project: ProjectRow): Promise<ProjectRow> {
  const from = (await namespaceById(ctx.data, project.namespaceId))!;
  const errors: Record<string, string[]> = {};
  if (from.id === group.id) errors.namespace = ['Project is already in this namespace.'];
  else {
    const clash = await namespacePathOrNameClash(ctx.data, group.id, project.path, project.name);
    if (clash === 'path') errors.namespace = ['Project with same path in target namespace already exists'];
    else if (clash === 'name') errors.name = ['has already been taken'];
    if (project.visibilityLevel > group.visibilityLevel) {
      errors.visibility_level = [`${LEVEL_NAMES[project.visibilityLevel]!.toLowerCase()} is not allowed in a ${LEVEL_NAMES[group.visibilityLevel]!.toLowerCase()} group.`];
    }
  }
  if (Object.keys(errors).length) throw validationError(errors);
  let moved: ProjectRow;
  try {
    moved = await ctx.data.transaction(async (tx) => {
      const row = await setProjectNamespace(tx, project.id, group.id, now());
      if (!row) throw notFound('Project'); // deleted by another request since it was found
      await queueSystemHooks(tx, () => projectSystemData(tx, project.id, 'transfer', `${from.path}/${project.path}`));
      return row;
    });
  } catch (e) {
    // a project with the same path got there after the check above (the unique index on namespace_id, path)
    if (isUniqueViolation(e)) throw validationError({ namespace: ['Project with same path in target namespace already exists'] });
    if (isForeignKeyViolation(e)) throw notFound('Group'); // the group was deleted meanwhile
    throw e;
  }
  try {
    await storageMoved(ctx, moved, `${from.path}/${project.path}`, `${group.path}/${project.path}`);
  } catch (e) {
    await setProjectNamespace(ctx.data, project.id, project.namespaceId, project.updatedAt);
    throw e;
  }
  return moved;
}
