/** OAuth applications: register, list, delete; client authentication; which redirect URIs an application may use. */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { users, type UserRow } from '../../db/schema.js';
import { oauthApplications, type OauthApplicationRow } from '../../db/schema-oauth.js';
import { forbidden, notFound, validationError } from '../../errors.js';
import { ownsOauthApplication } from '../../policy/permissions.js';
import { hashToken } from '../../secrets.js';
import { DEFAULT_SCOPES, parseScopes, unknownScopes } from './scopes.js';
import { oauthError } from './errors.js';

/** The redirect URI of clients that cannot receive a redirect: the code is shown on a page instead (Doorkeeper). */
export const OOB_URI = 'urn:ietf:wg:oauth:2.0:oob';
/** client_id of the built-in application of the command-line client. */
export const CLI_CLIENT_ID = 'gantry-cli';

/** A new random 64-hex-character secret (client ids, client secrets, codes, tokens: Doorkeeper's form). */
export const randomSecret = () => randomBytes(32).toString('hex');

/** Parameters of POST /applications. */
export interface CreateApplicationParams {
  name: string;
  redirect_uri: string;
  scopes?: string;
}

/** Split a redirect_uri field into its URIs (one per line; Doorkeeper also splits on spaces). */
export function redirectUris(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

/** Why a redirect URI cannot be registered (Doorkeeper's RedirectUriValidator messages), or null. */
function redirectUriProblem(uri: string): string | null {
  if (uri === OOB_URI) return null;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI.';
  }
  // `javascript:alert(1)` parses too: an absolute URI needs a scheme and a host, as Doorkeeper's check.
  if (!url.host) return 'must be an absolute URI.';
  if (uri.includes('#')) return 'cannot contain a fragment.';
  return null;
}

/** Register an application owned by `owner`; the secret is returned once and stored only hashed. */
export function createApplication(ctx: AppContext, owner: UserRow, p: CreateApplicationParams): { app: OauthApplicationRow; secret: string } {
  const errors: Record<string, string[]> = {};
  const err = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (p.name.length > 255) err('name', 'is too long (maximum is 255 characters)');
  const uris = redirectUris(p.redirect_uri);
  if (!uris.length) err('redirect_uri', "can't be blank");
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem && !errors.redirect_uri?.includes(problem)) err('redirect_uri', problem);
  }
  const scopes = p.scopes === undefined || p.scopes.trim() === '' ? [DEFAULT_SCOPES] : parseScopes(p.scopes);
  const unknown = unknownScopes(scopes);
  if (unknown.length) err('scopes', `are not known: ${unknown.join(', ')} (use: api)`);
  if (Object.keys(errors).length) throw validationError(errors);
  const secret = randomSecret();
  const t = now();
  const app = ctx.db
    .insert(oauthApplications)
    .values({
      name: p.name, uid: randomSecret(), secretHash: hashToken(secret), redirectUri: uris.join('\n'), scopes: scopes.join(' '),
      ownerId: owner.id, builtin: false, createdAt: t, updatedAt: t,
    })
    .returning()
    .get();
  return { app, secret };
}

/** A count and a page fetcher over the applications `user` sees (an admin: all registered ones), newest first. */
export function listApplications(ctx: AppContext, user: UserRow) {
  const where: SQL | undefined = user.isAdmin ? eq(oauthApplications.builtin, false) : and(eq(oauthApplications.ownerId, user.id), eq(oauthApplications.builtin, false));
  return {
    count: () => ctx.db.select({ n: sql<number>`count(*)` }).from(oauthApplications).where(where).get()!.n,
    fetch: (limit: number, offset: number) =>
      ctx.db.select().from(oauthApplications).where(where).orderBy(desc(oauthApplications.id)).limit(limit).offset(offset).all(),
  };
}

/**
 * Delete one of `user`'s applications (an admin: any); its codes and tokens go with it (foreign keys), so they stop
 * working at once. Someone else's application answers 404; the built-in one 403.
 */
export function deleteApplication(ctx: AppContext, user: UserRow, id: number): void {
  const app = ctx.db.select().from(oauthApplications).where(eq(oauthApplications.id, id)).get();
  if (!app || !ownsOauthApplication(user, app)) throw notFound('Application');
  if (app.builtin) throw forbidden(`the built-in application ${app.name} cannot be deleted`);
  // Its codes and tokens go with it: ON DELETE CASCADE (migration 0025).
  ctx.db.delete(oauthApplications).where(eq(oauthApplications.id, app.id)).run();
}

/** The application with this client_id, or null. */
export function applicationByUid(ctx: AppContext, uid: string): OauthApplicationRow | null {
  return ctx.db.select().from(oauthApplications).where(eq(oauthApplications.uid, uid)).get() ?? null;
}

/** The username of the user who registered an application (null for the built-in one, or a deleted owner). */
export function applicationOwnerName(ctx: AppContext, app: OauthApplicationRow): string | null {
  if (app.ownerId === null) return null;
  return ctx.db.select({ username: users.username }).from(users).where(eq(users.id, app.ownerId)).get()?.username ?? null;
}

/** A public client (no secret: the built-in CLI application) proves nothing by its client_id, so PKCE is required. */
export const isPublicClient = (app: OauthApplicationRow) => app.secretHash === null;

/** Client credentials as sent (body fields or HTTP Basic). */
export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
}

/**
 * Authenticate a client: a confidential application needs its secret, a public one only its client_id. Unknown
 * client or wrong secret: invalid_client (401). Returns null when no client_id was sent.
 */
export function authenticateClient(ctx: AppContext, c: ClientCredentials): OauthApplicationRow | null {
  if (!c.clientId) {
    if (c.clientSecret) throw oauthError('invalid_client', 'client_secret was sent without client_id; send both (or use HTTP Basic authentication)');
    return null;
  }
  const app = applicationByUid(ctx, c.clientId);
  if (!app) throw oauthError('invalid_client', 'Unknown client_id: check the application id of the registered application');
  if (isPublicClient(app)) return app;
  if (!c.clientSecret) throw oauthError('invalid_client', 'client_secret is required for this application: send it as a parameter or with HTTP Basic authentication');
  const given = Buffer.from(hashToken(c.clientSecret), 'hex');
  if (!timingSafeEqual(given, Buffer.from(app.secretHash!, 'hex'))) {
    throw oauthError('invalid_client', 'Wrong client_secret for this client_id: use the secret shown when the application was registered');
  }
  return app;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/**
 * Whether `uri` is one of the application's redirect URIs. The built-in CLI application takes any loopback URI
 * (`http://127.0.0.1:<port>/<path>` or `http://[::1]:<port>/<path>`: RFC 8252 7.3, the port is not compared);
 * others need an exact match, the request's query aside (Doorkeeper 4's URIChecker).
 */
export function redirectUriAllowed(app: OauthApplicationRow, uri: string): boolean {
  if (!uri || uri.includes('#')) return false;
  if (app.builtin) {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return false;
    }
    return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname) && !url.username && !url.password;
  }
  const registered = redirectUris(app.redirectUri);
  if (registered.includes(uri)) return true;
  const q = uri.indexOf('?');
  return q > 0 && registered.includes(uri.slice(0, q));
}
