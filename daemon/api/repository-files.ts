/** /api/v3/projects/:id/repository/files: read a file at a ref; create, update or delete one file as a commit. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readRepositoryFile, writeRepositoryFile, type FileWriteParams } from '../services/repository/files.js';
import { fileCommitEntity, FileCommitSchema, RepositoryFileSchema } from './entities/repository.js';
import { ProjectIdParams, RequiredString } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';
import { mergeQueryParams } from './repository-scope.js';

const O = Type.Optional;
const tags = ['repository files'];
const ReadQuery = Type.Object({
  file_path: RequiredString({ description: 'path of the file in the repository' }),
  ref: RequiredString({ description: 'branch, tag or commit sha' }),
});
const WriteFields = {
  file_path: RequiredString({ description: 'path of the file (no `..`, no leading `/`)' }),
  branch_name: RequiredString({ description: 'the branch to commit to (created when the repository is empty)' }),
  commit_message: RequiredString({ description: 'the commit message' }),
  author_email: O(Type.String({ description: 'commit author email (default: yours)' })),
  author_name: O(Type.String({ description: 'commit author name (default: yours)' })),
};
const ContentBody = Type.Object({
  ...WriteFields,
  content: RequiredString({ description: 'the new content' }),
  encoding: O(Type.String({ description: 'text (default) or base64' })),
});
const DeleteBody = Type.Object(WriteFields);

/** Registers the repository file routes. */
export default async function repositoryFileRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.get('/projects/:id/repository/files', {
    preValidation: loadProject('download_code'),
    schema: { tags, params: ProjectIdParams, querystring: ReadQuery, response: { 200: RepositoryFileSchema } },
  }, async (request) => {
    const q = request.query as Static<typeof ReadQuery>;
    return readRepositoryFile(ctx, projectOf(request), q.file_path, q.ref);
  });

  const write = (action: FileWriteParams['action'], status: number) => async (request: FastifyRequest, reply: FastifyReply) => {
    const b = request.body as Static<typeof ContentBody>;
    const r = await writeRepositoryFile(ctx, projectOf(request), callerOf(request), {
      action, filePath: b.file_path, branch: b.branch_name, commitMessage: b.commit_message, content: b.content, encoding: b.encoding,
      authorName: b.author_name, authorEmail: b.author_email,
    });
    return reply.code(status).send(fileCommitEntity(r.filePath, r.branch));
  };
  const writeHooks = [loadProject('push_code'), mergeQueryParams, dropBlankParams];

  api.post('/projects/:id/repository/files', {
    preValidation: writeHooks,
    schema: { tags, params: ProjectIdParams, body: ContentBody, response: { 201: FileCommitSchema } },
  }, write('create', 201));

  api.put('/projects/:id/repository/files', {
    preValidation: writeHooks,
    schema: { tags, params: ProjectIdParams, body: ContentBody, response: { 200: FileCommitSchema } },
  }, write('update', 200));

  api.delete('/projects/:id/repository/files', {
    preValidation: writeHooks,
    schema: { tags, params: ProjectIdParams, body: DeleteBody, response: { 200: FileCommitSchema } },
  }, write('delete', 200));
}
