/** Users: create, update, delete, block, sign in, personal access tokens. */
import { and, asc, eq, inArray, ne, sql, type SQL } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import {
  namespaces, personalAccessTokens, projects, users, type PersonalAccessTokenRow, type ProjectRow, type UserRow,
} from '../db/schema.js';
import { conflict, notFound, validationError } from '../errors.js';
import { hashPassword, hashToken, randomToken, verifyPassword } from '../secrets.js';
import { deleteProjectRows } from './projects.js';
import { getSettings } from './settings.js';
import { signInThrottle, userKey } from '../policy/sign-in-throttle.js';
import { likePattern } from '../db/sql.js';
import { idOrderedPage } from '../db/keyset.js';

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

/** Project paths: letters, digits, _, -, . ; not starting with - or ., not ending in .git or .atom. */
export const PATH_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
/** Whether a string is usable as a project path (GitLab's project_path_regex, minus a leading '.'). */
export function validPath(path: string): boolean {
  return PATH_PATTERN.test(path) && !/\.(git|atom)$/i.test(path) && path.length <= 255;
}

/**
 * Top-level paths a user or group may not take: GitLab 8.12's NamespaceValidator list, plus the prefixes Gantry
 * serves itself (/api, /ci, /oauth), which would otherwise shadow `<namespace>/<project>.git` URLs.
 */
export const RESERVED_NAMESPACE_PATHS = new Set([
  '.well-known', 'admin', 'all', 'assets', 'ci', 'dashboard', 'files', 'groups', 'help', 'hooks', 'issues', 'merge_requests',
  'new', 'notes', 'profile', 'projects', 'public', 'repository', 'robots.txt', 's', 'search', 'services', 'snippets', 'teams',
  'u', 'unicorn_test', 'unsubscribes', 'uploads', 'users', 'api', 'oauth',
]);

/** Whether a string is usable as a username or group path: a valid path that does not end in '.' (GitLab's namespace_regex). */
export function validNamespacePath(path: string): boolean {
  return validPath(path) && !path.endsWith('.');
}

/** Whether a namespace path is reserved (case-insensitive). */
export function reservedNamespacePath(path: string): boolean {
  return RESERVED_NAMESPACE_PATHS.has(path.toLowerCase());
}

const EMAIL_PATTERN = /^[^@\s]+@[^@\s]+$/;

/** Field checks of a create or update: the ActiveRecord-style error hash (empty when fine). */
function fieldErrors(p: UserParams): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const err = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (p.email !== undefined && (!EMAIL_PATTERN.test(p.email) || p.email.length > 255)) err('email', 'is invalid');
  if (p.password !== undefined) {
    if (p.password.length < 8) err('password', 'is too short (minimum is 8 characters)');
    if (p.password.length > 128) err('password', 'is too long (maximum is 128 characters)');
  }
  if (p.username !== undefined) {
    if (!validNamespacePath(p.username)) {
      err('username', "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.");
    } else if (reservedNamespacePath(p.username)) err('username', `${p.username} is a reserved name`);
  }
  if (p.name !== undefined && p.name.length > 255) err('name', 'is too long (maximum is 255 characters)');
  if (p.bio !== undefined && p.bio.length > 255) err('bio', 'is too long (maximum is 255 characters)');
  if (p.projects_limit !== undefined && p.projects_limit < 0) err('projects_limit', 'must be greater than or equal to 0');
  for (const k of ['skype', 'linkedin', 'twitter', 'website_url', 'organization', 'location'] as const) {
    const v = p[k];
    if (v !== undefined && v.length > 255) err(k, 'is too long (maximum is 255 characters)');
  }
  return errors;
}

/**
 * Validate a create (existingId null) or an update. As GitLab 8.x, a taken email or username answers 409 before
 * any other validation error; a username may not be the path of any namespace (user or group) but the user's own.
 */
function validate(ctx: AppContext, p: UserParams, existingId: number | null): void {
  const idCond = existingId === null ? sql`1` : ne(users.id, existingId);
  if (p.email !== undefined && ctx.db.select({ id: users.id }).from(users).where(and(eq(users.email, p.email), idCond)).get()) {
    throw conflict('Email has already been taken');
  }
  if (p.username !== undefined) {
    const ownNamespace = existingId === null ? sql`1` : sql`NOT (${namespaces.kind} = 'user' AND ${namespaces.ownerId} = ${existingId})`;
    const taken =
      ctx.db.select({ id: users.id }).from(users).where(and(eq(users.username, p.username), idCond)).get() ||
      ctx.db.select({ id: namespaces.id }).from(namespaces).where(and(eq(namespaces.path, p.username), ownNamespace)).get();
    if (taken) throw conflict('Username has already been taken');
  }
  const errors = fieldErrors(p);
  if (Object.keys(errors).length) throw validationError(errors);
}

