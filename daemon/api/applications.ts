/**
 * /api/v3/applications: OAuth applications of the signed-in user (GitLab 8.x had them only in its web UI; Gantry uses
 * the shape GitLab later gave this API). Admins always; other users when the `user_oauth_applications` setting is on.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UserRow } from '../db/schema.js';
import { forbidden } from '../errors.js';
import { requireUser } from '../policy/authentication.js';
import { canManageOauthApplications } from '../policy/permissions.js';
import { createApplication, deleteApplication, listApplications } from '../services/oauth/applications.js';
import { getSettings } from '../services/instance/settings.js';
import { applicationEntity, ApplicationSchema, ApplicationWithSecretSchema } from './entities/applications.js';
import { paginate } from './pagination.js';
import { Int, PageParams, RequiredString } from './params.js';

const tags = ['applications'];
const CreateBody = Type.Object({
  name: RequiredString({ description: 'name shown on the consent page' }),
  redirect_uri: RequiredString({ description: 'redirect URIs, one per line; urn:ietf:wg:oauth:2.0:oob for clients that cannot receive a redirect' }),
  scopes: Type.Optional(Type.String({ description: 'space-separated scopes; default and only one: api' })),
});

/** The caller, when allowed to use the applications API (else 403). */
async function manager(ctx: FastifyInstance['ctx'], request: FastifyRequest): Promise<UserRow> {
  const user = requireUser(request);
  if (!canManageOauthApplications(user, (await getSettings(ctx)).userOauthApplications)) {
    throw forbidden('OAuth applications can be registered only by administrators on this server (the user_oauth_applications setting is off)');
  }
  return user;
}

/** Registers /applications (on the data layer: served on SQLite and PostgreSQL). */
export default async function applicationRoutes(api: FastifyInstance): Promise<void> {
  const ctx = api.ctx;
  api.post('/applications', {
    schema: { tags, summary: 'Register an OAuth application; the secret is shown only in this answer', body: CreateBody, response: { 201: ApplicationWithSecretSchema } },
  }, async (request, reply) => {
    const user = await manager(ctx, request);
    const { app, secret } = await createApplication(ctx, user, request.body as { name: string; redirect_uri: string; scopes?: string });
    return reply.code(201).send({ ...applicationEntity(app), secret });
  });
  api.get('/applications', {
    schema: { tags, summary: "The caller's OAuth applications (an admin: all), without secrets", querystring: Type.Object(PageParams), response: { 200: Type.Array(ApplicationSchema) } },
  }, async (request, reply) => {
    const listing = listApplications(await manager(ctx, request));
    return (await paginate(request, reply, ctx.data, listing.count, listing.fetch)).map(applicationEntity);
  });
  api.delete('/applications/:id', {
    schema: { tags, summary: 'Delete an OAuth application and revoke its tokens and codes', params: Type.Object({ id: Int({ description: 'application ID' }) }) },
  }, async (request, reply) => {
    await deleteApplication(ctx, await manager(ctx, request), (request.params as { id: number }).id);
    return reply.code(204).send();
  });
}
