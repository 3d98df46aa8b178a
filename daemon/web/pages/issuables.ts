/**
 * The issue and merge request pages: lists (state tabs, `?page=`) and one issue or merge request with its Markdown
 * description and notes (and, for a merge request, its changes as a unified diff). Read through the API's services,
 * policy and presenters: what a caller reads here is what GET /projects/:id/issues and /merge_requests show them.
 */
import type { FastifyInstance } from 'fastify';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { presentIssues } from '../../api/entities/issues.js';
import { presentMergeRequests } from '../../api/entities/merge-requests.js';
import { presentNotes } from '../../api/entities/notes.js';
import {
  countIssues, countNotes, findReadableIssue, issueListQuery, issueNoteable, listIssues, listNotes, type Noteable,
} from '../../services/collaboration/index.js';
import {
  countMergeRequests, findReadableMergeRequest, listMergeRequests, mergeRequestNoteable,
} from '../../services/merge-requests/index.js';
import type { AppContext } from '../../context.js';
import { html, pageNumber, pager, statusBadge, timeAgo, type Html } from './html.js';
import { layout, sendHtml } from './layout.js';
import { renderMarkdown } from './markdown.js';
import { diffFiles } from './diff.js';
import { mergeRequestChangesKept, mergeRequestSections } from './merge-request-tabs.js';
import { pageId, pageProject, PageRefusal } from './scope.js';
import { issueActions, mergeRequestActions, newIssuableLink } from './issuable-forms.js';
import { pageContext } from './session.js';

type P = { namespace: string; project: string; iid?: string };
type Rec = Record<string, unknown>;
const PER_PAGE = 20;
const NOTES_PER_PAGE = 100;
const STATES = ['opened', 'closed', 'all'] as const;

const stateOf = (query: unknown) => {
  const s = (query as Rec).state;
  return typeof s === 'string' && (STATES as readonly string[]).includes(s) ? s : 'opened';
};

function tabs(state: string, extra: string[] = []): Html {
  return html`<nav class="tabs" aria-label="State">${[...STATES.slice(0, 2), ...extra, 'all'].map((s) => html`<a href="?state=${s}"${s === state ? html` aria-current="page"` : ''}>${s[0]!.toUpperCase()}${s.slice(1)}</a>`)}</nav>`;
}

const author = (r: Rec) => {
  const a = r.author as { username: string; name: string } | null;
  return a ? html`<a href="/${a.username}">${a.name}</a>` : html`Ghost User`;
};

/** The labels, milestone and assignee of an issue or merge request (as its API entity has them), when it has any. */
function facts(r: Rec, base: string): Html {
  const labels = (r.labels as string[] | undefined) ?? [];
  const milestone = r.milestone as { iid: number; title: string } | null;
  const assignee = r.assignee as { username: string; name: string } | null;
  if (!labels.length && !milestone && !assignee) return html``;
  return html`<dl class="facts">${assignee ? html`<dt>Assignee</dt><dd><a href="/${assignee.username}">${assignee.name}</a></dd>` : ''}${
    milestone ? html`<dt>Milestone</dt><dd><a href="${base}/milestones/${milestone.iid}">${milestone.title}</a></dd>` : ''}${
    labels.length ? html`<dt>Labels</dt><dd>${labels.map((l) => html`<span class="label">${l}</span> `)}</dd>` : ''}</dl>`;
}

