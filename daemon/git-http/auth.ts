/**
 * Who is calling git over HTTP and what they may do: HTTP basic credentials (username + password, or any username
 * + private/personal access token, or whatever a registered resolver accepts: OAuth tokens, CI build tokens), then
 * read (upload-pack) or write (receive-pack) access decided as for every transport (services/repository/git-access.ts).
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { ProjectRow } from '../db/schema.js';
import { userForToken } from '../policy/authentication.js';
import { decideGitAccess, GIT_ACCESS_MESSAGES, protocolRefusal, type GitAccess, type GitCredential } from '../services/repository/git-access.js';
import { signIn } from '../services/users/users.js';

export type { GitAccess, GitCredential } from '../services/repository/git-access.js';

/** Maps basic-auth credentials to a GitCredential, or null/undefined when they are not this resolver's kind. */
export type GitCredentialResolver = (ctx: AppContext, username: string, password: string) => GitCredential | null | undefined | Promise<GitCredential | null | undefined>;

const resolvers: GitCredentialResolver[] = [];

/**
 * Register a credential resolver (OAuth tokens with username `oauth2`, CI build tokens `gitlab-ci-token:<token>`);
 * returns the function that unregisters it.
 */
export function registerGitCredentialResolver(fn: GitCredentialResolver): () => void {
  resolvers.push(fn);
  return () => {
    const i = resolvers.indexOf(fn);
    if (i >= 0) resolvers.splice(i, 1);
  };
}

/** Username and password of an `Authorization: Basic` header; null when absent or malformed. */
export function parseBasicAuth(header: string | undefined): { username: string; password: string } | null {
  const m = header?.match(/^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i);
  if (!m) return null;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return null;
  return { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/**
 * Resolve credentials: registered resolvers first, then a private/personal access token, then username + password
 * (throttled per user and per client `address`: SignInThrottled, a 429, when either failed too often).
 */
export async function resolveGitCredentials(ctx: AppContext, username: string, password: string, address?: string): Promise<GitCredential | null> {
  if (!password) return null;
  const registered = await resolveRegistered(ctx, username, password);
  if (registered) return registered;
  const byToken = await userForToken(ctx, password);
  if (byToken) return { user: byToken };
  if (!username) return null;
  const user = await signIn(ctx, username, password, { address });
  return user ? { user } : null;
}

/** What the registered resolvers make of the credentials (no token lookup, no password sign-in), or null. */
async function resolveRegistered(ctx: AppContext, username: string, password: string): Promise<GitCredential | null> {
  if (!password) return null;
  for (const r of resolvers) {
    const c = await r(ctx, username, password);
    if (c) return c;
  }
  return null;
}

/**
 * Decide access for a git request over HTTP: the basic-auth credentials resolved, then the decision every transport
 * shares (services/repository/git-access.ts). Credentials that are sent but wrong: 401 (git then prompts).
 */
export async function gitAccess(ctx: AppContext, request: FastifyRequest, project: ProjectRow | null, write: boolean): Promise<GitAccess> {
  const basic = parseBasicAuth(request.headers.authorization);
  // HTTP switched off (enabled_git_access_protocol = ssh): only a CI fetch gets through, since runners have no SSH
  // (8.x's git HTTP controller let `ci?` read before any protocol check). git sends the credentials of its URL
  // (`gitlab-ci-token:<token>@`) only after a 401, so a fetch without credentials is challenged (the body says why);
  // with credentials, the registered resolvers alone are asked (no password is tried) and anything but a CI
  // credential reading gets the refusal, wrong CI tokens included. Pushes are refused at once.
  const refused = await protocolRefusal(ctx, 'http');
  if (refused) {
    if (!basic) return write ? refused : { ok: false, status: 401, message: refused.message };
    const ci = write ? null : await resolveRegistered(ctx, basic.username, basic.password);
    return ci?.ci ? decideGitAccess(ctx, 'http', ci, project, write) : refused;
  }
  const cred = basic ? await resolveGitCredentials(ctx, basic.username, basic.password, request.ip) : null;
  if (basic && !cred) return { ok: false, status: 401, message: GIT_ACCESS_MESSAGES.unauthorized };
  return decideGitAccess(ctx, 'http', cred, project, write);
}
