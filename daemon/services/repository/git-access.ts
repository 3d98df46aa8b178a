/**
 * Who may fetch from or push to a project's repository, whatever the transport: one decision for git over HTTP
 * (daemon/git-http/) and git over SSH (daemon/ssh/). The transports only turn their own credentials (basic auth,
 * an SSH key) into a GitCredential and present the outcome (an HTTP status, a line on stderr).
 */
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { gitProtocolDenial, type GitProtocol } from '../../policy/authentication.js';
import { anonymousCanDownload, canProject, projectAccessLevelAsync } from '../../policy/permissions.js';
import { getSettings } from '../instance/settings.js';

/** What a set of git credentials stands for. */
export interface GitCredential {
  /** The user acting (null: a credential that is not a user, limited to `projectIds`). */
  user: UserRow | null;
  /** Only fetch and clone, never push (CI build tokens, deploy keys). */
  readOnly?: boolean;
  /** Only these projects (others answer as if the credential had no access). */
  projectIds?: readonly number[];
  /**
   * A CI credential (a running build's token or the project's runners token, as `gitlab-ci-token`): its fetches over
   * HTTP pass whatever enabled_git_access_protocol says, since runners have no other way to check out (8.x's git HTTP
   * controller let `ci?` read before any protocol check).
   */
  ci?: boolean;
}

/** The outcome of an access check: allowed (with the acting user, null for anonymous or a deploy key), or refused. */
export type GitAccess =
  | { ok: true; user: UserRow | null }
  | { ok: false; status: 401 | 403 | 404; message: string };

/** A refused access. */
export type GitRefusal = Extract<GitAccess, { ok: false }>;

/** GitLab 8.x's GitAccess messages. */
export const GIT_ACCESS_MESSAGES = {
  unauthorized: 'HTTP Basic: Access denied',
  notFound: 'The project you were looking for could not be found.',
  download: 'You are not allowed to download code from this project.',
  upload: 'You are not allowed to upload code for this project.',
  push: 'You are not allowed to push code to this project.',
} as const;

const deny = (status: 401 | 403 | 404, message: string): GitAccess => ({ ok: false, status, message });

/**
 * The refusal when the enabled_git_access_protocol setting switches `protocol` off; null when it is allowed (the rule,
 * with its CI fetch exception, is policy's gitProtocolDenial).
 */
export async function protocolRefusal(ctx: AppContext, protocol: GitProtocol, cred: GitCredential | null = null, write = false): Promise<GitRefusal | null> {
  const message = gitProtocolDenial((await getSettings(ctx)).enabledGitAccessProtocol, protocol, Boolean(cred?.ci) && !write);
  return message ? { ok: false, status: 403, message } : null;
}

/**
 * Decide access to `project` (null: no such project) over `protocol` for `cred` (null: anonymous), reading (`write`
 * false: upload-pack) or pushing (receive-pack). Missing credentials where they are needed: 401. A caller who may
 * not see the project: 404. Visible but not allowed: 403. The protocol is checked first, as 8.x's GitAccess#check.
 */
export async function decideGitAccess(ctx: AppContext, protocol: GitProtocol, cred: GitCredential | null, project: ProjectRow | null, write: boolean): Promise<GitAccess> {
  const refused = await protocolRefusal(ctx, protocol, cred, write);
  if (refused) return refused;
  if (!cred) {
    // Anonymous: public projects can be cloned; anything else asks for credentials (without saying whether it exists).
    if (!write && project && anonymousCanDownload(project)) return { ok: true, user: null };
    return deny(401, GIT_ACCESS_MESSAGES.unauthorized);
  }
  if (!project || (cred.projectIds !== undefined && !cred.projectIds.includes(project.id))) return deny(404, GIT_ACCESS_MESSAGES.notFound);
  const user = cred.user;
  if (!user) {
    // A project-scoped credential without a user: read only.
    return write ? deny(403, GIT_ACCESS_MESSAGES.upload) : { ok: true, user: null };
  }
  // The caller's access level, read once (one statement) for the three ability checks.
  const level = user.isAdmin || user.state !== 'active' ? 0 : await projectAccessLevelAsync(ctx, user, project);
  if (!canProject(user, 'read_project', project, level)) {
    if (!write && anonymousCanDownload(project)) return { ok: true, user };
    return deny(404, GIT_ACCESS_MESSAGES.notFound);
  }
  if (!write) return canProject(user, 'download_code', project, level) ? { ok: true, user } : deny(403, GIT_ACCESS_MESSAGES.download);
  if (cred.readOnly) return deny(403, GIT_ACCESS_MESSAGES.upload);
  return canProject(user, 'push_code', project, level) ? { ok: true, user } : deny(403, GIT_ACCESS_MESSAGES.push);
}
