/**
 * Issue boards (GitLab 8.13 Board, List, Boards::CreateService and Boards::Lists::*Service): one board per project,
 * made with the project (createBoardIn; projects older than migration 0039 got theirs there), holding a backlog and
 * a done list and label lists at positions 0, 1, ... Creating a list appends it; moving one shifts the lists between
 * its old and new position; deleting one closes the gap. Each writes in one transaction that locks the board row
 * first on PostgreSQL (SQLite runs write transactions one at a time), so positions stay 0..n-1 across daemons.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import {
  appendLabelList, boardHasLabelList, boardIdOfProject, type BoardList, countLabelLists, deleteLabelList, findLabelList, insertBoard,
  labelListsOfBoard, lockBoardRow, moveLabelList,
} from '../../db/collaboration/boards.js';
import { findProjectLabel } from '../../db/labels.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import type { Queries } from '../../db/layer/types.js';
import { ApiError, notFound, notFoundMessage, validationError } from '../../errors.js';

export type { BoardList } from '../../db/collaboration/boards.js';

/** A board with its label lists. */
export interface Board {
  id: number;
  projectId: number;
  lists: BoardList[];
}

const listNotFound = () => notFoundMessage('404 Not found');
const apiError = (error: string) => new ApiError(400, { message: { error } });

/** Create a project's board with its backlog and done lists, inside the transaction creating the project. */
export function createBoardIn(tx: Queries, projectId: number, t: string): Promise<void> {
  return insertBoard(tx, projectId, t);
}

/**
 * The project's board. A project without one (none should be: they are made with the project and by migration
 * 0039) gets it here, as 8.13's Boards::ListService makes it on first use; two daemons at once make one.
 */
async function boardIdOf(ctx: AppContext, projectId: number): Promise<number> {
  const found = await boardIdOfProject(ctx.data, projectId);
  if (found !== undefined) return found;
  try {
    await ctx.data.transaction(async (tx) => {
      if ((await boardIdOfProject(tx, projectId)) === undefined) await insertBoard(tx, projectId, now());
    });
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project'); // deleted meanwhile
    if (!isUniqueViolation(e)) throw e;
  }
  const made = await boardIdOfProject(ctx.data, projectId);
  if (made === undefined) throw notFound('Project');
  return made;
}

/** The project's boards (8.13: exactly one), each with its label lists. */
export async function listBoards(ctx: AppContext, projectId: number): Promise<Board[]> {
  const id = await boardIdOf(ctx, projectId);
  return [{ id, projectId, lists: await labelListsOfBoard(ctx.data, id) }];
}

/** The board `boardId` of the project, or 404 `404 Board Not Found` (ids beyond int4 included). */
export async function projectBoard(ctx: AppContext, projectId: number, boardId: number): Promise<number> {
  const id = await boardIdOf(ctx, projectId);
  if (id !== boardId) throw notFound('Board');
  return id;
}

/** The label lists of the project's board. */
export async function boardLists(ctx: AppContext, boardId: number): Promise<BoardList[]> {
  return labelListsOfBoard(ctx.data, boardId);
}

/** One label list of a board, or 404 `404 Not found` (backlog and done are not shown, moved nor deleted). */
export async function boardList(q: Queries, boardId: number, listId: number): Promise<BoardList> {
  if (!Number.isSafeInteger(listId) || Math.abs(listId) > 2147483647) throw listNotFound();
  const list = await findLabelList(q, boardId, listId);
  if (!list) throw listNotFound();
  return list;
}

/** 400 `{"message": {"error": "Label not found!"}}` unless the label is one of the project's (checked before permissions, as 8.13). */
export async function checkBoardLabel(ctx: AppContext, projectId: number, labelId: number): Promise<void> {
  const ok = Number.isSafeInteger(labelId) && Math.abs(labelId) <= 2147483647
    && (await findProjectLabel(ctx.data, projectId, labelId));
  if (!ok) throw apiError('Label not found!');
}

/** Locks the board row on PostgreSQL, so list writes on one board queue; 404 when the board went meanwhile. */
async function lockBoard(tx: Queries, boardId: number): Promise<void> {
  if (!(await lockBoardRow(tx, boardId))) throw notFound('Board');
}

/**
 * A list for a label at the end of the board: 400 `{"label_id": ["has already been taken"]}` when the board has a
 * list for it, 400 `Label not found!` when the label went meanwhile.
 */
export async function createBoardList(ctx: AppContext, projectId: number, boardId: number, labelId: number): Promise<BoardList> {
  const taken = () => validationError({ label_id: ['has already been taken'] });
  let id: number;
  try {
    id = await ctx.data.transaction(async (tx) => {
      await lockBoard(tx, boardId);
      if (!(await findProjectLabel(tx, projectId, labelId))) throw apiError('Label not found!');
      if (await boardHasLabelList(tx, boardId, labelId)) throw taken();
      return appendLabelList(tx, boardId, labelId, now());
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw taken();
    if (isForeignKeyViolation(e)) throw apiError('Label not found!');
    throw e;
  }
  return boardList(ctx.data, boardId, id);
}

/**
 * Move a label list to `position`, shifting those between: 400 `{"error": "List could not be moved!"}` unless the
 * position is another one in 0..count-1 (8.13 MoveService#valid_move?); 404 when the list went meanwhile.
 */
export async function moveBoardList(ctx: AppContext, boardId: number, listId: number, position: number): Promise<BoardList> {
  await ctx.data.transaction(async (tx) => {
    await lockBoard(tx, boardId);
    const list = await boardList(tx, boardId, listId);
    const old = list.position!;
    const count = await countLabelLists(tx, boardId);
    if (position === old || position < 0 || position >= count) throw apiError('List could not be moved!');
    await moveLabelList(tx, boardId, listId, old, position, now());
  });
  return boardList(ctx.data, boardId, listId);
}

/** Delete a label list, moving those after it up one; answers the list as it was (404 when it went meanwhile). */
export async function deleteBoardList(ctx: AppContext, boardId: number, listId: number): Promise<BoardList> {
  return ctx.data.transaction(async (tx) => {
    await lockBoard(tx, boardId);
    const list = await boardList(tx, boardId, listId);
    await deleteLabelList(tx, boardId, listId, list.position);
    return list;
  });
}
