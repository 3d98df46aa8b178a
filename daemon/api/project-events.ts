/** /api/v3/projects/:id/events: the project's events the caller may see, newest first. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { visibleEventsSql } from '../policy/permissions.js';
import { countProjectEvents, listProjectEvents } from '../services/events.js';
import { EventSchema, presentEvents } from './entities/events.js';
import { paginate } from './pagination.js';
import { PageParams, ProjectIdParams } from './params.js';
import { callerOf, loadProject, projectOf } from './project-scope.js';

/** Registers the project events route. */
export default async function projectEventRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  api.get('/projects/:id/events', {
    preValidation: loadProject('read_project'),
    schema: { tags: ['projects'], params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(EventSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const visible = visibleEventsSql(ctx, callerOf(request), project);
    const rows = paginate(
      request, reply,
      () => countProjectEvents(ctx, project.id, visible),
      (limit, offset, total) => listProjectEvents(ctx, project.id, limit, offset, total, visible),
    );
    return presentEvents(ctx, callerOf(request), rows);
  });
}
