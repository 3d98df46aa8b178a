/**
 * SSH keys of users: /user/keys (the signed-in user's), /users/:id/keys (admins, for any user) and /keys/:id (admins:
 * any key with its user), as GitLab 8.x lib/api/users.rb and keys.rb.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound, notFoundMessage } from '../errors.js';
import { createUserKey, deleteUserKey, findKey, findUserKey, listUserKeys } from '../services/keys/index.js';
import { findUser } from '../services/users/users.js';
import { keyRecord, KeyRecordSchema, sshKeyEntity, SSHKeySchema, SSHKeyWithUserSchema, sshKeyWithUser } from './entities/keys.js';
import { paginateArray } from './pagination.js';
import { Int, PageParams, RequiredString } from './params.js';
import { adminOnly, callerOf, dropBlankParams } from './project-scope.js';

/** Body of every key creation (user keys and deploy keys). */
export const KeyBody = Type.Object({
  title: RequiredString({ description: 'a name for the key, at most 255 characters' }),
  key: RequiredString({ description: 'the public key line: ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa of at least 2048 bits' }),
});
const KeyIdParams = Type.Object({ key_id: Int({ description: 'key ID' }) });
const UserIdParams = Type.Object({ id: Int({ description: 'user ID' }) });
const UserKeyParams = Type.Object({ id: Int({ description: 'user ID' }), key_id: Int({ description: 'key ID' }) });
const Page = Type.Object(PageParams);
const tags = ['keys'];
const raw404 = () => notFoundMessage('404 Not found');

const keyIdOf = (request: FastifyRequest) => (request.params as { key_id: number }).key_id;
const userIdOf = (request: FastifyRequest) => (request.params as { id: number }).id;

/** The user of `id`, or the bare `404 Not found` of 8.x's `User.find`. */
async function findUserOr404(ctx: FastifyInstance['ctx'], id: number) {
  try {
    return await findUser(ctx, id);
  } catch {
    throw raw404();
  }
}

/** Registers the user key routes (all on the data layer: served on SQLite and PostgreSQL). */
export default async function keyRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.get('/user/keys', {
    schema: { tags, summary: "The signed-in user's SSH keys", querystring: Page, response: { 200: Type.Array(SSHKeySchema) } },
  }, async (request, reply) => paginateArray(request, reply, await listUserKeys(ctx, callerOf(request).id)).map(sshKeyEntity));

  api.get('/user/keys/:key_id', {
    schema: { tags, summary: "One of the signed-in user's SSH keys", params: KeyIdParams, response: { 200: SSHKeySchema } },
  }, async (request) => {
    const key = await findUserKey(ctx, callerOf(request).id, keyIdOf(request));
    if (!key) throw raw404();
    return sshKeyEntity(key);
  });

  api.post('/user/keys', {
    preValidation: dropBlankParams,
    schema: { tags, summary: 'Add an SSH key to the signed-in user', body: KeyBody, response: { 201: SSHKeySchema } },
  }, async (request, reply) =>
    reply.code(201).send(sshKeyEntity(await createUserKey(ctx, callerOf(request), request.body as Static<typeof KeyBody>))));

  api.delete('/user/keys/:key_id', {
    schema: { tags, summary: "Delete one of the signed-in user's SSH keys", params: KeyIdParams, response: { 200: KeyRecordSchema } },
  }, async (request) => {
    const key = await deleteUserKey(ctx, callerOf(request).id, keyIdOf(request));
    if (!key) throw notFound('Key');
    return keyRecord(key);
  });

  api.get('/users/:id/keys', {
    preValidation: adminOnly,
    schema: { tags, summary: "A user's SSH keys (admin)", params: UserIdParams, querystring: Page, response: { 200: Type.Array(SSHKeySchema) } },
  }, async (request, reply) => {
    const user = await findUser(ctx, userIdOf(request));
    return paginateArray(request, reply, await listUserKeys(ctx, user.id)).map(sshKeyEntity);
  });

  api.post('/users/:id/keys', {
    preValidation: [adminOnly, dropBlankParams],
    schema: { tags, summary: 'Add an SSH key to a user (admin)', params: UserIdParams, body: KeyBody, response: { 201: SSHKeySchema } },
  }, async (request, reply) => {
    // 8.x: User.find, so an unknown user is the bare `404 Not found` here (GET and DELETE say `404 User Not Found`).
    const user = await findUserOr404(ctx, userIdOf(request));
    return reply.code(201).send(sshKeyEntity(await createUserKey(ctx, user, request.body as Static<typeof KeyBody>, raw404)));
  });

  api.delete('/users/:id/keys/:key_id', {
    preValidation: adminOnly,
    schema: { tags, summary: "Delete a user's SSH key (admin)", params: UserKeyParams, response: { 200: KeyRecordSchema } },
  }, async (request) => {
    const user = await findUser(ctx, userIdOf(request));
    const key = await deleteUserKey(ctx, user.id, keyIdOf(request));
    if (!key) throw notFound('Key');
    return keyRecord(key);
  });

  api.get('/keys/:id', {
    preValidation: adminOnly,
    schema: { tags, summary: 'Any SSH key with its user (admin; user null for a deploy key)', params: UserIdParams, response: { 200: SSHKeyWithUserSchema } },
  }, async (request) => {
    const found = await findKey(ctx, userIdOf(request));
    if (!found) throw raw404();
    return sshKeyWithUser(ctx, found.key, found.user);
  });
}
