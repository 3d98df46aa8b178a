/**
 * Who may ask to join a project or a group (GitLab 8.13 ProjectPolicy and GroupPolicy :request_access). Project: a
 * signed-in user who sees it as a non-member (public, or internal and not external), when its
 * `request_access_enabled` is on, and who has no access to it yet (not its owner, nor a member directly, through its
 * group or through a group share; admins count as owners). Group: public, or internal and not external, with
 * `request_access_enabled` on, and the user not a member. Who reviews requests is the members room's rule
 * (admin_project_member / admin_group_member); a request never gives access (requests are not member rows).
 */
import type { AppContext } from '../context.js';
import type { NamespaceRow, ProjectRow, UserRow } from '../db/schema.js';
import { groupAccessLevelAsync, INTERNAL, projectAccessLevelAsync, PUBLIC } from './permissions.js';

const seenByNonMember = (user: UserRow, visibility: number) => visibility === PUBLIC || (visibility === INTERNAL && !user.external);

/** Whether `user` may request access to `project`. */
export async function canRequestProjectAccess(ctx: Pick<AppContext, 'data'>, user: UserRow, project: ProjectRow): Promise<boolean> {
  if (user.state !== 'active' || user.isAdmin) return false;
  if (!project.requestAccessEnabled || !seenByNonMember(user, project.visibilityLevel)) return false;
  return (await projectAccessLevelAsync(ctx, user, project)) === 0;
}

/** Whether `user` may request access to `group`. */
export async function canRequestGroupAccess(ctx: Pick<AppContext, 'data'>, user: UserRow, group: NamespaceRow): Promise<boolean> {
  if (user.state !== 'active') return false;
  if (!group.requestAccessEnabled || !seenByNonMember(user, group.visibilityLevel)) return false;
  return (await groupAccessLevelAsync(ctx, user, group)) === 0;
}
