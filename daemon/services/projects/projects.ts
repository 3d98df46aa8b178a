/** Projects: lookup by id or path with the 404-for-hidden rule, create, delete, and lifecycle hooks for storage. */
import { memberSystemData, projectSystemData, queueMemberRemovals, queueSystemHooks } from '../hooks/system-hooks.js';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { NamespaceRow, ProjectRow, UserRow } from '../../db/schema.js';
import { ApiError, forbidden, notFound, validationError } from '../../errors.js';
import {
  canGroup, canProject, canProjectAsync, MASTER, PUBLIC, type ProjectAbility,
} from '../../policy/permissions.js';
import { hashToken, randomToken } from '../../secrets.js';
import { restrictedVisibilityLevelsAsync, getSettings } from '../instance/settings.js';
import { recordEvent } from '../instance/events.js';
import type { Queries } from '../../db/layer/types.js';
import { personalNamespace, personalProjectCount } from '../../db/users.js';
import { insertMember } from '../../db/members.js';
import {
  deleteProjectRow, insertProject, lockNamespace, namespaceById, projectExistsKeyShared, projectFieldTaken,
  updateProjectColumns,
} from '../../db/projects.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import { removeProjectStorage, storageCreated, storageMoved } from '../repository/storage.js';
import { validPath } from '../users/users.js';
import { deleteProjectOnlyDeployKeysIn } from '../keys/keys.js';
import { createBoardIn } from '../collaboration/boards.js';
import { UntilNextWrite } from '../../db/read-cache.js';
import { projectAccessAsync, readProject, type ProjectWithLevel } from '../../db/access.js';

/** `:id` (id or namespace/path) -> project row, exact until the next write. */
const projectLookups = new UntilNextWrite<{ row: ProjectRow | null }>(1000);

/** Find a project by numeric id or `namespace/path` (case-insensitive, exact case preferred); null if absent. Kept until the next write on SQLite. */
export async function lookupProjectAsync(ctx: AppContext, idOrPath: string | number): Promise<ProjectRow | null> {
  const text = String(idOrPath);
  return (await projectLookups.getAsync(ctx, text, async () => ({ row: (await readProject(ctx.data, text)).row }))).row;
}

/**
 * Resolve `:id` for a caller: 404 `Project Not Found` when absent or hidden; 403 when visible but `ability`
 * (beyond reading) is not allowed. The caller's access level is read at most once (both checks share it).
 */
export async function findProject(
  ctx: AppContext, user: UserRow | null, idOrPath: string | number, ability: ProjectAbility = 'read_project',
): Promise<ProjectRow> {
  return (await findProjectWithLevel(ctx, user, idOrPath, ability)).project;
}

/**
 * findProject that also returns the caller's access level on the project (undefined when no rule needs it:
 * admins, blocked or anonymous callers), so the route hands it down instead of anything reading it again. The row and
 * the level come from one statement, or from the access cache (db/access.ts); `version`: the write version the
 * request read first (requestVersion), for that cache on PostgreSQL.
 */
export async function findProjectWithLevel(
  ctx: AppContext, user: UserRow | null, idOrPath: string | number, ability: ProjectAbility = 'read_project', version?: string,
): Promise<{ project: ProjectRow; level: number | undefined }> {
  return checkProjectAccess(user, await projectAccessAsync(ctx, user, idOrPath, version), ability);
}

/**
 * The rules of findProject over a project row and the caller's level read before: 404 `Project Not Found` when
 * absent or hidden, 403 when visible but `ability` is not allowed.
 */
export function checkProjectAccess(user: UserRow | null, access: ProjectWithLevel, ability: ProjectAbility = 'read_project'): { project: ProjectRow; level: number | undefined } {
  const project = access.row;
  if (!project || !canProject(user, 'read_project', project, access.level ?? 0)) throw notFound('Project');
  if (ability !== 'read_project' && !canProject(user, ability, project, access.level ?? 0)) throw forbidden();
  return { project, level: access.level };
}

/** An id as PostgreSQL's integer columns take it (a larger number matches no row on either engine). */
const dbId = (n: number) => (Number.isSafeInteger(n) && n > 0 && n <= 2147483647 ? n : 0);

/** The namespace of a project. */
export async function projectNamespace(ctx: AppContext, project: ProjectRow, q: Queries = ctx.data): Promise<NamespaceRow> {
  return (await namespaceById(q, project.namespaceId))!;
}

