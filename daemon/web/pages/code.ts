/**
 * The code pages of a project: its home (README rendered), tree, blob (highlighted, line anchors #L12), raw,
 * commits of a ref and one commit (unified diff).
 */
import type { FastifyInstance } from 'fastify';
import { canProjectAsync } from '../../policy/permissions.js';
import { commitDiff, commitDetail, listCommits, readableRepository } from '../../services/repository/commits.js';
import { looksBinary } from '../../services/repository/browse.js';
import { diffFiles } from './diff.js';
import { escapeHtml, html, pageNumber, pager, statusBadge, timeAgo, trusted, type Html } from './html.js';
import { layout, sendHtml, type PageContext } from './layout.js';
import { highlightLines, isMarkdownName, renderMarkdown } from './markdown.js';
import { pageProject, pageRepository, PageRefusal, splitRefPath } from './scope.js';
import { COMMITS_PER_PAGE } from './repository.js';
import { pageContext } from './session.js';

type P = { namespace: string; project: string; '*'?: string; sha?: string };
/** Entries of a tree listed a page. */
const TREE_PER_PAGE = 200;

/** Breadcrumbs of a path in a ref. */
function crumbs(base: string, ref: string, path: string): Html {
  const parts = path.split('/').filter(Boolean);
  return html`<nav class="crumbs" aria-label="Path"><a href="${base}/tree/${ref}">${ref}</a>${parts.map(
    (p, i) => html` / <a href="${base}/tree/${ref}/${parts.slice(0, i + 1).join('/')}">${p}</a>`,
  )}</nav>`;
}

