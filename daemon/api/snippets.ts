/**
 * Project snippets (GitLab 8.13 lib/api/project_snippets.rb): /projects/:id/snippets list, show, create, update,
 * delete and `raw` (the code as text/plain). Who sees and changes what is policy/snippets.ts; their notes and award
 * emoji are served by the notes and award emoji rooms (SNIPPET_NOTEABLES).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify';
import type { SnippetRow } from '../db/rows.js';
import { badRequest, forbidden, notFoundMessage } from '../errors.js';
import { canProjectSnippets, canReadSnippet, canUpdateSnippet, visibleSnippetLevels, type SnippetAbility } from '../policy/snippets.js';
import { projectAccessLevelAsync } from '../policy/permissions.js';
import {
  countSnippets, createSnippet, deleteSnippet, findProjectSnippet, listSnippets, updateSnippet, type SnippetParams,
} from '../services/projects/snippets.js';
import { DeletedSnippetSchema, presentDeletedSnippet, presentSnippet, presentSnippets, SnippetSchema } from './entities/snippets.js';
import { paginate } from './pagination.js';
import { FileResponse, Int, PageParams, ProjectIdParams } from './params.js';
import { callerOf, loadProject, projectLevelOf, projectOf } from './project-scope.js';

const O = Type.Optional;
const tags = ['snippets'];
const SnippetParamsSchema = Type.Object({ ...ProjectIdParams.properties, snippet_id: Int({ description: 'snippet ID' }) });
const Visibility = Int({ description: '0 private (project members), 10 internal (signed-in users), 20 public' });
const CreateBody = Type.Object({
  title: O(Type.String({ description: 'title (required)' })),
  file_name: O(Type.String({ description: "file name (required): letters, digits, '_', '-', '@' and '.'" })),
  code: O(Type.String({ description: 'the content (required)' })),
  visibility_level: O(Visibility),
});
const UpdateBody = Type.Object({
  title: O(Type.String({ description: 'a new title (blank: 400)' })),
  file_name: O(Type.String({ description: 'a new file name (blank: 400)' })),
  code: O(Type.String({ description: 'new content (blank: 400)' })),
  visibility_level: O(Visibility),
});

/**
 * Hook (after loadProject): the caller may `ability` on the project's snippets, else 403. As a preHandler on the
 * routes of one snippet, after the params schema, so text in `:snippet_id` is 400 first (8.13's Grape validated first).
 */
function snippetsAbility(ability: SnippetAbility): preValidationAsyncHookHandler & preHandlerAsyncHookHandler {
  return async function (request) {
    if (!(await canProjectSnippets(request.server.ctx, callerOf(request), ability, projectOf(request), projectLevelOf(request)))) throw forbidden();
  };
}

const blank = (v: unknown) => v === null || (typeof v === 'string' && v.trim() === '');

/**
 * preValidation hook: drop the params `drop` says are not given (the schema would coerce a blank visibility to 0,
 * private). A request without a body gets an empty one.
 */
const dropParams = (drop: (key: string, value: unknown) => boolean): preValidationAsyncHookHandler => async function (request) {
  if (request.body === undefined || request.body === null) request.body = {};
  const b = request.body;
  if (!b || typeof b !== 'object' || Buffer.isBuffer(b) || Array.isArray(b)) return;
  for (const [k, v] of Object.entries(b as Record<string, unknown>)) if (drop(k, v)) delete (b as Record<string, unknown>)[k];
};
/** POST: blank text is not given (8.13 required_attributes! asks `present?`). */
const dropBlank = dropParams((_k, v) => blank(v));
/** PUT: null and a blank visibility are not given; a blank title, file name or code stays, to be refused (`can't be blank`), never erased. */
const dropNull = dropParams((k, v) => v === null || (k === 'visibility_level' && blank(v)));

