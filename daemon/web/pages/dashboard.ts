/**
 * The dashboard of a signed-in browser, at GitLab 8.x's paths: `/` and /dashboard/projects (the projects you are a
 * member of, GET /projects), /dashboard/todos (GET /todos, with "done"), /dashboard/issues and
 * /dashboard/merge_requests (assigned to you, or authored by you), each paginated. The lists are the API's: the same
 * services and the same policy SQL (what you may no longer read is not listed). Anonymous browsers are sent to sign in.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { presentIssues } from '../../api/entities/issues.js';
import { presentMergeRequests } from '../../api/entities/merge-requests.js';
import { presentBasicProjects } from '../../api/entities/projects.js';
import { presentTodos } from '../../api/entities/todos.js';
import { countIssues, issueListQuery, listIssues, markTodoDone, todoListWhere } from '../../services/collaboration/index.js';
import { countTodos, listTodos } from '../../services/collaboration/todos.js';
import { countUserMergeRequests, listUserMergeRequests } from '../../services/merge-requests/index.js';
import { countProjects, fetchProjects, projectListQueryAsync } from '../../services/projects/lists.js';
import { buttonForm, formSession, signedInPage, type SignedIn } from './forms.js';
import { html, pageNumber, pager, statusBadge, timeAgo, type Html } from './html.js';
import { layout, sendHtml } from './layout.js';
import { pageId, PageRefusal } from './scope.js';

type Rec = Record<string, unknown>;
const PER_PAGE = 20;
type Tab = 'projects' | 'todos' | 'issues' | 'merge_requests';

/** A path of this site from one of the API's absolute web URLs. */
const local = (url: unknown) => (typeof url === 'string' ? url.replace(/^https?:\/\/[^/]+/, '') || '/' : '/');

function dashboardNav(current: Tab): Html {
  const items: [Tab, string][] = [['projects', 'Projects'], ['todos', 'Todos'], ['issues', 'Issues'], ['merge_requests', 'Merge requests']];
  return html`<nav class="tabs" aria-label="Dashboard">${items.map(([k, label]) => html`<a href="/dashboard/${k}"${k === current ? html` aria-current="page"` : ''}>${label}</a>`)}</nav>`;
}

/** The assigned/authored and state choices of the issue and merge request lists, read from the query. */
function listChoice(query: unknown, states: string[]) {
  const q = query as Rec;
  const scope = q.scope === 'authored' ? 'authored' : 'assigned';
  const state = typeof q.state === 'string' && states.includes(q.state) ? q.state : 'opened';
  return { scope, state, page: pageNumber(query) } as const;
}

function choiceTabs(scope: string, state: string, states: string[]): Html {
  const link = (o: { scope: string; state: string }) => `?${new URLSearchParams(o).toString()}`;
  return html`<nav class="tabs" aria-label="Whose"><a href="${link({ scope: 'assigned', state })}"${scope === 'assigned' ? html` aria-current="page"` : ''}>Assigned to you</a>
<a href="${link({ scope: 'authored', state })}"${scope === 'authored' ? html` aria-current="page"` : ''}>Created by you</a></nav>
<nav class="tabs" aria-label="State">${states.map((s) => html`<a href="${link({ scope, state: s })}"${s === state ? html` aria-current="page"` : ''}>${s[0]!.toUpperCase()}${s.slice(1)}</a>`)}</nav>`;
}

const refOf = (project: unknown) => ((project as Rec | null)?.path_with_namespace as string | undefined) ?? '';

/** Registers the dashboard. */
export default async function dashboardPages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  async function projectsPage(pc: SignedIn, reply: FastifyReply, page: number) {
    const { total, rows } = await ctx.data.snapshot(async (tx) => {
      const query = await projectListQueryAsync(ctx, tx, { kind: 'authorized', user: pc.viewer }, { order_by: 'last_activity_at' });
      const n = await countProjects(ctx, tx, query);
      return { total: n, rows: n === 0 ? [] : await fetchProjects(ctx, tx, query, PER_PAGE, (page - 1) * PER_PAGE, n) };
    });
    const projects = await presentBasicProjects(ctx, rows);
    const items = projects.map((p, i) => html`<li><a href="/${p.path_with_namespace as string}">${p.name_with_namespace as string}</a>${
      rows[i]!.description ? html`<span class="muted">${rows[i]!.description}</span>` : ''}</li>`);
    const body = html`<h1>Your projects</h1>${dashboardNav('projects')}${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">You are not a member of any project yet.</p>`}${pager(page, PER_PAGE, total)}`;
    return sendHtml(reply, 200, layout(pc, 'Projects · Dashboard', body));
  }

  for (const path of ['/', '/dashboard', '/dashboard/projects']) {
    app.get(path, { schema: { hide: true } }, async (request, reply) => projectsPage(await signedInPage(ctx, request), reply, pageNumber(request.query)));
  }

  app.get('/dashboard/todos', { schema: { hide: true } }, async (request, reply) => {
    const pc = await signedInPage(ctx, request);
    const page = pageNumber(request.query);
    const done = (request.query as Rec).state === 'done';
    const where = await todoListWhere(ctx, pc.viewer, { state: done ? 'done' : 'pending' });
    const { total, rows } = await ctx.data.snapshot(async (tx) => {
      const n = await countTodos(tx, where);
      return { total: n, rows: n === 0 ? [] : await listTodos(ctx, tx, where, PER_PAGE, (page - 1) * PER_PAGE, n) };
    });
    const todos = await presentTodos(ctx, pc.viewer, rows);
    const items = todos.map((t) => {
      const target = t.target as Rec;
      const ref = `${t.target_type === 'MergeRequest' ? '!' : '#'}${target.iid as number}`;
      const author = t.author as Rec | null;
      return html`<li id="todo-${t.id as number}"><span>${author ? html`<a href="/${author.username as string}">${author.name as string}</a>` : 'Someone'} ${
        String(t.action_name).replace(/_/g, ' ')} <a href="${local(t.target_url)}">${refOf(t.project)}${ref}</a> ${timeAgo(t.created_at as string)}</span>
