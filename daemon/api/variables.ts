/** /api/v3/projects/:id/variables: a project's secret build variables (admin_build: masters and owners). */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';
import { countVariables, createVariable, deleteVariable, findVariable, listVariables, updateVariable } from '../services/ci/variables.js';
import { paginate } from './pagination.js';
import { PageParams, ProjectIdParams, RequiredString } from './params.js';
import { dropBlankParams, loadProject, projectOf } from './project-scope.js';

/** The Variable entity of GitLab 8.x: {key, value}. */
export const VariableSchema = Type.Object({ key: Type.String(), value: Type.String() });

const VariableParams = Type.Object({ id: Type.String({ description: 'project ID or URL-encoded NAMESPACE/PATH' }), key: Type.String() });
const CreateBody = Type.Object({
  key: RequiredString({ description: '1-255 characters of A-Z, a-z, 0-9 and _; unique in the project' }),
  value: RequiredString({ description: 'the value (stored encrypted)' }),
});
const UpdateBody = Type.Object({ value: Type.Optional(Type.String({ description: 'the new value' })) });
const tags = ['variables'];
const variableNotFound = () => notFound('Variable');

/** Registers the project variable routes. */
export default async function variableRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const admin = loadProject('admin_build');
  const keyOf = (request: { params: unknown }) => (request.params as Static<typeof VariableParams>).key;

  api.get('/projects/:id/variables', {
    preValidation: admin,
    schema: { tags, params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(VariableSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    return paginate(request, reply, ctx.data, (q) => countVariables(ctx, project.id, q), (q, limit, offset) => listVariables(ctx, project.id, limit, offset, q));
  });

  api.get('/projects/:id/variables/:key', {
    preValidation: admin,
    schema: { tags, params: VariableParams, response: { 200: VariableSchema } },
  }, async (request) => {
    const variable = await findVariable(ctx, projectOf(request).id, keyOf(request));
    if (!variable) throw variableNotFound();
    return variable;
  });

  api.post('/projects/:id/variables', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: ProjectIdParams, body: CreateBody, response: { 201: VariableSchema } },
  }, async (request, reply) => {
    const body = request.body as Static<typeof CreateBody>;
    return reply.code(201).send(await createVariable(ctx, projectOf(request).id, String(body.key), String(body.value)));
  });

  api.put('/projects/:id/variables/:key', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: VariableParams, body: UpdateBody, response: { 200: VariableSchema } },
  }, async (request) => {
    const { value } = request.body as Static<typeof UpdateBody>;
    const variable = await updateVariable(ctx, projectOf(request).id, keyOf(request), value);
    if (!variable) throw variableNotFound();
    return variable;
  });

  api.delete('/projects/:id/variables/:key', {
    preValidation: admin,
    schema: { tags, params: VariableParams, response: { 200: VariableSchema } },
  }, async (request) => {
    const variable = await deleteVariable(ctx, projectOf(request).id, keyOf(request));
    if (!variable) throw variableNotFound();
    return variable;
  });
}
