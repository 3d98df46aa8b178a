/**
 * Who is calling: private token, personal access token, OAuth access token (bearer), then sudo.
 * Tokens arrive as a query param, form or JSON body param, or header; a param wins over the header. The same path
 * serves the API's hook (app.ts), the live trace WebSocket's upgrade (live/trace.ts), uploads and /-/metrics.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { UntilNextWrite } from '../db/read-cache.js';
import { toUser } from '../db/rows.js';
import type { UserRow } from '../db/schema.js';
import { forbidden, notFoundMessage, unauthorized } from '../errors.js';
import { hashToken } from '../secrets.js';

/**
 * Resolves an OAuth access token (not revoked, not expired) to its user row, or null, through the data layer (either
 * engine); blocked users too: the caller refuses them. Installed by daemon/oauth/index.ts.
 */
export type AsyncBearerResolver = (ctx: AppContext, token: string) => Promise<UserRow | null>;
let bearerResolverAsync: AsyncBearerResolver | null = null;

/**
 * Install the OAuth access-token resolver (daemon/oauth/index.ts installs services/oauth/tokens.ts
 * resolveAccessTokenAsync when it loads): the policy layer does not import the OAuth service.
 */
export function setBearerResolver(asyncResolver: AsyncBearerResolver): void {
  bearerResolverAsync = asyncResolver;
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

/** The active user of a raw `users` row, or null (blocked users count as nobody). */
function activeUser(row: Record<string, unknown> | undefined): UserRow | null {
  const user = row ? toUser(row) : null;
  return user && user.state === 'active' ? user : null;
}

const USER_BY_PRIVATE_TOKEN = 'SELECT * FROM users WHERE private_token_hash = ?';
const USER_BY_PERSONAL_TOKEN = `SELECT u.* FROM personal_access_tokens t JOIN users u ON u.id = t.user_id
  WHERE t.token_hash = ? AND t.revoked = FALSE AND (t.expires_at IS NULL OR t.expires_at > ?)`;

/**
 * The user owning a private or personal access token, or null (blocked users count as nobody), through the data layer:
 * cached on SQLite until the next write (a hit costs the cache's `total_changes()` read, a miss one statement more for
 * a private token), one statement per private token on PostgreSQL (two for a personal access token: the private token
 * is tried first).
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
 * The active user an OAuth access token authenticates, or null, through the data layer (the resolver installed by the
 * OAuth module): one statement for the token and its user on either engine, none on SQLite while nothing was written since.
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
 * Authenticate a request (GitLab 8.12 order), through the data layer on either engine: a private or personal access
 * token (param, else PRIVATE-TOKEN header), then an OAuth bearer token; then sudo. Returns the acting user, or null
 * when no valid credential was sent (sudo is then ignored and the caller gets 401).
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
