/**
 * Build triggers (GitLab 8.13 lib/api/triggers.rb): a project's triggers at /projects/:id/triggers (list, create,
 * show and delete by token; admin_build: masters, owners, admins), and POST /projects/:id/trigger/builds, which takes
 * no user at all: the trigger token is the credential, and the pipeline it starts has no user.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { ProjectRow } from '../db/schema.js';
import { notFound } from '../errors.js';
import { lookupProjectAsync } from '../services/projects/projects.js';
import { checkTriggerVariables, createTrigger, deleteTrigger, findTrigger, runTrigger } from '../services/ci/triggers.js';
import { countTriggers, listTriggers } from '../db/ci/triggers.js';
import { triggerEntity, TriggerRequestSchema, triggerRequestEntity, TriggerSchema } from './entities/triggers.js';
import { paginate } from './pagination.js';
import { PageParams, ProjectIdParams, RequiredString } from './params.js';
import { dropBlankParams, loadProject, projectOf } from './project-scope.js';

const TokenParams = Type.Object({ ...ProjectIdParams.properties, token: Type.String({ description: 'the token of the trigger' }) });
const RunBody = Type.Object({
  token: RequiredString({ description: "a trigger token of the project (the only credential this route takes)" }),
  ref: RequiredString({ description: 'the branch or tag to build' }),
  variables: Type.Optional(Type.Unknown({ description: 'a hash of strings (`variables[KEY]=VALUE` in a form, an object in JSON) passed to every build' })),
});
const tags = ['triggers'];
const tokenOf = (request: FastifyRequest) => (request.params as Static<typeof TokenParams>).token;
const triggerNotFound = () => notFound('Trigger');

/** Registers the trigger routes. */
export default async function triggerRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const admin = loadProject('admin_build');

  // The project by id or path whoever asks (the token decides), found before the body is read: 404 first, as every
  // project route answers an `:id` that names nothing.
  const triggerProjects = new WeakMap<FastifyRequest, ProjectRow>();
  const findTriggerProject: preValidationAsyncHookHandler = async (request) => {
    const project = await lookupProjectAsync(ctx, (request.params as Static<typeof ProjectIdParams>).id);
    if (!project) throw notFound();
    triggerProjects.set(request, project);
  };

  api.post('/projects/:id/trigger/builds', {
    config: { public: true },
    preValidation: [findTriggerProject, dropBlankParams],
    schema: {
      tags, summary: 'Start a pipeline for a ref with a trigger token (no user authentication)', params: ProjectIdParams, body: RunBody,
      response: { 201: TriggerRequestSchema },
    },
  }, async (request, reply) => {
    const body = request.body as Static<typeof RunBody>;
    const project = triggerProjects.get(request)!;
    const variables = checkTriggerVariables(body.variables);
    return reply.code(201).send(triggerRequestEntity(await runTrigger(ctx, project, String(body.token), String(body.ref), variables)));
  });

  api.get('/projects/:id/triggers', {
    preValidation: admin,
    schema: { tags, summary: "A project's triggers (master and up)", params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(TriggerSchema) } },
  }, async (request, reply) => {
    const projectId = projectOf(request).id;
    const rows = await paginate(request, reply, ctx.data, (q) => countTriggers(q, projectId), (q, limit, offset) => listTriggers(q, projectId, limit, offset));
    return rows.map((t) => triggerEntity(ctx, t));
  });

  api.get('/projects/:id/triggers/:token', {
    preValidation: admin,
    schema: { tags, summary: 'One trigger of the project, by token', params: TokenParams, response: { 200: TriggerSchema } },
  }, async (request) => {
    const trigger = await findTrigger(ctx, projectOf(request).id, tokenOf(request));
    if (!trigger) throw triggerNotFound();
    return triggerEntity(ctx, trigger);
  });

  api.post('/projects/:id/triggers', {
    preValidation: admin,
    schema: { tags, summary: 'Create a trigger with a new token', params: ProjectIdParams, response: { 201: TriggerSchema } },
  }, async (request, reply) => reply.code(201).send(triggerEntity(ctx, await createTrigger(ctx, projectOf(request)))));

  api.delete('/projects/:id/triggers/:token', {
    preValidation: admin,
    schema: { tags, summary: 'Delete a trigger: its token stops working (the deleted trigger is answered)', params: TokenParams, response: { 200: TriggerSchema } },
  }, async (request) => {
    const trigger = await deleteTrigger(ctx, projectOf(request).id, tokenOf(request));
    if (!trigger) throw triggerNotFound();
    return triggerEntity(ctx, trigger);
  });
}
