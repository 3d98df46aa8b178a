/** /session, /user, /users and personal access tokens. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UserRow } from '../db/schema.js';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import { adminOnly, requireAdmin, requireUser } from '../policy/authentication.js';
import { canManageUser } from '../policy/permissions.js';
import {
  createPersonalAccessToken, createUser, deleteUser, findPersonalAccessToken, findUser, listPersonalAccessTokens, listUsers,
  revokePersonalAccessToken, setUserState, signIn, updateUser, usersByUsername, type UserParams,
} from '../services/users/users.js';
import { removeProjectStorage } from '../services/repository/storage.js';
import {
  gravatarEnabledAsync, personalAccessTokenEntity, PersonalAccessTokenSchema, PersonalAccessTokenWithTokenSchema, userBasic, userEntity,
  userFullAsync, userFulls, userLogin, UserBasicSchema, UserFullSchema, UserLoginSchema, UserSchema,
} from './entities/users.js';
import { Bool, given, Int, PageParams, RequiredString } from './params.js';
import { paginateArray, paginate } from './pagination.js';

const UserFields = {
  email: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
  skype: Type.Optional(Type.String()),
  linkedin: Type.Optional(Type.String()),
  twitter: Type.Optional(Type.String()),
  website_url: Type.Optional(Type.String()),
  organization: Type.Optional(Type.String()),
  projects_limit: Type.Optional(Int({ description: 'at least 0; defaults to the default_projects_limit setting' })),
  bio: Type.Optional(Type.String({ description: 'at most 255 characters' })),
  location: Type.Optional(Type.String()),
  admin: Type.Optional(Bool()),
  can_create_group: Type.Optional(Bool()),
  external: Type.Optional(Bool()),
  confirm: Type.Optional(Bool({ description: 'false creates the user unconfirmed' })),
};
/** Required fields of POST /users, in GitLab's `required_attributes!` order (the first missing one is reported). */
const CreateUserBody = Type.Object({
  email: RequiredString(), password: RequiredString({ description: 'at least 8 characters' }), name: RequiredString(), username: RequiredString(),
  ...Object.fromEntries(Object.entries(UserFields).filter(([k]) => !['email', 'password', 'name', 'username'].includes(k))),
});
const SessionFields = Type.Object({
  login: Type.Optional(Type.String({ description: 'username or email' })),
  email: Type.Optional(Type.String({ description: 'email; wins over login' })),
  password: Type.Optional(Type.String()),
});
const UserIdParams = Type.Object({ id: Type.String({ description: 'user ID' }) });
const TokenParams = Type.Object({ token_id: Type.String({ description: 'personal access token ID' }) });
const UserTokenParams = Type.Object({ ...UserIdParams.properties, ...TokenParams.properties });

/** `:id` as a number; an id that is not all digits names no user (8.x: the route did not match). */
function numericParam(request: FastifyRequest, name: 'id' | 'token_id', resource: string): number {
  const raw = (request.params as Record<string, string>)[name] ?? '';
  if (!/^\d+$/.test(raw)) throw notFound(resource);
  return Number(raw);
}

/**
 * Blank values (empty strings, null) are dropped before validation, as GitLab's attributes_for_keys: a blank
 * optional field is "not given" (never a zero or false), and a blank required field is reported as not given.
 */
async function dropBlank(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return;
  for (const [k, v] of Object.entries(body)) if (v === '' || v === null) delete (body as Record<string, unknown>)[k];
}

/**
 * Registers the session, user and users routes, on the data layer (ctx.data) like every route.
 */
