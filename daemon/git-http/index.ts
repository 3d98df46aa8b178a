/** git over HTTP (smart protocol) at /<namespace>/<project>.git. */
import type { FastifyInstance } from 'fastify';

/** Registers the git smart-HTTP routes. */
export default async function gitHttpRoutes(app: FastifyInstance): Promise<void> {
  void app;
}