/** Parameters of POST /projects and PUT /projects/:id. */
export interface ProjectParams {
  name?: string;
  path?: string;
  namespace_id?: number;
  description?: string;
  default_branch?: string;
  issues_enabled?: boolean;
  merge_requests_enabled?: boolean;
  builds_enabled?: boolean;
  wiki_enabled?: boolean;
  snippets_enabled?: boolean;
  container_registry_enabled?: boolean;
  shared_runners_enabled?: boolean;
  lfs_enabled?: boolean;
  request_access_enabled?: boolean;
  only_allow_merge_if_build_succeeds?: boolean;
  public?: boolean;
  visibility_level?: number;
  import_url?: string;
  public_builds?: boolean;
  tag_list?: string[];
}

const NAME_PATTERN = /^[\p{L}\p{N}_\u{00A9}-\u{1f9c0}][\p{L}\p{N}\p{Pd}_. \u{00A9}-\u{1f9c0}]*$/u;
/** GitLab's `parameterize`: lowercase, non-alphanumerics to `-`, trimmed. */
export const parameterize = (name: string) => name.normalize('NFKD').replace(/[^\x00-\x7f]/g, '').toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/-{2,}/g, '-').replace(/^-|-$/g, '');

const VISIBILITY_NAMES: Record<number, string> = { 0: 'Private', 10: 'Internal', 20: 'Public' };

/**
 * The field checks of create and update that need no project rows: the validation hash (empty when fine).
 * `restricted`: the visibility levels the settings restrict, asked only when a non-admin sets a visibility.
 */
function fieldErrors(actor: UserRow, p: ProjectParams, restricted: readonly number[]): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const err = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (p.name !== undefined) {
    if (!p.name.trim()) err('name', "can't be blank");
    else if (!NAME_PATTERN.test(p.name)) err('name', "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'.");
    if (p.name.length > 255) err('name', 'is too long (maximum is 255 characters)');
  }
  if (p.path !== undefined) {
    if (!p.path) err('path', "can't be blank");
    else if (!validPath(p.path)) err('path', "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'");
  }
  if (p.visibility_level !== undefined) {
    if (![0, 10, 20].includes(p.visibility_level)) err('visibility_level', 'is not included in the list');
    else if (!actor.isAdmin && restricted.includes(p.visibility_level)) {
      err('visibility_level', `${VISIBILITY_NAMES[p.visibility_level]} has been restricted by your GitLab administrator`);
    }
  }
  if (p.description !== undefined && p.description.length > 2000) err('description', 'is too long (maximum is 2000 characters)');
  if (p.import_url !== undefined && p.import_url !== '' && !/^(https?|git):\/\/\S+$/.test(p.import_url)) err('import_url', 'is not a valid URL');
  return errors;
}

/** Whether fieldErrors needs the restricted visibility levels (a non-admin sets a visibility). */
const needsRestricted = (actor: UserRow, p: ProjectParams) => p.visibility_level !== undefined && !actor.isAdmin;

/** The field checks of create and update that need no project rows (the restricted levels come from the settings). */
async function fieldErrorsAsync(ctx: AppContext, actor: UserRow, p: ProjectParams): Promise<Record<string, string[]>> {
  return fieldErrors(actor, p, needsRestricted(actor, p) ? await restrictedVisibilityLevelsAsync(ctx) : []);
}

/**
 * The "has already been taken" checks (name and path, case-insensitive, in the namespace), added to
 * `errors` for the fields without an error yet; on `q` (ctx.data, or the transaction that then writes the row).
 */
async function addTakenErrors(q: Queries, errors: Record<string, string[]>, p: ProjectParams, namespaceId: number, selfId: number | null): Promise<void> {
  const taken = (col: 'name' | 'path', v: string) => projectFieldTaken(q, namespaceId, col, v, selfId);
  if (p.name !== undefined && !errors.name && (await taken('name', p.name))) (errors.name ??= []).push('has already been taken');
  if (p.path !== undefined && !errors.path && (await taken('path', p.path))) (errors.path ??= []).push('has already been taken');
}

/**
 * A unique violation of (namespace_id, path) from a create or rename that raced past the checks: the same 400; a
 * foreign-key violation (the namespace or the owner deleted by another request meanwhile): the namespace is not valid.
 */