/** Registers the code pages. */
export default async function codePages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  async function treePage(pc: PageContext, params: P, ref: string | null, rest: string, page = 1) {
    const project = await pageProject(ctx, pc, params.namespace, params.project, 'download_code');
    const base = `/${params.namespace}/${params.project}`;
    const repo = pageRepository(ctx, project);
    const at = ref === null ? await splitRefPath(repo, rest) : { ref, sha: await repo.resolveRef(ref), path: '' };
    if (!at.sha) return { project, body: html`<p class="muted">This repository is empty.</p>`, entries: [] };
    const entries = await repo.readTree(at.sha, at.path);
    if (!entries) throw new PageRefusal(404);
    // a folder of thousands of entries is listed TREE_PER_PAGE at a time (`?page=`), folders first as git sorts them
    const rows = entries.slice((page - 1) * TREE_PER_PAGE, page * TREE_PER_PAGE).map((e) => html`<tr><td class="${e.type}">${e.type === 'tree' ? '📁' : '📄'}</td><td><a href="${base}/${e.type === 'tree' ? 'tree' : 'blob'}/${at.ref}/${e.path}">${e.name}</a></td></tr>`);
    const body = html`${crumbs(base, at.ref, at.path)}<table class="tree"><thead><tr><th scope="col"><span class="sr">Type</span></th><th scope="col">Name</th></tr></thead><tbody>${rows}</tbody></table>${pager(page, TREE_PER_PAGE, entries.length)}`;
    return { project, body, entries, at };
  }

  // The project page: its description, clone URL, files of the default branch and the README rendered.
  app.get<{ Params: P }>('/:namespace/:project', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project);
    const base = `/${request.params.namespace}/${request.params.project}`;
    let files: Html = html`<p class="muted">This repository is empty.</p>`;
    let readme: Html = html``;
    const code = !pc.viewer || (await canProjectAsync(ctx, pc.viewer, 'download_code', project));
    const repo = code ? readableRepository(ctx, project) : null;
    const sha = repo ? await repo.resolveRef(project.defaultBranch) : null;
    if (!code) files = html``;
    if (repo && sha) {
      const tree = await treePage(pc, request.params, project.defaultBranch, '', pageNumber(request.query));
      files = tree.body;
      const entry = tree.entries.find((e) => e.type === 'blob' && /^readme(\.|$)/i.test(e.name));
      const blob = entry ? await repo.readFileAt(sha, entry.path) : null;
      if (entry && blob && !looksBinary(blob.content)) {
        const text = blob.content.toString('utf8');
        readme = html`<section class="readme" aria-labelledby="readme-title"><h2 id="readme-title">${entry.name}</h2>${
          isMarkdownName(entry.name) ? html`<div class="md">${renderMarkdown(text, { projectPath: base })}</div>` : html`<pre>${text}</pre>`}</section>`;
      }
    }
    const body = html`<h1>${project.name}</h1>${project.description ? html`<p class="lead">${project.description}</p>` : ''}
<p class="clone"><label for="clone-url">Clone</label> <input id="clone-url" readonly value="${ctx.externalUrl()}${base}.git"></p>
${files}${readme}`;
    return sendHtml(reply, 200, layout(pc, project.name, body, { project, path: `${request.params.namespace}/${request.params.project}`, current: 'project' }));
  });

  app.get<{ Params: P }>('/:namespace/:project/tree/*', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const t = await treePage(pc, request.params, null, request.params['*'] ?? '', pageNumber(request.query));
    const heading = html`<h1 class="sr">Files${t.at ? html` of ${t.at.ref}${t.at.path ? `/${t.at.path}` : ''}` : ''}</h1>`;
    return sendHtml(reply, 200, layout(pc, `Files · ${t.project.name}`, html`${heading}${t.body}`, { project: t.project, path: `${request.params.namespace}/${request.params.project}`, current: 'files' }));
  });

  async function blobOf(pc: PageContext, params: P) {
    const project = await pageProject(ctx, pc, params.namespace, params.project, 'download_code');
    const repo = pageRepository(ctx, project);
    const at = await splitRefPath(repo, params['*'] ?? '');
    const blob = at.path ? await repo.readFileAt(at.sha, at.path) : null;
    if (!blob) throw new PageRefusal(404);
    return { project, at, blob };
  }

  app.get<{ Params: P }>('/:namespace/:project/blob/*', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const { project, at, blob } = await blobOf(pc, request.params);
    const base = `/${request.params.namespace}/${request.params.project}`;
    const name = at.path.slice(at.path.lastIndexOf('/') + 1);
    let content: Html;
    if (looksBinary(blob.content)) content = html`<p class="muted">Binary file (${blob.size} bytes). <a href="${base}/raw/${at.ref}/${at.path}">Download it</a>.</p>`;
    else {
      const lines = highlightLines(blob.content.toString('utf8'), name);
      content = html`<table class="code hljs"><tbody>${lines.map((l, i) => html`<tr id="L${i + 1}"><td class="ln"><a href="#L${i + 1}">${i + 1}</a></td><td class="line"><code>${l}</code></td></tr>`)}</tbody></table>`;
    }
    const rendered = isMarkdownName(name) && !looksBinary(blob.content) ? html`<div class="md">${renderMarkdown(blob.content.toString('utf8'), { projectPath: base })}</div>` : '';
    const body = html`<h1 class="sr">${at.path} at ${at.ref}</h1>${crumbs(base, at.ref, at.path)}<p class="file-actions"><a href="${base}/raw/${at.ref}/${at.path}">Raw</a> · ${blob.size} bytes</p>${rendered}${content}`;
    return sendHtml(reply, 200, layout(pc, `${name} · ${project.name}`, body, { project, path: `${request.params.namespace}/${request.params.project}`, current: 'files' }));
  });

  // The file as it is, as an attachment-safe download: text/plain for text (never HTML of our origin), else octet-stream.
  app.get<{ Params: P }>('/:namespace/:project/raw/*', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const { blob } = await blobOf(pc, request.params);
    return reply
      .header('content-type', looksBinary(blob.content) ? 'application/octet-stream' : 'text/plain; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cache-control', 'private, no-store')
      .send(blob.content);
  });

  app.get<{ Params: P }>('/:namespace/:project/commits/*', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'download_code');
    const base = `/${request.params.namespace}/${request.params.project}`;
    const at = await splitRefPath(pageRepository(ctx, project), request.params['*'] || project.defaultBranch);
    const page = pageNumber(request.query);
    const { total, commits } = await listCommits(ctx, project, { ref: at.ref, path: at.path || undefined }, COMMITS_PER_PAGE, (page - 1) * COMMITS_PER_PAGE);
    const items = commits.map((c) => html`<li><a href="${base}/commit/${c.sha}">${c.message.split('\n')[0]}</a>
<span class="muted">${c.author.name} · ${timeAgo(c.author.date.toISOString())} · <code>${c.sha.slice(0, 8)}</code></span></li>`);
    const body = html`<h1>Commits of ${at.ref}</h1><ol class="list commits">${items}</ol>${pager(page, COMMITS_PER_PAGE, total)}`;
    return sendHtml(reply, 200, layout(pc, `Commits · ${project.name}`, body, { project, path: `${request.params.namespace}/${request.params.project}`, current: 'commits' }));
  });

  app.get<{ Params: P }>('/:namespace/:project/commit/:sha', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'download_code');
    pageRepository(ctx, project);
    const sha = request.params.sha ?? '';
    if (!/^[0-9a-f]{4,40}$/i.test(sha)) throw new PageRefusal(404);
    const detail = await commitDetail(ctx, project, sha).catch(() => null);
    if (!detail) throw new PageRefusal(404);
    const diffs = await commitDiff(ctx, project, detail.commit.sha);
    const c = detail.commit;
    const files = diffFiles(diffs, request.query);
    const body = html`<h1>${c.message.split('\n')[0]}</h1><p class="muted">Commit <code>${c.sha}</code> by ${c.author.name} ${timeAgo(c.author.date.toISOString())} ${statusBadge(detail.status)}</p>
${c.message.includes('\n') ? html`<pre class="message">${c.message.slice(c.message.indexOf('\n') + 1).trim()}</pre>` : ''}
<p>Changes: <span class="add">+${detail.stats.additions}</span> <span class="del">−${detail.stats.deletions}</span></p>${files}`;
    return sendHtml(reply, 200, layout(pc, `Commit ${c.sha.slice(0, 8)} · ${project.name}`, body, { project, path: `${request.params.namespace}/${request.params.project}`, current: 'commits' }));
  });
}
