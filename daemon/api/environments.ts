/**
 * /api/v3/projects/:id/environments (GitLab 8.13 lib/api/environments.rb): list (reporters and up), create
 * (developers and up), edit and delete (masters and up). Invalid or taken names and URLs answer 400 with the
 * model's errors hash; an unknown environment `404 Not found`.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, notFoundMessage } from '../errors.js';
import { createEnvironment, deleteEnvironment, findEnvironment, updateEnvironment } from '../services/environments/index.js';
import { countEnvironments, listEnvironments } from '../db/ci/environments.js';
import { EnvironmentSchema, presentEnvironment, presentEnvironments } from './entities/environments.js';
import { paginate } from './pagination.js';
import { Int, Nullable, PageParams, ProjectIdParams } from './params.js';
import { callerOf, loadProject, projectOf } from './project-scope.js';

const EnvironmentParams = Type.Object({ ...ProjectIdParams.properties, environment_id: Int({ description: 'environment ID' }) });
const NAME = 'letters, digits, spaces and - _ / $ { } . (at most 255); unique in the project';
const URL = 'an http, https, ssh or git URL (at most 255); unique in the project; blank clears it';
const CreateBody = Type.Object({
  name: Type.String({ description: NAME }),
  external_url: Type.Optional(Nullable(Type.String({ description: URL }))),
});
const UpdateBody = Type.Object({
  name: Type.Optional(Type.String({ description: NAME })),
  external_url: Type.Optional(Nullable(Type.String({ description: URL }))),
});
const tags = ['environments'];
const environmentIdOf = (request: FastifyRequest) => (request.params as Static<typeof EnvironmentParams>).environment_id;
const environmentNotFound = () => notFoundMessage('404 Not found');

/** Registers the environment routes. */
export default async function environmentRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.get('/projects/:id/environments', {
    preValidation: loadProject('read_environment'),
    schema: { tags, summary: "A project's environments, oldest first (reporter and up)", params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(EnvironmentSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const rows = await paginate(request, reply, ctx.data, (q) => countEnvironments(q, project.id), (q, limit, offset) => listEnvironments(q, project.id, limit, offset));
    return presentEnvironments(ctx, callerOf(request), project, rows);
  });

  api.post('/projects/:id/environments', {
    preValidation: loadProject('create_environment'),
    schema: { tags, summary: 'Create an environment (developer and up)', params: ProjectIdParams, body: CreateBody, response: { 201: EnvironmentSchema } },
  }, async (request, reply) => {
    const body = request.body as Static<typeof CreateBody>;
    if (body.name === undefined) throw badRequest('name');
    const project = projectOf(request);
    const env = await createEnvironment(ctx, project.id, { name: body.name, externalUrl: body.external_url });
    return reply.code(201).send(await presentEnvironment(ctx, callerOf(request), project, env));
  });

  api.put('/projects/:id/environments/:environment_id', {
    preValidation: loadProject('update_environment'),
    schema: { tags, summary: 'Rename an environment or change its URL (master and up)', params: EnvironmentParams, body: UpdateBody, response: { 200: EnvironmentSchema } },
  }, async (request) => {
    const project = projectOf(request);
    const body = request.body as Static<typeof UpdateBody>;
    const env = await findEnvironment(ctx, project.id, environmentIdOf(request));
    if (!env) throw environmentNotFound();
    const updated = await updateEnvironment(ctx, env, { name: body.name, externalUrl: body.external_url });
    if (!updated) throw environmentNotFound();
    return presentEnvironment(ctx, callerOf(request), project, updated);
  });

  api.delete('/projects/:id/environments/:environment_id', {
    preValidation: loadProject('update_environment'),
    schema: { tags, summary: 'Delete an environment and its deployments (master and up)', params: EnvironmentParams, response: { 200: EnvironmentSchema } },
  }, async (request) => {
    const project = projectOf(request);
    const env = await deleteEnvironment(ctx, project.id, environmentIdOf(request));
    if (!env) throw environmentNotFound();
    return presentEnvironment(ctx, callerOf(request), project, env);
  });
}