/** Registers the project snippet routes (all on the data layer: served on SQLite and PostgreSQL). */
export default async function snippetRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = { preValidation: loadProject('read_project'), preHandler: snippetsAbility('read_project_snippet') };

  /** The snippet of `:snippet_id` the caller may read, or 404 `message` (8.13: `404 Not found`, as `find`). */
  const snippetOf = async (request: FastifyRequest, message = '404 Not found'): Promise<SnippetRow> => {
    const project = projectOf(request);
    const snippet = await findProjectSnippet(ctx.data, project.id, (request.params as { snippet_id: number }).snippet_id);
    if (!snippet || !(await canReadSnippet(ctx, callerOf(request), project, snippet, projectLevelOf(request)))) throw notFoundMessage(message);
    return snippet;
  };

  /** The snippet the caller may change: readable (else 404) and theirs, or the caller an admin (else 403). */
  const ownSnippetOf = async (request: FastifyRequest, message?: string): Promise<SnippetRow> => {
    const snippet = await snippetOf(request, message);
    if (!canUpdateSnippet(callerOf(request), snippet)) throw forbidden();
    return snippet;
  };

  api.get('/projects/:id/snippets', {
    ...read,
    schema: {
      tags, summary: "The project's snippets the caller may see, newest first", params: ProjectIdParams, querystring: Type.Object(PageParams),
      response: { 200: Type.Array(SnippetSchema) },
    },
  }, async (request, reply) => {
    const user = callerOf(request);
    const project = projectOf(request);
    const access = user.isAdmin ? 0 : projectLevelOf(request) ?? (await projectAccessLevelAsync(ctx, user, project));
    const levels = visibleSnippetLevels(user, access);
    const rows = await paginate(request, reply, ctx.data, (q) => countSnippets(q, project.id, levels),
      (q, limit, offset) => listSnippets(q, project.id, levels, limit, offset));
    return presentSnippets(ctx, project, rows);
  });

  api.get('/projects/:id/snippets/:snippet_id', {
    ...read,
    schema: { tags, summary: 'One snippet', params: SnippetParamsSchema, response: { 200: SnippetSchema } },
  }, async (request) => presentSnippet(ctx, projectOf(request), await snippetOf(request)));

  api.get('/projects/:id/snippets/:snippet_id/raw', {
    ...read,
    schema: { tags, summary: "A snippet's code as text/plain", params: SnippetParamsSchema, response: { 200: FileResponse('text/plain', 'the snippet code') } },
  }, async (request, reply) => {
    const snippet = await snippetOf(request);
    return reply.type('text/plain; charset=utf-8').send(snippet.content);
  });

  api.post('/projects/:id/snippets', {
    preValidation: [loadProject('read_project'), snippetsAbility('create_project_snippet'), dropBlank],
    schema: { tags, summary: 'Create a snippet (reporters and up)', params: ProjectIdParams, body: CreateBody, response: { 201: SnippetSchema } },
  }, async (request, reply) => {
    const body = request.body as Static<typeof CreateBody>;
    // 8.13 required_attributes!, in its order (blank text was dropped before: `present?`)
    for (const key of ['title', 'file_name', 'code', 'visibility_level'] as const) if (body[key] === undefined) throw badRequest(key);
    const project = projectOf(request);
    const snippet = await createSnippet(ctx, callerOf(request), project, {
      title: body.title!, file_name: body.file_name!, content: body.code!, visibility_level: body.visibility_level!,
    });
    return reply.code(201).send(await presentSnippet(ctx, project, snippet));
  });

  api.put('/projects/:id/snippets/:snippet_id', {
    ...read,
    preValidation: [read.preValidation, dropNull],
    schema: { tags, summary: 'Change a snippet (its author or an admin)', params: SnippetParamsSchema, body: UpdateBody, response: { 200: SnippetSchema } },
  }, async (request) => {
    const snippet = await ownSnippetOf(request);
    const body = request.body as Static<typeof UpdateBody>;
    const params: SnippetParams = { title: body.title, file_name: body.file_name, content: body.code, visibility_level: body.visibility_level };
    return presentSnippet(ctx, projectOf(request), await updateSnippet(ctx, callerOf(request), snippet, params));
  });

  api.delete('/projects/:id/snippets/:snippet_id', {
    ...read,
    schema: {
      tags, summary: 'Delete a snippet with its notes and award emoji (its author or an admin)', params: SnippetParamsSchema,
      response: { 200: DeletedSnippetSchema },
    },
  }, async (request) => {
    // 8.13 answers a snippet it cannot find here `404 Snippet Not Found`
    const snippet = await ownSnippetOf(request, '404 Snippet Not Found');
    return presentDeletedSnippet(ctx, projectOf(request), await deleteSnippet(ctx, snippet));
  });
}
