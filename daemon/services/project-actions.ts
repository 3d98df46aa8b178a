/**
 * Project toggles and links: star, archive, group shares, the fork link, and the fork itself. Callers have already
 * authorized. Everything runs on the data layer (either engine); each write carries its own check (a conditional
 * statement, a unique index or a recheck in its transaction), so two requests at once, on one daemon or two, get the
 * answers one after the other would get, and a project deleted meanwhile answers 404.
 */
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import type { NamespaceRow, ProjectGroupLinkRow, ProjectRow, UserRow } from '../db/schema.js';
import { toNamespace, toProject, toProjectGroupLink } from '../db/rows.js';
import type { Queries } from '../db/layer/types.js';
import { isForeignKeyViolation } from '../db/layer/errors.js';
import { ApiError, badRequestMessage, conflict, invalidParam, notFound } from '../errors.js';
import { canGroup, GUEST, MASTER } from '../policy/permissions.js';
import { validDate } from '../dates.js';
import { createProject, deleteProjectRows, type ProjectParams } from './projects.js';
import { restrictedVisibilityLevelsAsync } from './settings.js';
import { findUser } from './users.js';
import { removeProjectStorage, storageForked } from './storage.js';

/** An id as PostgreSQL's integer columns take it (a larger number matches no row on either engine). */
const dbId = (n: number) => (Number.isSafeInteger(n) && n > 0 && n <= 2147483647 ? n : 0);

/** Whether the project row still exists (it was deleted by another request when not). */
async function projectExists(q: Queries, projectId: number): Promise<boolean> {
  return (await q.get('SELECT id FROM projects WHERE id = ?', [projectId])) !== undefined;
}

/**
 * Star a project for a user; false when it was already starred (two stars at once: one true, one false, through the
 * primary key). 404 when the project was deleted meanwhile.
 */
