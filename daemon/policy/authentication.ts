/**
 * Who is calling: private token, personal access token, OAuth access token (bearer), then sudo.
 * Tokens arrive as a query param, form or JSON body param, or header; a param wins over the header. The same path
 * serves the API's hook (app.ts), the live trace WebSocket's upgrade (live/trace.ts), uploads and /-/metrics.
 */
import { and, eq, or } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { UntilNextWrite } from '../db/read-cache.js';
import { statement } from '../db/statements.js';
import { toUser } from '../db/rows.js';
import { personalAccessTokens, users, type UserRow } from '../db/schema.js';
import { forbidden, notFoundMessage, unauthorized } from '../errors.js';
import { hashToken } from '../secrets.js';
import { tokenActiveSql } from '../services/users.js';

/** Resolves an OAuth access token to a user id, or null (not revoked, not expired). Installed by daemon/oauth/index.ts. */
export type BearerResolver = (ctx: AppContext, token: string) => number | null;
/** The same through the data layer (either engine), with the token's user row (blocked users too: the caller refuses them). */
export type AsyncBearerResolver = (ctx: AppContext, token: string) => Promise<UserRow | null>;
let bearerResolver: BearerResolver | null = null;
let bearerResolverAsync: AsyncBearerResolver | null = null;

/**
 * Install the OAuth access-token resolver and its data-layer twin (daemon/oauth/index.ts installs
 * services/oauth/tokens.ts resolveAccessToken when it loads): the policy layer does not import the OAuth service.
 */
export function setBearerResolver(resolver: BearerResolver, asyncResolver?: AsyncBearerResolver): void {
  bearerResolver = resolver;
  bearerResolverAsync = asyncResolver ?? null;
}

/**
 * What authentication reads of a request: its query and body params and its headers. A FastifyRequest is one; a raw
 * upgrade request (the live trace WebSocket) gives its parsed query string, no body, and its headers.
 */
export type CredentialSource = Pick<FastifyRequest, 'query' | 'body' | 'headers'>;

