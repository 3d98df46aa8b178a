/** /api/v3/projects/:id/hooks: project hooks (masters and owners only). */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFoundMessage } from '../errors.js';
import {
  countProjectHooks, createProjectHook, deleteProjectHook, findProjectHook, listProjectHooks, updateProjectHook, type ProjectHookParams,
} from '../services/hooks/project-hooks.js';
import { projectHookEntity, ProjectHookSchema } from './entities/hooks.js';
import { paginate } from './pagination.js';
import { Bool, PageParams, ProjectIdParams, RequiredString } from './params.js';
import { dropBlankParams, loadProject, projectOf } from './project-scope.js';

const O = Type.Optional;
const HookBody = Type.Object({
  url: RequiredString({ description: 'http(s) URL the hook posts to' }),
  token: O(Type.String({ description: 'secret sent with each delivery; stored, never shown' })),
  push_events: O(Bool({ description: 'default true' })),
  issues_events: O(Bool()),
  merge_requests_events: O(Bool()),
  tag_push_events: O(Bool()),
  note_events: O(Bool()),
  build_events: O(Bool()),
  pipeline_events: O(Bool()),
  wiki_page_events: O(Bool()),
  enable_ssl_verification: O(Bool({ description: 'default true' })),
});
const HookParams = Type.Object({ id: Type.String(), hook_id: Type.Integer() });
const tags = ['project hooks'];
// 8.x found hooks with `find`, whose miss answered `404 Not found` (lower-case f).
const hookNotFound = () => notFoundMessage('404 Not found');

/** Registers the project hook routes (on the data layer: served on SQLite and PostgreSQL). */
export default async function projectHookRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const admin = loadProject('admin_project');

  api.get('/projects/:id/hooks', {
    preValidation: admin,
    schema: { tags, params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(ProjectHookSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const rows = await paginate(request, reply, ctx.data,
      (q) => countProjectHooks(ctx, project.id, q), (q, limit, offset) => listProjectHooks(ctx, project.id, limit, offset, q));
    return rows.map(projectHookEntity);
  });

  api.get('/projects/:id/hooks/:hook_id', {
    preValidation: admin,
    schema: { tags, params: HookParams, response: { 200: ProjectHookSchema } },
  }, async (request) => {
    const hook = await findProjectHook(ctx, projectOf(request).id, (request.params as { hook_id: number }).hook_id);
    if (!hook) throw hookNotFound();
    return projectHookEntity(hook);
  });

  api.post('/projects/:id/hooks', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: ProjectIdParams, body: HookBody, response: { 201: ProjectHookSchema } },
  }, async (request, reply) => {
    const hook = await createProjectHook(ctx, projectOf(request).id, request.body as Static<typeof HookBody> as ProjectHookParams);
    return reply.code(201).send(projectHookEntity(hook));
  });

  api.put('/projects/:id/hooks/:hook_id', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: HookParams, body: HookBody, response: { 200: ProjectHookSchema } },
  }, async (request) => {
    const hook = await findProjectHook(ctx, projectOf(request).id, (request.params as { hook_id: number }).hook_id);
    if (!hook) throw hookNotFound();
    const updated = await updateProjectHook(ctx, hook, request.body as ProjectHookParams);
    if (!updated) throw hookNotFound(); // deleted meanwhile
    return projectHookEntity(updated);
  });

  // Idempotent (the spec): the deleted hook, or an empty 200 when there was none.
  api.delete('/projects/:id/hooks/:hook_id', {
    preValidation: admin,
    schema: { tags, params: HookParams, response: { 200: Type.Union([ProjectHookSchema, Type.Null()]) } },
  }, async (request, reply) => {
    const hook = await deleteProjectHook(ctx, projectOf(request).id, (request.params as { hook_id: number }).hook_id);
    if (!hook) return reply.code(200).send();
    return projectHookEntity(hook);
  });
}
