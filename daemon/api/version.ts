/** `GET /version` (GitLab 8.13 lib/api/version.rb): the version and revision of the server, to signed-in callers only. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { versionInfo } from '../services/instance/version.js';

const VersionSchema = Type.Object({
  version: Type.String({ description: "Gantry's version (package.json)" }),
  revision: Type.String({ description: 'short git commit the daemon was built from, or unknown' }),
});

/** Registers GET /version (authenticated, as 8.13: 401 for anonymous callers). */
export default async function versionRoutes(api: FastifyInstance): Promise<void> {
  api.get('/version', {
    schema: { tags: ['version'], summary: 'The version and revision of this Gantry', response: { 200: VersionSchema } },
  }, async () => versionInfo());
}
