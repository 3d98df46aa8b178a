/**
 * The pages of people and groups: `/u/<username>` and `/<username>` (a user and the projects of their namespace the
 * reader may see), `/groups/<path>` and `/<group>` (a group and its projects the reader may see), under the API's
 * rules: GET /users/:id and /groups/:id (a hidden group is a 404 page). Reading them needs a session, as the API
 * needs a token.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { NamespaceRow, ProjectRow, UserRow } from '../../db/schema.js';
import { ApiError } from '../../errors.js';
import { findGroup, groupProjects, lookupGroup } from '../../services/users/groups.js';
import { RESERVED_NAMESPACE_PATHS, userNamespace, usersByUsername } from '../../services/users/users.js';
import { html, pageNumber, pager, type Html } from './html.js';
import { layout, sendHtml, type PageContext } from './layout.js';
import { PageRefusal } from './scope.js';
import { pageContext } from './session.js';

const PER_PAGE = 20;

/** One page (`?page=`, 20 a page) of the projects of a namespace the reader may see. */
function projectList(ns: NamespaceRow, projects: ProjectRow[], query: unknown): Html {
  if (!projects.length) return html`<p class="muted">No projects you can see.</p>`;
  const page = Math.min(pageNumber(query), Math.ceil(projects.length / PER_PAGE));
  const shown = projects.slice((page - 1) * PER_PAGE, page * PER_PAGE);
  return html`<ul class="list">${shown.map((p) => html`<li><a href="/${ns.path}/${p.path}">${p.name}</a>${p.description ? html`<span class="muted">${p.description}</span>` : ''}</li>`)}</ul>${
    pager(page, PER_PAGE, projects.length)}`;
}

/** Registers the user and group pages. */
export default async function peoplePages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  async function userPage(pc: PageContext, reply: FastifyReply, user: UserRow, query: unknown) {
    const ns = await userNamespace(ctx, user);
    const projects = ns ? await groupProjects(ctx, pc.viewer!, ns) : [];
    const body = html`<h1>${user.name} <span class="muted">@${user.username}</span></h1>
${user.state !== 'active' ? html`<p class="muted">This account is ${user.state}.</p>` : ''}
<h2>Projects</h2>${ns ? projectList(ns, projects, query) : ''}`;
    return sendHtml(reply, 200, layout(pc, user.name, body));
  }

  async function groupPage(pc: PageContext, reply: FastifyReply, path: string, query: unknown) {
    let group: NamespaceRow;
    try {
      group = await findGroup(ctx, pc.viewer, path);
    } catch (e) {
      if (e instanceof ApiError && e.statusCode === 404) throw new PageRefusal(404);
      throw e;
    }
    const projects = await groupProjects(ctx, pc.viewer!, group);
    const body = html`<h1>${group.name} <span class="muted">${group.path}</span></h1>${group.description ? html`<p class="lead">${group.description}</p>` : ''}<h2>Projects</h2>${projectList(group, projects, query)}`;
    return sendHtml(reply, 200, layout(pc, group.name, body));
  }

  async function signedIn(pc: PageContext) {
    if (!pc.viewer) throw new PageRefusal(401);
    return pc;
  }

  async function userByName(username: string) {
    const [user] = await usersByUsername(ctx, username);
    if (!user) throw new PageRefusal(404);
    return user;
  }

  app.get<{ Params: { username: string } }>('/u/:username', { schema: { hide: true } }, async (request, reply) => {
    const pc = await signedIn(await pageContext(ctx, request));
    return userPage(pc, reply, await userByName(request.params.username), request.query);
  });

  app.get<{ Params: { path: string } }>('/groups/:path', { schema: { hide: true } }, async (request, reply) => {
    const pc = await signedIn(await pageContext(ctx, request));
    return groupPage(pc, reply, request.params.path, request.query);
  });

  // A namespace: a group's page or a user's page (GitLab's `/<namespace>`), reserved words are other routes' (404).
  app.get<{ Params: { namespace: string } }>('/:namespace', { schema: { hide: true } }, async (request, reply) => {
    const name = request.params.namespace;
    if (RESERVED_NAMESPACE_PATHS.has(name.toLowerCase()) || name.startsWith('-')) return reply.callNotFound();
    const pc = await signedIn(await pageContext(ctx, request));
    if ((await lookupGroup(ctx, name))?.path.toLowerCase() === name.toLowerCase()) return groupPage(pc, reply, name, request.query);
    return userPage(pc, reply, await userByName(name), request.query);
  });
}
