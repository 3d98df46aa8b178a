/** Project toggles and links: star, archive, group shares and the fork link. Callers have already authorized. */
import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { namespaces, projectGroupLinks, projects, type ProjectGroupLinkRow, type ProjectRow, type UserRow } from '../db/schema.js';
import { badRequestMessage, conflict, invalidParam, notFound } from '../errors.js';
import { canGroup, GUEST, MASTER } from '../policy/permissions.js';
import { validDate } from '../dates.js';

/** Star a project for a user; false when it was already starred. */
export function starProject(ctx: AppContext, user: UserRow, project: ProjectRow): boolean {
  const r = ctx.db.$client.prepare(`INSERT OR IGNORE INTO stars (user_id, project_id, created_at) VALUES (?, ?, ?)`).run(user.id, project.id, now());
  return r.changes > 0;
}

/** Remove a user's star; false when it was not starred. */
export function unstarProject(ctx: AppContext, user: UserRow, project: ProjectRow): boolean {
  return ctx.db.$client.prepare(`DELETE FROM stars WHERE user_id = ? AND project_id = ?`).run(user.id, project.id).changes > 0;
}

/** Archive or unarchive a project (idempotent); returns the current row. */
export function setProjectArchived(ctx: AppContext, project: ProjectRow, archived: boolean): ProjectRow {
  if (project.archived === archived) return project;
  return ctx.db.update(projects).set({ archived, updatedAt: now() }).where(eq(projects.id, project.id)).returning().get()!;
}

/** Remove the fork link of a project; false when it was not a fork. */
export function removeForkLink(ctx: AppContext, project: ProjectRow): boolean {
  if (project.forkedFromId === null) return false;
  ctx.db.update(projects).set({ forkedFromId: null, updatedAt: now() }).where(eq(projects.id, project.id)).run();
  return true;
}

/** Parameters of POST /projects/:id/share. */
export interface ShareParams {
  group_id: number;
  group_access: number;
  expires_at?: string;
}

/**
 * Share a project with a group. 404 `Group Not Found` (absent or hidden from the actor); 400 when the project's group
 * locks sharing; 409 with the first validation message (bad access level, own group, already shared), as 8.x.
 */
export function shareProject(ctx: AppContext, actor: UserRow, project: ProjectRow, p: ShareParams): ProjectGroupLinkRow {
  const group = ctx.db.select().from(namespaces).where(and(eq(namespaces.id, p.group_id), eq(namespaces.kind, 'group'))).get();
  if (!group || !canGroup(ctx, actor, 'read_group', group)) throw notFound('Group');
  const own = ctx.db.select().from(namespaces).where(eq(namespaces.id, project.namespaceId)).get()!;
  if (own.kind === 'group' && own.shareWithGroupLock) throw badRequestMessage('The project sharing with group is disabled');
  if (p.expires_at !== undefined && !validDate(p.expires_at)) throw invalidParam('expires_at');
  // Project-level access stops at master (GitLab's Gitlab::Access.values): a share never grants ownership.
  if (!Number.isInteger(p.group_access) || p.group_access < GUEST || p.group_access > MASTER || p.group_access % 10 !== 0) {
    throw conflict('Group access is not included in the list');
  }
  if (group.id === project.namespaceId) throw conflict('Project cannot be shared with the group it is in.');
  const t = now();
  const inserted = ctx.db
    .insert(projectGroupLinks)
    .values({ projectId: project.id, groupId: group.id, groupAccess: p.group_access, expiresAt: p.expires_at ?? null, createdAt: t, updatedAt: t })
    .onConflictDoNothing()
    .returning()
    .get();
  if (!inserted) throw conflict('Group already shared with this group');
  return inserted;
}

/** Remove a project's share with a group; 404 `Group Link Not Found` when there is none. */
export function unshareProject(ctx: AppContext, project: ProjectRow, groupId: number): void {
  const r = ctx.db.delete(projectGroupLinks).where(and(eq(projectGroupLinks.projectId, project.id), eq(projectGroupLinks.groupId, groupId))).run();
  if (r.changes === 0) throw notFound('Group Link');
}

