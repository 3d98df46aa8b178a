/**
 * The CI pages: a project's pipelines (`?page=`), one pipeline with its builds by stage, and one build with its trace
 * (ANSI escape sequences stripped). The API's rules: read_pipeline and read_build (reporters, or anyone who reads the
 * project when its builds are public), 404 for another project's ids.
 */
import type { FastifyInstance } from 'fastify';
import { findProjectBuild, latestPipelineBuilds } from '../../services/ci/builds.js';
import { countPipelines, findProjectPipeline, listPipelines, pipelineListFilter } from '../../services/ci/pipelines.js';
import { readTrace } from '../../services/ci/traces.js';
import { html, pageNumber, pager, statusBadge, timeAgo } from './html.js';
import { layout, LIVE_CSP, PAGE_CSP, sendHtml } from './layout.js';
import { LIVE_STATUSES } from './live.js';
import { liveTracePath } from '../../live/trace.js';
import { pageId, pageProject, PageRefusal } from './scope.js';
import { buildActions, pipelineActions } from './ci-forms.js';
import { pageContext } from './session.js';

type P = { namespace: string; project: string; id?: string };
const PER_PAGE = 20;
/** The largest trace shown in a page (its end; the rest through the API's trace route). */
const MAX_TRACE_BYTES = 1024 * 1024;

/** A trace as text without terminal escape sequences (colours, cursor moves) or carriage-return overdraws. */
export function plainTrace(raw: string): string {
  return raw
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, '')
    .replace(/\x1b[@-_]/g, '')
    .split('\n').map((l) => l.slice(l.lastIndexOf('\r', l.length - 2) + 1).replace(/\r$/, '')).join('\n');
}

/** Registers the CI pages. */
export default async function ciPages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get<{ Params: P }>('/:namespace/:project/pipelines', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_pipeline');
    const base = `/${request.params.namespace}/${request.params.project}`;
    const page = pageNumber(request.query);
    const f = await pipelineListFilter(ctx, project);
    const total = await countPipelines(ctx.data, project.id, f);
    const rows = await listPipelines(ctx, ctx.data, project.id, f, PER_PAGE, (page - 1) * PER_PAGE, total);
    const items = rows.map((p) => html`<li><a href="${base}/pipelines/${p.id}">Pipeline #${p.id}</a>
<span class="muted">${statusBadge(p.status)} ${p.ref ?? ''} · <a href="${base}/commit/${p.sha}"><code>${p.sha.slice(0, 8)}</code></a> · ${timeAgo(p.createdAt)}</span></li>`);
    const body = html`<h1>Pipelines</h1>${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No pipelines yet.</p>`}${pager(page, PER_PAGE, total)}`;
    return sendHtml(reply, 200, layout(pc, `Pipelines · ${project.name}`, body, { project, path: `${request.params.namespace}/${request.params.project}`, current: 'pipelines' }));
  });

  app.get<{ Params: P }>('/:namespace/:project/pipelines/:id', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_pipeline');
    const pipeline = await findProjectPipeline(ctx, project.id, pageId(request.params.id!));
    if (!pipeline) throw new PageRefusal(404);
    const base = `/${request.params.namespace}/${request.params.project}`;
    const builds = await latestPipelineBuilds(ctx.data, pipeline.id);
    const stages = [...new Set(builds.map((b) => b.stage ?? ''))];
    const live = LIVE_STATUSES.has(pipeline.status);
    const body = html`<h1>Pipeline #${pipeline.id} ${statusBadge(pipeline.status, 'pipeline')}</h1>${live ? html`<p hidden data-status-url="${base}/pipelines/${pipeline.id}/status.json"></p>` : ''}
<p class="muted">${pipeline.ref ?? ''} · <a href="${base}/commit/${pipeline.sha}"><code>${pipeline.sha.slice(0, 8)}</code></a> ${pipeline.commitMessage ? html`· ${pipeline.commitMessage.split('\n')[0]}` : ''} · ${timeAgo(pipeline.createdAt)}</p>
${pipeline.yamlErrors ? html`<p class="alert">${pipeline.yamlErrors}</p>` : ''}
${stages.map((s) => html`<section><h2>${s || 'builds'}</h2><ul class="list">${builds.filter((b) => (b.stage ?? '') === s).map((b) => html`<li>${
      b.type === 'build' ? html`<a href="${base}/builds/${b.id}">${b.name ?? ''}</a>` : html`${b.name ?? ''}`} ${statusBadge(b.status, `build-${b.id}`)}</li>`)}</ul></section>`)}
${await pipelineActions(ctx, pc, project, pipeline, base)}`;
    return sendHtml(reply, 200, layout(pc, `Pipeline #${pipeline.id} · ${project.name}`, body, { project, path: `${request.params.namespace}/${request.params.project}`, current: 'pipelines' }, { live }), live ? LIVE_CSP : PAGE_CSP);
  });

  app.get<{ Params: P }>('/:namespace/:project/builds/:id', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_build');
    const build = await findProjectBuild(ctx, project.id, pageId(request.params.id!));
    if (!build) throw new PageRefusal(404);
    const base = `/${request.params.namespace}/${request.params.project}`;
    const raw = await readTrace(ctx, build);
    const cut = raw && raw.length > MAX_TRACE_BYTES;
    const trace = raw ? plainTrace((cut ? raw.subarray(raw.length - MAX_TRACE_BYTES) : raw).toString('utf8')) : '';
    const live = LIVE_STATUSES.has(build.status);
    const body = html`<h1>Build #${build.id}: ${build.name ?? ''} ${statusBadge(build.status, 'build')}</h1>
<p class="muted">Stage ${build.stage ?? ''} · ${build.ref ?? ''} · <a href="${base}/pipelines/${build.pipelineId}">Pipeline #${build.pipelineId}</a> · ${timeAgo(build.createdAt)}</p>
${cut ? html`<p class="muted">Showing the last ${MAX_TRACE_BYTES} bytes of the trace.</p>` : ''}
${await buildActions(ctx, pc, project, build, base)}
${live ? html`<p id="live-state" class="muted" aria-live="polite">This build is ${build.status}: reload for more, or let the page follow it.</p>
<pre class="trace" aria-label="Trace" data-live-trace="${liveTracePath(build.id)}">${trace}</pre>`
    : trace ? html`<pre class="trace" aria-label="Trace">${trace}</pre>` : html`<p class="muted">No trace yet.</p>`}`;
    return sendHtml(reply, 200, layout(pc, `Build #${build.id} · ${project.name}`, body, { project, path: `${request.params.namespace}/${request.params.project}`, current: 'pipelines' }, { live }), live ? LIVE_CSP : PAGE_CSP);
  });
}
