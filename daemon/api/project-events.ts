/** /api/v3/projects/:id/events: the project's events, newest first. */
import { Type } from '@sinclair/typebox';
import { desc, eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { events } from '../db/schema.js';
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
    const where = eq(events.projectId, project.id);
    const rows = paginate(
      request, reply,
      () => ctx.db.select({ n: sql<number>`count(*)` }).from(events).where(where).get()!.n,
      (limit, offset) => ctx.db.select().from(events).where(where).orderBy(desc(events.id)).limit(limit).offset(offset).all(),
    );
    return presentEvents(ctx, callerOf(request), rows);
  });
}