/** Create a user and their personal namespace in one transaction; projects_limit defaults to the settings' default. */
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
    if (p.confirm === true && !user.confirmedAt) set.confirmedAt = t;
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

/**
 * Find a user by id or 404 `404 User Not Found`. Gantry answers this one message for every unknown user id
 * (GitLab 8.12 said `404 Not found` on GET/PUT and `404 User Not Found` on DELETE/block: one form is clearer).
 */
export function findUser(ctx: AppContext, id: number, message = 'User'): UserRow {
  const user = Number.isSafeInteger(id) ? ctx.db.select().from(users).where(eq(users.id, id)).get() : undefined;
  if (!user) throw notFound(message);
  return user;
}

/** Filters of GET /users. */
export interface UserFilters {
  search?: string;
  active?: boolean;
  blocked?: boolean;
}

/** A count and a page fetcher over users, for paginate(); ordered by id. */
export function listUsers(ctx: AppContext, f: UserFilters): { count(): number; fetch(limit: number, offset: number, total?: number): UserRow[] } {
  const conds: SQL[] = [];
  if (f.search) {
    const pattern = likePattern(f.search);
    conds.push(sql`(${users.name} LIKE ${pattern} ESCAPE '\\' OR ${users.email} LIKE ${pattern} ESCAPE '\\' OR ${users.username} LIKE ${pattern} ESCAPE '\\')`);
  }
  if (f.active) conds.push(eq(users.state, 'active'));
  if (f.blocked) conds.push(eq(users.state, 'blocked'));
  const where = conds.length ? and(...conds) : undefined;
  return {
    count: () => ctx.db.select({ n: sql<number>`count(*)` }).from(users).where(where).get()!.n,
    fetch: (limit, offset, total) => idOrderedPage(ctx, 'users', where, false, limit, offset, total,
      (ids) => ctx.db.select().from(users).where(inArray(users.id, ids)).all()),
  };
}

/** Users with exactly this username (case-insensitive): GET /users?username=. */
export function usersByUsername(ctx: AppContext, username: string): UserRow[] {
  return ctx.db.select().from(users).where(eq(users.username, username)).all();
}

/** Whether the user is the only owner of some group (such a user is not deleted, as in GitLab 8.x). */
export function soleGroupOwner(ctx: AppContext, user: UserRow): boolean {
  return !!ctx.db.$client
    .prepare(
      `SELECT 1 FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND m.access_level = 50
       AND (SELECT COUNT(*) FROM members o WHERE o.source_type = 'Namespace' AND o.source_id = m.source_id AND o.access_level = 50) = 1 LIMIT 1`,
    )
    .get(user.id);
}

/**
 * Delete a user, their personal namespace and projects, memberships and tokens. A user who is the sole owner of a
 * group is not deleted (GitLab 8.x); the caller still gets the record.
 * @returns the ids of deleted projects, so storage (repositories) can be removed by the caller.
 */
export function deleteUser(ctx: AppContext, user: UserRow): { deleted: boolean; projectIds: number[] } {
  if (soleGroupOwner(ctx, user)) return { deleted: false, projectIds: [] };
  return ctx.db.transaction((tx) => {
    const ns = tx.select().from(namespaces).where(and(eq(namespaces.kind, 'user'), eq(namespaces.ownerId, user.id))).get();
    const owned: ProjectRow[] = ns ? tx.select().from(projects).where(eq(projects.namespaceId, ns.id)).all() : [];
    for (const project of owned) deleteProjectRows(ctx, project);
    if (ns) tx.delete(namespaces).where(eq(namespaces.id, ns.id)).run();
    // A group never disappears with a user (owner_id cascades), whatever wrote that column.
    tx.update(namespaces).set({ ownerId: null }).where(and(eq(namespaces.kind, 'group'), eq(namespaces.ownerId, user.id))).run();
    tx.delete(users).where(eq(users.id, user.id)).run();
    return { deleted: true, projectIds: owned.map((p) => p.id) };
  });
}