/** The notes of an issue or merge request, rendered, one page of them (`?notes_page=`). */
async function notesSection(ctx: AppContext, noteable: Pick<Noteable, 'type' | 'id'>, base: string, query: unknown): Promise<Html> {
  const raw = (query as Rec).notes_page;
  const page = typeof raw === 'string' && /^\d{1,6}$/.test(raw) && Number(raw) >= 1 ? Number(raw) : 1;
  const total = await countNotes(ctx.data, noteable);
  const rows = await listNotes(ctx, ctx.data, noteable, NOTES_PER_PAGE, (page - 1) * NOTES_PER_PAGE, total);
  const notes = await presentNotes(ctx, rows);
  const items = notes.map((n) => html`<article class="note${n.system ? ' system' : ''}" id="note_${n.id}"><p class="muted">${author(n as Rec)} · ${timeAgo(n.created_at)}</p>
<div class="note-body">${renderMarkdown(n.body ?? '', { projectPath: base })}</div></article>`);
  const pages = Math.ceil(total / NOTES_PER_PAGE);
  const more = pages > 1
    ? html`<nav class="pager" aria-label="Note pages">${page > 1 ? html`<a href="?notes_page=${page - 1}">‹ Earlier notes</a>` : ''}<span>Notes page ${page} of ${pages}</span>${page < pages ? html`<a href="?notes_page=${page + 1}">Later notes ›</a>` : ''}</nav>`
    : '';
  return html`<section aria-labelledby="notes-title"><h2 id="notes-title">${total} note${total === 1 ? '' : 's'}</h2>${items}${more}</section>`;
}

/** Registers the issue and merge request pages. */
export default async function issuablePages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  const nav = (project: ProjectRow, p: P, current: 'issues' | 'merge_requests') => ({ project, path: `${p.namespace}/${p.project}`, current });

  async function issueByIid(viewer: UserRow | null, project: ProjectRow, iid: number) {
    const lq = await issueListQuery(ctx, { scope: { kind: 'project', project }, viewer, iids: [iid] });
    const [row] = await listIssues(ctx, ctx.data, lq, 1, 0);
    if (!row) throw new PageRefusal(404);
    // (anonymous: pageProject granted read_issue on a public project and the list left confidential issues out)
    return viewer ? findReadableIssue(ctx, viewer, project, row.id) : row;
  }

  app.get<{ Params: P }>('/:namespace/:project/issues', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_issue');
    const viewer = pc.viewer;
    const state = stateOf(request.query);
    const page = pageNumber(request.query);
    const lq = await issueListQuery(ctx, { scope: { kind: 'project', project }, viewer, state, orderBy: 'created_at', sort: 'desc' });
    const total = await countIssues(ctx, ctx.data, lq);
    const issues = await presentIssues(ctx, viewer, await listIssues(ctx, ctx.data, lq, PER_PAGE, (page - 1) * PER_PAGE, total));
    const base = `/${request.params.namespace}/${request.params.project}`;
    const items = issues.map((i) => html`<li><a href="${base}/issues/${i.iid as number}">${i.title as string}</a>
<span class="muted">#${i.iid as number} ${i.confidential ? '· confidential ' : ''}· opened ${timeAgo(i.created_at as string)} by ${author(i)} ${statusBadge(i.state as string)} ${(i.labels as string[]).map((l) => html`<span class="label">${l}</span> `)}</span></li>`);
    const body = html`<h1>Issues</h1>${await newIssuableLink(ctx, pc, project, `${base}/issues/new`, 'create_issue', 'New issue')}${tabs(state)}${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No issues here.</p>`}${pager(page, PER_PAGE, total, { state })}`;
    return sendHtml(reply, 200, layout(pc, `Issues · ${project.name}`, body, nav(project, request.params, 'issues')));
  });

  app.get<{ Params: P }>('/:namespace/:project/issues/:iid', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_issue');
    // (an issue the caller may not read: findReadableIssue's 404, the API's answer, shown as the 404 page)
    const row = await issueByIid(pc.viewer, project, pageId(request.params.iid!));
    const [issue] = await presentIssues(ctx, pc.viewer, [row]);
    const i = issue!;
    const base = `/${request.params.namespace}/${request.params.project}`;
    const body = html`<h1>${i.title as string} <span class="muted">#${i.iid as number}</span></h1>
