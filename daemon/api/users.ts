/** /session, /user, /users and personal access tokens. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import { personalAccessTokens, users, type PersonalAccessTokenRow, type UserRow } from '../db/schema.js';
import { badRequest, forbidden, invalidParam, notFound, unauthorized } from '../errors.js';
import { requireUser } from '../policy/authentication.js';
import {
  createPersonalAccessToken, createUser, deleteUser, findUser, setUserState, signIn, updateUser, type UserParams,
} from '../services/users.js';
import { removeProjectStorage } from '../services/storage.js';
import { userBasic, userEntity, userFull, userLogin, UserBasicSchema, UserFullSchema, UserLoginSchema, UserSchema } from './entities/users.js';
import { Bool, Int, Nullable, PageParams, RequiredString } from './params.js';
import { paginate } from './pagination.js';

const UserFields = {
  email: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  skype: Type.Optional(Type.String()),
  linkedin: Type.Optional(Type.String()),
  twitter: Type.Optional(Type.String()),
  website_url: Type.Optional(Type.String()),
  organization: Type.Optional(Type.String()),
  projects_limit: Type.Optional(Int()),
  bio: Type.Optional(Type.String()),
  location: Type.Optional(Type.String()),
  admin: Type.Optional(Bool()),
  can_create_group: Type.Optional(Bool()),
  external: Type.Optional(Bool()),
  confirm: Type.Optional(Bool()),
};
const UserIdParams = Type.Object({ id: Type.Integer() });
const PatSchema = Type.Object({
  id: Type.Integer(), name: Type.String(), revoked: Type.Boolean(), expires_at: Nullable(Type.String()),
  created_at: Type.String(), active: Type.Boolean(), user_id: Type.Integer(),
});
const PatWithToken = Type.Object({ ...PatSchema.properties, token: Type.String() });

function requireAdmin(request: FastifyRequest): UserRow {
  const user = requireUser(request);
  if (!user.isAdmin) throw forbidden();
  return user;
}

/** Present a personal access token (without its secret). */
function patEntity(t: PersonalAccessTokenRow) {
  const active = !t.revoked && (t.expiresAt === null || t.expiresAt >= new Date().toISOString().slice(0, 10));
  return { id: t.id, name: t.name, revoked: t.revoked, expires_at: t.expiresAt, created_at: t.createdAt, active, user_id: t.userId };
}

