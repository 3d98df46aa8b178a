/** /api/v3 routes of members, identical for /projects/:id/members and /groups/:id/members (GitLab 8.12 members.rb). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UserRow } from '../db/schema.js';
import { badRequest } from '../errors.js';
import { requireUser } from '../policy/authentication.js';
import { findGroup } from '../services/users/groups.js';
import { addMember, getMember, listMembers, removeMember, updateMember, type MemberSource } from '../services/projects/members.js';
import { findProject } from '../services/projects/projects.js';
import { memberEntities, memberEntity, MemberSchema } from './entities/members.js';
import { paginate } from './pagination.js';
import { Int, Nullable, PageParams } from './params.js';

type Access = 'read' | 'admin';

/** How each source is resolved: 404 when hidden, 403 when the admin ability is missing. */
const SOURCES = {
  projects: async (request: FastifyRequest, user: UserRow, access: Access): Promise<MemberSource> => ({
    kind: 'project',
    project: await findProject(request.server.ctx, user, (request.params as { id: string }).id, access === 'admin' ? 'admin_project_member' : 'read_project'),
  }),
  groups: async (request: FastifyRequest, user: UserRow, access: Access): Promise<MemberSource> => ({
    kind: 'group',
    group: await findGroup(request.server.ctx, user, (request.params as { id: string }).id, access === 'admin' ? 'admin_group_member' : 'read_group'),
  }),
} as const;

const SourceParams = Type.Object({ id: Type.String({ description: 'project ID or URL-encoded NAMESPACE/PATH; group ID or path' }) });
const MemberParams = Type.Object({ id: SourceParams.properties.id, user_id: Type.Integer() });
const MemberBody = Type.Object({
  user_id: Type.Optional(Int({ description: 'required on POST' })),
  access_level: Type.Optional(Int({ description: 'required: 10 guest, 20 reporter, 30 developer, 40 master, 50 owner (groups only)' })),
  expires_at: Type.Optional(Nullable(Type.String({ description: 'YYYY-MM-DD' }))),
});
type Body = { user_id?: number; access_level?: number; expires_at?: string | null };

/** Registers the members routes for projects and groups (all on the data layer: served on SQLite and PostgreSQL). */
export default async function membersRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  for (const [prefix, resolve] of Object.entries(SOURCES)) {
    const tags = [prefix === 'projects' ? 'project members' : 'group members'];

    api.get(`/${prefix}/:id/members`, {
      schema: {
        tags,
        params: SourceParams,
        querystring: Type.Object({ query: Type.Optional(Type.String({ description: 'search on name, email or username' })), ...PageParams }),
        response: { 200: Type.Array(MemberSchema) },
      },
    }, async (request, reply) => {
      const source = await resolve(request, requireUser(request), 'read');
      const listing = listMembers(ctx, source, (request.query as { query?: string }).query || undefined);
      return memberEntities(ctx, await paginate(request, reply, ctx.data, listing.count, listing.fetch));
    });

    api.get(`/${prefix}/:id/members/:user_id`, {
      schema: { tags, params: MemberParams, response: { 200: MemberSchema } },
    }, async (request) => {
      const source = await resolve(request, requireUser(request), 'read');
      const found = await getMember(ctx, source, (request.params as { user_id: number }).user_id);
      return memberEntity(ctx, found.member, found.user);
    });

    api.post(`/${prefix}/:id/members`, {
      schema: { tags, params: SourceParams, body: MemberBody, response: { 201: MemberSchema } },
    }, async (request, reply) => {
      const actor = requireUser(request);
      const source = await resolve(request, actor, 'admin');
      const body = (request.body ?? {}) as Body;
      if (body.user_id === undefined) throw badRequest('user_id');
      if (body.access_level === undefined) throw badRequest('access_level');
      const added = await addMember(ctx, actor, source, body.user_id, { access_level: body.access_level, expires_at: body.expires_at });
      return reply.code(201).send(await memberEntity(ctx, added.member, added.user));
    });

    api.put(`/${prefix}/:id/members/:user_id`, {
      schema: { tags, params: MemberParams, body: MemberBody, response: { 200: MemberSchema } },
    }, async (request) => {
      const source = await resolve(request, requireUser(request), 'admin');
      const body = (request.body ?? {}) as Body;
      if (body.access_level === undefined) throw badRequest('access_level');
      const updated = await updateMember(ctx, source, (request.params as { user_id: number }).user_id, { access_level: body.access_level, expires_at: body.expires_at });
      return memberEntity(ctx, updated.member, updated.user);
    });

    api.delete(`/${prefix}/:id/members/:user_id`, {
      schema: {
        tags,
        params: MemberParams,
        response: { 200: Type.Union([MemberSchema, Type.Object({ message: Type.String(), id: Type.Integer() })]) },
      },
    }, async (request) => {
      const actor = requireUser(request);
      const source = await resolve(request, actor, 'read');
      const userId = (request.params as { user_id: number }).user_id;
      const removed = await removeMember(ctx, actor, source, userId);
      return removed ? await memberEntity(ctx, removed.member, removed.user) : { message: 'Access revoked', id: userId };
    });
  }
}
