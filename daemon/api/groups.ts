/** /api/v3 routes of the groups resource. */
import type { FastifyInstance } from 'fastify';

/** Registers the groups routes. */
export default async function groupsRoutes(api: FastifyInstance): Promise<void> {
  void api;
}
