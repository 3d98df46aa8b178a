/**
 * The milestone and label pages of a project: milestones (state tabs, `?page=`), one milestone (`/milestones/<iid>`)
 * with its description and its issues as GET /projects/:id/milestones/:id/issues lists them for the reader
 * (confidential ones left out as there), and the labels with their colours. read_milestone and read_label, as the API.
 */
import type { FastifyInstance } from 'fastify';
import type { ProjectRow } from '../../db/schema.js';
import { presentIssues } from '../../api/entities/issues.js';
import { anonymousCanProject, canProjectAsync, confidentialIssuesWhere } from '../../policy/permissions.js';
import {
  countMilestoneIssues, countProjectMilestones, listMilestoneIssues, listProjectMilestones,
} from '../../services/collaboration/milestones.js';
import { countProjectLabels, listProjectLabels } from '../../db/labels.js';
import { html, pageNumber, pager, statusBadge, timeAgo } from './html.js';
import { layout, sendHtml } from './layout.js';
import { renderMarkdown } from './markdown.js';
import { pageId, pageProject, PageRefusal } from './scope.js';
import { pageContext } from './session.js';

type P = { namespace: string; project: string; iid?: string };
const PER_PAGE = 20;
const STATES = ['active', 'closed', 'all'] as const;

/** A label colour as GitLab stores it (`#` and 3 or 6 hex digits), or null (then no swatch). */
export const labelColor = (color: string) => (/^#([0-9a-f]{3}|[0-9a-f]{6})$/i.test(color) ? color.slice(1).toLowerCase() : null);

/** Registers the milestone and label pages. */
export default async function milestonePages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  const nav = (project: ProjectRow, p: P, current: 'milestones' | 'labels' = 'milestones') => ({ project, path: `${p.namespace}/${p.project}`, current });

  // A label's colour swatch as an image of our own origin (the pages' CSP allows no inline style).
  app.get<{ Params: { color: string } }>('/-/assets/swatch/:color', { schema: { hide: true } }, async (request, reply) => {
    const m = /^([0-9a-f]{3}|[0-9a-f]{6})\.svg$/.exec(request.params.color);
    if (!m) return reply.callNotFound();
    return reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff')
      .send(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#${m[1]}"/></svg>`);
  });

  app.get<{ Params: P }>('/:namespace/:project/milestones', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_milestone');
    const base = `/${request.params.namespace}/${request.params.project}`;
    const raw = (request.query as Record<string, unknown>).state;
    const state = typeof raw === 'string' && (STATES as readonly string[]).includes(raw) ? raw : 'active';
    const page = pageNumber(request.query);
    const f = { state };
    const total = await countProjectMilestones(ctx.data, project.id, f);
    const rows = await listProjectMilestones(ctx.data, project.id, f, PER_PAGE, (page - 1) * PER_PAGE);
    const items = rows.map((m) => html`<li><a href="${base}/milestones/${m.iid}">${m.title}</a>
<span class="muted">%${m.iid} ${statusBadge(m.state)}${m.dueDate ? html` · due ${m.dueDate}` : ''} · created ${timeAgo(m.createdAt)}</span></li>`);
    const tabs = html`<nav class="tabs" aria-label="State">${STATES.map((s) => html`<a href="?state=${s}"${s === state ? html` aria-current="page"` : ''}>${s[0]!.toUpperCase()}${s.slice(1)}</a>`)}</nav>`;
    const body = html`<h1>Milestones</h1>${tabs}${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No milestones here.</p>`}${pager(page, PER_PAGE, total, { state })}`;
    return sendHtml(reply, 200, layout(pc, `Milestones · ${project.name}`, body, nav(project, request.params)));
  });

  app.get<{ Params: P }>('/:namespace/:project/milestones/:iid', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_milestone');
    const base = `/${request.params.namespace}/${request.params.project}`;
    const [milestone] = await listProjectMilestones(ctx.data, project.id, { iids: [pageId(request.params.iid!)] }, 1, 0);
    if (!milestone) throw new PageRefusal(404);
    // Issues switched off: the milestone still shows (merge requests use it), with no issue in it (the API's rule).
    const readsIssues = pc.viewer ? await canProjectAsync(ctx, pc.viewer, 'read_issue', project) : anonymousCanProject('read_issue', project);
    const filter = readsIssues ? await confidentialIssuesWhere(ctx, pc.viewer, project) : { sql: 'FALSE', args: [] };
    const page = pageNumber(request.query);
    const total = await countMilestoneIssues(ctx.data, milestone, filter);
    const issues = await presentIssues(ctx, pc.viewer, await listMilestoneIssues(ctx.data, milestone, filter, PER_PAGE, (page - 1) * PER_PAGE));
    const items = issues.map((i) => html`<li><a href="${base}/issues/${i.iid as number}">${i.title as string}</a>
<span class="muted">#${i.iid as number} ${statusBadge(i.state as string)} · opened ${timeAgo(i.created_at as string)}</span></li>`);
    const body = html`<h1>${milestone.title} <span class="muted">%${milestone.iid}</span></h1>
<p>${statusBadge(milestone.state)}${milestone.startDate ? html` · starts ${milestone.startDate}` : ''}${milestone.dueDate ? html` · due ${milestone.dueDate}` : ''}</p>
${milestone.description ? html`<div class="md description">${renderMarkdown(milestone.description, { projectPath: base })}</div>` : ''}
<section aria-labelledby="ms-issues"><h2 id="ms-issues">${total} issue${total === 1 ? '' : 's'}</h2>${items.length ? html`<ul class="list">${items}</ul>` : ''}${pager(page, PER_PAGE, total)}</section>`;
    return sendHtml(reply, 200, layout(pc, `${milestone.title} · Milestones`, body, nav(project, request.params)));
  });

  app.get<{ Params: P }>('/:namespace/:project/labels', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_label');
    const page = pageNumber(request.query);
    const total = await countProjectLabels(ctx.data, project.id);
    const rows = await listProjectLabels(ctx.data, project.id, PER_PAGE, (page - 1) * PER_PAGE);
    const items = rows.map((l) => {
      const color = labelColor(l.color);
      return html`<li><span>${color ? html`<img class="swatch" src="/-/assets/swatch/${color}.svg" alt="" width="14" height="14"> ` : ''}<span class="label">${l.title}</span> <span class="muted">${l.color}</span></span>${
        l.description ? html`<span class="muted">${l.description}</span>` : ''}</li>`;
    });
    const body = html`<h1>Labels</h1>${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No labels yet.</p>`}${pager(page, PER_PAGE, total)}`;
    return sendHtml(reply, 200, layout(pc, `Labels · ${project.name}`, body, nav(project, request.params, 'labels')));
  });
}
