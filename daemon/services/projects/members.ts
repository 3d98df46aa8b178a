/**
 * Members of projects and groups (GitLab 8.12 lib/api/members.rb semantics): list, show, add, update, remove.
 * Callers resolve the source with the read or admin ability first; removal checks its own rules here.
 * Everything runs on the data layer (ctx.data), on SQLite and PostgreSQL alike.
 */
import { memberSystemData, queueSystemHooks } from '../hooks/system-hooks.js';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import type { Queries } from '../../db/layer/types.js';
import type { MemberRow, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.js';
import { conflict, forbidden, notFound, notFoundMessage, unprocessable, validationError } from '../../errors.js';
import { canGroup, canProjectAsync, DEVELOPER, GUEST, MASTER, OWNER, REPORTER } from '../../policy/permissions.js';
import { recordEvent } from '../instance/events.js';
import type { Listing } from '../users/groups.js';
import { findUser } from '../users/users.js';
import {
  deleteAccessRequestOf, deleteMemberRow, groupMemberIdsAt, insertMember, memberWithUser, membersListing, updateMemberRow,
  type MemberWithUser, type SourceKey,
} from '../../db/members.js';
import { namespaceById } from '../../db/projects.js';

/** What members belong to: a project or a group. */
export type MemberSource = { kind: 'project'; project: ProjectRow } | { kind: 'group'; group: NamespaceRow };

export type { MemberWithUser };

/** Parameters of POST and PUT members. */
export interface MemberParams {
  access_level: number;
  /** YYYY-MM-DD; null or '' clears it (PUT). */
  expires_at?: string | null;
}

/** Levels a member may hold: projects 10-40 (owner comes from the namespace), groups 10-50. */
const LEVELS = { project: [GUEST, REPORTER, DEVELOPER, MASTER], group: [GUEST, REPORTER, DEVELOPER, MASTER, OWNER] };

/** The source's `source_type` and `source_id`. */
export const sourceArgs = (s: MemberSource): SourceKey => (s.kind === 'project' ? ['Project', s.project.id] : ['Namespace', s.group.id]);

/** Direct members of a source, optionally searched by name, email or username; ordered by membership id. */
export function listMembers(ctx: AppContext, source: MemberSource, query?: string): Listing<MemberWithUser> {
  return membersListing(sourceArgs(source), query);
}

/** The membership of `userId` in a source, or null. */
export async function memberOf(ctx: AppContext, source: MemberSource, userId: number, q: Queries = ctx.data): Promise<MemberWithUser | null> {
  if (!Number.isSafeInteger(userId) || Math.abs(userId) > 2147483647) return null; // beyond PostgreSQL's integer ids
  return memberWithUser(q, sourceArgs(source), userId);
}

/** The membership of `userId`, or 404 `404 Not found`. */
export async function getMember(ctx: AppContext, source: MemberSource, userId: number): Promise<MemberWithUser> {
  const found = await memberOf(ctx, source, userId);
  if (!found) throw notFoundMessage('404 Not found');
  return found;
}

/** 422 `Access level is not known` unless the level is allowed for the source. */
export function checkLevel(source: MemberSource, level: number): void {
  if (!LEVELS[source.kind].includes(level)) throw unprocessable('Access level is not known');
}

/** A valid YYYY-MM-DD date, null to clear, undefined when not given; 400 with the validation hash otherwise. */
function expiresAt(value: string | null | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  const ok = /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
  if (!ok) throw validationError({ expires_at: ['is not a valid date (YYYY-MM-DD)'] });
  return value;
}

/** Whether the user owns the personal namespace of a project (that member cannot be removed). */
async function isProjectOwner(ctx: AppContext, project: ProjectRow, userId: number): Promise<boolean> {
  const ns = await namespaceById(ctx.data, project.namespaceId);
  return !!ns && ns.kind === 'user' && ns.ownerId === userId;
}

/** Whether `userId` is the only owner of a group. */
async function isLastOwner(ctx: AppContext, group: NamespaceRow, userId: number): Promise<boolean> {
  const owners = await groupMemberIdsAt(ctx.data, group.id, OWNER);
  return owners.length === 1 && owners[0] === userId;
}

/**
 * Insert a membership inside a transaction (`tx`), with the `joined` event of a project; a pending access request of
 * the user for the source goes (a member is no longer a requester). Returns null when the user is a member already
 * (`ifAbsent`: the unique index is then not an error); otherwise a duplicate throws the unique violation.
 */
export async function insertMemberIn(
  tx: Queries, source: MemberSource, userId: number, level: number, expires: string | null, actorId: number, t: string, ifAbsent = false,
): Promise<MemberRow | null> {
  const key = sourceArgs(source);
  const row = await insertMember(tx, key, userId, level, expires, actorId, t, ifAbsent);
  if (!row) return null;
  await deleteAccessRequestOf(tx, key, userId);
  if (source.kind === 'project') await recordEvent(tx, { projectId: source.project.id, authorId: userId, action: 'joined' });
  await queueSystemHooks(tx, () => memberSystemData(tx, row.id, 'create'));
  return row;
}

/**
 * Add a member. Project: an existing member is returned unchanged (GitLab 8.12); group: 409 `Member already
 * exists`. Unknown user: 404 `User Not Found`; bad level: 422. Records a `joined` event for projects.
 */
export async function addMember(ctx: AppContext, actor: UserRow, source: MemberSource, userId: number, p: MemberParams): Promise<MemberWithUser> {
  const existing = await memberOf(ctx, source, userId);
  if (existing) {
    if (source.kind === 'group') throw conflict('Member already exists');
    return existing;
  }
  const user = await findUser(ctx, userId);
  checkLevel(source, p.access_level);
  const expires = expiresAt(p.expires_at) ?? null;
  const t = now();
  let member: MemberRow;
  try {
    member = await ctx.data.transaction(async (tx) => (await insertMemberIn(tx, source, user.id, p.access_level, expires, actor.id, t))!);
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('User'); // the user was deleted meanwhile
    // Added by another request since the check above (the unique index is the last guard): answer as if seen then.
    if (!isUniqueViolation(e)) throw e;
    if (source.kind === 'group') throw conflict('Member already exists');
    const added = await memberOf(ctx, source, userId);
    if (!added) throw e;
    return added;
  }
  return { member, user };
}

/** Change a member's access level (and expiry). 404 `404 Not found` when not a member; 422 for a bad level. */
export async function updateMember(ctx: AppContext, source: MemberSource, userId: number, p: MemberParams): Promise<MemberWithUser> {
  const found = await getMember(ctx, source, userId);
  checkLevel(source, p.access_level);
  const expires = expiresAt(p.expires_at);
  // Demoting the last owner would leave a group nobody but an admin can manage.
  if (source.kind === 'group' && p.access_level < OWNER && (await isLastOwner(ctx, source.group, userId))) throw forbidden();
  const row = await updateMemberRow(ctx.data, found.member.id, p.access_level, expires, now());
  // A membership removed meanwhile: as if it had not been found.
  if (!row) throw notFoundMessage('404 Not found');
  return { member: row, user: found.user };
}

/**
 * Remove a member: allowed to those who administer the source's members and to a user removing themself; never
 * the owner of a personal project's namespace nor a group's last owner (403). Returns null for a project user who
 * is not a member (GitLab answers `Access revoked`); a group non-member is 404 `404 Member: user_id:<id> Not Found`.
 */
export async function removeMember(ctx: AppContext, actor: UserRow, source: MemberSource, userId: number): Promise<MemberWithUser | null> {
  const found = await memberOf(ctx, source, userId);
  if (!found) {
    if (source.kind === 'group') throw notFoundMessage(`404 Member: user_id:${userId} Not Found`);
    return null;
  }
  const self = actor.id === userId;
  if (source.kind === 'project') {
    if (await isProjectOwner(ctx, source.project, userId)) throw forbidden();
    if (!self && !(await canProjectAsync(ctx, actor, 'admin_project_member', source.project))) throw forbidden();
  } else {
    if (await isLastOwner(ctx, source.group, userId)) throw forbidden();
    if (!self && !(await canGroup(ctx, actor, 'admin_group_member', source.group))) throw forbidden();
  }
  await ctx.data.transaction(async (tx) => {
    await queueSystemHooks(tx, () => memberSystemData(tx, found.member.id, 'destroy'));
    await deleteMemberRow(tx, found.member.id);
    if (source.kind === 'project') await recordEvent(tx, { projectId: source.project.id, authorId: userId, action: 'left' });
  });
  return found;
}
