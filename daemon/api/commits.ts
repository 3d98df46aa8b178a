/**
 * /api/v3/projects/:id/repository/commits: history (paginated from page 1, counted with rev-list --count), one
 * commit, its diff, its raw files, and comments on it. Reading needs download_code.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { forbidden } from '../errors.js';
import { canProjectAsync } from '../policy/permissions.js';
import {
  commitDetail, commitDiff, createCommitNote, findCommit, listCommitNotes, listCommits, parseTimestamp,
} from '../services/repository/commits.js';
import { blobAtRevision, looksBinary } from '../services/repository/browse.js';
import {
  commitNoteEntity, CommitNoteSchema, repoCommitDetail, RepoCommitDetailSchema, repoCommitListItem, RepoCommitListItemSchema, repoDiff, RepoDiffSchema,
} from './entities/repository.js';
import { pageOf, paginateArray, setPageHeaders } from './pagination.js';
import { FileResponse, Int, PageParams, RequiredString } from './params.js';
import { gravatarEnabledAsync } from './entities/users.js';
import { callerOf, dropBlankParams, loadProject, projectLevelOf, projectOf } from './project-scope.js';
import { mergeQueryParams } from './repository-scope.js';

const O = Type.Optional;
const tags = ['commits'];
const ShaParams = Type.Object({ id: Type.String(), sha: Type.String({ description: 'commit sha, branch or tag name' }) });
const ListQuery = Type.Object({
  ...PageParams,
  ref_name: O(Type.String({ description: 'branch, tag or sha (default: the default branch)' })),
  since: O(Type.String({ description: 'only commits after this ISO 8601 time' })),
  until: O(Type.String({ description: 'only commits before this ISO 8601 time' })),
  path: O(Type.String({ description: 'only commits touching this path' })),
});
const NoteBody = Type.Object({
  note: RequiredString({ description: 'the comment' }),
  path: O(Type.String({ description: 'file path (a line comment needs path, line and line_type)' })),
  line: O(Int({ description: 'line number in the new file' })),
  line_type: O(Type.String({ description: 'new or old (only new places a line comment)' })),
});
const BlobQuery = Type.Object({ filepath: RequiredString({ description: 'path of the file' }) });

/** Registers the commit routes. */
export default async function commitRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('download_code');

  api.get('/projects/:id/repository/commits', {
    preValidation: read,
    schema: { tags, params: Type.Object({ id: Type.String() }), querystring: ListQuery, response: { 200: Type.Array(RepoCommitListItemSchema) } },
  }, async (request, reply) => {
    const q = request.query as Static<typeof ListQuery>;
    const filter = { ref: q.ref_name, since: parseTimestamp('since', q.since), until: parseTimestamp('until', q.until), path: q.path };
    const page = pageOf(request);
    const { total, commits } = await listCommits(ctx, projectOf(request), filter, page.limit, page.offset);
    setPageHeaders(request, reply, page, total);
    return commits.map(repoCommitListItem);
  });

  api.get('/projects/:id/repository/commits/:sha', {
    preValidation: read,
    schema: { tags, params: ShaParams, response: { 200: RepoCommitDetailSchema } },
  }, async (request) => {
    const { commit, stats, status } = await commitDetail(ctx, projectOf(request), (request.params as Static<typeof ShaParams>).sha);
    return repoCommitDetail(commit, stats, status);
  });

  api.get('/projects/:id/repository/commits/:sha/diff', {
    preValidation: read,
    schema: { tags, params: ShaParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(RepoDiffSchema) } },
  }, async (request, reply) => {
    const diffs = await commitDiff(ctx, projectOf(request), (request.params as Static<typeof ShaParams>).sha);
    return paginateArray(request, reply, diffs).map(repoDiff);
  });

  api.get('/projects/:id/repository/commits/:sha/blob', {
    preValidation: read,
    schema: { tags, params: ShaParams, querystring: BlobQuery, response: { 200: FileResponse('text/plain', 'the raw file content') } },
  }, async (request, reply) => {
    const content = await blobAtRevision(ctx, projectOf(request), (request.params as Static<typeof ShaParams>).sha, (request.query as Static<typeof BlobQuery>).filepath);
    return reply.type(looksBinary(content) ? 'application/octet-stream' : 'text/plain; charset=utf-8').send(content);
  });

  api.get('/projects/:id/repository/commits/:sha/comments', {
    preValidation: read,
    schema: { tags, params: ShaParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(CommitNoteSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const { commit } = await findCommit(ctx, project, (request.params as Static<typeof ShaParams>).sha);
    const page = pageOf(request);
    const [{ total, notes }, gravatar] = await Promise.all([listCommitNotes(ctx, project.id, commit.sha, page.limit, page.offset), gravatarEnabledAsync(ctx)]);
    setPageHeaders(request, reply, page, total);
    return notes.map((n) => commitNoteEntity(ctx, n.note, n.author, gravatar));
  });

  api.post('/projects/:id/repository/commits/:sha/comments', {
    preValidation: [read, async (request) => {
      if (!(await canProjectAsync(ctx, request.user, 'create_note', projectOf(request), projectLevelOf(request)))) throw forbidden();
    }, mergeQueryParams, dropBlankParams],
    schema: { tags, params: ShaParams, body: NoteBody, response: { 201: CommitNoteSchema } },
  }, async (request, reply) => {
    const b = request.body as Static<typeof NoteBody>;
    const { note, author } = await createCommitNote(ctx, projectOf(request), callerOf(request), (request.params as Static<typeof ShaParams>).sha, {
      note: b.note, path: b.path, line: b.line, lineType: b.line_type,
    });
    return reply.code(201).send(commitNoteEntity(ctx, note, author, await gravatarEnabledAsync(ctx)));
  });
}
