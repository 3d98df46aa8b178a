/**
 * Who is calling: private token, personal access token, OAuth access token (bearer), then sudo.
 * Tokens arrive as a query param, form or JSON body param, or header; a param wins over the header. The same path
 * serves the API's hook (app.ts), the live trace WebSocket's upgrade (live/trace.ts), uploads and /-/metrics.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { requestVersion, UntilNextWrite } from '../db/read-cache.js';
import { toUser } from '../db/rows.js';
import type { UserRow } from '../db/schema.js';
import { forbidden, notFoundMessage, unauthorized } from '../errors.js';
import { hashRecentToken } from '../secrets.js';
import { sudoUserRow, userRowForTokenHash } from '../db/access.js';

/**
 * Resolves an OAuth access token (not revoked, not expired) to its user row, or null, through the data layer (either
 * engine); blocked users too: the caller refuses them. Installed by daemon/oauth/index.ts.
 */
export type AsyncBearerResolver = (ctx: AppContext, token: string, version?: string) => Promise<UserRow | null>;
let bearerResolverAsync: AsyncBearerResolver | null = null;
/** The resolver's answer when it is kept and current (SQLite, nothing written since), synchronously; undefined otherwise. */
export type BearerPeek = (ctx: AppContext, token: string) => UserRow | null | undefined;
let bearerPeek: BearerPeek | null = null;

/**
 * Install the OAuth access-token resolver (daemon/oauth/index.ts installs services/oauth/tokens.ts
 * resolveAccessToken when it loads): the policy layer does not import the OAuth service.
 */
export function setBearerResolver(asyncResolver: AsyncBearerResolver, peek?: BearerPeek): void {
  bearerResolverAsync = asyncResolver;
  bearerPeek = peek ?? null;
}

/**
 * What authentication reads of a request: its query and body params and its headers. A FastifyRequest is one; a raw
 * upgrade request (the live trace WebSocket) gives its parsed query string, no body, and its headers.
 */
export type CredentialSource = Pick<FastifyRequest, 'query' | 'body' | 'headers'> & { method?: string };

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
const tokenUsers = new UntilNextWrite<{ user: UserRow | null }>(1000, { postgres: true });



/** The active user of a raw `users` row, or null (blocked users count as nobody). */
function activeUser(row: Record<string, unknown> | undefined): UserRow | null {
  const user = row ? toUser(row) : null;
  return user && user.state === 'active' ? user : null;
}

/**
 * The user owning a private or personal access token, or null (blocked users count as nobody), through the data layer:
 * cached on SQLite until the next write (a hit costs the cache's `total_changes()` read, a miss one statement more for
 * a private token), one statement per private token on PostgreSQL (two for a personal access token: the private token
 * is tried first).
 */
export async function userForToken(ctx: AppContext, token: string, version?: string): Promise<UserRow | null> {
  const hash = hashRecentToken(token);
  // on PostgreSQL kept only under a request's version (read anyway for its other caches), else one statement
  if (!ctx.data.sqlite && version === undefined) return lookupTokenUser(ctx, hash);
  return (await tokenUsers.getAsync(ctx, hash, async () => ({ user: await lookupTokenUser(ctx, hash) }), false, version)).user;
}

async function lookupTokenUser(ctx: AppContext, hash: string): Promise<UserRow | null> {
  return activeUser(await userRowForTokenHash(ctx.data, hash, now().slice(0, 10)));
}

/**
 * The active user an OAuth access token authenticates, or null, through the data layer (the resolver installed by the
 * OAuth module): one statement for the token and its user on either engine, none on SQLite while nothing was written since.
 */
export async function userForOauthToken(ctx: AppContext, token: string, version?: string): Promise<UserRow | null> {
  const user = bearerResolverAsync ? await bearerResolverAsync(ctx, token, version) : null;
  return user && user.state === 'active' ? user : null;
}

/** The bearer token of a request (access_token param, Authorization: Bearer, bearer_token param), if any. */
function bearerToken(request: CredentialSource): string | undefined {
  const auth = header(request, 'authorization');
  return param(request, 'access_token') ?? auth?.match(/^Bearer\s+(.+)$/i)?.[1] ?? param(request, 'bearer_token');
}

/**
 * authenticate's answer when it can be given without waiting (undefined otherwise): a request without any
 * credential (null), or a private token or OAuth access token whose user is in its cache, without sudo. The API's authentication hook
 * answers these, nearly every request, without a promise.
 */
export function authenticateNow(ctx: AppContext, request: CredentialSource): UserRow | null | undefined {
  const token = param(request, 'private_token') ?? header(request, 'private-token');
  if (!token) {
    const bearer = bearerToken(request);
    if (bearer === undefined) return null;
    if (param(request, 'sudo') !== undefined || header(request, 'sudo') !== undefined) return undefined;
    const user = bearerPeek?.(ctx, bearer);
    return user && user.state === 'active' ? user : undefined; // a token of nobody: the full path answers
  }
  if (param(request, 'sudo') !== undefined || header(request, 'sudo') !== undefined) return undefined;
  const user = tokenUsers.peek(ctx, hashRecentToken(token))?.user;
  return user ?? undefined; // a token of no user may still be followed by a bearer token: the full path decides
}

/**
 * Authenticate a request (GitLab 8.12 order), through the data layer on either engine: a private or personal access
 * token (param, else PRIVATE-TOKEN header), then an OAuth bearer token; then sudo. Returns the acting user, or null
 * when no valid credential was sent (sudo is then ignored and the caller gets 401).
 */
export async function authenticate(ctx: AppContext, request: CredentialSource): Promise<UserRow | null> {
  const token = param(request, 'private_token') ?? header(request, 'private-token');
  const bearer = token ? undefined : bearerToken(request);
  // On PostgreSQL a read request's write version is read first (one statement, shared with the project lookup and the
  // answer cache: db/read-cache.ts requestVersion), so a kept token answer costs nothing more. (A write request
  // reads its token as before: after a write somewhere the version would only add a statement.)
  const reads = request.method === 'GET' || request.method === 'HEAD';
  const version = ctx.data.sqlite || !reads || (!token && !bearer) ? undefined : await requestVersion(ctx, request);
  let user = token ? await userForToken(ctx, token, version) : null;
  if (!user) {
    const other = bearer ?? bearerToken(request);
    user = other ? await userForOauthToken(ctx, other, version) : null;
  }
  if (!user) return null;
  const sudo = param(request, 'sudo') ?? header(request, 'sudo');
  return sudo ? applySudo(ctx, user, sudo) : user;
}

async function applySudo(ctx: AppContext, caller: UserRow, sudo: string): Promise<UserRow> {
  const byId = /^\d+$/.test(sudo);
  if (byId ? Number(sudo) === caller.id : sudo.toLowerCase() === caller.username.toLowerCase()) return caller;
  if (!caller.isAdmin) throw forbidden('Must be admin to use sudo');
  const row = await sudoUserRow(ctx.data, sudo);
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
