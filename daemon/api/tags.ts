/**
 * /api/v3/projects/:id/repository/tags: list (name descending), show, create (annotated with a message, optional
 * release notes), delete, and the release notes of a tag. Tag names may contain `/`, so single-tag routes are wildcards.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';
import { createRelease, createTag, deleteTag, findTagWithRelease, listTagsWithReleases, updateRelease, type TagWithRelease } from '../services/repository/branches.js';
import { releaseEntity, ReleaseSchema, repoTag, RepoTagSchema } from './entities/repository.js';
import { paginateArray } from './pagination.js';
import { PageParams, ProjectIdParams, RequiredString } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';
import { mergeQueryParams, wildcardOf } from './repository-scope.js';

const O = Type.Optional;
const tags = ['tags'];
const TagParams = Type.Object({ id: Type.String(), '*': Type.String({ description: 'tag name (may contain /)' }) });
const CreateBody = Type.Object({
  tag_name: RequiredString({ description: 'the new tag' }),
  ref: RequiredString({ description: 'branch, tag or sha to tag' }),
  message: O(Type.String({ description: 'makes an annotated tag' })),
  release_description: O(Type.String({ description: 'release notes (Markdown)' })),
});
const ReleaseBody = Type.Object({ description: RequiredString({ description: 'release notes (Markdown)' }) });

const present = (t: TagWithRelease) => repoTag(t.tag, t.release);
/** `<tag>/release` of a wildcard path, or 404. */
const releaseTagName = (path: string) => {
  const m = /^(.+)\/release$/.exec(path);
  if (!m) throw notFound();
  return m[1]!;
};

/** Registers the tag routes. */
export default async function tagRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('download_code');
  const push = loadProject('push_code');

  api.get('/projects/:id/repository/tags', {
    preValidation: read,
    schema: { tags, params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(RepoTagSchema) } },
  }, async (request, reply) => paginateArray(request, reply, await listTagsWithReleases(ctx, projectOf(request))).map(present));

  api.get('/projects/:id/repository/tags/*', {
    preValidation: read,
    schema: { tags, params: TagParams, response: { 200: RepoTagSchema } },
  }, async (request) => {
    const found = await findTagWithRelease(ctx, projectOf(request), wildcardOf(request));
    if (!found) throw notFound('Tag');
    return present(found);
  });

  api.post('/projects/:id/repository/tags', {
    preValidation: [push, mergeQueryParams, dropBlankParams],
    schema: { tags, params: ProjectIdParams, body: CreateBody, response: { 201: RepoTagSchema } },
  }, async (request, reply) => {
    const b = request.body as Static<typeof CreateBody>;
    const created = await createTag(ctx, projectOf(request), callerOf(request), {
      name: b.tag_name, ref: b.ref, message: b.message, releaseDescription: b.release_description,
    });
    return reply.code(201).send(present(created));
  });

  api.delete('/projects/:id/repository/tags/*', {
    preValidation: push,
    schema: { tags, params: TagParams, response: { 200: Type.Object({ tag_name: Type.String() }) } },
  }, async (request) => {
    const name = wildcardOf(request);
    await deleteTag(ctx, projectOf(request), callerOf(request), name);
    return { tag_name: name };
  });

  // POST/PUT .../tags/<name>/release: add or change the release notes of a tag.
  api.post('/projects/:id/repository/tags/*', {
    preValidation: [push, mergeQueryParams, dropBlankParams],
    schema: { tags, params: TagParams, body: ReleaseBody, response: { 201: ReleaseSchema } },
  }, async (request, reply) => {
    const name = releaseTagName(wildcardOf(request));
    const release = await createRelease(ctx, projectOf(request), name, (request.body as Static<typeof ReleaseBody>).description);
    return reply.code(201).send(releaseEntity(release));
  });

  api.put('/projects/:id/repository/tags/*', {
    preValidation: [push, mergeQueryParams, dropBlankParams],
    schema: { tags, params: TagParams, body: ReleaseBody, response: { 200: ReleaseSchema } },
  }, async (request) => {
    const name = releaseTagName(wildcardOf(request));
    return releaseEntity(await updateRelease(ctx, projectOf(request), name, (request.body as Static<typeof ReleaseBody>).description));
  });
}
