/**
 * Access requests to projects and groups (GitLab 8.13 lib/api/access_requests.rb, Members::RequestAccessService,
 * ApproveAccessRequestService, DestroyService with :requesters). A request is a row of `access_requests`, never of
 * `members`, so it gives no access anywhere; approval turns it into a membership through the members room
 * (insertMemberIn) in one transaction that deletes the request first: two approvals, or an approval and a withdrawal
 * at once (on one daemon or two), give one member and a 404 for the other, never an error.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import type { MemberRow, UserRow } from '../../db/schema.js';
import { forbidden, notFound, notFoundMessage, validationError } from '../../errors.js';
import { canRequestGroupAccess, canRequestProjectAccess } from '../../policy/access-requests.js';
import { canGroup, canProjectAsync, DEVELOPER } from '../../policy/permissions.js';
import type { Listing } from '../users/groups.js';
import { checkLevel, insertMemberIn, memberOf, type MemberSource, sourceArgs } from './members.js';
import {
  accessRequestOf, accessRequestsListing, deleteAccessRequest, insertAccessRequest, isMemberRow, type AccessRequestWithUser,
} from '../../db/members.js';

export type { AccessRequestWithUser };
const notFoundRequest = () => notFoundMessage('404 Not found');

/** Whether `actor` reviews the requests of a source: masters and owners of a project, owners of a group, admins. */
async function canManage(ctx: AppContext, actor: UserRow, source: MemberSource): Promise<boolean> {
  return source.kind === 'project'
    ? canProjectAsync(ctx, actor, 'admin_project_member', source.project)
    : canGroup(ctx, actor, 'admin_group_member', source.group);
}

/** The pending requests of a source, oldest first; 403 unless `actor` reviews them (8.13 AccessRequestsFinder#execute!). */
export async function listAccessRequests(ctx: AppContext, actor: UserRow, source: MemberSource): Promise<Listing<AccessRequestWithUser>> {
  if (!(await canManage(ctx, actor, source))) throw forbidden();
  return accessRequestsListing(sourceArgs(source));
}

/** The pending request of `userId` for a source, or null (ids beyond PostgreSQL's integers are never found). */
async function requestOf(ctx: AppContext, source: MemberSource, userId: number): Promise<AccessRequestWithUser | null> {
  if (!Number.isSafeInteger(userId) || Math.abs(userId) > 2147483647) return null;
  return accessRequestOf(ctx.data, sourceArgs(source), userId);
}

/**
 * `actor` asks to join a source: 403 when they may not (request_access_enabled off, not visible to non-members, a
 * member already, an admin on a project); 400 `{"user_id": ["already exists in source"]}` when they asked already.
 */
export async function requestAccess(ctx: AppContext, actor: UserRow, source: MemberSource): Promise<AccessRequestWithUser> {
  const allowed = source.kind === 'project'
    ? await canRequestProjectAccess(ctx, actor, source.project)
    : await canRequestGroupAccess(ctx, actor, source.group);
  if (!allowed) throw forbidden();
  const key = sourceArgs(source);
  const taken = () => validationError({ user_id: ['already exists in source'] });
  try {
    const row = await ctx.data.transaction(async (tx) => {
      // a membership given meanwhile (the check above read before it): a member does not request
      if (await isMemberRow(tx, key, actor.id)) throw forbidden();
      return insertAccessRequest(tx, key, actor.id, now());
    });
    if (!row) throw taken();
    return { request: row, user: actor };
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('User'); // the user was deleted meanwhile
    throw e;
  }
}

/**
 * Approve the request of `userId` with a level (default developer): 403 unless `actor` manages the source's members,
 * then 404 `404 Not found` when there is no request, 422 for a level the source does not have. The user becomes a member (the
 * request row deleted in the same transaction: of two approvals at once one finds no request and answers 404).
 */
export async function approveAccessRequest(
  ctx: AppContext, actor: UserRow, source: MemberSource, userId: number, level: number = DEVELOPER,
): Promise<{ member: MemberRow; user: UserRow }> {
  // the permission first (8.13 found the request first): who may not review learns nothing of who asked
  if (!(await canManage(ctx, actor, source))) throw forbidden();
  const found = await requestOf(ctx, source, userId);
  if (!found) throw notFoundRequest();
  checkLevel(source, level);
  try {
    const member = await ctx.data.transaction(async (tx) => {
      if (!(await deleteAccessRequest(tx, found.request.id))) throw notFoundRequest(); // approved, denied or withdrawn meanwhile
      return insertMemberIn(tx, source, userId, level, null, actor.id, now(), true);
    });
    if (member) return { member, user: found.user };
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
  }
  // made a member another way meanwhile: that membership answers
  const existing = await memberOf(ctx, source, userId);
  if (!existing) throw notFoundRequest();
  return existing;
}

/**
 * Deny a request (those who manage the source's members) or withdraw one's own: 403 for anyone else, then 404
 * `404 Not found` when there is no request of `userId` (a member is not a request). Returns the request that went.
 */
export async function removeAccessRequest(ctx: AppContext, actor: UserRow, source: MemberSource, userId: number): Promise<AccessRequestWithUser> {
  if (actor.id !== userId && !(await canManage(ctx, actor, source))) throw forbidden();
  const found = await requestOf(ctx, source, userId);
  if (!found) throw notFoundRequest();
  if (!(await deleteAccessRequest(ctx.data, found.request.id))) throw notFoundRequest();
  return found;
}

