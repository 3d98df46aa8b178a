/**
 * What lets a page follow a build or pipeline without a reload (issue 24 item 3): the one script file of the pages
 * (/-/assets/live.js: the build page's trace over the /-/live WebSocket, the pipeline page's statuses by polling) and
 * the small JSON answer it polls, `/<ns>/<project>/pipelines/<id>/status.json` (the pipeline's status and its latest
 * builds', read as the pipeline page is: read_pipeline, the page's session or an anonymous reader of a public project).
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { daemonAsset } from '../../assets.js';
import { latestPipelineBuilds } from '../../services/ci/builds.js';
import { findProjectPipeline } from '../../services/ci/pipelines.js';
import { pageId, pageProject, PageRefusal } from './scope.js';
import { pageContext } from './session.js';

/** Statuses that may still change: a page showing one follows it. */
export const LIVE_STATUSES: ReadonlySet<string> = new Set(['created', 'pending', 'running']);

let script: string | undefined;

/** Registers the script and the status answer. */
export default async function livePages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get('/-/assets/live.js', { schema: { hide: true } }, async (_request, reply) => {
    script ??= readFileSync(daemonAsset('web/pages/live-client.js'), 'utf8');
    return reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff').send(script);
  });

  app.get<{ Params: { namespace: string; project: string; id: string } }>('/:namespace/:project/pipelines/:id/status.json', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    const project = await pageProject(ctx, pc, request.params.namespace, request.params.project, 'read_pipeline');
    const pipeline = await findProjectPipeline(ctx, project.id, pageId(request.params.id));
    if (!pipeline) throw new PageRefusal(404);
    const builds = await latestPipelineBuilds(ctx.data, pipeline.id);
    return reply.header('cache-control', 'no-store').send({
      id: pipeline.id, status: pipeline.status,
      builds: builds.map((b) => ({ id: b.id, name: b.name, stage: b.stage, status: b.status })),
    });
  });
}
