/** Users: create, update, delete, block, sign in, personal access tokens. */
import { queueMemberRemovals, queueSystemHooks, queueUserKeyRemovals, userSystemData } from '../hooks/system-hooks.js';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { NamespaceRow, PersonalAccessTokenRow, UserRow } from '../../db/schema.js';
import type { Queries } from '../../db/layer/types.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import { badRequest, conflict, invalidParam, notFound, validationError } from '../../errors.js';
import { validDate } from '../../dates.js';
import { hashPassword, hashToken, randomToken, verifyPassword } from '../../secrets.js';
import { getSettings } from '../instance/settings.js';
import { signInThrottle, userKey } from '../../policy/sign-in-throttle.js';
import { deleteProjectRowsIn } from '../projects/projects.js';
import {
  countUsers, deleteUserRows, insertPersonalAccessToken, insertUserWithNamespace, isSoleGroupOwner, personalAccessTokenOf,
  personalAccessTokensList, personalNamespace, recordSignIn, renameUserNamespace, revokePersonalAccessTokenRow, setUserStateRow,
  takenUserField, updateUserColumns, userById, userByLogin, usersPage, usersWithUsername, type UserListFilters,
} from '../../db/users.js';
import { projectIdsInNamespace } from '../../db/projects.js';

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

/** The largest PostgreSQL `integer` (ids, projects_limit); a larger `:id` names no row on either engine. */
const MAX_ID = 2 ** 31 - 1;

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
  // An `integer` column on PostgreSQL: the same bound on both engines (a 400 rather than a 500 from one of them).
  if (p.projects_limit !== undefined && p.projects_limit > MAX_ID) err('projects_limit', `must be less than or equal to ${MAX_ID}`);
  for (const k of ['skype', 'linkedin', 'twitter', 'website_url', 'organization', 'location'] as const) {
    const v = p[k];
    if (v !== undefined && v.length > 255) err(k, 'is too long (maximum is 255 characters)');
  }
  return errors;
}

const validId = (id: number) => Number.isSafeInteger(id) && id > 0 && id <= MAX_ID;

/**
 * Validate a create (existingId null) or an update. As GitLab 8.x, a taken email or username answers 409 before
 * any other validation error; a username may not be the path of any namespace (user or group) but the user's own.
 * One statement for both uniqueness checks (the email first), case-insensitive on both engines.
 */
async function validate(q: Queries, p: UserParams, existingId: number | null): Promise<void> {
  // ids start at 1: 0 excludes no user and owns no namespace
  const taken = await takenUserField(q, p.email, p.username, existingId ?? 0);
  if (taken) throw conflict(taken === 'email' ? 'Email has already been taken' : 'Username has already been taken');
  const errors = fieldErrors(p);
  if (Object.keys(errors).length) throw validationError(errors);
}

/**
 * The unique indexes are the last guard (two daemons on PostgreSQL can pass validate() at once): a violation of the
 * email or username/path index answers the same 409 as validate(); anything else is rethrown.
 */
function takenConflict(e: unknown): unknown {
  if (!isUniqueViolation(e)) return e;
  const err = e as { message?: string; detail?: string; constraint?: string };
  const text = `${err.constraint ?? ''} ${err.detail ?? ''} ${err.message ?? ''}`;
  if (/email/i.test(text)) return conflict('Email has already been taken');
  if (/username|path/i.test(text)) return conflict('Username has already been taken');
  return e;
}

/** Create a user and their personal namespace in one transaction; projects_limit defaults to the settings' default. */
export async function createUser(ctx: AppContext, p: UserParams & { email: string; password: string; username: string; name: string }): Promise<UserRow> {
  await validate(ctx.data, p, null);
  // Everything that is not the database happens before the transaction: the password hash, the salt, the settings.
  const passwordHash = await hashPassword(p.password);
  const salt = randomToken(24);
  const privateTokenHash = hashToken(ctx.secrets.derive('private', salt));
  const projectsLimit = p.projects_limit ?? (await getSettings(ctx)).defaultProjectsLimit;
  const t = now();
  try {
    return await ctx.data.transaction(async (tx) => {
      await validate(tx, p, null); // re-check inside the transaction: the password hash yielded the event loop
      const user = await insertUserWithNamespace(tx, {
        email: p.email, username: p.username, name: p.name, passwordHash, privateTokenSalt: salt, privateTokenHash,
        isAdmin: p.admin ?? false, bio: p.bio ?? null, location: p.location ?? null, skype: p.skype ?? '', linkedin: p.linkedin ?? '',
        twitter: p.twitter ?? '', websiteUrl: p.website_url ?? '', organization: p.organization ?? null, projectsLimit,
        canCreateGroup: p.can_create_group ?? true, external: p.external ?? false, confirmedAt: p.confirm === false ? null : t, createdAt: t,
      });
      await queueSystemHooks(tx, userSystemData(user, 'create'));
      return user;
    });
  } catch (e) {
    throw takenConflict(e);
  }
}

