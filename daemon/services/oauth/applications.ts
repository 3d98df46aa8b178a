/** OAuth applications: register, list, delete; client authentication; which redirect URIs an application may use. */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import {
  deleteOauthApplication, insertOauthApplication, oauthApplicationById, oauthApplicationByUid, oauthApplicationsListing,
} from '../../db/oauth.js';
import { userById } from '../../db/users.js';
import type { UserRow } from '../../db/schema.js';
import type { OauthApplicationRow } from '../../db/schema-oauth.js';
import { forbidden, notFound, validationError } from '../../errors.js';
import type { Listing } from '../users/groups.js';
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

/** Whether an id can name a row (PostgreSQL's ids are `integer`: a larger number must not reach a query). */
const validId = (id: number) => Number.isSafeInteger(id) && id > 0 && id <= 2147483647;

/** Register an application owned by `owner`; the secret is returned once and stored only hashed. An owner deleted meanwhile: 404 User. */
export async function createApplication(ctx: AppContext, owner: UserRow, p: CreateApplicationParams): Promise<{ app: OauthApplicationRow; secret: string }> {
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
  const app = await insertOauthApplication(ctx.data, {
    name: p.name, uid: randomSecret(), secretHash: hashToken(secret), redirectUri: uris.join('\n'), scopes: scopes.join(' '), ownerId: owner.id, createdAt: t,
  }).catch((e: unknown) => {
    throw isForeignKeyViolation(e) ? notFound('User') : e;
  });
  return { app, secret };
}

/** The applications `user` sees (an admin: all registered ones), newest first: a count and a page fetcher. */
export function listApplications(user: UserRow): Listing<OauthApplicationRow> {
  return oauthApplicationsListing(user.isAdmin ? null : user.id);
}

/**
 * Delete one of `user`'s applications (an admin: any); its codes and tokens go with it (foreign keys), so they stop
 * working at once. Someone else's application answers 404; the built-in one 403.
 */
export async function deleteApplication(ctx: AppContext, user: UserRow, id: number): Promise<void> {
  const app = validId(id) ? await oauthApplicationById(ctx.data, id) : null;
  if (!app || !ownsOauthApplication(user, app)) throw notFound('Application');
  if (app.builtin) throw forbidden(`the built-in application ${app.name} cannot be deleted`);
  // Its codes and tokens go with it: ON DELETE CASCADE (migration 0025).
  await deleteOauthApplication(ctx.data, app.id);
}

/** The application with this client_id, or null. */
export async function applicationByUid(ctx: AppContext, uid: string): Promise<OauthApplicationRow | null> {
  return oauthApplicationByUid(ctx.data, uid);
}

/** The username of the user who registered an application (null for the built-in one, or a deleted owner). */
export async function applicationOwnerName(ctx: AppContext, app: OauthApplicationRow): Promise<string | null> {
  if (app.ownerId === null) return null;
  return (await userById(ctx.data, app.ownerId))?.username ?? null;
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
export async function authenticateClient(ctx: AppContext, c: ClientCredentials): Promise<OauthApplicationRow | null> {
  if (!c.clientId) {
    if (c.clientSecret) throw oauthError('invalid_client', 'client_secret was sent without client_id; send both (or use HTTP Basic authentication)');
    return null;
  }
  const app = await applicationByUid(ctx, c.clientId);
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
