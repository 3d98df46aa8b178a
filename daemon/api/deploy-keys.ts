/**
 * Deploy keys (GitLab 8.13 lib/api/deploy_keys.rb): every deploy key for admins at /deploy_keys, and a project's at
 * /projects/:id/deploy_keys and the deprecated alias /projects/:id/keys: list, get, add, enable, disable, delete.
 * The project routes need admin_project (masters, owners, admins). Deploy keys are read-only, as 8.x CE.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound, notFoundMessage } from '../errors.js';
import {
  addProjectDeployKey, disableDeployKey, enableDeployKey, findProjectDeployKey, listDeployKeys, listProjectDeployKeys, removeProjectDeployKey,
} from '../services/keys/index.js';
import { keyRecord, KeyRecordSchema, sshKeyEntity, SSHKeySchema } from './entities/keys.js';
import { KeyBody } from './keys.js';
import { paginate } from './pagination.js';
import { Int, PageParams, ProjectIdParams } from './params.js';
import { adminOnly, callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';

const KeyParams = Type.Object({ ...ProjectIdParams.properties, key_id: Int({ description: 'deploy key ID' }) });
const Page = Type.Object(PageParams);
const keyIdOf = (request: FastifyRequest) => (request.params as { key_id: number }).key_id;
const deployKeyNotFound = () => notFound('Deploy Key');

/** Registers the deploy key routes (all on the data layer: served on SQLite and PostgreSQL). */
export default async function deployKeyRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const admin = loadProject('admin_project');

  api.get('/deploy_keys', {
    preValidation: adminOnly,
    schema: { tags: ['deploy keys'], summary: 'Every deploy key (admin)', querystring: Page, response: { 200: Type.Array(SSHKeySchema) } },
  }, async (request, reply) => {
    const listing = listDeployKeys();
    return (await paginate(request, reply, ctx.data, listing.count, listing.fetch)).map(sshKeyEntity);
  });

  // `keys` is 8.x's deprecated spelling (removed in 9.0), still used by clients of that era.
  for (const path of ['deploy_keys', 'keys']) {
    const tags = path === 'keys' ? ['deploy keys (deprecated alias)'] : ['deploy keys'];
    const base = `/projects/:id/${path}`;

    api.get(base, {
      preValidation: admin,
      schema: { tags, summary: "A project's deploy keys (master and up)", params: ProjectIdParams, querystring: Page, response: { 200: Type.Array(SSHKeySchema) } },
    }, async (request, reply) => {
      const listing = listProjectDeployKeys(projectOf(request).id);
      return (await paginate(request, reply, ctx.data, listing.count, listing.fetch)).map(sshKeyEntity);
    });

    api.get(`${base}/:key_id`, {
      preValidation: admin,
      schema: { tags, summary: 'One deploy key of the project', params: KeyParams, response: { 200: SSHKeySchema } },
    }, async (request) => {
      const key = await findProjectDeployKey(ctx, projectOf(request).id, keyIdOf(request));
      if (!key) throw notFoundMessage('404 Not found');
      return sshKeyEntity(key);
    });

    api.post(base, {
      preValidation: [admin, dropBlankParams],
      schema: {
        tags,
        summary: 'Add a deploy key: the key already on the project is returned, one of your deploy keys is enabled, otherwise a new one is created',
        params: ProjectIdParams, body: KeyBody, response: { 201: SSHKeySchema },
      },
    }, async (request, reply) => {
      const key = await addProjectDeployKey(ctx, callerOf(request), projectOf(request), request.body as Static<typeof KeyBody>);
      return reply.code(201).send(sshKeyEntity(key));
    });

    api.post(`${base}/:key_id/enable`, {
      preValidation: admin,
      schema: {
        tags, summary: 'Enable on this project a deploy key of another project you are a master of', params: KeyParams, response: { 201: SSHKeySchema },
      },
    }, async (request, reply) => {
      const key = await enableDeployKey(ctx, callerOf(request), projectOf(request), keyIdOf(request));
      if (!key) throw deployKeyNotFound();
      return reply.code(201).send(sshKeyEntity(key));
    });

    api.delete(`${base}/:key_id/disable`, {
      preValidation: admin,
      schema: { tags, summary: 'Disable a deploy key on this project (it stays on its other projects)', params: KeyParams, response: { 200: SSHKeySchema } },
    }, async (request) => {
      const key = await disableDeployKey(ctx, projectOf(request), keyIdOf(request));
      if (!key) throw deployKeyNotFound();
      return sshKeyEntity(key);
    });

    api.delete(`${base}/:key_id`, {
      preValidation: admin,
      schema: {
        tags, summary: 'Remove a deploy key from the project; deleted when no other project uses it', params: KeyParams, response: { 200: KeyRecordSchema },
      },
    }, async (request) => {
      const key = await removeProjectDeployKey(ctx, projectOf(request), keyIdOf(request));
      if (!key) throw notFoundMessage('404 Not found');
      return keyRecord(key);
    });
  }
}