/** Update a user (admin); renaming the username renames the personal namespace too. */
export async function updateUser(ctx: AppContext, user: UserRow, p: UserParams): Promise<UserRow> {
  await validate(ctx.data, p, user.id);
  const passwordHash = p.password !== undefined ? await hashPassword(p.password) : undefined;
  const t = now();
  const set: [string, unknown][] = [['updated_at', t]];
  if (p.email !== undefined) set.push(['email', p.email]);
  if (p.username !== undefined) set.push(['username', p.username]);
  if (p.name !== undefined) set.push(['name', p.name]);
  if (passwordHash) set.push(['password_hash', passwordHash]);
  if (p.skype !== undefined) set.push(['skype', p.skype]);
  if (p.linkedin !== undefined) set.push(['linkedin', p.linkedin]);
  if (p.twitter !== undefined) set.push(['twitter', p.twitter]);
  if (p.website_url !== undefined) set.push(['website_url', p.website_url]);
  if (p.organization !== undefined) set.push(['organization', p.organization]);
  if (p.projects_limit !== undefined) set.push(['projects_limit', p.projects_limit]);
  if (p.bio !== undefined) set.push(['bio', p.bio]);
  if (p.location !== undefined) set.push(['location', p.location]);
  if (p.admin !== undefined) set.push(['is_admin', p.admin]);
  if (p.can_create_group !== undefined) set.push(['can_create_group', p.can_create_group]);
  if (p.external !== undefined) set.push(['external', p.external]);
  if (p.confirm === true && !user.confirmedAt) set.push(['confirmed_at', t]);
  try {
    return await ctx.data.transaction(async (tx) => {
      await validate(tx, p, user.id);
      const row = await updateUserColumns(tx, user.id, set);
      if (p.username !== undefined && p.username !== user.username) await renameUserNamespace(tx, user.id, p.username, t);
      if (!row) throw notFound('User'); // deleted meanwhile
      return row;
    });
  } catch (e) {
    throw takenConflict(e);
  }
}

/**
 * Find a user by id or 404 `404 User Not Found`, on either engine. Gantry answers this one message for every unknown
 * user id (GitLab 8.12 said `404 Not found` on GET/PUT and `404 User Not Found` on DELETE/block: one form is clearer).
 */
export async function findUser(ctx: AppContext, id: number, message = 'User'): Promise<UserRow> {
  const user = validId(id) ? await userById(ctx.data, id) : null;
  if (!user) throw notFound(message);
  return user;
}

/** Filters of GET /users. */
export type UserFilters = UserListFilters;

/**
 * A count and a page fetcher over users, ordered by id, for paginate (run them in one snapshot). The page is
 * keyset-paged as the other long lists (db/keyset.ts): read from the nearer end, and on SQLite from a cached bookmark.
 */
export function listUsers(ctx: AppContext, f: UserFilters): {
  count(q: Queries): Promise<number>;
  fetch(q: Queries, limit: number, offset: number, total?: number): Promise<UserRow[]>;
} {
  return {
    count: (q) => countUsers(q, f),
    fetch: (q, limit, offset, total) => usersPage(ctx, q, f, limit, offset, total),
  };
}

/** Users with exactly this username (case-insensitive): GET /users?username=. */
export async function usersByUsername(ctx: AppContext, username: string): Promise<UserRow[]> {
  return usersWithUsername(ctx.data, username);
}

/** Whether the user is the only owner of some group (such a user is not deleted, as in GitLab 8.x). */
export async function soleGroupOwner(q: Queries, user: UserRow): Promise<boolean> {
  return isSoleGroupOwner(q, user.id);
}

/**
 * Delete a user, their personal namespace and projects, memberships and tokens, in one transaction. A user who is the
 * sole owner of a group is not deleted (GitLab 8.x); the caller still gets the record. The personal projects' rows go
 * as a project's delete removes them (deleteProjectRowsIn: its members, fork links, the row; the rest cascades); the
 * user's own rows (memberships, tokens, keys, stars, OAuth grants...) cascade with the user.
 * @returns the ids of deleted projects, so storage (repositories) can be removed by the caller after the commit.
 */
