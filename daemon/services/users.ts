/** Users: create, update, delete, block, sign in, personal access tokens. */
import { and, eq, ne, sql } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { members, namespaces, personalAccessTokens, projects, users, type UserRow } from '../db/schema.js';
import { conflict, notFound, validationError } from '../errors.js';
import { hashPassword, hashToken, randomToken, verifyPassword } from '../secrets.js';
import { getSettings } from './settings.js';

/** Parameters of POST /users and PUT /users/:id. */
export interface UserParams {
  email?: string;
  password?: string;
  username?: string;
  name?: string;
  skype?: string;
  linkedin?: string;
  twitter?: string;
  website_url?: string;
  organization?: string;
  projects_limit?: number;
  bio?: string;
  location?: string;
  admin?: boolean;
  can_create_group?: boolean;
  external?: boolean;
  confirm?: boolean;
}

/** Usernames and group paths: letters, digits, _, -, . ; not starting with - or ., not ending in .git or .atom. */
export const PATH_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
/** Whether a string is usable as a namespace or project path. */
export function validPath(path: string): boolean {
  return PATH_PATTERN.test(path) && !/\.(git|atom)$/i.test(path) && path.length <= 255;
}

function validate(ctx: AppContext, p: UserParams, existingId: number | null): void {
  const errors: Record<string, string[]> = {};
  const err = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (p.email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(p.email)) err('email', 'is invalid');
  if (p.password !== undefined && p.password.length < 8) err('password', 'is too short (minimum is 8 characters)');
  if (p.username !== undefined && !validPath(p.username)) {
    err('username', 'can contain only letters, digits, \'_\', \'-\' and \'.\'. Cannot start with \'-\' or end in \'.\', \'.git\' or \'.atom\'.');
  }
  if (p.name !== undefined && p.name.length > 255) err('name', 'is too long (maximum is 255 characters)');
  if (p.bio !== undefined && p.bio.length > 255) err('bio', 'is too long (maximum is 255 characters)');
  if (p.projects_limit !== undefined && p.projects_limit < 0) err('projects_limit', 'must be greater than or equal to 0');
  if (Object.keys(errors).length) throw validationError(errors);

  const idCond = existingId === null ? sql`1` : ne(users.id, existingId);
  if (p.email !== undefined && ctx.db.select({ id: users.id }).from(users).where(and(eq(users.email, p.email), idCond)).get()) {
    throw conflict('Email has already been taken');
  }
  if (p.username !== undefined) {
    const taken =
      ctx.db.select({ id: users.id }).from(users).where(and(eq(users.username, p.username), idCond)).get() ||
      ctx.db
        .select({ id: namespaces.id })
        .from(namespaces)
        .where(and(eq(namespaces.path, p.username), existingId === null ? sql`1` : sql`NOT (${namespaces.kind} = 'user' AND ${namespaces.ownerId} = ${existingId})`))
        .get();
    if (taken) throw conflict('Username has already been taken');
  }
}

/** Create a user and their personal namespace in one transaction. */
export async function createUser(ctx: AppContext, p: UserParams & { email: string; password: string; username: string; name: string }): Promise<UserRow> {
  validate(ctx, p, null);
  const passwordHash = await hashPassword(p.password);
  const salt = randomToken(24);
  const t = now();
  return ctx.db.transaction((tx) => {
    validate(ctx, p, null); // re-check inside the transaction: the password hash yielded the event loop
    const user = tx
      .insert(users)
      .values({
        email: p.email, username: p.username, name: p.name, passwordHash,
        privateTokenSalt: salt, privateTokenHash: hashToken(ctx.secrets.derive('private', salt)),
        isAdmin: p.admin ?? false, bio: p.bio ?? null, location: p.location ?? null, skype: p.skype ?? '',
        linkedin: p.linkedin ?? '', twitter: p.twitter ?? '', websiteUrl: p.website_url ?? '', organization: p.organization ?? null,
        projectsLimit: p.projects_limit ?? getSettings(ctx).defaultProjectsLimit, canCreateGroup: p.can_create_group ?? true,
        external: p.external ?? false, confirmedAt: p.confirm === false ? null : t, createdAt: t, updatedAt: t,
      })
      .returning()
      .get();
    tx.insert(namespaces).values({ name: p.username, path: p.username, kind: 'user', ownerId: user.id, createdAt: t, updatedAt: t }).run();
    return user;
  });
}