/** Registers the session, user and users routes. */
export default async function userRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.post('/session', {
    config: { public: true },
    schema: {
      tags: ['session'],
      body: Type.Object({ login: Type.Optional(Type.String()), email: Type.Optional(Type.String()), password: Type.Optional(Type.String()) }),
      response: { 201: UserLoginSchema },
    },
  }, async (request, reply) => {
    const body = (request.body ?? {}) as { login?: string; email?: string; password?: string };
    const login = body.email || body.login;
    if (!login) throw badRequest('login');
    if (!body.password) throw badRequest('password');
    const user = await signIn(ctx, login, body.password);
    if (!user) throw unauthorized();
    return reply.code(201).send(userLogin(ctx, user));
  });

  api.get('/user', { schema: { tags: ['users'], response: { 200: UserFullSchema } } }, async (request) => userFull(ctx, requireUser(request)));

  api.get('/users', {
    schema: {
      tags: ['users'],
      querystring: Type.Object({ search: Type.Optional(Type.String()), username: Type.Optional(Type.String()), active: Type.Optional(Type.String()), blocked: Type.Optional(Type.String()), ...PageParams }),
      response: { 200: Type.Array(Type.Union([UserFullSchema, UserBasicSchema])) },
    },
  }, async (request, reply) => {
    const viewer = requireUser(request);
    const q = request.query as { search?: string; username?: string; active?: string; blocked?: string };
    const present = (u: UserRow) => (viewer.isAdmin ? userFull(ctx, u) : userBasic(ctx, u));
    if (q.username !== undefined) {
      return ctx.db.select().from(users).where(eq(users.username, q.username)).all().map(present);
    }
    const conds: SQL[] = [];
    if (q.search) {
      const pattern = `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      conds.push(sql`(${users.name} LIKE ${pattern} ESCAPE '\\' OR ${users.email} LIKE ${pattern} ESCAPE '\\' OR ${users.username} LIKE ${pattern} ESCAPE '\\')`);
    }
    if (q.active !== undefined) conds.push(eq(users.state, 'active'));
    if (q.blocked !== undefined) conds.push(eq(users.state, 'blocked'));
    const where = conds.length ? and(...conds) : undefined;
    const rows = paginate(
      request, reply,
      () => ctx.db.select({ n: sql<number>`count(*)` }).from(users).where(where).get()!.n,
      (limit, offset) => ctx.db.select().from(users).where(where).orderBy(asc(users.id)).limit(limit).offset(offset).all(),
    );
    return rows.map(present);
  });

  api.get('/users/:id', {
    schema: { tags: ['users'], params: UserIdParams, response: { 200: Type.Union([UserFullSchema, UserSchema]) } },
  }, async (request) => {
    const viewer = requireUser(request);
    const user = findUser(ctx, (request.params as { id: number }).id, 'User');
    return viewer.isAdmin || viewer.id === user.id ? userFull(ctx, user) : userEntity(ctx, user);
  });

  api.post('/users', {
    schema: {
      tags: ['users'],
      body: Type.Object({ ...UserFields, email: RequiredString(), password: RequiredString(), username: RequiredString(), name: RequiredString() }),
      response: { 201: UserFullSchema },
    },
  }, async (request, reply) => {
    requireAdmin(request);
    const user = await createUser(ctx, request.body as UserParams & { email: string; password: string; username: string; name: string });
    return reply.code(201).send(userFull(ctx, user));
  });

  api.put('/users/:id', {
    schema: { tags: ['users'], params: UserIdParams, body: Type.Object(UserFields), response: { 200: UserFullSchema } },
  }, async (request) => {
    requireAdmin(request);
    const user = findUser(ctx, (request.params as { id: number }).id, 'User');
    return userFull(ctx, await updateUser(ctx, user, (request.body ?? {}) as UserParams));
  });

  api.delete('/users/:id', {
    schema: { tags: ['users'], params: UserIdParams, response: { 200: UserFullSchema } },
  }, async (request) => {
    const admin = requireAdmin(request);
    const user = findUser(ctx, (request.params as { id: number }).id);
    if (user.id === admin.id) throw forbidden('You cannot delete yourself');
    const body = userFull(ctx, user);
    const { projectIds } = deleteUser(ctx, user);
    await removeProjectStorage(ctx, projectIds);
    return body;
  });

  for (const [action, state] of [['block', 'blocked'], ['unblock', 'active']] as const) {
    api.put(`/users/:id/${action}`, { schema: { tags: ['users'], params: UserIdParams, response: { 200: Type.Boolean() } } }, async (request) => {
      requireAdmin(request);
      const user = findUser(ctx, (request.params as { id: number }).id);
      setUserState(ctx, user, state);
      return true;
    });
  }

  // Personal access tokens: admins for anyone at /users/:id/..., every user for themself at /user/...
  const tokenOwner = (request: FastifyRequest): UserRow => {
    const params = request.params as { id?: number };
    if (params.id === undefined) return requireUser(request);
    requireAdmin(request);
    return findUser(ctx, params.id);
  };
  for (const base of ['/user/personal_access_tokens', '/users/:id/personal_access_tokens']) {
    const params = base.startsWith('/users') ? UserIdParams : Type.Object({});
    api.get(base, {
      schema: { tags: ['users'], params, querystring: Type.Object({ state: Type.Optional(Type.String()), ...PageParams }), response: { 200: Type.Array(PatSchema) } },
    }, async (request, reply) => {
      const owner = tokenOwner(request);
      const where = eq(personalAccessTokens.userId, owner.id);
      const state = (request.query as { state?: string }).state;
      const rows = paginate(
        request, reply,
        () => ctx.db.select({ n: sql<number>`count(*)` }).from(personalAccessTokens).where(where).get()!.n,
        (limit, offset) => ctx.db.select().from(personalAccessTokens).where(where).orderBy(asc(personalAccessTokens.id)).limit(limit).offset(offset).all(),
      ).map(patEntity);
      return state === 'active' ? rows.filter((t) => t.active) : state === 'inactive' ? rows.filter((t) => !t.active) : rows;
    });
    api.post(base, {
      schema: {
        tags: ['users'], params,
        body: Type.Object({ name: RequiredString(), expires_at: Type.Optional(Type.String()) }),
        response: { 201: PatWithToken },
      },
    }, async (request, reply) => {
      const owner = tokenOwner(request);
      const body = request.body as { name: string; expires_at?: string };
      let expiresAt: string | null = null;
      if (body.expires_at) {
        if (!/^\d{4}-\d{2}-\d{2}$/.test(body.expires_at) || Number.isNaN(Date.parse(body.expires_at))) {
          throw invalidParam('expires_at', 'must be a date in YYYY-MM-DD format');
        }
        expiresAt = body.expires_at;
      }
      const { row, token } = createPersonalAccessToken(ctx, owner, body.name, expiresAt);
      return reply.code(201).send({ ...patEntity(row), token });
    });
    api.delete(`${base}/:token_id`, {
      schema: {
        tags: ['users'],
        params: Type.Object({ ...params.properties, token_id: Type.Integer() }),
        response: { 200: PatSchema },
      },
    }, async (request) => {
      const owner = tokenOwner(request);
      const tokenId = (request.params as { token_id: number }).token_id;
      const where = and(eq(personalAccessTokens.id, tokenId), eq(personalAccessTokens.userId, owner.id));
      const row = ctx.db.select().from(personalAccessTokens).where(where).get();
      if (!row) throw notFound('Personal Access Token');
      const revoked = ctx.db.update(personalAccessTokens).set({ revoked: true }).where(where).returning().get();
      return patEntity(revoked);
    });
  }
}