export async function deleteUser(ctx: AppContext, user: UserRow): Promise<{ deleted: boolean; projectIds: number[] }> {
  if (await soleGroupOwner(ctx.data, user)) return { deleted: false, projectIds: [] };
  return ctx.data.transaction(async (tx) => {
    const ns = await personalNamespace(tx, user.id);
    const owned = ns ? await projectIdsInNamespace(tx, ns.id) : [];
    for (const id of owned) await deleteProjectRowsIn(tx, id);
    // system hooks: the memberships and keys that go with the user, then the user (read before the rows go)
    await queueMemberRemovals(tx, { userId: user.id });
    await queueUserKeyRemovals(tx, user.id, user.username);
    await queueSystemHooks(tx, async () => {
      const gone = await userById(tx, user.id);
      return gone ? userSystemData(gone, 'destroy') : null;
    });
    // A group never disappears with a user (owner_id cascades), whatever wrote that column.
    await deleteUserRows(tx, user.id, ns?.id ?? null);
    return { deleted: true, projectIds: owned };
  });
}

/** Block or unblock a user. A blocked user cannot sign in and none of their tokens authenticate. */
export async function setUserState(ctx: AppContext, user: UserRow, state: 'active' | 'blocked'): Promise<void> {
  await setUserStateRow(ctx.data, user.id, state, now());
}

/** Options of a sign-in. */
export interface SignInOptions {
  /** The client's address, for the per-address throttle (without it only the per-user one applies). */
  address?: string;
}

/**
 * Sign in by username or email (case-insensitive) and password; null when either is wrong or the user is blocked.
 * Throws SignInThrottled (429 with Retry-After) when the address or the user has failed too often
 * (policy/sign-in-throttle.ts: in memory on SQLite, shared by every daemon on PostgreSQL); a throttled attempt checks
 * no password.
 */
export async function signIn(ctx: AppContext, login: string, password: string, opts: SignInOptions = {}): Promise<UserRow | null> {
  const user = (await userByLogin(ctx.data, login)) ?? undefined;
  const attempt = await signInThrottle(ctx).attempt(opts.address, userKey(login, user?.id));
  // Verify against a dummy hash when the user is unknown, so timing does not reveal which usernames exist.
  const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
  // A wrong password counts toward the throttle; the right one of a blocked user is refused without counting.
  if (!user || !ok) {
    await attempt.failed();
    return null;
  }
  if (user.state !== 'active') return null;
  await attempt.succeeded();
  const t = now();
  await recordSignIn(ctx.data, user.id, user.currentSignInAt ?? t, t);
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


/** Create a personal access token; the secret is returned once and stored only as its hash. */
export async function createPersonalAccessToken(ctx: AppContext, user: UserRow, name: string, expiresAt: string | null) {
  if (name.trim() === '') throw badRequest('name');
  if (name.length > 255) throw validationError({ name: ['is too long (maximum is 255 characters)'] });
  // Year 0000 passes validDate but is no PostgreSQL date: invalid on both engines.
  if (expiresAt && (!validDate(expiresAt) || expiresAt.startsWith('0000'))) throw invalidParam('expires_at', 'is invalid (use YYYY-MM-DD)');
  const token = randomToken(24);
  const tokenHash = hashToken(token);
  const createdAt = now();
  const id = await insertPersonalAccessToken(ctx.data, { userId: user.id, name, tokenHash, expiresAt, createdAt }).catch((e: unknown) => {
    throw isForeignKeyViolation(e) ? notFound('User') : e; // the user was deleted meanwhile (found by the fuzzer)
  });
  const row: PersonalAccessTokenRow = { id, userId: user.id, name, tokenHash, expiresAt, revoked: false, createdAt };
  return { row, token };
}

/**
 * A count and a page fetcher over a user's personal access tokens (optionally only `active` or `inactive` ones),
 * ordered by id, for paginate.
 */
export function listPersonalAccessTokens(user: UserRow, state?: 'active' | 'inactive') {
  return personalAccessTokensList(user.id, state, today());
}

/** One of a user's personal access tokens, or 404 `404 Personal Access Token Not Found`. */
export async function findPersonalAccessToken(ctx: AppContext, user: UserRow, tokenId: number): Promise<PersonalAccessTokenRow> {
  const row = validId(tokenId) ? await personalAccessTokenOf(ctx.data, user.id, tokenId) : null;
  if (!row) throw notFound('Personal Access Token');
  return row;
}

/** Revoke one of a user's personal access tokens (idempotent); it stops authenticating at once. */
export async function revokePersonalAccessToken(ctx: AppContext, user: UserRow, tokenId: number): Promise<PersonalAccessTokenRow> {
  const row = await findPersonalAccessToken(ctx, user, tokenId);
  await revokePersonalAccessTokenRow(ctx.data, row.id);
  return { ...row, revoked: true };
}

/** The personal namespace of a user (kind `user`), or null (the web pages list its projects). */
export async function userNamespace(ctx: AppContext, user: UserRow): Promise<NamespaceRow | null> {
  return personalNamespace(ctx.data, user.id);
}