const takenPath = (e: unknown) =>
  isUniqueViolation(e) ? validationError({ path: ['has already been taken'] })
    : isForeignKeyViolation(e) ? validationError({ namespace: ['is not valid'] }) : e;

/** Resolve the target namespace of a create: the owner's personal namespace by default, or a group the actor may create in. */
export async function targetNamespace(ctx: AppContext, actor: UserRow, owner: UserRow, namespaceId: number | undefined): Promise<NamespaceRow> {
  if (namespaceId === undefined) {
    return (await personalNamespace(ctx.data, owner.id))!;
  }
  const ns = await namespaceById(ctx.data, dbId(namespaceId));
  const allowed = ns && (ns.kind === 'user' ? ns.ownerId === owner.id || actor.isAdmin : await canGroup(ctx, actor, 'create_projects', ns));
  if (!ns || !allowed) throw validationError({ namespace: ['is not valid'] });
  return ns;
}


/**
 * Create a project owned by `owner` (the actor, or another user when an admin creates for them): the checks, then the
 * project, the owner's membership and the `created` event in one transaction (the runners token hashed before it).
 * `forkedFromId`: a fork's source, checked again in that transaction (404 when deleted meanwhile).
 */
export async function createProject(
  ctx: AppContext, actor: UserRow, owner: UserRow, p: ProjectParams & { name: string }, extra: { forkedFromId?: number } = {},
): Promise<ProjectRow> {
  const ns = await targetNamespace(ctx, actor, owner, p.namespace_id);
  const overLimit = () =>
    new ApiError(403, { message: `403 Forbidden - Your project limit is ${owner.projectsLimit} projects! Please contact your administrator to increase it` });
  if (ns.kind === 'user' && (await personalProjectCount(ctx.data, owner.id)) >= owner.projectsLimit) throw overLimit();
  const path = p.path || parameterize(p.name);
  const visibility = p.visibility_level ?? (p.public === true ? PUBLIC : p.public === false ? 0 : (await getSettings(ctx)).defaultProjectVisibility);
  const fields = { ...p, path, visibility_level: visibility };
  const errors = await fieldErrorsAsync(ctx, actor, fields);
  if (Object.keys(errors).length) {
    await addTakenErrors(ctx.data, errors, fields, ns.id, null);
    throw validationError(errors);
  }
  const salt = randomToken(24);
  const tokenHash = hashToken(ctx.secrets.derive('runners', salt));
  const t = now();
  const values = {
    name: p.name, path, namespaceId: ns.id, description: p.description ?? null, visibilityLevel: visibility, defaultBranch: p.default_branch ?? 'master',
    issuesEnabled: p.issues_enabled ?? true, mergeRequestsEnabled: p.merge_requests_enabled ?? true, buildsEnabled: p.builds_enabled ?? true,
    wikiEnabled: p.wiki_enabled ?? true, snippetsEnabled: p.snippets_enabled ?? false, containerRegistryEnabled: p.container_registry_enabled ?? false,
    sharedRunnersEnabled: p.shared_runners_enabled ?? true, publicBuilds: p.public_builds ?? true, lfsEnabled: p.lfs_enabled ?? true,
    requestAccessEnabled: p.request_access_enabled ?? true, onlyAllowMergeIfBuildSucceeds: p.only_allow_merge_if_build_succeeds ?? false,
    importUrl: p.import_url || null, tagList: JSON.stringify(p.tag_list ?? []), creatorId: actor.id, forkedFromId: extra.forkedFromId ?? null,
    runnersTokenSalt: salt, runnersTokenHash: tokenHash, createdAt: t,
  };
  // The limit and the name and path checks run again in the transaction that writes the row, so creates at once
  // cannot pass them together: on SQLite the transaction runs alone; on PostgreSQL the owner's namespace row is locked
  // first (creates in one personal namespace queue), and a concurrent create of the same path elsewhere is still
  // caught by the unique index.
  return ctx.data.transaction(async (tx) => {
    if (ns.kind === 'user') {
      await lockNamespace(tx, ns.id);
      const n = await personalProjectCount(tx, owner.id);
      if (n >= owner.projectsLimit) throw overLimit();
    }
    const taken: Record<string, string[]> = {};
    await addTakenErrors(tx, taken, fields, ns.id, null);
    if (Object.keys(taken).length) throw validationError(taken);
    // a fork's source deleted by another request meanwhile: 404 (on PostgreSQL its row stays locked against deletion
    // until this transaction ends)
    if (extra.forkedFromId !== undefined && !(await projectExistsKeyShared(tx, extra.forkedFromId))) throw notFound('Project');
    const row = await insertProject(tx, values);
    const ownerMemberId = ns.kind === 'user' ? (await insertMember(tx, ['Project', row.id], owner.id, MASTER, null, actor.id, t))!.id : null;
    await createBoardIn(tx, row.id, t);
    await recordEvent(tx, { projectId: row.id, authorId: actor.id, action: 'created' });
    // system hooks: project_create, then the owner's membership (user_add_to_team), as 8.13's create service
    await queueSystemHooks(tx, () => projectSystemData(tx, row.id, 'create'));
    if (ownerMemberId !== null) await queueSystemHooks(tx, () => memberSystemData(tx, ownerMemberId, 'create'));
    return row;
  }).catch((e: unknown) => {
    throw takenPath(e);
  });
}

