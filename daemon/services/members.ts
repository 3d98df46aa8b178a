/**
 * Members of projects and groups (GitLab 8.12 lib/api/members.rb semantics): list, show, add, update, remove.
 * Callers resolve the source with the read or admin ability first; removal checks its own rules here.
 */
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { members, users, type MemberRow, type NamespaceRow, type ProjectRow, type UserRow } from '../db/schema.js';
import { conflict, forbidden, notFoundMessage, unprocessable, validationError } from '../errors.js';
import { canGroup, canProject, DEVELOPER, GUEST, MASTER, OWNER, REPORTER } from '../policy/permissions.js';
import { recordEvent } from './events.js';
import type { Listing } from './groups.js';
import { projectNamespace } from './projects.js';
import { findUser } from './users.js';
import { likePattern } from '../db/sql.js';

/** What members belong to: a project or a group. */
export type MemberSource = { kind: 'project'; project: ProjectRow } | { kind: 'group'; group: NamespaceRow };

/** A membership with its user. */
export interface MemberWithUser {
  member: MemberRow;
  user: UserRow;
}

/** Parameters of POST and PUT members. */
export interface MemberParams {
  access_level: number;
  /** YYYY-MM-DD; null or '' clears it (PUT). */
  expires_at?: string | null;
}

/** Levels a member may hold: projects 10-40 (owner comes from the namespace), groups 10-50. */
const LEVELS = { project: [GUEST, REPORTER, DEVELOPER, MASTER], group: [GUEST, REPORTER, DEVELOPER, MASTER, OWNER] };

const sourceCond = (s: MemberSource): SQL =>
  s.kind === 'project'
    ? and(eq(members.sourceType, 'Project'), eq(members.sourceId, s.project.id))!
    : and(eq(members.sourceType, 'Namespace'), eq(members.sourceId, s.group.id))!;

/** Direct members of a source, optionally searched by name, email or username; ordered by membership id. */
export function listMembers(ctx: AppContext, source: MemberSource, query?: string): Listing<MemberWithUser> {
  let where = sourceCond(source);
  if (query) {
    const pattern = likePattern(query);
    where = and(where, sql`(${users.name} LIKE ${pattern} ESCAPE '\\' OR ${users.email} LIKE ${pattern} ESCAPE '\\' OR ${users.username} LIKE ${pattern} ESCAPE '\\')`)!;
  }
  return {
    count: () => ctx.db.select({ n: sql<number>`count(*)` }).from(members).innerJoin(users, eq(users.id, members.userId)).where(where).get()!.n,
    fetch: (limit, offset) =>
      ctx.db.select({ member: members, user: users }).from(members).innerJoin(users, eq(users.id, members.userId)).where(where)
        .orderBy(asc(members.id)).limit(limit).offset(offset).all(),
  };
}

/** The membership of `userId` in a source, or null. */
export function memberOf(ctx: AppContext, source: MemberSource, userId: number): MemberWithUser | null {
  return ctx.db.select({ member: members, user: users }).from(members).innerJoin(users, eq(users.id, members.userId))
    .where(and(sourceCond(source), eq(members.userId, userId))).get() ?? null;
}

/** The membership of `userId`, or 404 `404 Not found`. */
export function getMember(ctx: AppContext, source: MemberSource, userId: number): MemberWithUser {
  const found = memberOf(ctx, source, userId);
  if (!found) throw notFoundMessage('404 Not found');
  return found;
}

/** 422 `Access level is not known` unless the level is allowed for the source. */
function checkLevel(source: MemberSource, level: number): void {
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
function isProjectOwner(ctx: AppContext, project: ProjectRow, userId: number): boolean {
  const ns = projectNamespace(ctx, project);
  return ns.kind === 'user' && ns.ownerId === userId;
}

/** Whether `userId` is the only owner of a group. */
function isLastOwner(ctx: AppContext, group: NamespaceRow, userId: number): boolean {
  const owners = ctx.db.select({ userId: members.userId }).from(members)
    .where(and(eq(members.sourceType, 'Namespace'), eq(members.sourceId, group.id), eq(members.accessLevel, OWNER))).all();
  return owners.length === 1 && owners[0]!.userId === userId;
}

/**
 * Add a member. Project: an existing member is returned unchanged (GitLab 8.12); group: 409 `Member already
 * exists`. Unknown user: 404 `User Not Found`; bad level: 422. Records a `joined` event for projects.
 */
export function addMember(ctx: AppContext, actor: UserRow, source: MemberSource, userId: number, p: MemberParams): MemberWithUser {
  const existing = memberOf(ctx, source, userId);
  if (existing) {
    if (source.kind === 'group') throw conflict('Member already exists');
    return existing;
  }
  const user = findUser(ctx, userId);
  checkLevel(source, p.access_level);
  const expires = expiresAt(p.expires_at) ?? null;
  const t = now();
  const member = ctx.db.transaction((tx) => {
    const row = tx.insert(members).values({
      sourceType: source.kind === 'project' ? 'Project' : 'Namespace', sourceId: source.kind === 'project' ? source.project.id : source.group.id,
      userId: user.id, accessLevel: p.access_level, expiresAt: expires, createdById: actor.id, createdAt: t, updatedAt: t,
    }).returning().get();
    if (source.kind === 'project') recordEvent(tx, { projectId: source.project.id, authorId: user.id, action: 'joined' });
    return row;
  });
  return { member, user };
}

/** Change a member's access level (and expiry). 404 `404 Not found` when not a member; 422 for a bad level. */
export function updateMember(ctx: AppContext, source: MemberSource, userId: number, p: MemberParams): MemberWithUser {
  const found = getMember(ctx, source, userId);
  checkLevel(source, p.access_level);
  const expires = expiresAt(p.expires_at);
  // Demoting the last owner would leave a group nobody but an admin can manage.
  if (source.kind === 'group' && p.access_level < OWNER && isLastOwner(ctx, source.group, userId)) throw forbidden();
  const set: Partial<MemberRow> = { accessLevel: p.access_level, updatedAt: now() };
  if (expires !== undefined) set.expiresAt = expires;
  const member = ctx.db.update(members).set(set).where(eq(members.id, found.member.id)).returning().get();
  return { member, user: found.user };
}

/**
 * Remove a member: allowed to those who administer the source's members and to a user removing themself; never
 * the owner of a personal project's namespace nor a group's last owner (403). Returns null for a project user who
 * is not a member (GitLab answers `Access revoked`); a group non-member is 404 `404 Member: user_id:<id> Not Found`.
 */
export function removeMember(ctx: AppContext, actor: UserRow, source: MemberSource, userId: number): MemberWithUser | null {
  const found = memberOf(ctx, source, userId);
  if (!found) {
    if (source.kind === 'group') throw notFoundMessage(`404 Member: user_id:${userId} Not Found`);
    return null;
  }
  const self = actor.id === userId;
  if (source.kind === 'project') {
    if (isProjectOwner(ctx, source.project, userId)) throw forbidden();
    if (!self && !canProject(ctx, actor, 'admin_project_member', source.project)) throw forbidden();
  } else {
    if (isLastOwner(ctx, source.group, userId)) throw forbidden();
    if (!self && !canGroup(ctx, actor, 'admin_group_member', source.group)) throw forbidden();
  }
  ctx.db.transaction((tx) => {
    tx.delete(members).where(eq(members.id, found.member.id)).run();
    if (source.kind === 'project') recordEvent(tx, { projectId: source.project.id, authorId: userId, action: 'left' });
  });
  return found;
}