export async function starProject(ctx: AppContext, user: UserRow, project: ProjectRow): Promise<boolean> {
  try {
    const r = await ctx.data.run(
      'INSERT INTO stars (user_id, project_id, created_at) VALUES (?, ?, ?) ON CONFLICT (user_id, project_id) DO NOTHING',
      [user.id, project.id, now()],
    );
    return r.changes > 0;
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
}

/** Remove a user's star; false when it was not starred. */
export async function unstarProject(ctx: AppContext, user: UserRow, project: ProjectRow): Promise<boolean> {
  return (await ctx.data.run('DELETE FROM stars WHERE user_id = ? AND project_id = ?', [user.id, project.id])).changes > 0;
}

/** Archive or unarchive a project (idempotent); returns the current row; 404 when it was deleted meanwhile. */
export async function setProjectArchived(ctx: AppContext, project: ProjectRow, archived: boolean): Promise<ProjectRow> {
  if (project.archived === archived) return project;
  const raw = await ctx.data.get<Record<string, unknown>>(
    'UPDATE projects SET archived = ?, updated_at = ? WHERE id = ? RETURNING *', [archived, now(), project.id],
  );
  if (!raw) throw notFound('Project');
  return toProject(raw);
}

/**
 * Remove the fork link of a project: the row without it, or null when it was not a fork (one conditional UPDATE: of
 * two removals at once, one gets the row and one null). 404 when the project was deleted meanwhile.
 */
export async function removeForkLink(ctx: AppContext, project: ProjectRow): Promise<ProjectRow | null> {
  if (project.forkedFromId === null) return null;
  const raw = await ctx.data.get<Record<string, unknown>>(
    'UPDATE projects SET forked_from_id = NULL, updated_at = ? WHERE id = ? AND forked_from_id IS NOT NULL RETURNING *', [now(), project.id],
  );
  if (raw) return toProject(raw);
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
  let raw: Record<string, unknown> | undefined;
  try {
    raw = await ctx.data.get<Record<string, unknown>>(
      'UPDATE projects SET forked_from_id = ?, updated_at = ? WHERE id = ? AND forked_from_id IS NULL RETURNING *', [source.id, now(), project.id],
    );
  } catch (e) {
    // the source was deleted meanwhile
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
  if (raw) return toProject(raw);
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
  const raw = await ctx.data.get<Record<string, unknown>>(`SELECT * FROM namespaces WHERE id = ? AND kind = 'group'`, [dbId(p.group_id)]);
  const group = raw ? toNamespace(raw) : undefined;
  if (!group || !(await canGroup(ctx, actor, 'read_group', group))) throw notFound('Group');
  const own = toNamespace((await ctx.data.get<Record<string, unknown>>('SELECT * FROM namespaces WHERE id = ?', [project.namespaceId]))!);
  if (sharingLocked(own)) throw shareLocked();
  if (p.expires_at !== undefined && !validDate(p.expires_at)) throw invalidParam('expires_at');
  // Project-level access stops at master (GitLab's Gitlab::Access.values): a share never grants ownership.
  if (!Number.isInteger(p.group_access) || p.group_access < GUEST || p.group_access > MASTER || p.group_access % 10 !== 0) {
    throw conflict('Group access is not included in the list');
  }
  if (group.id === project.namespaceId) throw conflict('Project cannot be shared with the group it is in.');
  const t = now();
  let inserted: Record<string, unknown> | undefined;
  try {
    inserted = await ctx.data.transaction(async (tx) => {
      const lock = tx.dialect.name === 'postgres' ? ' FOR SHARE' : '';
      const nsNow = await tx.get<Record<string, unknown>>(`SELECT * FROM namespaces WHERE id = ?${lock}`, [project.namespaceId]);
      if (!nsNow) throw notFound('Project');
      if (sharingLocked(toNamespace(nsNow))) throw shareLocked();
      return tx.get<Record<string, unknown>>(
        `INSERT INTO project_group_links (project_id, group_id, group_access, expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (project_id, group_id) DO NOTHING RETURNING *`,
        [project.id, group.id, p.group_access, p.expires_at ?? null, t, t],
      );
    });
  } catch (e) {
    if (!isForeignKeyViolation(e)) throw e;
    throw notFound((await projectExists(ctx.data, project.id)) ? 'Group' : 'Project');
  }
  if (!inserted) throw conflict('Group already shared with this group');
  return toProjectGroupLink(inserted);
}
const sharingLocked = (ns: NamespaceRow) => ns.kind === 'group' && ns.shareWithGroupLock;
const shareLocked = () => badRequestMessage('The project sharing with group is disabled');

/** Remove a project's share with a group; 404 `Group Link Not Found` when there is none. */
export async function unshareProject(ctx: AppContext, project: ProjectRow, groupId: number): Promise<void> {
  const r = await ctx.data.run('DELETE FROM project_group_links WHERE project_id = ? AND group_id = ?', [project.id, dbId(groupId)]);
  if (r.changes === 0) throw notFound('Group Link');
}

/**
 * The namespace a fork goes to: `namespace` (id, path or name) when given, else the actor's own; 404 `Target Namespace`
 * when it does not exist or the actor cannot create projects in it.
 */
export async function forkTargetNamespace(ctx: AppContext, actor: UserRow, namespace: string | undefined): Promise<NamespaceRow> {
  const d = ctx.data.dialect;
  let raw: Record<string, unknown> | undefined;
  if (namespace === undefined || namespace === '') {
    raw = await ctx.data.get(`SELECT * FROM namespaces WHERE kind = 'user' AND owner_id = ?`, [actor.id]);
    // the actor's own namespace is gone only when the actor was deleted meanwhile
    if (!raw) throw notFound('Target Namespace');
    return toNamespace(raw);
  }
  raw = /^\d+$/.test(namespace)
    ? await ctx.data.get('SELECT * FROM namespaces WHERE id = ?', [dbId(Number(namespace))])
    : await ctx.data.get(
      `SELECT * FROM namespaces WHERE ${d.nocaseEq('path')} OR ${d.nocaseEq('name')} ORDER BY CASE WHEN path = ? THEN 0 ELSE 1 END LIMIT 1`,
      [namespace, namespace, namespace],
    );
  const ns = raw ? toNamespace(raw) : undefined;
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
  return (await ctx.data.get('SELECT id FROM projects WHERE id = ? AND runners_token_salt = ?', [source.id, source.runnersTokenSalt])) !== undefined;
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
