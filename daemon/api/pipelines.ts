/**
 * /api/v3/projects/:id/pipelines: list (scope, newest first), one pipeline, retry and cancel. Reading needs
 * read_pipeline (reporter+, or any logged-in user on a visible project); retry and cancel need update_pipeline.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ProjectRow } from '../db/schema.js';
import type { PipelineRow } from '../db/schema-ci.js';
import { invalidParam, notFoundMessage } from '../errors.js';
import {
  cancelPipeline, countPipelines, findProjectPipeline, listPipelines, PIPELINE_SCOPES, pipelineListFilter, retryPipeline, type PipelineScope,
} from '../services/ci/pipelines.js';
import { PipelineSchema, presentPipelines } from './entities/pipelines.js';
import { paginate } from './pagination.js';
import { Int, PageParams, ProjectIdParams } from './params.js';
import { callerOf, loadProject, projectOf } from './project-scope.js';

const tags = ['pipelines'];
const ListQuery = Type.Object({
  scope: Type.Optional(Type.String({ description: `one of ${PIPELINE_SCOPES.join(', ')} (branches/tags: the newest pipeline of each)` })),
  ...PageParams,
});
const PipelineParams = Type.Object({ id: Type.String(), pipeline_id: Int() });

/** The pipeline of `:pipeline_id` in the project; 404 `404 Not found` as 8.x's find did. */
async function pipelineOf(request: FastifyRequest, project: ProjectRow): Promise<PipelineRow> {
  const p = await findProjectPipeline(request.server.ctx, project.id, (request.params as { pipeline_id: number }).pipeline_id);
  if (!p) throw notFoundMessage('404 Not found');
  return p;
}

/** Registers the pipeline routes. */
export default async function pipelineRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_pipeline');
  const update = loadProject('update_pipeline');

  api.get('/projects/:id/pipelines', {
    preValidation: read,
    schema: { tags, summary: 'Pipelines of a project, newest first', params: ProjectIdParams, querystring: ListQuery, response: { 200: Type.Array(PipelineSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const { scope } = request.query as { scope?: string };
    if (scope && !(PIPELINE_SCOPES as readonly string[]).includes(scope)) throw invalidParam('scope', 'does not have a valid value');
    const filter = await pipelineListFilter(ctx, project, scope as PipelineScope | undefined);
    return presentPipelines(ctx, await paginate(request, reply, ctx.data, (q) => countPipelines(q, project.id, filter), (q, limit, offset, total) => listPipelines(ctx, q, project.id, filter, limit, offset, total)));
  });

  api.get('/projects/:id/pipelines/:pipeline_id', {
    preValidation: read,
    schema: { tags, summary: 'One pipeline', params: PipelineParams, response: { 200: PipelineSchema } },
  }, async (request) => (await presentPipelines(ctx, [await pipelineOf(request, projectOf(request))]))[0]);

  api.post('/projects/:id/pipelines/:pipeline_id/retry', {
    preValidation: update,
    schema: { tags, summary: 'Retry the failed builds of a pipeline', params: PipelineParams, response: { 201: PipelineSchema } },
  }, async (request, reply) => {
    const p = await retryPipeline(ctx, await pipelineOf(request, projectOf(request)), callerOf(request));
    return reply.code(201).send((await presentPipelines(ctx, [p]))[0]);
  });

  api.post('/projects/:id/pipelines/:pipeline_id/cancel', {
    preValidation: update,
    schema: { tags, summary: 'Cancel the pending and running builds of a pipeline', params: PipelineParams, response: { 200: PipelineSchema } },
  }, async (request, reply) => {
    const p = await cancelPipeline(ctx, await pipelineOf(request, projectOf(request)));
    return reply.code(200).send((await presentPipelines(ctx, [p]))[0]);
  });
}