/**
 * Delete a project's rows inside a transaction of the data layer (`tx`): its memberships, the deploy keys no other
 * project uses, the fork links to it, the project (the rest cascades). For callers that delete projects as part of a
 * larger transaction (users, groups).
 */
export async function deleteProjectRowsIn(tx: Queries, projectId: number): Promise<void> {
  // system hooks (read before the rows go): the memberships, then project_destroy
  await queueMemberRemovals(tx, { sourceType: 'Project', sourceId: projectId });
  await queueSystemHooks(tx, () => projectSystemData(tx, projectId, 'destroy'));
  await deleteProjectOnlyDeployKeysIn(tx, projectId);
  await deleteProjectRow(tx, projectId);
}

/** Delete a project's rows (deleteProjectRowsIn) in one transaction of the data layer. */
export async function deleteProjectRows(ctx: AppContext, project: ProjectRow): Promise<void> {
  await ctx.data.transaction((tx) => deleteProjectRowsIn(tx, project.id));
}

/** Whether `ref` is a valid git branch name (git check-ref-format rules, as a branch). */
export function validRefName(ref: string): boolean {
  if (!ref || ref.length > 255 || ref === '@' || ref.startsWith('-') || ref.startsWith('/') || ref.endsWith('/') || ref.endsWith('.')) return false;
  if (/[\x00-\x20\x7f~^:?*[\\]|\.\.|@\{|\/\/|\/\.|\.lock(\/|$)/.test(ref)) return false;
  return !ref.startsWith('.');
}

/** The result of an update: the new row and the full path before and after (equal unless the path changed). */
export interface ProjectUpdate {
  project: ProjectRow;
  fromFullPath: string;
  toFullPath: string;
}

const PROJECT_FLAGS = {
  issues_enabled: 'issuesEnabled', merge_requests_enabled: 'mergeRequestsEnabled', builds_enabled: 'buildsEnabled',
  wiki_enabled: 'wikiEnabled', snippets_enabled: 'snippetsEnabled', container_registry_enabled: 'containerRegistryEnabled',
  shared_runners_enabled: 'sharedRunnersEnabled', public_builds: 'publicBuilds', lfs_enabled: 'lfsEnabled',
  request_access_enabled: 'requestAccessEnabled', only_allow_merge_if_build_succeeds: 'onlyAllowMergeIfBuildSucceeds',
} as const;

/**
 * Update a project's settings (PUT /projects/:id). The caller already holds admin_project; renaming needs
 * rename_project and a visibility change needs change_visibility_level (403 otherwise). 400 with the validation hash.
 * One UPDATE ... RETURNING *.
 * `level`: the actor's access level on the project when the caller already read it (saves the rename and visibility
 * checks a statement each).
 */
export async function updateProject(ctx: AppContext, actor: UserRow, project: ProjectRow, p: ProjectParams, level?: number): Promise<ProjectUpdate> {
  const visibility = p.visibility_level ?? (p.public === true ? PUBLIC : p.public === false ? 0 : undefined);
  const renamed = p.name !== undefined && p.name !== project.name;
  const revisibled = visibility !== undefined && visibility !== project.visibilityLevel;
  if (renamed && !(await canProjectAsync(ctx, actor, 'rename_project', project, level))) throw forbidden();
  if (revisibled && !(await canProjectAsync(ctx, actor, 'change_visibility_level', project, level))) throw forbidden();
  const pathChanged = p.path !== undefined && p.path !== project.path;
  const checked: ProjectParams = {
    ...(renamed ? { name: p.name } : {}),
    ...(pathChanged ? { path: p.path } : {}),
    ...(revisibled ? { visibility_level: visibility } : {}),
    ...(p.description !== undefined ? { description: p.description } : {}),
  };
  const errors = await fieldErrorsAsync(ctx, actor, checked);
  const badBranch = p.default_branch !== undefined && !validRefName(p.default_branch);
  if (Object.keys(errors).length || badBranch) {
    await addTakenErrors(ctx.data, errors, checked, project.namespaceId, project.id);
    if (badBranch) (errors.default_branch ??= []).push('is invalid');
    throw validationError(errors);
  }

  const set: Partial<ProjectRow> = { updatedAt: now() };
  if (renamed) set.name = p.name;
  if (pathChanged) set.path = p.path;
  if (revisibled) set.visibilityLevel = visibility;
  if (p.description !== undefined) set.description = p.description;
  if (p.default_branch !== undefined) set.defaultBranch = p.default_branch;
  for (const [param, column] of Object.entries(PROJECT_FLAGS) as [keyof typeof PROJECT_FLAGS, (typeof PROJECT_FLAGS)[keyof typeof PROJECT_FLAGS]][]) {
    const v = p[param];
    if (v !== undefined) set[column] = v;
  }
  if (p.tag_list !== undefined) set.tagList = JSON.stringify(p.tag_list);
  // the namespace does not change here, so one read gives the full path before and after
  const ns = await projectNamespace(ctx, project);
  const write = async (q: Queries) => {
    const taken: Record<string, string[]> = {};
    await addTakenErrors(q, taken, checked, project.namespaceId, project.id);
    if (Object.keys(taken).length) throw validationError(taken);
    const row = await updateProjectColumns(q, project.id, set);
    // a new path is written in a transaction (`q`): project_rename with the old path (8.13's rename_repo)
    if (row && pathChanged) await queueSystemHooks(q, () => projectSystemData(q, project.id, 'rename', `${ns.path}/${project.path}`));
    return row;
  };
  // a new name or path is checked in the transaction that writes it (as createProject)
  const updated = await (checked.name !== undefined || checked.path !== undefined ? ctx.data.transaction(write) : write(ctx.data)).catch((e: unknown) => {
    throw takenPath(e);
  });
  // deleted by another request since the lookup: as if it had been gone then
  if (!updated) throw notFound('Project');
  return { project: updated, fromFullPath: `${ns.path}/${project.path}`, toFullPath: `${ns.path}/${updated.path}` };
}

/** Put back a project row as it was (undo an update whose storage move failed). */
export async function restoreProjectRow(ctx: AppContext, before: ProjectRow): Promise<void> {
  const { id, ...rest } = before;
  await updateProjectColumns(ctx.data, id, rest);
}

/** Create a project and its storage (repository); no half-created project remains when the storage fails. */
export async function createProjectWithStorage(ctx: AppContext, actor: UserRow, owner: UserRow, p: ProjectParams & { name: string }): Promise<ProjectRow> {
  const project = await createProject(ctx, actor, owner, p);
  try {
    await storageCreated(ctx, project);
  } catch (e) {
    await deleteProjectRows(ctx, project);
    await removeProjectStorage(ctx, [project.id]).catch(() => undefined);
    throw e;
  }
  return project;
}

/**
 * Update a project and move its storage when its full path changed; the row is restored if the move fails.
 * `level`: the actor's access level when already read (see updateProject).
 */
export async function updateProjectWithStorage(ctx: AppContext, actor: UserRow, before: ProjectRow, p: ProjectParams, level?: number): Promise<ProjectRow> {
  const result = await updateProject(ctx, actor, before, p, level);
  try {
    await storageMoved(ctx, result.project, result.fromFullPath, result.toFullPath);
  } catch (e) {
    await restoreProjectRow(ctx, before);
    throw e;
  }
  return result.project;
}

/** Delete a project: its rows in one transaction, then its storage. */
export async function deleteProject(ctx: AppContext, project: ProjectRow): Promise<void> {
  await deleteProjectRows(ctx, project);
  await removeProjectStorage(ctx, [project.id]);
}
