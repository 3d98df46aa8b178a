/**
 * Project toggles and links: star, archive, group shares, the fork link, and the fork itself. Callers have already
 * authorized. Everything runs on the data layer (either engine); each write carries its own check (a conditional
 * statement, a unique index or a recheck in its transaction), so two requests at once, on one daemon or two, get the
 * answers one after the other would get, and a project deleted meanwhile answers 404.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { NamespaceRow, ProjectGroupLinkRow, ProjectRow, UserRow } from '../../db/schema.js';
import {
  deleteProjectGroupLink, deleteStar, groupById, insertProjectGroupLink, insertStar, namespaceById, namespaceByIdShareLocked,
  namespaceByPathOrName, projectExists, projectStillThere, setForkLink, updateProjectColumns,
} from '../../db/projects.js';
import { personalNamespace } from '../../db/users.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { ApiError, badRequestMessage, conflict, invalidParam, notFound } from '../../errors.js';
import { canGroup, GUEST, MASTER } from '../../policy/permissions.js';
import { validDate } from '../../dates.js';
import { createProject, deleteProjectRows, type ProjectParams } from './projects.js';
import { restrictedVisibilityLevelsAsync } from '../instance/settings.js';
import { findUser } from '../users/users.js';
import { removeProjectStorage, storageForked } from '../repository/storage.js';

/** An id as PostgreSQL's integer columns take it (a larger number matches no row on either engine). */
const dbId = (n: number) => (Number.isSafeInteger(n) && n > 0 && n <= 2147483647 ? n : 0);

/**
 * Star a project for a user; false when it was already starred (two stars at once: one true, one false, through the
 * primary key). 404 when the project was deleted meanwhile.
 */
