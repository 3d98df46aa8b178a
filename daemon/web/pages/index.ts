/**
 * The web pages behind every web_url (issue 24): server-rendered HTML at GitLab 8.x's paths, read through the API's
 * services, policy and presenters, with the OAuth pages' cookie session. Refusals are pages: 404 where the API
 * answers 404 (absent or hidden), 403 where it answers 403, and a browser without a session that asks for more than
 * public code is sent to /users/sign_in. Paths under the site's own prefixes (api, ci, oauth, -, ...) are never
 * project pages: they answer the JSON 404 of the rest of the router.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { daemonAsset } from '../../assets.js';
import { ApiError } from '../../errors.js';
import { RESERVED_NAMESPACE_PATHS } from '../../services/users/users.js';
import ciPages from './ci.js';
import ciForms from './ci-forms.js';
import codePages from './code.js';
import dashboardPages from './dashboard.js';
import { html } from './html.js';
import issuableEditForms from './issuable-edit.js';
import issuableForms from './issuable-forms.js';
import issuablePages from './issuables.js';
import livePages from './live.js';
import milestonePages from './milestones.js';
import repositoryPages from './repository.js';
import { forbiddenPage, layout, notFoundPage, sendHtml } from './layout.js';
import peoplePages from './people.js';
import profilePages from './profile.js';
import { PageRefusal } from './scope.js';
import { pageContext } from './session.js';
import signInPages from './sign-in.js';

let css: string | undefined;
const FAVICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f5fbf"/><text x="16" y="23" font-family="sans-serif" font-size="20" font-weight="800" fill="#fff" text-anchor="middle">G</text></svg>';

/** Registers the pages. */
export default async function webPages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get('/-/assets/web.css', { schema: { hide: true } }, async (_request, reply) => {
    css ??= readFileSync(daemonAsset('web/pages/web.css'), 'utf8');
    return reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css);
  });

  // The icon of the pages (browsers ask for one): the mark of the header.
  app.get('/-/assets/favicon.svg', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff').send(FAVICON));

  // `/api/v3/x/y`-like paths that only look like project pages go to the router's JSON 404.
  app.addHook('preHandler', async (request, reply) => {
    const ns = (request.params as { namespace?: string } | undefined)?.namespace;
    if (ns !== undefined && (RESERVED_NAMESPACE_PATHS.has(ns.toLowerCase()) || ns.startsWith('-'))) return reply.callNotFound();
    const project = (request.params as { project?: string }).project;
    if (project !== undefined && /\.git$/i.test(project)) return reply.callNotFound();
  });

  app.setErrorHandler(async (error, request, reply) => {
    const status = error instanceof PageRefusal ? error.status : error instanceof ApiError && (error.statusCode === 404 || error.statusCode === 403) ? error.statusCode : null;
    if (status === 401) return reply.header('cache-control', 'no-store').redirect(`/users/sign_in?${new URLSearchParams({ redirect_to: request.url }).toString()}`, 302);
    const pc = await pageContext(ctx, request).catch(() => ({ viewer: null }));
    if (status === 404) return sendHtml(reply, 404, notFoundPage(pc));
    if (status === 403) return sendHtml(reply, 403, forbiddenPage(pc));
    request.log.error({ err: error }, 'unhandled error');
    return sendHtml(reply, 500, layout(pc, 'Something went wrong', html`<h1>500: something went wrong</h1><p>The server failed to answer. Try again in a moment.</p>`));
  });

  await app.register(signInPages);
  await app.register(peoplePages);
  await app.register(codePages);
  await app.register(issuablePages);
  await app.register(ciPages);
  // the writing half: forms (CSRF-checked POSTs through the API's services), the dashboard and the profile
  await app.register(issuableForms);
  await app.register(issuableEditForms);
  await app.register(ciForms);
  await app.register(dashboardPages);
  await app.register(profilePages);
  await app.register(repositoryPages);
  await app.register(milestonePages);
  await app.register(livePages);
}
