/** /api/v3 project actions: fork (and fork link removal), star, archive, share with a group. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notModified } from '../errors.js';
import {
  removeForkLink, setProjectArchived, shareProject, starProject, unshareProject, unstarProject,
} from '../services/project-actions.js';
import { forkProject, forkTargetNamespace, lookupProject } from '../services/projects.js';
import { presentProject, projectGroupLink, ProjectGroupLinkSchema, ProjectSchema } from './entities/projects.js';
import { Int, ProjectIdParams } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';

const ShareBody = Type.Object({
  group_id: Int({ description: 'the group to share with' }),
  group_access: Int({ description: 'access level of the group members in the project: 10, 20, 30 or 40' }),
  expires_at: Type.Optional(Type.String({ description: 'YYYY-MM-DD' })),
});
const tags = ['projects'];

/** Registers the project action routes. */
export default async function projectActionRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.post('/projects/fork/:id', {
    preValidation: [loadProject('fork_project'), dropBlankParams],
    schema: {
      tags, params: ProjectIdParams,
      body: Type.Object({ namespace: Type.Optional(Type.String({ description: 'id, path or name of the target namespace' })) }),
      response: { 201: ProjectSchema },
    },
  }, async (request, reply) => {
    const user = callerOf(request);
    const source = projectOf(request);
    const body = (request.body ?? {}) as { namespace?: string };
    const query = request.query as { namespace?: unknown };
    const wanted = body.namespace ?? (typeof query.namespace === 'string' ? query.namespace : undefined);
    const ns = forkTargetNamespace(ctx, user, wanted === undefined ? undefined : String(wanted));
    const fork = await forkProject(ctx, user, source, ns);
    return reply.code(201).send(presentProject(ctx, user, fork, { withRunnersToken: true }));
  });

  api.delete('/projects/:id/fork', {
    preValidation: loadProject('remove_fork_project'),
    schema: { tags, params: ProjectIdParams, response: { 200: ProjectSchema } },
  }, async (request) => {
    const project = projectOf(request);
    if (!removeForkLink(ctx, project)) throw notModified();
    return presentProject(ctx, callerOf(request), lookupProject(ctx, project.id)!);
  });

  api.post('/projects/:id/star', {
    preValidation: loadProject('read_project'),
    schema: { tags, params: ProjectIdParams, response: { 201: ProjectSchema } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const project = projectOf(request);
    if (!starProject(ctx, user, project)) throw notModified();
    return reply.code(201).send(presentProject(ctx, user, project));
  });

  api.delete('/projects/:id/star', {
    preValidation: loadProject('read_project'),
    schema: { tags, params: ProjectIdParams, response: { 200: ProjectSchema } },
  }, async (request) => {
    const user = callerOf(request);
    const project = projectOf(request);
    if (!unstarProject(ctx, user, project)) throw notModified();
    return presentProject(ctx, user, project);
  });

  for (const [action, archived] of [['archive', true], ['unarchive', false]] as const) {
    api.post(`/projects/:id/${action}`, {
      preValidation: loadProject('archive_project'),
      schema: { tags, params: ProjectIdParams, response: { 201: ProjectSchema } },
    }, async (request, reply) => {
      const project = setProjectArchived(ctx, projectOf(request), archived);
      return reply.code(201).send(presentProject(ctx, callerOf(request), project));
    });
  }

  api.post('/projects/:id/share', {
    preValidation: [loadProject('admin_project'), dropBlankParams],
    schema: { tags, params: ProjectIdParams, body: ShareBody, response: { 201: ProjectGroupLinkSchema } },
  }, async (request, reply) => {
    const link = shareProject(ctx, callerOf(request), projectOf(request), request.body as Static<typeof ShareBody>);
    return reply.code(201).send(projectGroupLink(link));
  });

  api.delete('/projects/:id/share/:group_id', {
    preValidation: loadProject('admin_project'),
    schema: { tags, params: Type.Object({ id: Type.String(), group_id: Type.Integer() }), response: { 204: Type.Null() } },
  }, async (request, reply) => {
    unshareProject(ctx, projectOf(request), (request.params as { group_id: number }).group_id);
    return reply.code(204).send();
  });
}
