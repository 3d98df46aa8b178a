/**
 * The web addresses Gantry hands out (web_url, avatar_url, the `url` of hook payloads), in one low module as GitLab's
 * Gitlab::UrlBuilder: presenters, hook payload builders, services and pages import it, so none of them climbs up to
 * api/ for a URL. Paths are GitLab 8.x's (/:namespace/:project/issues/:iid, .../merge_requests/:iid, ...).
 */
import { createHash } from 'node:crypto';
import type { AppContext } from './context.js';
import type { NamespaceRow, ProjectRow, UserRow } from './db/schema.js';

/** `git@host:path` on port 22 (scp form), `ssh://git@host:port/path` on any other port, as GitLab 8.x. */
export function sshCloneUrl(address: { host: string; port: number }, path: string): string {
  const host = address.host.includes(':') && !address.host.startsWith('[') ? `[${address.host}]` : address.host;
  return address.port === 22 ? `git@${host}:${path}` : `ssh://git@${host}:${address.port}/${path}`;
}

/** web_url, http and ssh clone URLs of a project. */
export function projectUrls(ctx: Pick<AppContext, 'externalUrl' | 'sshAddress'>, ns: Pick<NamespaceRow, 'path'>, p: Pick<ProjectRow, 'path'>) {
  const base = ctx.externalUrl();
  const web = `${base}/${ns.path}/${p.path}`;
  const ssh = ctx.sshAddress?.() ?? { host: new URL(base).hostname, port: 22 };
  return { web_url: web, http_url_to_repo: `${web}.git`, ssh_url_to_repo: sshCloneUrl(ssh, `${ns.path}/${p.path}.git`) };
}

/** A user's profile page. */
export const userWebUrl = (ctx: Pick<AppContext, 'externalUrl'>, username: string) => `${ctx.externalUrl()}/${username}`;

/**
 * The avatar URL of a user: Gravatar when enabled (`gravatar`: the gravatar_enabled setting, read once per request:
 * gravatarEnabledAsync), otherwise null.
 */
export function avatarUrl(user: Pick<UserRow, 'email'>, gravatar: boolean): string | null {
  if (!gravatar) return null;
  let url = avatarUrls.get(user.email);
  if (url === undefined) {
    const md5 = createHash('md5').update(user.email.trim().toLowerCase()).digest('hex');
    url = `https://www.gravatar.com/avatar/${md5}?s=80&d=identicon`;
    if (avatarUrls.size >= AVATAR_URLS) avatarUrls.clear();
    avatarUrls.set(user.email, url);
  }
  return url;
}

/**
 * The Gravatar URLs of the last emails asked (an issue page names 20-40 people, each an MD5 a time: 2-3 % of its
 * CPU), at most AVATAR_URLS of them (about 150 KB), all dropped when full.
 */
const AVATAR_URLS = 1000;
const avatarUrls = new Map<string, string>();

/** The pages below a project's web_url. */
export const issueWebUrl = (projectWebUrl: string, iid: number) => `${projectWebUrl}/issues/${iid}`;
export const mergeRequestWebUrl = (projectWebUrl: string, iid: number) => `${projectWebUrl}/merge_requests/${iid}`;
export const commitWebUrl = (projectWebUrl: string, sha: string) => `${projectWebUrl}/commit/${sha}`;
