/**
 * /api/v3/projects/:id/repository: tree, blobs (raw file at a revision), raw_blobs (by blob id), archive (streamed
 * from git archive), compare and contributors. Every route needs download_code.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ARCHIVE_SUFFIXES, blobAtRevision, compareRevisions, listContributors, listTree, looksBinary, rawBlob, startArchive,
} from '../services/repository/browse.js';
import { compareEntity, CompareSchema, ContributorSchema, treeObject, TreeObjectSchema } from './entities/repository.js';
import { paginateArray } from './pagination.js';
import { Bool, FileResponse, PageParams, ProjectIdParams, RequiredString } from './params.js';
import { loadProject, projectOf } from './project-scope.js';

const O = Type.Optional;
const tags = ['repository'];
const ShaParams = Type.Object({ id: Type.String(), sha: Type.String() });
const TreeQuery = Type.Object({
  ...PageParams,
  path: O(Type.String({ description: 'directory inside the repository (default: the root)' })),
  ref_name: O(Type.String({ description: 'branch, tag or sha (default: the default branch)' })),
  recursive: O(Bool({ description: 'list the whole subtree (default false)' })),
});
const BlobQuery = Type.Object({ filepath: RequiredString({ description: 'path of the file' }) });
const ArchiveQuery = Type.Object({ sha: O(Type.String({ description: 'commit sha, branch or tag (default: the default branch)' })) });
const CompareQuery = Type.Object({
  from: RequiredString({ description: 'commit sha or branch/tag name' }),
  to: RequiredString({ description: 'commit sha or branch/tag name' }),
});

/** Send raw file content: text/plain unless it looks binary. */
const sendRaw = (reply: FastifyReply, content: Buffer) =>
  reply.type(looksBinary(content) ? 'application/octet-stream' : 'text/plain; charset=utf-8').send(content);

/** Registers the repository browsing routes. */
export default async function repositoryRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('download_code');

  api.get('/projects/:id/repository/tree', {
    preValidation: read,
    schema: { tags, params: ProjectIdParams, querystring: TreeQuery, response: { 200: Type.Array(TreeObjectSchema) } },
  }, async (request, reply) => {
    const q = request.query as Static<typeof TreeQuery>;
    const entries = await listTree(ctx, projectOf(request), { ref: q.ref_name, path: q.path, recursive: q.recursive });
    return paginateArray(request, reply, entries).map(treeObject);
  });

  api.get('/projects/:id/repository/blobs/:sha', {
    preValidation: read,
    schema: { tags, params: ShaParams, querystring: BlobQuery, response: { 200: FileResponse('text/plain', 'the raw file content') } },
  }, async (request, reply) => {
    const { sha } = request.params as Static<typeof ShaParams>;
    return sendRaw(reply, await blobAtRevision(ctx, projectOf(request), sha, (request.query as Static<typeof BlobQuery>).filepath));
  });

  api.get('/projects/:id/repository/raw_blobs/:sha', {
    preValidation: read,
    schema: { tags, params: ShaParams, response: { 200: FileResponse('text/plain', 'the raw blob content') } },
  }, async (request, reply) => sendRaw(reply, await rawBlob(ctx, projectOf(request), (request.params as Static<typeof ShaParams>).sha)));

  const archive = (format: string | undefined) => async (request: FastifyRequest, reply: FastifyReply) => {
    const a = await startArchive(ctx, projectOf(request), (request.query as Static<typeof ArchiveQuery>).sha, format);
    // A client that goes away stops git.
    reply.raw.on('close', () => a.child.kill());
    return reply
      .type(a.contentType)
      .header('Content-Disposition', `attachment; filename="${a.filename.replace(/["\\\r\n]/g, '_')}"`)
      .header('Content-Transfer-Encoding', 'binary')
      .send(a.child.stdout);
  };
  const archiveSchema = { tags, params: ProjectIdParams, querystring: ArchiveQuery, response: { 200: FileResponse('application/octet-stream', 'the archive (tar.gz by default)') } };
  api.get('/projects/:id/repository/archive', { preValidation: read, schema: archiveSchema }, archive(undefined));
  for (const suffix of ARCHIVE_SUFFIXES) {
    api.get(`/projects/:id/repository/archive.${suffix}`, { preValidation: read, schema: { ...archiveSchema, hide: true } }, archive(suffix));
  }

  api.get('/projects/:id/repository/compare', {
    preValidation: read,
    schema: { tags, params: ProjectIdParams, querystring: CompareQuery, response: { 200: CompareSchema } },
  }, async (request) => {
    const q = request.query as Static<typeof CompareQuery>;
    const c = await compareRevisions(ctx, projectOf(request), q.from, q.to);
    return compareEntity(c.commits, c.diffs, c.sameRef);
  });

  api.get('/projects/:id/repository/contributors', {
    preValidation: read,
    schema: { tags, params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(ContributorSchema) } },
  }, async (request, reply) => paginateArray(request, reply, await listContributors(ctx, projectOf(request))));
}
