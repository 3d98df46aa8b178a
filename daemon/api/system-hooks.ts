/**
 * /api/v3/hooks: system hooks (GitLab 8.13 lib/api/system_hooks.rb; administrators only): list, add, test (GET
 * /hooks/:id queues 8.13's sample project_create payload for the hook and answers with it), delete. Deliveries go
 * through the durable outbox (services/hooks/deliveries.ts) with X-Gitlab-Event `System Hook`.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound, notFoundMessage } from '../errors.js';
import {
  countSystemHooks, createSystemHook, deleteSystemHook, listSystemHooks, testSystemHook, type SystemHookParams,
} from '../services/hooks/system-hooks.js';
import { systemHookEntity, SystemHookSchema } from './entities/hooks.js';
import { paginate } from './pagination.js';
import { Bool, Int, PageParams, RequiredString } from './params.js';
import { adminOnly, dropBlankParams } from './project-scope.js';

const O = Type.Optional;
const HookBody = Type.Object({
  url: RequiredString({ description: 'http(s) URL the hook posts to' }),
  token: O(Type.String({ description: 'secret sent as X-Gitlab-Token with each delivery; stored, never shown' })),
  push_events: O(Bool({ description: 'receive pushes (default true, as 8.13)' })),
  tag_push_events: O(Bool({ description: 'receive tag pushes (default false)' })),
  enable_ssl_verification: O(Bool({ description: 'default true' })),
});
const HookParams = Type.Object({ id: Int({ description: 'system hook ID' }) });
const TestData = Type.Object({
  event_name: Type.String(), name: Type.String(), path: Type.String(), project_id: Type.Integer(), owner_name: Type.String(), owner_email: Type.String(),
});
const tags = ['system hooks'];
const idOf = (request: FastifyRequest) => (request.params as { id: number }).id;

/** Registers the system hook routes (on the data layer: served on SQLite and PostgreSQL). */
export default async function systemHookRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.get('/hooks', {
    preValidation: adminOnly,
    schema: { tags, summary: 'The system hooks (admin)', querystring: Type.Object(PageParams), response: { 200: Type.Array(SystemHookSchema) } },
  }, async (request, reply) => {
    const rows = await paginate(request, reply, ctx.data, () => countSystemHooks(ctx), (_q, limit, offset) => listSystemHooks(ctx, limit, offset));
    return rows.map(systemHookEntity);
  });

  api.post('/hooks', {
    preValidation: [adminOnly, dropBlankParams],
    schema: { tags, summary: 'Add a system hook (admin)', body: HookBody, response: { 201: SystemHookSchema } },
  }, async (request, reply) => {
    const hook = await createSystemHook(ctx, request.body as Static<typeof HookBody> as SystemHookParams);
    return reply.code(201).send(systemHookEntity(hook));
  });

  // 8.13: find -> `404 Not found`; the answer is the sample payload that was sent.
  api.get('/hooks/:id', {
    preValidation: adminOnly,
    schema: { tags, summary: 'Test a system hook: sends a sample project_create payload and answers with it (admin)', params: HookParams, response: { 200: TestData } },
  }, async (request) => {
    const data = await testSystemHook(ctx, idOf(request));
    if (!data) throw notFoundMessage('404 Not found');
    return data;
  });

  api.delete('/hooks/:id', {
    preValidation: adminOnly,
    schema: { tags, summary: 'Delete a system hook (admin)', params: HookParams, response: { 200: SystemHookSchema } },
  }, async (request) => {
    const hook = await deleteSystemHook(ctx, idOf(request));
    if (!hook) throw notFound('System hook');
    return systemHookEntity(hook);
  });
}