/** Block or unblock a user. A blocked user cannot sign in and none of their tokens authenticate. */
export function setUserState(ctx: AppContext, user: UserRow, state: 'active' | 'blocked'): void {
  ctx.db.update(users).set({ state, updatedAt: now() }).where(eq(users.id, user.id)).run();
}

/** Options of a sign-in. */
export interface SignInOptions {
  /** The client's address, for the per-address throttle (without it only the per-user one applies). */
  address?: string;
}

/**
 * Sign in by username or email (case-insensitive) and password; null when either is wrong or the user is blocked.
 * Throws SignInThrottled (429 with Retry-After) when the address or the user has failed too often
 * (policy/sign-in-throttle.ts); a throttled attempt checks no password.
 */
export async function signIn(ctx: AppContext, login: string, password: string, opts: SignInOptions = {}): Promise<UserRow | null> {
  const throttle = signInThrottle(ctx);
  throttle.checkAddress(opts.address);
  const user = ctx.db
    .select()
    .from(users)
    .where(login.includes('@') ? eq(users.email, login) : eq(users.username, login))
    .get();
  const key = userKey(login, user?.id);
  throttle.checkUser(key);
  // Verify against a dummy hash when the user is unknown, so timing does not reveal which usernames exist.
  const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
  // A wrong password counts toward the throttle; the right one of a blocked user is refused without counting.
  if (!user || !ok) {
    throttle.failed(opts.address, key);
    return null;
  }
  if (user.state !== 'active') return null;
  throttle.succeeded(opts.address, key);
  const t = now();
  ctx.db.update(users).set({ lastSignInAt: user.currentSignInAt ?? t, currentSignInAt: t }).where(eq(users.id, user.id)).run();
  return { ...user, lastSignInAt: user.currentSignInAt ?? t, currentSignInAt: t };
}
const DUMMY_HASH = 'scrypt$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** Today's date (UTC) as YYYY-MM-DD. */
const today = () => now().slice(0, 10);

/**
 * Whether a personal access token authenticates: not revoked and not expired. A token expires at the start
 * (00:00 UTC) of its expires_at day, as GitLab's `expires_at > now` on a date column.
 */
export function tokenActive(t: Pick<PersonalAccessTokenRow, 'revoked' | 'expiresAt'>): boolean {
  return !t.revoked && (t.expiresAt === null || t.expiresAt > today());
}

/** SQL condition of tokenActive() (the same rule, for lookups and lists). */
export function tokenActiveSql(): SQL {
  return sql`(${personalAccessTokens.revoked} = 0 AND (${personalAccessTokens.expiresAt} IS NULL OR ${personalAccessTokens.expiresAt} > ${today()}))`;
}

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

/** A count and a page fetcher over a user's personal access tokens, optionally only `active` or `inactive` ones. */
export function listPersonalAccessTokens(ctx: AppContext, user: UserRow, state?: 'active' | 'inactive') {
  const own = eq(personalAccessTokens.userId, user.id);
  const where = state === 'active' ? and(own, tokenActiveSql()) : state === 'inactive' ? and(own, sql`NOT ${tokenActiveSql()}`) : own;
  return {
    count: () => ctx.db.select({ n: sql<number>`count(*)` }).from(personalAccessTokens).where(where).get()!.n,
    fetch: (limit: number, offset: number) =>
      ctx.db.select().from(personalAccessTokens).where(where).orderBy(asc(personalAccessTokens.id)).limit(limit).offset(offset).all(),
  };
}

/** One of a user's personal access tokens, or 404 `404 Personal Access Token Not Found`. */
export function findPersonalAccessToken(ctx: AppContext, user: UserRow, tokenId: number): PersonalAccessTokenRow {
  const row = Number.isSafeInteger(tokenId)
    ? ctx.db.select().from(personalAccessTokens).where(and(eq(personalAccessTokens.id, tokenId), eq(personalAccessTokens.userId, user.id))).get()
    : undefined;
  if (!row) throw notFound('Personal Access Token');
  return row;
}

/** Revoke one of a user's personal access tokens (idempotent); it stops authenticating at once. */
export function revokePersonalAccessToken(ctx: AppContext, user: UserRow, tokenId: number): PersonalAccessTokenRow {
  const row = findPersonalAccessToken(ctx, user, tokenId);
  return ctx.db.update(personalAccessTokens).set({ revoked: true }).where(eq(personalAccessTokens.id, row.id)).returning().get();
}
