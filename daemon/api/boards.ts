/**
 * Issue boards (GitLab 8.13 lib/api/boards.rb): GET /projects/:id/boards, and the label lists of the board at
 * /projects/:id/boards/:board_id/lists (list, show, create with label_id, move to a position, delete). Reading needs
 * read_board (whoever reads the project), writing admin_list (reporters and up, admins). As 8.13: creating checks
 * the label before the permission, moving finds the list before it; backlog and done lists are never shown.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden } from '../errors.js';
import { canProjectAsync } from '../policy/permissions.js';
import {
  boardList, boardLists, type BoardList, checkBoardLabel, createBoardList, deleteBoardList, listBoards, moveBoardList, projectBoard,
} from '../services/collaboration/boards.js';
import { callerOf, loadProject, projectLevelOf, projectOf } from './project-scope.js';
import { Int, ProjectIdParams } from './params.js';

const BoardParams = Type.Object({ ...ProjectIdParams.properties, board_id: Type.Integer({ description: 'the ID of the board' }) });
const ListParams = Type.Object({ ...BoardParams.properties, list_id: Type.Integer({ description: 'the ID of a list' }) });
const ListSchema = Type.Object({
  id: Type.Integer(),
  label: Type.Object({ name: Type.String(), color: Type.String(), description: Type.Union([Type.String(), Type.Null()]) }),
  position: Type.Integer(),
});
const BoardSchema = Type.Object({ id: Type.Integer(), lists: Type.Array(ListSchema) });
const tags = ['boards'];

/** 8.13 Entities::List: id, label (LabelBasic), position. */
const listEntity = (l: BoardList) => ({ id: l.id, label: l.label!, position: l.position! });

/** Registers the board routes. */
export default async function boardRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_board');
  const params = (request: FastifyRequest) => request.params as Static<typeof ListParams>;
  const boardOf = (request: FastifyRequest) => projectBoard(ctx, projectOf(request).id, params(request).board_id);
  const requireAdminList = async (request: FastifyRequest) => {
    if (!(await canProjectAsync(ctx, callerOf(request), 'admin_list', projectOf(request), projectLevelOf(request)))) throw forbidden();
  };

  api.get('/projects/:id/boards', {
    preValidation: read,
    schema: { tags, summary: "The project's boards (one) with their label lists", params: ProjectIdParams, response: { 200: Type.Array(BoardSchema) } },
  }, async (request) => (await listBoards(ctx, projectOf(request).id)).map((b) => ({ id: b.id, lists: b.lists.map(listEntity) })));

  api.get('/projects/:id/boards/:board_id/lists', {
    preValidation: read,
    schema: { tags, summary: 'The label lists of the board (not backlog and done), by position', params: BoardParams, response: { 200: Type.Array(ListSchema) } },
  }, async (request) => (await boardLists(ctx, await boardOf(request))).map(listEntity));

  api.get('/projects/:id/boards/:board_id/lists/:list_id', {
    preValidation: read,
    schema: { tags, summary: 'One label list of the board', params: ListParams, response: { 200: ListSchema } },
  }, async (request) => listEntity(await boardList(ctx.data, await boardOf(request), params(request).list_id)));

  api.post('/projects/:id/boards/:board_id/lists', {
    preValidation: read,
    schema: {
      tags, summary: 'Add a list for a label of the project at the end of the board (reporter and up)', params: BoardParams,
      body: Type.Object({ label_id: Int({ description: 'the ID of a label of the project' }) }), response: { 201: ListSchema },
    },
  }, async (request, reply) => {
    const project = projectOf(request);
    const labelId = (request.body as { label_id: number }).label_id;
    await checkBoardLabel(ctx, project.id, labelId);
    await requireAdminList(request);
    return reply.code(201).send(listEntity(await createBoardList(ctx, project.id, await boardOf(request), labelId)));
  });

  api.put('/projects/:id/boards/:board_id/lists/:list_id', {
    preValidation: read,
    schema: {
      tags, summary: 'Move a label list to another position, shifting the lists between (reporter and up)', params: ListParams,
      body: Type.Object({ position: Int({ description: 'the new position, 0 to the number of label lists - 1' }) }), response: { 200: ListSchema },
    },
  }, async (request) => {
    const boardId = await boardOf(request);
    await boardList(ctx.data, boardId, params(request).list_id);
    await requireAdminList(request);
    return listEntity(await moveBoardList(ctx, boardId, params(request).list_id, (request.body as { position: number }).position));
  });

  api.delete('/projects/:id/boards/:board_id/lists/:list_id', {
    preValidation: read,
    schema: { tags, summary: 'Delete a label list (reporter and up); the deleted list is answered', params: ListParams, response: { 200: ListSchema } },
  }, async (request) => {
    await requireAdminList(request);
    return listEntity(await deleteBoardList(ctx, await boardOf(request), params(request).list_id));
  });
}