<p>${statusBadge(i.state as string)} ${i.confidential ? html`<span class="status">confidential</span>` : ''} Opened ${timeAgo(i.created_at as string)} by ${author(i)}</p>
${facts(i, base)}
<div class="md description">${renderMarkdown((i.description as string | null) ?? '', { projectPath: base })}</div>
${await notesSection(ctx, issueNoteable(row), base, request.query)}
${await issueActions(ctx, pc, project, row, base)}`;
    return sendHtml(reply, 200, layout(pc, `${i.title as string} · Issues`, body, nav(project, request.params, 'issues')));
  });

  app.get<{ Params: P }>('/:namespace/:project/merge_requests', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_merge_request');
    const raw = (request.query as Rec).state;
    const state = typeof raw === 'string' && ['opened', 'closed', 'merged', 'all'].includes(raw) ? raw : 'opened';
    const page = pageNumber(request.query);
    const f = { projectId: project.id, state, orderBy: 'created_at' as const, sort: 'desc' as const };
    const total = await countMergeRequests(ctx.data, f);
    const mrs = await presentMergeRequests(ctx, pc.viewer, await listMergeRequests(ctx, ctx.data, f, PER_PAGE, (page - 1) * PER_PAGE, total));
    const base = `/${request.params.namespace}/${request.params.project}`;
    const items = mrs.map((m) => html`<li><a href="${base}/merge_requests/${m.iid as number}">${m.title as string}</a>
<span class="muted">!${m.iid as number} · ${m.source_branch as string} → ${m.target_branch as string} · opened ${timeAgo(m.created_at as string)} by ${author(m)} ${statusBadge(m.state as string)}</span></li>`);
    const body = html`<h1>Merge requests</h1>${await newIssuableLink(ctx, pc, project, `${base}/merge_requests/new`, 'create_merge_request', 'New merge request')}${tabs(state, ['merged'])}${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No merge requests here.</p>`}${pager(page, PER_PAGE, total, { state })}`;
    return sendHtml(reply, 200, layout(pc, `Merge requests · ${project.name}`, body, nav(project, request.params, 'merge_requests')));
  });

  app.get<{ Params: P }>('/:namespace/:project/merge_requests/:iid', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_merge_request');
    const [found] = await listMergeRequests(ctx, ctx.data, { projectId: project.id, iids: [pageId(request.params.iid!)] }, 1, 0);
    if (!found) throw new PageRefusal(404);
    // (anonymous: pageProject granted read_merge_request on a public project; merge requests are never confidential)
    const row = pc.viewer ? await findReadableMergeRequest(ctx, pc.viewer, project, found.id) : found;
    const [m] = await presentMergeRequests(ctx, pc.viewer, [row]);
    const base = `/${request.params.namespace}/${request.params.project}`;
    const changes = await mergeRequestChangesKept(ctx, row, project);
    const files = diffFiles(changes.files, request.query);
    const body = html`<h1>${m!.title as string} <span class="muted">!${m!.iid as number}</span></h1>
<p>${statusBadge(m!.state as string)} <code>${m!.source_branch as string}</code> → <code>${m!.target_branch as string}</code>, opened ${timeAgo(m!.created_at as string)} by ${author(m!)}</p>
${facts(m!, base)}
<div class="md description">${renderMarkdown((m!.description as string | null) ?? '', { projectPath: base })}</div>
${await mergeRequestSections(ctx, pc.viewer, project, row, base, request.query)}
<section aria-labelledby="changes-title"><h2 id="changes-title">Changes (${changes.total} file${changes.total === 1 ? '' : 's'})</h2>${files}${changes.overflow ? html`<p class="muted">Some files are not shown.</p>` : ''}</section>
${await notesSection(ctx, mergeRequestNoteable(row), base, request.query)}
${await mergeRequestActions(ctx, pc, project, row, base)}`;
    return sendHtml(reply, 200, layout(pc, `${m!.title as string} · Merge requests`, body, nav(project, request.params, 'merge_requests')));
  });
}