<span class="muted">${t.body as string}</span>${done ? '' : buttonForm(pc, `/dashboard/todos/${t.id as number}/done`, 'Done')}</li>`;
    });
    const tabs = html`<nav class="tabs" aria-label="State"><a href="/dashboard/todos"${done ? '' : html` aria-current="page"`}>To do</a><a href="/dashboard/todos?state=done"${done ? html` aria-current="page"` : ''}>Done</a></nav>`;
    const body = html`<h1>Todos</h1>${dashboardNav('todos')}${tabs}${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">${done ? 'Nothing done yet.' : 'Nothing to do.'}</p>`}${
      pager(page, PER_PAGE, total, done ? { state: 'done' } : {})}`;
    return sendHtml(reply, 200, layout(pc, 'Todos · Dashboard', body));
  });

  app.post<{ Params: { id: string } }>('/dashboard/todos/:id/done', { schema: { hide: true } }, async (request, reply) => {
    const pc = await formSession(ctx, request, reply);
    if (!pc) return reply;
    if (!(await markTodoDone(ctx, pc.viewer, pageId(request.params.id)))) throw new PageRefusal(404);
    return reply.header('cache-control', 'no-store').redirect('/dashboard/todos', 303);
  });

  const ISSUE_STATES = ['opened', 'closed', 'all'];
  app.get('/dashboard/issues', { schema: { hide: true } }, async (request, reply) => {
    const pc = await signedInPage(ctx, request);
    const c = listChoice(request.query, ISSUE_STATES);
    const lq = await issueListQuery(ctx, {
      scope: { kind: c.scope === 'authored' ? 'author' : 'assignee', userId: pc.viewer.id }, viewer: pc.viewer, state: c.state, orderBy: 'created_at', sort: 'desc',
    });
    const total = await countIssues(ctx, ctx.data, lq);
    const issues = await presentIssues(ctx, pc.viewer, total === 0 ? [] : await listIssues(ctx, ctx.data, lq, PER_PAGE, (c.page - 1) * PER_PAGE, total));
    const items = issues.map((i) => html`<li><a href="${local(i.web_url)}">${i.title as string}</a>
<span class="muted">${local(i.web_url).replace(/^\/|\/issues\/\d+$/g, '')}#${i.iid as number} · opened ${timeAgo(i.created_at as string)} ${statusBadge(i.state as string)}</span></li>`);
    const body = html`<h1>Issues</h1>${dashboardNav('issues')}${choiceTabs(c.scope, c.state, ISSUE_STATES)}${
      items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No issues here.</p>`}${pager(c.page, PER_PAGE, total, { scope: c.scope, state: c.state })}`;
    return sendHtml(reply, 200, layout(pc, 'Issues · Dashboard', body));
  });

  const MR_STATES = ['opened', 'merged', 'closed', 'all'];
  app.get('/dashboard/merge_requests', { schema: { hide: true } }, async (request, reply) => {
    const pc = await signedInPage(ctx, request);
    const c = listChoice(request.query, MR_STATES);
    const f = { viewer: pc.viewer, role: c.scope === 'authored' ? 'author' as const : 'assignee' as const, userId: pc.viewer.id, state: c.state };
    const { total, rows } = await ctx.data.snapshot(async (tx) => {
      const n = await countUserMergeRequests(tx, f);
      return { total: n, rows: n === 0 ? [] : await listUserMergeRequests(ctx, tx, f, PER_PAGE, (c.page - 1) * PER_PAGE, n) };
    });
    const mrs = await presentMergeRequests(ctx, pc.viewer, rows);
    const items = mrs.map((m) => html`<li><a href="${local(m.web_url)}">${m.title as string}</a>
<span class="muted">${local(m.web_url).replace(/^\/|\/merge_requests\/\d+$/g, '')}!${m.iid as number} · ${m.source_branch as string} → ${m.target_branch as string} · opened ${timeAgo(m.created_at as string)} ${statusBadge(m.state as string)}</span></li>`);
    const body = html`<h1>Merge requests</h1>${dashboardNav('merge_requests')}${choiceTabs(c.scope, c.state, MR_STATES)}${
      items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No merge requests here.</p>`}${pager(c.page, PER_PAGE, total, { scope: c.scope, state: c.state })}`;
    return sendHtml(reply, 200, layout(pc, 'Merge requests · Dashboard', body));
  });
}
