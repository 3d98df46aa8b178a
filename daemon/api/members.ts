/** /api/v3 routes of the members resource. */
import type { FastifyInstance } from 'fastify';

/** Registers the members routes. */
export default async function membersRoutes(api: FastifyInstance): Promise<void> {
  void api;
}
