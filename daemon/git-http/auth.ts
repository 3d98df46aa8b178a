/**
 * Who is calling git over HTTP and what they may do: HTTP basic credentials (username + password, or any username
 * + private/personal access token, or whatever a registered resolver accepts: OAuth tokens, CI build tokens), then
 * read (upload-pack) or write (receive-pack) access decided by the policy module.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { gitProtocolDenial, userForToken } from '../policy/authentication.js';
import { anonymousCanDownload, canProject } from '../policy/permissions.js';
import { getSettings } from '../services/settings.js';
import { signIn } from '../services/users.js';

/** What a set of git credentials stands for. */
export interface GitCredential {
  /** The user acting (null: a credential that is not a user, limited to `projectId`). */
  user: UserRow | null;
  /** Only fetch and clone, never push (CI build tokens). */
  readOnly?: boolean;
  /** Only this project (other projects answer as if the credential had no access). */
  projectId?: number;
}

/** Maps basic-auth credentials to a GitCredential, or null/undefined when they are not this resolver's kind. */
export type GitCredentialResolver = (ctx: AppContext, username: string, password: string) => GitCredential | null | undefined | Promise<GitCredential | null | undefined>;

const resolvers: GitCredentialResolver[] = [];

/** Register a credential resolver (OAuth tokens with username `oauth2`, CI build tokens `gitlab-ci-token:<token>`). */
export function registerGitCredentialResolver(fn: GitCredentialResolver): void {
  resolvers.push(fn);
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

/** Resolve credentials: registered resolvers first, then a private/personal access token, then username + password. */
export async function resolveGitCredentials(ctx: AppContext, username: string, password: string): Promise<GitCredential | null> {
  if (!password) return null;
  for (const r of resolvers) {
    const c = await r(ctx, username, password);
    if (c) return c;
  }
  const byToken = userForToken(ctx, password);
  if (byToken) return { user: byToken };
  if (!username) return null;
  const user = await signIn(ctx, username, password);
  return user ? { user } : null;
}

/** The outcome of an access check: allowed (with the acting user, null for anonymous), or an HTTP refusal. */
export type GitAccess =
  | { ok: true; user: UserRow | null }
  | { ok: false; status: 401 | 403 | 404; message: string };

const MESSAGES = {
  unauthorized: 'HTTP Basic: Access denied',
  notFound: 'The project you were looking for could not be found.',
  download: 'You are not allowed to download code from this project.',
  upload: 'You are not allowed to upload code for this project.',
  push: 'You are not allowed to push code to this project.',
};

const deny = (status: 401 | 403 | 404, message: string): GitAccess => ({ ok: false, status, message });

/**
 * Decide access for a git request. Missing or wrong credentials where they are needed: 401 (git then prompts).
 * A signed-in caller who may not see the project: 404. Visible but not allowed: 403.
 */
export async function gitAccess(ctx: AppContext, request: FastifyRequest, project: ProjectRow | null, write: boolean): Promise<GitAccess> {
  // The protocol first, as 8.x's GitAccess#check: no credential is asked for when HTTP is switched off.
  const protocolDenial = gitProtocolDenial(getSettings(ctx).enabledGitAccessProtocol, 'http');
  if (protocolDenial) return deny(403, protocolDenial);
  const basic = parseBasicAuth(request.headers.authorization);
  const cred = basic ? await resolveGitCredentials(ctx, basic.username, basic.password) : null;
  if (basic && !cred) return deny(401, MESSAGES.unauthorized);
  if (!cred) {
    // Anonymous: public projects can be cloned; anything else asks for credentials (without saying whether it exists).
    if (!write && project && anonymousCanDownload(project)) return { ok: true, user: null };
    return deny(401, MESSAGES.unauthorized);
  }
  if (!project || (cred.projectId !== undefined && cred.projectId !== project.id)) return deny(404, MESSAGES.notFound);
  const user = cred.user;
  if (!user) {
    // A project-scoped credential without a user: read only.
    return write ? deny(403, MESSAGES.upload) : { ok: true, user: null };
  }
  if (!canProject(ctx, user, 'read_project', project)) {
    if (!write && anonymousCanDownload(project)) return { ok: true, user };
    return deny(404, MESSAGES.notFound);
  }
  if (!write) return canProject(ctx, user, 'download_code', project) ? { ok: true, user } : deny(403, MESSAGES.download);
  if (cred.readOnly) return deny(403, MESSAGES.upload);
  return canProject(ctx, user, 'push_code', project) ? { ok: true, user } : deny(403, MESSAGES.push);
}
