/** /api/v3 routes of the namespaces resource: GET /namespaces. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { requireUser } from '../policy/authentication.js';
import { listNamespaces } from '../services/users/groups.js';
import { namespaceEntity, NamespaceSchema } from './entities/groups.js';
import { paginate } from './pagination.js';
import { PageParams } from './params.js';

/** Registers the namespaces routes (on the data layer: served on SQLite and PostgreSQL). */
export default async function namespacesRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  api.get('/namespaces', {
    schema: {
      tags: ['namespaces'],
      querystring: Type.Object({ search: Type.Optional(Type.String({ description: 'matches path or name' })), ...PageParams }),
      response: { 200: Type.Array(NamespaceSchema) },
    },
  }, async (request, reply) => {
    const user = requireUser(request);
    const listing = listNamespaces(ctx, user, (request.query as { search?: string }).search || undefined);
    return (await paginate(request, reply, ctx.data, listing.count, listing.fetch)).map(namespaceEntity);
  });
}