function param(request: CredentialSource, name: string): string | undefined {
  const q = request.query as Record<string, unknown> | undefined;
  const b = request.body as Record<string, unknown> | undefined;
  const fromBody = b && typeof b === 'object' && !Buffer.isBuffer(b) ? b[name] : undefined;
  const v = q?.[name] ?? fromBody;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function header(request: CredentialSource, name: string): string | undefined {
  const v = request.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Token hash -> its active user (or none), exact until the next write (a block, a revoke) or the next UTC day (expiry). */
const tokenUsers = new UntilNextWrite<{ user: UserRow | null }>(1000);

/** Recent tokens' hashes: hashing is a measurable part of a cached request, and the same few tokens come back. */
const recentHashes = new Map<string, string>();
function tokenHash(token: string): string {
  let hash = recentHashes.get(token);
  if (hash === undefined) {
    hash = hashToken(token);
    if (recentHashes.size >= 1000) recentHashes.delete(recentHashes.keys().next().value as string);
    recentHashes.set(token, hash);
  }
  return hash;
}

/** The user owning a private or personal access token, or null. Blocked users count as nobody. */
export function userForToken(ctx: AppContext, token: string): UserRow | null {
  const hash = tokenHash(token);
  return tokenUsers.get(ctx, hash, () => ({ user: lookupTokenUser(ctx, hash) })).user;
}

function lookupTokenUser(ctx: AppContext, hash: string): UserRow | null {
  // Hot path (every request): cached statements over raw rows instead of the query builder.
  let row = statement(ctx, 'SELECT * FROM users WHERE private_token_hash = ?').get(hash) as Record<string, unknown> | undefined;
  if (!row) {
    const pat = ctx.db
      .select({ userId: personalAccessTokens.userId })
      .from(personalAccessTokens)
      .where(and(eq(personalAccessTokens.tokenHash, hash), tokenActiveSql()))
      .get();
    if (pat) row = statement(ctx, 'SELECT * FROM users WHERE id = ?').get(pat.userId) as Record<string, unknown> | undefined;
  }
  const user = row ? toUser(row) : null;
  return user && user.state === 'active' ? user : null;
}

/**
 * The active user an OAuth access token authenticates, or null: the synchronous twin (SQLite only) of
 * userForOauthTokenAsync, kept for `authenticate`, which web/uploads.ts and web/metrics.ts still call synchronously.
 */
export function userForOauthToken(ctx: AppContext, token: string): UserRow | null {
  const id = bearerResolver ? bearerResolver(ctx, token) : null;
  const row = id ? (statement(ctx, 'SELECT * FROM users WHERE id = ?').get(id) as Record<string, unknown> | undefined) : undefined;
  const user = row ? toUser(row) : null;
  return user && user.state === 'active' ? user : null;
}

/** The active user of a raw `users` row, or null (blocked users count as nobody). */
function activeUser(row: Record<string, unknown> | undefined): UserRow | null {
  const user = row ? toUser(row) : null;
  return user && user.state === 'active' ? user : null;
}

const USER_BY_PRIVATE_TOKEN = 'SELECT * FROM users WHERE private_token_hash = ?';
const USER_BY_PERSONAL_TOKEN = `SELECT u.* FROM personal_access_tokens t JOIN users u ON u.id = t.user_id
  WHERE t.token_hash = ? AND t.revoked = FALSE AND (t.expires_at IS NULL OR t.expires_at > ?)`;

/**
 * The async twin of userForToken, through the data layer: the same cache on SQLite (a hit costs the cache's
 * `total_changes()` read, a miss one statement more for a private token), one statement per private token on
 * PostgreSQL (two for a personal access token: the private token is tried first).
 */
export async function userForTokenAsync(ctx: AppContext, token: string): Promise<UserRow | null> {
  const hash = tokenHash(token);
  return (await tokenUsers.getAsync(ctx, hash, async () => ({ user: await lookupTokenUserAsync(ctx, hash) }))).user;
}

async function lookupTokenUserAsync(ctx: AppContext, hash: string): Promise<UserRow | null> {
  const row = (await ctx.data.get(USER_BY_PRIVATE_TOKEN, [hash])) ?? (await ctx.data.get(USER_BY_PERSONAL_TOKEN, [hash, now().slice(0, 10)]));
  return activeUser(row);
}

/**
 * The async twin of userForOauthToken, through the data layer (the resolver's twin installed by the OAuth module): one
 * statement for the token and its user on either engine, none on SQLite while nothing was written since.
 */
export async function userForOauthTokenAsync(ctx: AppContext, token: string): Promise<UserRow | null> {
  const user = bearerResolverAsync ? await bearerResolverAsync(ctx, token) : null;
  return user && user.state === 'active' ? user : null;
}

/** The bearer token of a request (access_token param, Authorization: Bearer, bearer_token param), if any. */
function bearerToken(request: CredentialSource): string | undefined {
  const auth = header(request, 'authorization');
  return param(request, 'access_token') ?? auth?.match(/^Bearer\s+(.+)$/i)?.[1] ?? param(request, 'bearer_token');
}

/**
 * authenticateAsync's answer when it can be given without waiting (undefined otherwise): a request without any
 * credential (null), or a private token whose user is in the token cache, without sudo. The API's authentication hook
 * answers these, nearly every request, without a promise.
 */
export function authenticateNow(ctx: AppContext, request: CredentialSource): UserRow | null | undefined {
  const token = param(request, 'private_token') ?? header(request, 'private-token');
  if (!token) return bearerToken(request) === undefined ? null : undefined;
  if (param(request, 'sudo') !== undefined || header(request, 'sudo') !== undefined) return undefined;
  const user = tokenUsers.peek(ctx, tokenHash(token))?.user;
  return user ?? undefined; // a token of no user may still be followed by a bearer token: the full path decides
}

/**
 * The async twin of authenticate, through the data layer on either engine: the same order (private or personal
 * access token, then an OAuth bearer token, then sudo), the same errors.
 */
export async function authenticateAsync(ctx: AppContext, request: CredentialSource): Promise<UserRow | null> {
  const token = param(request, 'private_token') ?? header(request, 'private-token');
  let user = token ? await userForTokenAsync(ctx, token) : null;
  if (!user) {
    const bearer = bearerToken(request);
    user = bearer ? await userForOauthTokenAsync(ctx, bearer) : null;
  }
  if (!user) return null;
  const sudo = param(request, 'sudo') ?? header(request, 'sudo');
  return sudo ? applySudoAsync(ctx, user, sudo) : user;
}

/** Largest id a row can have (PostgreSQL's `integer`); a larger number can only be a username. */
const MAX_ID = 2147483647;

async function applySudoAsync(ctx: AppContext, caller: UserRow, sudo: string): Promise<UserRow> {
  const byId = /^\d+$/.test(sudo);
  if (byId ? Number(sudo) === caller.id : sudo.toLowerCase() === caller.username.toLowerCase()) return caller;
  if (!caller.isAdmin) throw forbidden('Must be admin to use sudo');
  const d = ctx.data.dialect;
  const id = byId ? Number(sudo) : NaN;
  const row = id <= MAX_ID
    ? await ctx.data.get(`SELECT * FROM users WHERE id = ? OR ${d.nocaseEq('username')} ORDER BY id LIMIT 1`, [id, sudo])
    : await ctx.data.get(`SELECT * FROM users WHERE ${d.nocaseEq('username')}`, [sudo]);
  if (!row) throw notFoundMessage(`404 Not Found: No user id or username for: ${sudo}`);
  return toUser(row);
}

/** The user of an OAuth bearer token (access_token param, bearer_token param or Authorization header), or null. */
function userForBearer(ctx: AppContext, request: CredentialSource): UserRow | null {
  const bearer = bearerToken(request);
  return bearer ? userForOauthToken(ctx, bearer) : null;
}

/**
 * Authenticate a request (GitLab 8.12 order): a private or personal access token (param, else PRIVATE-TOKEN
 * header), then an OAuth bearer token; then sudo. Returns the acting user, or null when no valid credential was
 * sent (sudo is then ignored and the caller gets 401).
 */
export function authenticate(ctx: AppContext, request: CredentialSource): UserRow | null {
  const token = param(request, 'private_token') ?? header(request, 'private-token');
  const user = (token ? userForToken(ctx, token) : null) ?? userForBearer(ctx, request);
  if (!user) return null;
  const sudo = param(request, 'sudo') ?? header(request, 'sudo');
  return sudo ? applySudo(ctx, user, sudo) : user;
}

function applySudo(ctx: AppContext, caller: UserRow, sudo: string): UserRow {
  const byId = /^\d+$/.test(sudo);
  if (byId ? Number(sudo) === caller.id : sudo.toLowerCase() === caller.username.toLowerCase()) return caller;
  if (!caller.isAdmin) throw forbidden('Must be admin to use sudo');
  const target = ctx.db
    .select()
    .from(users)
    .where(byId ? or(eq(users.id, Number(sudo)), eq(users.username, sudo)) : eq(users.username, sudo))
    .get();
  if (!target) throw notFoundMessage(`404 Not Found: No user id or username for: ${sudo}`);
  return target;
}

/** The signed-in user of a request, or 401. */
export function requireUser(request: FastifyRequest): UserRow {
  if (!request.user) throw unauthorized();
  return request.user;
}

/** The signed-in administrator of a request: 401 when anonymous, 403 `403 Forbidden` for other users. */
export function requireAdmin(request: FastifyRequest): UserRow {
  const user = requireUser(request);
  if (!user.isAdmin) throw forbidden();
  return user;
}

/**
 * Route hook for admin-only routes (`preValidation: adminOnly`): refuses non-admins before the body is validated,
 * as GitLab's `authenticated_as_admin!` runs before `required_attributes!`.
 */
export async function adminOnly(request: FastifyRequest): Promise<void> {
  requireAdmin(request);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The acting user (after sudo), or null for anonymous callers. */
    user: UserRow | null;
  }
  interface FastifyContextConfig {
    /** Route answers without a signed-in user (POST /session, health). */
    public?: boolean;
  }
}

/** A git transport, for the `enabled_git_access_protocol` setting. */
export type GitProtocol = 'http' | 'ssh';

/**
 * Whether git over `protocol` is allowed by the `enabled_git_access_protocol` application setting (null: both), or
 * the refusal git shows the user (8.x Gitlab::GitAccess#protocol_allowed? and its message). A CI fetch over HTTP (a
 * build's or the runners' `gitlab-ci-token`, reading) is always allowed: runners have no other way to check out, and
 * 8.x's git HTTP controller let `ci?` read before any protocol check.
 */
export function gitProtocolDenial(setting: string | null, protocol: GitProtocol, ciFetch = false): string | null {
  if (!setting || setting === protocol || (protocol === 'http' && ciFetch)) return null;
  return `Git access over ${protocol.toUpperCase()} is not allowed; use ${setting.toUpperCase()} (an administrator chose it in the application settings: enabled_git_access_protocol)`;
}