/** Update a user (admin); renaming the username renames the personal namespace too. */
export async function updateUser(ctx: AppContext, user: UserRow, p: UserParams): Promise<UserRow> {
  validate(ctx, p, user.id);
  const passwordHash = p.password !== undefined ? await hashPassword(p.password) : undefined;
  const t = now();
  return ctx.db.transaction((tx) => {
    validate(ctx, p, user.id);
    const set: Partial<UserRow> = { updatedAt: t };
    if (p.email !== undefined) set.email = p.email;
    if (p.username !== undefined) set.username = p.username;
    if (p.name !== undefined) set.name = p.name;
    if (passwordHash) set.passwordHash = passwordHash;
    if (p.skype !== undefined) set.skype = p.skype;
    if (p.linkedin !== undefined) set.linkedin = p.linkedin;
    if (p.twitter !== undefined) set.twitter = p.twitter;
    if (p.website_url !== undefined) set.websiteUrl = p.website_url;
    if (p.organization !== undefined) set.organization = p.organization;
    if (p.projects_limit !== undefined) set.projectsLimit = p.projects_limit;
    if (p.bio !== undefined) set.bio = p.bio;
    if (p.location !== undefined) set.location = p.location;
    if (p.admin !== undefined) set.isAdmin = p.admin;
    if (p.can_create_group !== undefined) set.canCreateGroup = p.can_create_group;
    if (p.external !== undefined) set.external = p.external;
    const updated = tx.update(users).set(set).where(eq(users.id, user.id)).returning().get();
    if (p.username !== undefined && p.username !== user.username) {
      tx.update(namespaces)
        .set({ name: p.username, path: p.username, updatedAt: t })
        .where(and(eq(namespaces.kind, 'user'), eq(namespaces.ownerId, user.id)))
        .run();
    }
    return updated;
  });
}

/** Find a user by id or 404 `404 User Not Found`. */
export function findUser(ctx: AppContext, id: number, message = 'User'): UserRow {
  const user = ctx.db.select().from(users).where(eq(users.id, id)).get();
  if (!user) throw notFound(message);
  return user;
}

/**
 * Delete a user, their personal projects and memberships. A user who is the sole owner of a group is not
 * deleted (GitLab 8.x); the caller still gets the record.
 * @returns the ids of deleted projects, so storage (repositories) can be removed by the caller.
 */
export function deleteUser(ctx: AppContext, user: UserRow): { deleted: boolean; projectIds: number[] } {
  const soleOwner = ctx.db.$client
    .prepare(
      `SELECT 1 FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND m.access_level = 50
       AND (SELECT COUNT(*) FROM members o WHERE o.source_type = 'Namespace' AND o.source_id = m.source_id AND o.access_level = 50) = 1 LIMIT 1`,
    )
    .get(user.id);
  if (soleOwner) return { deleted: false, projectIds: [] };
  return ctx.db.transaction((tx) => {
    const ns = tx.select().from(namespaces).where(and(eq(namespaces.kind, 'user'), eq(namespaces.ownerId, user.id))).get();
    const owned = ns ? tx.select({ id: projects.id }).from(projects).where(eq(projects.namespaceId, ns.id)).all().map((r) => r.id) : [];
    for (const id of owned) {
      tx.delete(members).where(and(eq(members.sourceType, 'Project'), eq(members.sourceId, id))).run();
      tx.update(projects).set({ forkedFromId: null }).where(eq(projects.forkedFromId, id)).run();
      tx.delete(projects).where(eq(projects.id, id)).run();
    }
    if (ns) tx.delete(namespaces).where(eq(namespaces.id, ns.id)).run();
    tx.delete(users).where(eq(users.id, user.id)).run();
    return { deleted: true, projectIds: owned };
  });
}

/** Block or unblock a user. */
export function setUserState(ctx: AppContext, user: UserRow, state: 'active' | 'blocked'): void {
  ctx.db.update(users).set({ state, updatedAt: now() }).where(eq(users.id, user.id)).run();
}

/** Sign in by username or email (case-insensitive) and password; null when either is wrong or the user is blocked. */
export async function signIn(ctx: AppContext, login: string, password: string): Promise<UserRow | null> {
  const user = ctx.db
    .select()
    .from(users)
    .where(login.includes('@') ? eq(users.email, login) : eq(users.username, login))
    .get();
  // Verify against a dummy hash when the user is unknown, so timing does not reveal which usernames exist.
  const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
  if (!user || !ok || user.state !== 'active') return null;
  const t = now();
  ctx.db.update(users).set({ lastSignInAt: user.currentSignInAt ?? t, currentSignInAt: t }).where(eq(users.id, user.id)).run();
  return { ...user, lastSignInAt: user.currentSignInAt ?? t, currentSignInAt: t };
}
const DUMMY_HASH = 'scrypt$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** Create a personal access token; the secret is returned once and stored only as its hash. */
export function createPersonalAccessToken(ctx: AppContext, user: UserRow, name: string, expiresAt: string | null) {
  const token = randomToken(24);
  const row = ctx.db
    .insert(personalAccessTokens)
    .values({ userId: user.id, name, tokenHash: hashToken(token), expiresAt, createdAt: now() })
    .returning()
    .get();
  return { row, token };
}
