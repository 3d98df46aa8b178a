/**
 * /api/v3/projects/:id/services/:slug (GitLab 8.13 lib/api/services.rb; masters, owners and admins): GET shows the
 * service (made with its defaults the first time, as 8.13), PUT sets it and activates it (answers `true`), DELETE
 * empties its settings and deactivates it (answers `true`). The Slack service (`slack`) is served; an active one posts
 * Slack-format messages through the durable outbox (services/project-services/slack.ts). Any other slug is 404.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound } from '../errors.js';
import {
  deleteService, getService, SERVICE_EVENT_FLAGS, SERVICE_TYPES, serviceType, setService, type ServiceType,
} from '../services/project-services/services.js';
import { projectServiceEntity, ProjectServiceSchema } from './entities/services.js';
import { Bool, ProjectIdParams } from './params.js';
import { loadProject, projectOf } from './project-scope.js';

const O = Type.Optional;
const ServiceParams = Type.Object({ ...ProjectIdParams.properties, slug: Type.String({ description: `the service: ${Object.keys(SERVICE_TYPES).join(', ')}` }) });
// Every field of every served service, and the event switches (8.13 took only the fields; later versions both).
const fieldNames = [...new Map(Object.values(SERVICE_TYPES).flatMap((t) => t.fields).map((f) => [f.name, f])).values()];
const ServiceBody = Type.Object({
  ...Object.fromEntries(fieldNames.map((f) => [f.name, O(f.type === 'checkbox'
    ? Bool({ description: `${f.name} (slack)` })
    : Type.Union([Type.String(), Type.Null()], { description: `${f.name} (slack)${f.required ? '; required' : ''}` }))])),
  ...Object.fromEntries(SERVICE_EVENT_FLAGS.map((f) => [f, O(Bool({ description: 'default true' }))])),
});
const tags = ['services'];

/** The service type of the route's slug, or 404 `404 Service Not Found`. */
function typeOf(request: FastifyRequest): ServiceType {
  const type = serviceType((request.params as { slug: string }).slug.replace(/-/g, '_'));
  if (!type) throw notFound('Service');
  return type;
}

/** Registers the project service routes (on the data layer: served on SQLite and PostgreSQL). */
export default async function serviceRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const admin = loadProject('admin_project');

  api.get('/projects/:id/services/:slug', {
    preValidation: admin,
    schema: { tags, summary: "A project's service settings (master and up)", params: ServiceParams, response: { 200: ProjectServiceSchema } },
  }, async (request) => {
    const type = typeOf(request);
    return projectServiceEntity(await getService(ctx, projectOf(request).id, type), type);
  });

  api.put('/projects/:id/services/:slug', {
    preValidation: admin,
    schema: { tags, summary: 'Set and activate a service (master and up); answers true', params: ServiceParams, body: ServiceBody, response: { 200: Type.Boolean() } },
  }, async (request) => {
    await setService(ctx, projectOf(request).id, typeOf(request), (request.body ?? {}) as Record<string, unknown>);
    return true;
  });

  api.delete('/projects/:id/services/:slug', {
    preValidation: admin,
    schema: { tags, summary: 'Empty and deactivate a service (master and up); answers true', params: ServiceParams, response: { 200: Type.Boolean() } },
  }, async (request) => {
    await deleteService(ctx, projectOf(request).id, typeOf(request));
    return true;
  });
}
