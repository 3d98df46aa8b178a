/**
 * The repository pages beside the code: branches (with protection), tags (with release notes), and compare
 * (`/compare/<from>...<to>`: the commits and the changes, inline or side by side, as GET
 * /projects/:id/repository/compare answers them). Read as the API reads them (download_code).
 */
import type { FastifyInstance } from 'fastify';
import { listBranchesWithRules, listTagsWithReleases } from '../../services/repository/branches.js';
import { compareRevisions } from '../../services/repository/browse.js';
import { ApiError } from '../../errors.js';
import { diffFiles } from './diff.js';
import { html, pageNumber, pager, timeAgo, type Html } from './html.js';
import { layout, sendHtml } from './layout.js';
import { renderMarkdown } from './markdown.js';
import { pageProject, PageRefusal } from './scope.js';
import { pageContext } from './session.js';
import type { CommitInfo } from '../../git/objects.js';
import type { ProjectRow } from '../../db/schema.js';

type P = { namespace: string; project: string; '*'?: string };
const PER_PAGE = 20;
/** Commits a page in every commit list: a ref's history (`?page=`), a comparison's and a merge request's (`?commits_page=`). */
export const COMMITS_PER_PAGE = 40;

/** One commit in a list: its title linked, author, time and short sha. */
export function commitItem(base: string, c: Pick<CommitInfo, 'sha' | 'message'> & { author: { name: string; date: Date } }): Html {
  return html`<li><a href="${base}/commit/${c.sha}">${c.message.split('\n')[0]}</a>
<span class="muted">${c.author.name} · ${timeAgo(c.author.date.toISOString())} · <code>${c.sha.slice(0, 8)}</code></span></li>`;
}

/** Registers the branches, tags and compare pages. */
export default async function repositoryPages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  const nav = (project: ProjectRow, p: P) => ({ project, path: `${p.namespace}/${p.project}`, current: 'branches' as const });

  app.get<{ Params: P }>('/:namespace/:project/branches', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'download_code');
    const base = `/${request.params.namespace}/${request.params.project}`;
    const all = await listBranchesWithRules(ctx, project);
    const page = pageNumber(request.query);
    const items = all.slice((page - 1) * PER_PAGE, page * PER_PAGE).map((b) => html`<li><span><a href="${base}/tree/${b.name}">${b.name}</a>${
      b.name === project.defaultBranch ? html` <span class="status">default</span>` : ''}${b.rules.protected ? html` <span class="status">protected</span>` : ''}</span>
<span class="muted"><a href="${base}/commit/${b.sha}"><code>${b.sha.slice(0, 8)}</code></a> · ${b.commit.message.split('\n')[0]} · ${timeAgo(b.commit.committer.date.toISOString())}${
      b.name !== project.defaultBranch ? html` · <a href="${base}/compare/${project.defaultBranch}...${b.name}">Compare</a>` : ''}</span></li>`);
    const body = html`<h1>Branches</h1>${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No branches yet.</p>`}${pager(page, PER_PAGE, all.length)}`;
    return sendHtml(reply, 200, layout(pc, `Branches · ${project.name}`, body, nav(project, request.params)));
  });

  app.get<{ Params: P }>('/:namespace/:project/tags', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'download_code');
    const base = `/${request.params.namespace}/${request.params.project}`;
    const all = await listTagsWithReleases(ctx, project);
    const page = pageNumber(request.query);
    const items = all.slice((page - 1) * PER_PAGE, page * PER_PAGE).map(({ tag, release }) => html`<li><span><a href="${base}/tree/${tag.name}">${tag.name}</a>${
      tag.message ? html` <span class="muted">${tag.message.split('\n')[0]}</span>` : ''}</span>
<span class="muted"><a href="${base}/commit/${tag.targetSha}"><code>${tag.targetSha.slice(0, 8)}</code></a>${tag.commit ? html` · ${tag.commit.message.split('\n')[0]} · ${timeAgo(tag.commit.committer.date.toISOString())}` : ''}</span>${
      release?.description ? html`<div class="md release">${renderMarkdown(release.description, { projectPath: base })}</div>` : ''}</li>`);
    const body = html`<h1>Tags</h1>${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No tags yet.</p>`}${pager(page, PER_PAGE, all.length)}`;
    return sendHtml(reply, 200, layout(pc, `Tags · ${project.name}`, body, nav(project, request.params)));
  });

  // The compare form: two refs, sent by GET to the comparison itself (works without script).
  app.get<{ Params: P; Querystring: { from?: string; to?: string } }>('/:namespace/:project/compare', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'download_code');
    const base = `/${request.params.namespace}/${request.params.project}`;
    const { from, to } = request.query;
    if (typeof from === 'string' && typeof to === 'string' && from && to) return reply.redirect(`${base}/compare/${encodeURI(from)}...${encodeURI(to)}`, 302);
    const body = html`<h1>Compare</h1><form method="get" action="${base}/compare" class="compare-form">
<label for="compare-from">From</label> <input id="compare-from" name="from" value="${project.defaultBranch}">
<label for="compare-to">To</label> <input id="compare-to" name="to"> <button type="submit">Compare</button></form>`;
    return sendHtml(reply, 200, layout(pc, `Compare · ${project.name}`, body, nav(project, request.params)));
  });

  app.get<{ Params: P }>('/:namespace/:project/compare/*', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'download_code');
    const base = `/${request.params.namespace}/${request.params.project}`;
    const spec = request.params['*'] ?? '';
    const at = spec.indexOf('...');
    if (at <= 0 || at + 3 >= spec.length) throw new PageRefusal(404);
    const [from, to] = [spec.slice(0, at), spec.slice(at + 3)];
    const cmp = await compareRevisions(ctx, project, from, to).catch((e: unknown) => {
      if (e instanceof ApiError && e.statusCode === 404) throw new PageRefusal(404);
      throw e;
    });
    const commitsPage = Math.min(pageNumber(request.query, 'commits_page'), Math.max(1, Math.ceil(cmp.commits.length / COMMITS_PER_PAGE)));
    const body = html`<h1>Compare <code>${from}</code>…<code>${to}</code></h1>
${cmp.sameRef ? html`<p class="muted">These refs point at the same commit: nothing to compare.</p>` : html`
<section aria-labelledby="cmp-commits"><h2 id="cmp-commits">${cmp.commits.length} commit${cmp.commits.length === 1 ? '' : 's'}</h2><ol class="list commits">${
  cmp.commits.slice((commitsPage - 1) * COMMITS_PER_PAGE, commitsPage * COMMITS_PER_PAGE).map((c) => commitItem(base, c))}</ol>${
  pager(commitsPage, COMMITS_PER_PAGE, cmp.commits.length, {}, 'commits_page')}</section>
<section aria-labelledby="cmp-changes"><h2 id="cmp-changes">Changes (${cmp.diffs.length} file${cmp.diffs.length === 1 ? '' : 's'})</h2>${diffFiles(cmp.diffs, request.query)}</section>`}`;
    return sendHtml(reply, 200, layout(pc, `Compare ${from}...${to} · ${project.name}`, body, nav(project, request.params)));
  });
}
