/**
 * /api/v3/projects/:id/deployments (GitLab 8.13 lib/api/deployments.rb): the deployments successful builds recorded
 * (services/environments/deployments.ts), listed oldest first and shown by id, to reporters and up.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFoundMessage } from '../errors.js';
import { findDeployment } from '../services/environments/index.js';
import { countDeployments, listDeployments } from '../db/ci/environments.js';
import { DeploymentSchema, presentDeployments } from './entities/environments.js';
import { paginate } from './pagination.js';
import { Int, PageParams, ProjectIdParams } from './params.js';
import { loadProject, projectOf } from './project-scope.js';

const DeploymentParams = Type.Object({ ...ProjectIdParams.properties, deployment_id: Int({ description: 'deployment ID' }) });
const tags = ['deployments'];

/** Registers the deployment routes. */
export default async function deploymentRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_deployment');

  api.get('/projects/:id/deployments', {
    preValidation: read,
    schema: { tags, summary: "A project's deployments, oldest first (reporter and up)", params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(DeploymentSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const rows = await paginate(request, reply, ctx.data, (q) => countDeployments(q, project.id), (q, limit, offset) => listDeployments(q, project.id, limit, offset));
    return presentDeployments(ctx, project, rows);
  });

  api.get('/projects/:id/deployments/:deployment_id', {
    preValidation: read,
    schema: { tags, summary: 'One deployment', params: DeploymentParams, response: { 200: DeploymentSchema } },
  }, async (request) => {
    const project = projectOf(request);
    const deployment = await findDeployment(ctx, project.id, (request.params as Static<typeof DeploymentParams>).deployment_id);
    if (!deployment) throw notFoundMessage('404 Not found');
    return (await presentDeployments(ctx, project, [deployment]))[0]!;
  });
}
