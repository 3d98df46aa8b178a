/** /api/v3 routes of the projects resource. */
import type { FastifyInstance } from 'fastify';

/** Registers the projects routes. */
export default async function projectsRoutes(api: FastifyInstance): Promise<void> {
  void api;
}