export async function starProject(ctx: AppContext, user: UserRow, project: ProjectRow): Promise<boolean> {
  try {
    return await insertStar(ctx.data, user.id, project.id, now());
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
}

/** Remove a user's star; false when it was not starred. */
export async function unstarProject(ctx: AppContext, user: UserRow, project: ProjectRow): Promise<boolean> {
  return deleteStar(ctx.data, user.id, project.id);
}

/** Archive or unarchive a project (idempotent); returns the current row; 404 when it was deleted meanwhile. */
export async function setProjectArchived(ctx: AppContext, project: ProjectRow, archived: boolean): Promise<ProjectRow> {
  if (project.archived === archived) return project;
  const row = await updateProjectColumns(ctx.data, project.id, { archived, updatedAt: now() });
  if (!row) throw notFound('Project');
  return row;
}

/**
 * Remove the fork link of a project: the row without it, or null when it was not a fork (one conditional UPDATE: of
 * two removals at once, one gets the row and one null). 404 when the project was deleted meanwhile.
 */
export async function removeForkLink(ctx: AppContext, project: ProjectRow): Promise<ProjectRow | null> {
  if (project.forkedFromId === null) return null;
  const row = await setForkLink(ctx.data, project.id, null, now());
  if (row) return row;
  if (!(await projectExists(ctx.data, project.id))) throw notFound('Project');
  return null;
}

/**
 * Mark `project` as forked from `source` (POST /projects/:id/fork/:forked_from_id, administrators): the updated row.
 * 409 `Project already forked` when it already has a fork link (two at once: one links, one 409), 404 when either
 * project was deleted meanwhile.
 */
export async function addForkLink(ctx: AppContext, project: ProjectRow, source: ProjectRow): Promise<ProjectRow> {
  if (project.forkedFromId !== null) throw alreadyForked();
  if (source.id === project.id) throw conflict('Project cannot be forked from itself');
  let row: ProjectRow | null;
  try {
    row = await setForkLink(ctx.data, project.id, source.id, now());
  } catch (e) {
    // the source was deleted meanwhile
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
  if (row) return row;
  if (!(await projectExists(ctx.data, project.id))) throw notFound('Project');
  throw alreadyForked();
}
const alreadyForked = () => new ApiError(409, { message: '409 Project already forked' });

/** Parameters of POST /projects/:id/share. */
export interface ShareParams {
  group_id: number;
  group_access: number;
  expires_at?: string;
}

/**
 * Share a project with a group. 404 `Group Not Found` (absent or hidden from the actor); 400 when the project's group
 * locks sharing; 409 with the first validation message (bad access level, own group, already shared), as 8.x.
 * The lock is read again in the transaction that writes the link (on PostgreSQL with the namespace row locked, so a
 * lock set at the same moment comes strictly before or after); two shares at once: one 201, one 409 (the unique
 * index); the project or the group deleted meanwhile: 404.
 */
export async function shareProject(ctx: AppContext, actor: UserRow, project: ProjectRow, p: ShareParams): Promise<ProjectGroupLinkRow> {
  const group = await groupById(ctx.data, dbId(p.group_id));
  if (!group || !(await canGroup(ctx, actor, 'read_group', group))) throw notFound('Group');
  const own = (await namespaceById(ctx.data, project.namespaceId))!;
  if (sharingLocked(own)) throw shareLocked();
  if (p.expires_at !== undefined && !validDate(p.expires_at)) throw invalidParam('expires_at');
  // Project-level access stops at master (GitLab's Gitlab::Access.values): a share never grants ownership.
  if (!Number.isInteger(p.group_access) || p.group_access < GUEST || p.group_access > MASTER || p.group_access % 10 !== 0) {
    throw conflict('Group access is not included in the list');
  }
  if (group.id === project.namespaceId) throw conflict('Project cannot be shared with the group it is in.');
  const t = now();
  let inserted: ProjectGroupLinkRow | null;
  try {
    inserted = await ctx.data.transaction(async (tx) => {
      const nsNow = await namespaceByIdShareLocked(tx, project.namespaceId);
      if (!nsNow) throw notFound('Project');
      if (sharingLocked(nsNow)) throw shareLocked();
      return insertProjectGroupLink(tx, project.id, group.id, p.group_access, p.expires_at ?? null, t);
    });
  } catch (e) {
    if (!isForeignKeyViolation(e)) throw e;
    throw notFound((await projectExists(ctx.data, project.id)) ? 'Group' : 'Project');
  }
  if (!inserted) throw conflict('Group already shared with this group');
  return inserted;
}
const sharingLocked = (ns: NamespaceRow) => ns.kind === 'group' && ns.shareWithGroupLock;
const shareLocked = () => badRequestMessage('The project sharing with group is disabled');

/** Remove a project's share with a group; 404 `Group Link Not Found` when there is none. */
export async function unshareProject(ctx: AppContext, project: ProjectRow, groupId: number): Promise<void> {
  if (!(await deleteProjectGroupLink(ctx.data, project.id, dbId(groupId)))) throw notFound('Group Link');
}

/**
 * The namespace a fork goes to: `namespace` (id, path or name) when given, else the actor's own; 404 `Target Namespace`
 * when it does not exist or the actor cannot create projects in it.
 */
export async function forkTargetNamespace(ctx: AppContext, actor: UserRow, namespace: string | undefined): Promise<NamespaceRow> {
  if (namespace === undefined || namespace === '') {
    const own = await personalNamespace(ctx.data, actor.id);
    // the actor's own namespace is gone only when the actor was deleted meanwhile
    if (!own) throw notFound('Target Namespace');
    return own;
  }
  const ns = /^\d+$/.test(namespace) ? await namespaceById(ctx.data, dbId(Number(namespace))) : await namespaceByPathOrName(ctx.data, namespace);
  const allowed = ns && (ns.kind === 'user' ? ns.ownerId === actor.id || actor.isAdmin : await canGroup(ctx, actor, 'create_projects', ns));
  if (!ns || !allowed) throw notFound('Target Namespace');
  return ns;
}

/** The highest visibility a fork may get: the source's, capped by a group's visibility and (for non-admins) restricted levels. */
async function forkVisibility(ctx: AppContext, actor: UserRow, source: ProjectRow, ns: NamespaceRow): Promise<number> {
  let level = source.visibilityLevel;
  if (ns.kind === 'group') level = Math.min(level, ns.visibilityLevel);
  if (actor.isAdmin) return level;
  const restricted = await restrictedVisibilityLevelsAsync(ctx);
  return [20, 10, 0].find((l) => l <= level && !restricted.includes(l)) ?? 0;
}

/**
 * Fork `source` into `ns` (POST /projects/fork/:id; the caller holds fork_project): the fork's row (written with the
 * same checks as a create; validation failures are 409 with the hash, as 8.x), then its storage copied from the
 * source's. No half-made fork remains: when the copy fails the fork's rows and storage are removed again. The source
 * may be deleted by another request at any moment; the answer is then 404 `Project Not Found`, never a 500 or a fork
 * with an empty repository:
 * - before the fork's row is written: its transaction finds the source gone (on PostgreSQL the source row is locked
 *   against deletion from there to the commit);
 * - after: the copy fails or copies a repository already removed. Either way the source row is read again once the copy
 *   is over; when it is gone the fork is removed. A deletion commits its rows before it removes any storage, so a
 *   source row still present after the copy means the copy read the whole repository.
 */
export async function forkProject(ctx: AppContext, actor: UserRow, source: ProjectRow, ns: NamespaceRow): Promise<ProjectRow> {
  const owner = ns.kind === 'user' ? await namespaceOwner(ctx, ns, actor) : actor;
  const params: ProjectParams & { name: string } = {
    name: source.name, path: source.path, namespace_id: ns.id, description: source.description ?? undefined,
    visibility_level: await forkVisibility(ctx, actor, source, ns), default_branch: source.defaultBranch,
    issues_enabled: source.issuesEnabled, merge_requests_enabled: source.mergeRequestsEnabled, builds_enabled: source.buildsEnabled,
    wiki_enabled: source.wikiEnabled, snippets_enabled: source.snippetsEnabled, container_registry_enabled: source.containerRegistryEnabled,
    shared_runners_enabled: source.sharedRunnersEnabled, public_builds: source.publicBuilds, lfs_enabled: source.lfsEnabled,
    request_access_enabled: source.requestAccessEnabled, only_allow_merge_if_build_succeeds: source.onlyAllowMergeIfBuildSucceeds,
  };
  let fork: ProjectRow;
  try {
    fork = await createProject(ctx, actor, owner, params, { forkedFromId: source.id });
  } catch (e) {
    if (e instanceof ApiError && e.statusCode === 400) throw new ApiError(409, e.body);
    throw e;
  }
  let failure: unknown;
  try {
    await storageForked(ctx, source, fork);
  } catch (e) {
    failure = e;
  }
  const sourceGone = !(await sourceStillThere(ctx, source));
  if (failure !== undefined || sourceGone) {
    await deleteProjectRows(ctx, fork);
    await removeProjectStorage(ctx, [fork.id]).catch(() => undefined);
    if (sourceGone) throw notFound('Project');
    throw failure;
  }
  return fork;
}

/** Whether the source project of a fork still exists (the same project: its runners token salt is its own). */
async function sourceStillThere(ctx: AppContext, source: ProjectRow): Promise<boolean> {
  return projectStillThere(ctx.data, source.id, source.runnersTokenSalt);
}

/** The owner of a personal namespace (the actor when it is gone: the create then finds the namespace gone too). */
async function namespaceOwner(ctx: AppContext, ns: NamespaceRow, actor: UserRow): Promise<UserRow> {
  if (!ns.ownerId || ns.ownerId === actor.id) return actor;
  try {
    return await findUser(ctx, ns.ownerId);
  } catch {
    return actor;
  }
}
