/** /api/v3 routes of the groups resource: list, show, projects, create, update, delete, transfer a project. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { badRequest, forbidden, invalidParam, notFound } from '../errors.js';
import { requireUser } from '../policy/authentication.js';
import { canGlobal } from '../policy/permissions.js';
import {
  createGroup, deleteGroup, findGroup, listGroupProjects, listGroups, lookupGroup, transferProject, updateGroup,
  type GroupParams, type GroupProjectFilters,
} from '../services/users/groups.js';
import { lookupProjectAsync } from '../services/projects/projects.js';
import { groupDetail, GroupDetailSchema, groupEntity, GroupSchema, presentGroupProjects } from './entities/groups.js';
import { ProjectSchema } from './entities/projects.js';
import { paginate } from './pagination.js';
import { Bool, Int, normalizeBoolean, PageParams, VISIBILITY_BY_NAME } from './params.js';

const GroupIdParams = Type.Object({ id: Type.String({ description: 'group ID or path' }) });
const GroupFields = {
  name: Type.Optional(Type.String({ description: 'required on create' })),
  path: Type.Optional(Type.String({ description: 'required on create' })),
  description: Type.Optional(Type.String()),
  visibility_level: Type.Optional(Int({ description: '0 private, 10 internal, 20 public' })),
  lfs_enabled: Type.Optional(Bool()),
  request_access_enabled: Type.Optional(Bool()),
};
const ORDER_BY = new Set(['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at']);

/** The list filters of GET /groups/:id/projects, as GitLab 8.12's filter_projects reads them. */
function projectFilters(q: Record<string, string | undefined>): GroupProjectFilters {
  let visibility: number | undefined;
  if (q.visibility) {
    // Own keys only: `toString` or `__proto__` found Object.prototype's members (was 500; found by the fuzzer).
    visibility = Object.hasOwn(VISIBILITY_BY_NAME, q.visibility) ? VISIBILITY_BY_NAME[q.visibility] : undefined;
    if (visibility === undefined) throw invalidParam('visibility', 'does not have a valid value');
  }
  const archived = q.archived ? normalizeBoolean(q.archived) : undefined;
  return {
    archived: typeof archived === 'boolean' ? archived : undefined,
    visibility,
    orderBy: (q.order_by && ORDER_BY.has(q.order_by) ? q.order_by : 'created_at') as GroupProjectFilters['orderBy'],
    sort: q.sort === 'asc' ? 'asc' : 'desc',
    search: q.search || undefined,
    ciEnabledFirst: Boolean(q.ci_enabled_first) && normalizeBoolean(q.ci_enabled_first) !== false,
  };
}

/** Registers the groups routes (all on the data layer: served on SQLite and PostgreSQL). */
export default async function groupsRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.get('/groups', {
    schema: {
      tags: ['groups'],
      querystring: Type.Object({ search: Type.Optional(Type.String()), all_available: Type.Optional(Bool()), ...PageParams }),
      response: { 200: Type.Array(GroupSchema) },
    },
  }, async (request, reply) => {
    const user = requireUser(request);
    const q = request.query as { search?: string; all_available?: boolean };
    const listing = listGroups(ctx, user, { search: q.search, allAvailable: q.all_available === true });
    return (await paginate(request, reply, ctx.data, listing.count, listing.fetch)).map((g) => groupEntity(ctx, g));
  });

  api.get('/groups/:id', {
    schema: { tags: ['groups'], params: GroupIdParams, response: { 200: GroupDetailSchema } },
  }, async (request) => {
    const user = requireUser(request);
    return groupDetail(ctx, user, await findGroup(ctx, user, (request.params as { id: string }).id));
  });

  api.get('/groups/:id/projects', {
    schema: {
      tags: ['groups'],
      params: GroupIdParams,
      querystring: Type.Object({
        archived: Type.Optional(Type.String()),
        visibility: Type.Optional(Type.String({ description: 'public, internal or private' })),
        order_by: Type.Optional(Type.String({ description: 'id, name, path, created_at (default), updated_at, last_activity_at' })),
        sort: Type.Optional(Type.String({ description: 'asc or desc (default)' })),
        search: Type.Optional(Type.String()),
        ci_enabled_first: Type.Optional(Type.String()),
        ...PageParams,
      }),
      response: { 200: Type.Array(ProjectSchema) },
    },
  }, async (request, reply) => {
    const user = requireUser(request);
    const group = await findGroup(ctx, user, (request.params as { id: string }).id);
    const listing = listGroupProjects(ctx, user, group, projectFilters(request.query as Record<string, string | undefined>));
    return presentGroupProjects(ctx, user, await paginate(request, reply, ctx.data, listing.count, listing.fetch));
  });

  api.post('/groups', {
    schema: { tags: ['groups'], body: Type.Object(GroupFields), response: { 201: GroupSchema } },
  }, async (request, reply) => {
    const user = requireUser(request);
    if (!canGlobal(user, 'create_group')) throw forbidden();
    const body = (request.body ?? {}) as GroupParams;
    if (!body.name) throw badRequest('name');
    if (!body.path) throw badRequest('path');
    const group = await createGroup(ctx, user, body as GroupParams & { name: string; path: string });
    return reply.code(201).send(groupEntity(ctx, group));
  });

  api.put('/groups/:id', {
    schema: { tags: ['groups'], params: GroupIdParams, body: Type.Object(GroupFields), response: { 200: GroupDetailSchema } },
  }, async (request) => {
    const user = requireUser(request);
    const group = await findGroup(ctx, user, (request.params as { id: string }).id, 'admin_group');
    const updated = await updateGroup(ctx, user, group, (request.body ?? {}) as GroupParams);
    return groupDetail(ctx, user, updated);
  });

  api.delete('/groups/:id', {
    schema: { tags: ['groups'], params: GroupIdParams, response: { 200: GroupSchema } },
  }, async (request) => {
    const user = requireUser(request);
    const group = await findGroup(ctx, user, (request.params as { id: string }).id, 'admin_group');
    const body = groupEntity(ctx, group);
    await deleteGroup(ctx, group);
    return body;
  });

  api.post('/groups/:id/projects/:project_id', {
    schema: {
      tags: ['groups'],
      params: Type.Object({ id: Type.String({ description: 'group ID or path' }), project_id: Type.String({ description: 'project ID or URL-encoded NAMESPACE/PATH' }) }),
      response: { 201: GroupDetailSchema },
    },
  }, async (request, reply) => {
    const user = requireUser(request);
    if (!canGlobal(user, 'admin_instance')) throw forbidden();
    const params = request.params as { id: string; project_id: string };
    const group = await lookupGroup(ctx, params.id);
    if (!group) throw notFound('Group');
    const project = await lookupProjectAsync(ctx, params.project_id);
    if (!project) throw notFound('Project');
    await transferProject(ctx, group, project);
    return reply.code(201).send(await groupDetail(ctx, user, group));
  });
}