export default async function userRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.post('/session', {
    config: { public: true },
    schema: {
      tags: ['session'],
      summary: 'Sign in with login (username or email) or email, and password; returns the private token. 401 when wrong; 429 with Retry-After after too many failures (README "Limits")',
      body: SessionFields,
      querystring: SessionFields,
      response: { 201: UserLoginSchema },
    },
  }, async (request, reply) => {
    // As GitLab's merged params, the fields may also come in the query string; the body wins.
    type Fields = { login?: string; email?: string; password?: string };
    const body: Fields = { ...(request.query as Fields), ...given((request.body ?? {}) as Fields) };
    const login = body.email || body.login;
    if (!login) throw badRequest('login');
    if (!body.password) throw badRequest('password');
    const user = await signIn(ctx, login, body.password, { address: request.ip });
    if (!user) throw unauthorized();
    return reply.code(201).send(await userLogin(ctx, user));
  });

  api.get('/user', {
    schema: { tags: ['users'], summary: 'The signed-in user', response: { 200: UserFullSchema } },
  }, async (request) => userFullAsync(ctx, requireUser(request)));

  api.get('/users', {
    schema: {
      tags: ['users'],
      summary: 'List users (admins get UserFull, others UserBasic); ?username= is exact (a paginated list of at most one)',
      querystring: Type.Object({
        search: Type.Optional(Type.String()), username: Type.Optional(Type.String()),
        active: Type.Optional(Type.String()), blocked: Type.Optional(Type.String()), ...PageParams,
      }),
      response: { 200: Type.Array(Type.Union([UserFullSchema, UserBasicSchema])) },
    },
  }, async (request, reply) => {
    const viewer = requireUser(request);
    const q = request.query as { search?: string; username?: string; active?: string; blocked?: string };
    const listing = listUsers(ctx, { search: q.search, active: !!q.active, blocked: !!q.blocked });
    // The gravatar setting is read beside the list (on PostgreSQL the round trips overlap; on SQLite it is cached).
    const [gravatar, list] = await Promise.all([
      gravatarEnabledAsync(ctx),
      q.username
        ? usersByUsername(ctx, q.username).then((users) => paginateArray(request, reply, users))
        : paginate(request, reply, ctx.data, listing.count, listing.fetch),
    ]);
    return viewer.isAdmin ? userFulls(ctx, list, gravatar) : list.map((u) => userBasic(ctx, u, gravatar));
  });

  api.get('/users/:id', {
    schema: { tags: ['users'], summary: 'One user (UserFull for admins and the user themself)', params: UserIdParams, response: { 200: Type.Union([UserFullSchema, UserSchema]) } },
  }, async (request) => {
    const viewer = requireUser(request);
    const user = await findUser(ctx, numericParam(request, 'id', 'User'));
    return viewer.isAdmin || viewer.id === user.id ? userFullAsync(ctx, user) : userEntity(ctx, user, await gravatarEnabledAsync(ctx));
  });

  api.post('/users', {
    preValidation: [adminOnly, dropBlank],
    schema: { tags: ['users'], summary: 'Create a user (admin)', body: CreateUserBody, response: { 201: UserFullSchema } },
  }, async (request, reply) => {
    const user = await createUser(ctx, request.body as UserParams & { email: string; password: string; username: string; name: string });
    return reply.code(201).send(await userFullAsync(ctx, user));
  });

  api.put('/users/:id', {
    preValidation: [adminOnly, dropBlank],
    schema: { tags: ['users'], summary: 'Update a user (admin)', params: UserIdParams, body: Type.Object(UserFields), response: { 200: UserFullSchema } },
  }, async (request) => {
    const user = await findUser(ctx, numericParam(request, 'id', 'User'));
    return userFullAsync(ctx, await updateUser(ctx, user, (request.body ?? {}) as UserParams));
  });

  api.delete('/users/:id', {
    preValidation: adminOnly,
    schema: {
      tags: ['users'],
      summary: 'Delete a user with their personal projects (admin); a sole group owner is kept',
      params: UserIdParams,
      response: { 200: UserFullSchema },
    },
  }, async (request) => {
    const admin = requireAdmin(request);
    const user = await findUser(ctx, numericParam(request, 'id', 'User'));
    if (user.id === admin.id) throw forbidden('You cannot delete yourself');
    const body = await userFullAsync(ctx, user);
    const { projectIds } = await deleteUser(ctx, user);
    await removeProjectStorage(ctx, projectIds); // after the commit
    return body;
  });

  for (const [action, state] of [['block', 'blocked'], ['unblock', 'active']] as const) {
    api.put(`/users/:id/${action}`, {
      preValidation: adminOnly,
      schema: { tags: ['users'], summary: `${action[0]!.toUpperCase()}${action.slice(1)} a user (admin)`, params: UserIdParams, response: { 200: Type.Boolean() } },
    }, async (request) => {
      const admin = requireAdmin(request);
      const user = await findUser(ctx, numericParam(request, 'id', 'User'));
      if (user.id === admin.id && state === 'blocked') throw forbidden('You cannot block yourself');
      await setUserState(ctx, user, state);
      return true;
    });
  }

  // Personal access tokens: admins for anyone at /users/:id/..., every user for themself at /user/... (or their own id).
  const tokenOwner = async (request: FastifyRequest): Promise<UserRow> => {
    const caller = requireUser(request);
    if ((request.params as { id?: string }).id === undefined) return caller;
    const id = numericParam(request, 'id', 'User');
    if (!canManageUser(caller, id)) throw forbidden();
    return findUser(ctx, id);
  };
  for (const base of ['/user/personal_access_tokens', '/users/:id/personal_access_tokens']) {
    const forUser = base.startsWith('/users');
    const params = forUser ? UserIdParams : Type.Object({});
    const itemParams = forUser ? UserTokenParams : TokenParams;
    const who = forUser ? "a user's (admin, or the user themself)" : "the signed-in user's";
    api.get(base, {
      schema: {
        tags: ['personal access tokens'], summary: `List ${who} personal access tokens (never the secret)`, params,
        querystring: Type.Object({ state: Type.Optional(Type.String({ description: 'active or inactive; all when omitted' })), ...PageParams }),
        response: { 200: Type.Array(PersonalAccessTokenSchema) },
      },
    }, async (request, reply) => {
      const owner = await tokenOwner(request);
      const state = (request.query as { state?: string }).state;
      const listing = listPersonalAccessTokens(owner, state === 'active' || state === 'inactive' ? state : undefined);
      return (await paginate(request, reply, ctx.data, listing.count, listing.fetch)).map(personalAccessTokenEntity);
    });
    api.get(`${base}/:token_id`, {
      schema: { tags: ['personal access tokens'], summary: `One of ${who} personal access tokens`, params: itemParams, response: { 200: PersonalAccessTokenSchema } },
    }, async (request) => {
      const owner = await tokenOwner(request);
      return personalAccessTokenEntity(await findPersonalAccessToken(ctx, owner, numericParam(request, 'token_id', 'Personal Access Token')));
    });
    api.post(base, {
      schema: {
        tags: ['personal access tokens'], summary: `Create a personal access token for ${who.replace("'s", '')}; the token is shown only here`, params,
        body: Type.Object({ name: RequiredString(), expires_at: Type.Optional(Type.String({ description: 'YYYY-MM-DD; the token stops working on that day' })) }),
        response: { 201: PersonalAccessTokenWithTokenSchema },
      },
    }, async (request, reply) => {
      const owner = await tokenOwner(request);
      const body = request.body as { name: string; expires_at?: string };
      const { row, token } = await createPersonalAccessToken(ctx, owner, body.name, body.expires_at || null);
      return reply.code(201).send({ ...personalAccessTokenEntity(row), token });
    });
    api.delete(`${base}/:token_id`, {
      schema: { tags: ['personal access tokens'], summary: 'Revoke a personal access token', params: itemParams, response: { 200: PersonalAccessTokenSchema } },
    }, async (request) => {
      const owner = await tokenOwner(request);
      return personalAccessTokenEntity(await revokePersonalAccessToken(ctx, owner, numericParam(request, 'token_id', 'Personal Access Token')));
    });
  }
}
