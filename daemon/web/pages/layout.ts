/**
 * The layout of every page (a header with the sign-in state, the project's nav) and how a page is sent: text/html,
 * a strict content-security-policy (no script, styles from our own stylesheet; a page that follows a build or pipeline
 * live loads our one script file, LIVE_CSP), no framing, no caching of pages that may be private.
 */
import type { FastifyReply } from 'fastify';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { html, type Html } from './html.js';

/** The content-security-policy of every page: nothing inline, nothing from elsewhere (Markdown images of other sites are links). */
export const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
/** The CSP of a page that follows a build or pipeline live: our one script file (/-/assets/live.js) and same-origin connections. */
export const LIVE_CSP = `${PAGE_CSP}; script-src 'self'; connect-src 'self'`;

/** What the layout needs to know about the request. */
export interface PageContext {
  viewer: UserRow | null;
  /** The CSRF token of the sign-out form (signed in only). */
  csrf?: string;
}

/** The project nav: what the project page family links to. */
export interface ProjectNav {
  project: ProjectRow;
  path: string;
  current: 'project' | 'files' | 'commits' | 'branches' | 'issues' | 'milestones' | 'labels' | 'merge_requests' | 'pipelines';
}

function projectNav(n: ProjectNav): Html {
  const p = n.project;
  const items: [ProjectNav['current'], string, string, boolean][] = [
    ['project', 'Project', '', true],
    ['files', 'Files', `/tree/${p.defaultBranch}`, true],
    ['commits', 'Commits', `/commits/${p.defaultBranch}`, true],
    ['branches', 'Branches', '/branches', true],
    ['issues', 'Issues', '/issues', p.issuesEnabled],
    ['milestones', 'Milestones', '/milestones', p.issuesEnabled || p.mergeRequestsEnabled],
    ['labels', 'Labels', '/labels', p.issuesEnabled || p.mergeRequestsEnabled],
    ['merge_requests', 'Merge requests', '/merge_requests', p.mergeRequestsEnabled],
    ['pipelines', 'Pipelines', '/pipelines', p.buildsEnabled],
  ];
  return html`<nav class="project-nav" aria-label="Project"><p class="project-title"><a href="/${n.path}">${n.path}</a></p><ul>${items
    .filter((i) => i[3])
    .map(([key, label, suffix]) => html`<li><a href="/${n.path}${suffix}"${key === n.current ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul></nav>`;
}

/** A whole page. */
export function layout(pc: PageContext, title: string, body: Html, nav?: ProjectNav, opts: { live?: boolean } = {}): Html {
  const who = pc.viewer
    ? html`<a href="/${pc.viewer.username}">@${pc.viewer.username}</a>
<form method="post" action="/users/sign_out" class="inline"><input type="hidden" name="authenticity_token" value="${pc.csrf ?? ''}"><button type="submit" class="link">Sign out</button></form>`
    : html`<a href="/users/sign_in">Sign in</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Gantry</title>
<link rel="stylesheet" href="/-/assets/web.css">
<link rel="icon" href="/-/assets/favicon.svg" type="image/svg+xml">
${opts.live ? html`<script src="/-/assets/live.js" defer></script>
` : ''}</head>
<body>
<a class="skip" href="#content">Skip to content</a>
<header class="site"><a class="brand" href="/"><span class="mark" aria-hidden="true">G</span> Gantry</a><div class="who">${who}</div></header>
${nav ? projectNav(nav) : ''}
<main id="content">
${body}
</main>
</body>
</html>
`;
}

/** Send a page. */
export function sendHtml(reply: FastifyReply, status: number, page: Html, csp = PAGE_CSP): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', csp)
    .send(page.text);
}

/** The 404 page (what the API answers 404 for: absent or hidden). */
export const notFoundPage = (pc: PageContext) =>
  layout(pc, 'Not found', html`<h1>404: page not found</h1><p>The page you were looking for does not exist, or you may not see it. ${pc.viewer ? '' : html`<a href="/users/sign_in">Sign in</a> to see more.`}</p>`);

/** The 403 page (visible, but the action or feature is not allowed). */
export const forbiddenPage = (pc: PageContext) => layout(pc, 'Forbidden', html`<h1>403: forbidden</h1><p>You may see this project, but not this part of it.</p>`);
