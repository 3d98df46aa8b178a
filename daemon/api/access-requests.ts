/**
 * /api/v3 routes of access requests, identical for /projects/:id/access_requests and /groups/:id/access_requests
 * (GitLab 8.13 access_requests.rb): request (the caller), list (those who manage members), approve with a level,
 * deny or withdraw. The source is found with the read ability (404 when hidden); the rest is the service's.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UserRow } from '../db/schema.js';
import { requireUser } from '../policy/authentication.js';
import { approveAccessRequest, listAccessRequests, removeAccessRequest, requestAccess } from '../services/projects/access-requests.js';
import { findGroup } from '../services/users/groups.js';
import type { MemberSource } from '../services/projects/members.js';
import { findProject } from '../services/projects/projects.js';
import { accessRequesterEntities, accessRequesterEntity, AccessRequesterSchema } from './entities/access-requests.js';
import { memberEntity, MemberSchema } from './entities/members.js';
import { paginate } from './pagination.js';
import { Int, PageParams } from './params.js';

/** How each source is resolved for a caller who must see it (404 otherwise). */
const SOURCES = {
  projects: async (request: FastifyRequest, user: UserRow): Promise<MemberSource> => ({
    kind: 'project', project: await findProject(request.server.ctx, user, (request.params as { id: string }).id, 'read_project'),
  }),
  groups: async (request: FastifyRequest, user: UserRow): Promise<MemberSource> => ({
    kind: 'group', group: await findGroup(request.server.ctx, user, (request.params as { id: string }).id, 'read_group'),
  }),
} as const;

const SourceParams = Type.Object({ id: Type.String({ description: 'project ID or URL-encoded NAMESPACE/PATH; group ID or path' }) });
const RequesterParams = Type.Object({ id: SourceParams.properties.id, user_id: Type.Integer({ description: 'the user ID of the access requester' }) });
const ApproveBody = Type.Object({
  access_level: Type.Optional(Int({ description: 'the level given: 10 guest, 20 reporter, 30 developer (default), 40 master, 50 owner (groups only)' })),
});

/** Registers the access request routes for projects and groups. */
export default async function accessRequestRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  for (const [prefix, resolve] of Object.entries(SOURCES)) {
    const tags = [prefix === 'projects' ? 'project access requests' : 'group access requests'];
    const userIdOf = (request: FastifyRequest) => (request.params as { user_id: number }).user_id;

    api.get(`/${prefix}/:id/access_requests`, {
      schema: {
        tags, summary: 'Pending access requests (those who manage the members: project masters and owners, group owners, admins)',
        params: SourceParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(AccessRequesterSchema) },
      },
    }, async (request, reply) => {
      const actor = requireUser(request);
      const listing = await listAccessRequests(ctx, actor, await resolve(request, actor));
      return accessRequesterEntities(ctx, await paginate(request, reply, ctx.data, listing.count, listing.fetch));
    });

    api.post(`/${prefix}/:id/access_requests`, {
      schema: { tags, summary: 'Request access for the authenticated user', params: SourceParams, response: { 201: AccessRequesterSchema } },
    }, async (request, reply) => {
      const actor = requireUser(request);
      const made = await requestAccess(ctx, actor, await resolve(request, actor));
      return reply.code(201).send(await accessRequesterEntity(ctx, made));
    });

    api.put(`/${prefix}/:id/access_requests/:user_id/approve`, {
      schema: { tags, summary: 'Approve an access request: the user becomes a member', params: RequesterParams, body: Type.Optional(ApproveBody), response: { 201: MemberSchema } },
    }, async (request, reply) => {
      const actor = requireUser(request);
      const level = (request.body as { access_level?: number } | undefined)?.access_level;
      const approved = await approveAccessRequest(ctx, actor, await resolve(request, actor), userIdOf(request), level);
      return reply.code(201).send(await memberEntity(ctx, approved.member, approved.user));
    });

    api.delete(`/${prefix}/:id/access_requests/:user_id`, {
      schema: { tags, summary: 'Deny an access request, or withdraw your own (the request that went is answered)', params: RequesterParams, response: { 200: AccessRequesterSchema } },
    }, async (request) => {
      const actor = requireUser(request);
      return accessRequesterEntity(ctx, await removeAccessRequest(ctx, actor, await resolve(request, actor), userIdOf(request)));
    });
  }
}
