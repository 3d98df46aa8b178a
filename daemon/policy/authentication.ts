/**
 * Who is calling: private token, personal access token, OAuth bearer token (seam), then sudo.
 * Tokens arrive as a query param, form or JSON body param, or header; a param wins over the header.
 */
import { and, eq, or, sql } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { personalAccessTokens, users, type UserRow } from '../db/schema.js';
import { ApiError, forbidden, unauthorized } from '../errors.js';
import { hashToken } from '../secrets.js';

/** Resolves an OAuth access token to a user id, or null. Installed by the OAuth module (later issue). */
export type BearerResolver = (ctx: AppContext, token: string) => number | null;
let bearerResolver: BearerResolver | null = null;

/** Install the OAuth bearer-token resolver (the seam for the OAuth issue). */
export function setBearerResolver(resolver: BearerResolver): void {
  bearerResolver = resolver;
}

function param(request: FastifyRequest, name: string): string | undefined {
  const q = request.query as Record<string, unknown> | undefined;
  const b = request.body as Record<string, unknown> | undefined;
  const fromBody = b && typeof b === 'object' && !Buffer.isBuffer(b) ? b[name] : undefined;
  const v = q?.[name] ?? fromBody;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The user owning a private or personal access token, or null. Blocked users count as nobody. */
export function userForToken(ctx: AppContext, token: string): UserRow | null {
  const hash = hashToken(token);
  let user = ctx.db.select().from(users).where(eq(users.privateTokenHash, hash)).get() ?? null;
  if (!user) {
    const pat = ctx.db
      .select()
      .from(personalAccessTokens)
      .where(
        and(
          eq(personalAccessTokens.tokenHash, hash),
          eq(personalAccessTokens.revoked, false),
          or(sql`${personalAccessTokens.expiresAt} IS NULL`, sql`${personalAccessTokens.expiresAt} > ${now().slice(0, 10)}`),
        ),
      )
      .get();
    if (pat) user = ctx.db.select().from(users).where(eq(users.id, pat.userId)).get() ?? null;
  }
  return user && user.state === 'active' ? user : null;
}

/** Authenticate a request: the acting user (after sudo), or null when no valid credential was sent. */
export function authenticate(ctx: AppContext, request: FastifyRequest): UserRow | null {
  let user: UserRow | null = null;
  const token = param(request, 'private_token') ?? header(request, 'private-token');
  if (token) {
    user = userForToken(ctx, token);
  } else {
    const auth = header(request, 'authorization');
    const bearer = param(request, 'access_token') ?? (auth?.match(/^Bearer\s+(.+)$/i)?.[1] ?? undefined);
    if (bearer && bearerResolver) {
      const id = bearerResolver(ctx, bearer);
      const found = id ? ctx.db.select().from(users).where(eq(users.id, id)).get() : undefined;
      user = found && found.state === 'active' ? found : null;
    }
  }
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
  if (!target) throw new ApiError(404, { message: `404 Not Found: No user id or username for: ${sudo}` });
  return target;
}

/** The signed-in user of a request, or 401. */
export function requireUser(request: FastifyRequest): UserRow {
  if (!request.user) throw unauthorized();
  return request.user;
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
