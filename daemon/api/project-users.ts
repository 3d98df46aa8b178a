/**
 * `GET /projects/:id/users` (GitLab 8.13 lib/api/projects.rb): the users of the project (its team), as UserBasic,
 * paginated, with `search` on name, email or username. Anyone who may read the project may list them (404 otherwise,
 * 401 anonymous, as 8.13's `authenticate!` on the projects API).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { listProjectUsers } from '../services/projects/users.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './entities/users.js';
import { paginate } from './pagination.js';
import { PageParams, ProjectIdParams } from './params.js';
import { loadProject, projectOf } from './project-scope.js';

const Query = Type.Object({ search: Type.Optional(Type.String({ description: 'part of a name, email or username' })), ...PageParams });

/** Registers GET /projects/:id/users (on the data layer: both engines). */
export default async function projectUserRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  api.get('/projects/:id/users', {
    preValidation: loadProject('read_project'),
    schema: {
      tags: ['projects'], summary: 'The users of a project: its members, its group\'s and those of the groups it is shared with',
      params: ProjectIdParams, querystring: Query, response: { 200: Type.Array(UserBasicSchema) },
    },
  }, async (request, reply) => {
    const listing = listProjectUsers(ctx, projectOf(request), (request.query as { search?: string }).search || undefined);
    const users = await paginate(request, reply, ctx.data, listing.count, listing.fetch);
    const gravatar = await gravatarEnabledAsync(ctx);
    return users.map((u) => userBasic(ctx, u, gravatar));
  });
}
