/** /api/v3/projects/:id/events: the project's events the caller may see, newest first (on SQLite and PostgreSQL). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { countProjectEvents, listProjectEvents, visibleEventsWhere } from '../services/instance/events.js';
import { EventSchema, presentEvents } from './entities/events.js';
import { paginate } from './pagination.js';
import { PageParams, ProjectIdParams } from './params.js';
import { callerOf, loadProject, projectLevelOf, projectOf } from './project-scope.js';

/** Registers the project events route. */
export default async function projectEventRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  api.get('/projects/:id/events', {
    preValidation: loadProject('read_project'),
    schema: { tags: ['projects'], params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(EventSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const caller = callerOf(request);
    const visible = await visibleEventsWhere(ctx, caller, project, projectLevelOf(request));
    const rows = await paginate(request, reply, ctx.data,
      (q) => countProjectEvents(ctx, project.id, visible, q),
      (q, limit, offset, total) => listProjectEvents(ctx, project.id, limit, offset, total, visible, q));
    return presentEvents(ctx, caller, rows);
  });
}
