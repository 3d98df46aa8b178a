/** /api/v3 project actions: fork (and the fork link), star, archive, share with a group. On either engine. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notModified } from '../errors.js';
import {
  addForkLink, forkProject, forkTargetNamespace, removeForkLink, setProjectArchived, shareProject, starProject, unshareProject, unstarProject,
} from '../services/projects/actions.js';
import { findProject } from '../services/projects/projects.js';
import { presentProject, projectGroupLink, ProjectGroupLinkSchema, ProjectSchema } from './entities/projects.js';
import { Int, ProjectIdParams } from './params.js';
import { adminOnly, callerOf, dropBlankParams, loadProject, projectLevelOf, projectOf } from './project-scope.js';

const ShareBody = Type.Object({
  group_id: Int({ description: 'the group to share with' }),
  group_access: Int({ description: 'access level of the group members in the project: 10, 20, 30 or 40' }),
  expires_at: Type.Optional(Type.String({ description: 'YYYY-MM-DD' })),
});
/** The fork link as 8.x answered POST /projects/:id/fork/:forked_from_id (its ForkedProjectLink; one per fork, named by it). */
const ForkLinkSchema = Type.Object({
  id: Type.Integer({ description: 'the link: one per fork, so the id of the fork' }),
  forked_to_project_id: Type.Integer(), forked_from_project_id: Type.Integer(), created_at: Type.String(), updated_at: Type.String(),
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
    const ns = await forkTargetNamespace(ctx, user, wanted === undefined ? undefined : String(wanted));
    const fork = await forkProject(ctx, user, source, ns);
    return reply.code(201).send(await presentProject(ctx, user, fork, { withRunnersToken: true }));
  });

  api.post('/projects/:id/fork/:forked_from_id', {
    preValidation: adminOnly,
    schema: {
      tags, summary: 'Mark a project as a fork of another (administrators only)',
      params: Type.Object({ id: Type.String({ description: 'the fork' }), forked_from_id: Type.String({ description: 'the project it was forked from' }) }),
      response: { 201: ForkLinkSchema },
    },
  }, async (request, reply) => {
    const admin = callerOf(request);
    const p = request.params as { id: string; forked_from_id: string };
    const source = await findProject(ctx, admin, p.forked_from_id);
    const project = await findProject(ctx, admin, p.id);
    const linked = await addForkLink(ctx, project, source);
    return reply.code(201).send({
      id: linked.id, forked_to_project_id: linked.id, forked_from_project_id: source.id, created_at: linked.updatedAt, updated_at: linked.updatedAt,
    });
  });

  api.delete('/projects/:id/fork', {
    preValidation: loadProject('remove_fork_project'),
    schema: { tags, params: ProjectIdParams, response: { 200: ProjectSchema } },
  }, async (request) => {
    const unlinked = await removeForkLink(ctx, projectOf(request));
    if (!unlinked) throw notModified();
    return presentProject(ctx, callerOf(request), unlinked);
  });

  api.post('/projects/:id/star', {
    preValidation: loadProject('read_project'),
    schema: { tags, params: ProjectIdParams, response: { 201: ProjectSchema } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const project = projectOf(request);
    if (!(await starProject(ctx, user, project))) throw notModified();
    return reply.code(201).send(await presentProject(ctx, user, project));
  });

  api.delete('/projects/:id/star', {
    preValidation: loadProject('read_project'),
    schema: { tags, params: ProjectIdParams, response: { 200: ProjectSchema } },
  }, async (request) => {
    const user = callerOf(request);
    const project = projectOf(request);
    if (!(await unstarProject(ctx, user, project))) throw notModified();
    return presentProject(ctx, user, project);
  });

  for (const [action, archived] of [['archive', true], ['unarchive', false]] as const) {
    api.post(`/projects/:id/${action}`, {
      preValidation: loadProject('archive_project'),
      schema: { tags, params: ProjectIdParams, response: { 201: ProjectSchema } },
    }, async (request, reply) => {
      const project = await setProjectArchived(ctx, projectOf(request), archived);
      return reply.code(201).send(await presentProject(ctx, callerOf(request), project, { level: projectLevelOf(request) }));
    });
  }

  api.post('/projects/:id/share', {
    preValidation: [loadProject('admin_project'), dropBlankParams],
    schema: { tags, params: ProjectIdParams, body: ShareBody, response: { 201: ProjectGroupLinkSchema } },
  }, async (request, reply) => {
    const link = await shareProject(ctx, callerOf(request), projectOf(request), request.body as Static<typeof ShareBody>);
    return reply.code(201).send(projectGroupLink(link));
  });

  api.delete('/projects/:id/share/:group_id', {
    preValidation: loadProject('admin_project'),
    schema: { tags, params: Type.Object({ id: Type.String(), group_id: Type.Integer() }), response: { 204: Type.Null() } },
  }, async (request, reply) => {
    await unshareProject(ctx, projectOf(request), (request.params as { group_id: number }).group_id);
    return reply.code(204).send();
  });
}
