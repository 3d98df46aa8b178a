/** /api/v3 routes of the namespaces resource. */
import type { FastifyInstance } from 'fastify';

/** Registers the namespaces routes. */
export default async function namespacesRoutes(api: FastifyInstance): Promise<void> {
  void api;
}
