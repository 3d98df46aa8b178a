/**
 * Issue boards (GitLab 8.13 Board, List, Boards::CreateService and Boards::Lists::*Service): one board per project,
 * made with the project (createBoardIn; projects older than migration 0039 got theirs there), holding a backlog and
 * a done list and label lists at positions 0, 1, ... Creating a list appends it; moving one shifts the lists between
 * its old and new position; deleting one closes the gap. Each writes in one transaction that locks the board row
 * first on PostgreSQL (SQLite runs write transactions one at a time), so positions stay 0..n-1 across daemons.
 */
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/layer/errors.js';
import type { Queries } from '../db/layer/types.js';
import { type BoardListRow, toBoardList } from '../db/rows.js';
import { ApiError, notFound, notFoundMessage, validationError } from '../errors.js';

/** A label list with the label it shows (LabelBasic: name, color, description). */
export interface BoardList extends BoardListRow {
  label: { name: string; color: string; description: string | null } | null;
}

/** A board with its label lists. */
export interface Board {
  id: number;
  projectId: number;
  lists: BoardList[];
}

type Rec = Record<string, unknown>;
const LIST_WITH_LABEL = `SELECT l.*, lb.title AS label_title, lb.color AS label_color, lb.description AS label_description
  FROM board_lists l LEFT JOIN labels lb ON lb.id = l.label_id`;
const toList = (r: Rec): BoardList => ({
  ...toBoardList(r),
  label: r.label_id == null ? null : { name: r.label_title as string, color: r.label_color as string, description: (r.label_description ?? null) as string | null },
});
const listNotFound = () => notFoundMessage('404 Not found');
const apiError = (error: string) => new ApiError(400, { message: { error } });

/** Create a project's board with its backlog and done lists, inside the transaction creating the project. */
export async function createBoardIn(tx: Queries, projectId: number, t: string): Promise<void> {
  const board = await tx.get<{ id: number }>(`INSERT INTO boards (project_id, created_at, updated_at) VALUES (?, ?, ?) RETURNING id`, [projectId, t, t]);
  await tx.run(
    `INSERT INTO board_lists (board_id, list_type, created_at, updated_at) VALUES (?, 'backlog', ?, ?), (?, 'done', ?, ?)`,
    [board!.id, t, t, board!.id, t, t],
  );
}

/**
 * The project's board. A project without one (none should be: they are made with the project and by migration
 * 0039) gets it here, as 8.13's Boards::ListService makes it on first use; two daemons at once make one.
 */
async function boardIdOf(ctx: AppContext, projectId: number): Promise<number> {
  const found = await ctx.data.get<{ id: number }>(`SELECT id FROM boards WHERE project_id = ?`, [projectId]);
  if (found) return found.id;
  try {
    await ctx.data.transaction(async (tx) => {
      if (!(await tx.get(`SELECT id FROM boards WHERE project_id = ?`, [projectId]))) await createBoardIn(tx, projectId, now());
    });
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project'); // deleted meanwhile
    if (!isUniqueViolation(e)) throw e;
  }
  const made = await ctx.data.get<{ id: number }>(`SELECT id FROM boards WHERE project_id = ?`, [projectId]);
  if (!made) throw notFound('Project');
  return made.id;
}

/** The label lists of a board, by position. */
async function labelLists(q: Queries, boardId: number): Promise<BoardList[]> {
  return (await q.all<Rec>(`${LIST_WITH_LABEL} WHERE l.board_id = ? AND l.list_type = 'label' ORDER BY l.position, l.id`, [boardId])).map(toList);
}

/** The project's boards (8.13: exactly one), each with its label lists. */
export async function listBoards(ctx: AppContext, projectId: number): Promise<Board[]> {
  const id = await boardIdOf(ctx, projectId);
  return [{ id, projectId, lists: await labelLists(ctx.data, id) }];
}

/** The board `boardId` of the project, or 404 `404 Board Not Found` (ids beyond int4 included). */
export async function projectBoard(ctx: AppContext, projectId: number, boardId: number): Promise<number> {
  const id = await boardIdOf(ctx, projectId);
  if (id !== boardId) throw notFound('Board');
  return id;
}

/** The label lists of the project's board. */
export async function boardLists(ctx: AppContext, boardId: number): Promise<BoardList[]> {
  return labelLists(ctx.data, boardId);
}

/** One label list of a board, or 404 `404 Not found` (backlog and done are not shown, moved nor deleted). */
export async function boardList(ctx: AppContext, boardId: number, listId: number, q: Queries = ctx.data): Promise<BoardList> {
  if (!Number.isSafeInteger(listId) || Math.abs(listId) > 2147483647) throw listNotFound();
  const row = await q.get<Rec>(`${LIST_WITH_LABEL} WHERE l.id = ? AND l.board_id = ? AND l.list_type = 'label'`, [listId, boardId]);
  if (!row) throw listNotFound();
  return toList(row);
}

/** 400 `{"message": {"error": "Label not found!"}}` unless the label is one of the project's (checked before permissions, as 8.13). */
export async function checkBoardLabel(ctx: AppContext, projectId: number, labelId: number): Promise<void> {
  const ok = Number.isSafeInteger(labelId) && Math.abs(labelId) <= 2147483647
    && (await ctx.data.get(`SELECT 1 AS one FROM labels WHERE id = ? AND project_id = ?`, [labelId, projectId]));
  if (!ok) throw apiError('Label not found!');
}

/** Locks the board row on PostgreSQL, so list writes on one board queue; 404 when the board went meanwhile. */
async function lockBoard(tx: Queries, boardId: number): Promise<void> {
  const lock = tx.dialect.name === 'postgres' ? ' FOR UPDATE' : '';
  if (!(await tx.get(`SELECT id FROM boards WHERE id = ?${lock}`, [boardId]))) throw notFound('Board');
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
      if (!(await tx.get(`SELECT 1 AS one FROM labels WHERE id = ? AND project_id = ?`, [labelId, projectId]))) throw apiError('Label not found!');
      if (await tx.get(`SELECT 1 AS one FROM board_lists WHERE board_id = ? AND label_id = ?`, [boardId, labelId])) throw taken();
      const max = await tx.get<{ p: number | null }>(`SELECT MAX(position) AS p FROM board_lists WHERE board_id = ? AND list_type = 'label'`, [boardId]);
      const t = now();
      const row = await tx.get<{ id: number }>(
        `INSERT INTO board_lists (board_id, label_id, list_type, position, created_at, updated_at) VALUES (?, ?, 'label', ?, ?, ?) RETURNING id`,
        [boardId, labelId, max?.p == null ? 0 : Number(max.p) + 1, t, t],
      );
      return row!.id;
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw taken();
    if (isForeignKeyViolation(e)) throw apiError('Label not found!');
    throw e;
  }
  return boardList(ctx, boardId, id);
}

/**
 * Move a label list to `position`, shifting those between: 400 `{"error": "List could not be moved!"}` unless the
 * position is another one in 0..count-1 (8.13 MoveService#valid_move?); 404 when the list went meanwhile.
 */
export async function moveBoardList(ctx: AppContext, boardId: number, listId: number, position: number): Promise<BoardList> {
  await ctx.data.transaction(async (tx) => {
    await lockBoard(tx, boardId);
    const list = await boardList(ctx, boardId, listId, tx);
    const old = list.position!;
    const count = Number((await tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM board_lists WHERE board_id = ? AND list_type = 'label'`, [boardId]))!.n);
    if (position === old || position < 0 || position >= count) throw apiError('List could not be moved!');
    if (old < position) {
      await tx.run(`UPDATE board_lists SET position = position - 1 WHERE board_id = ? AND list_type = 'label' AND position > ? AND position <= ?`, [boardId, old, position]);
    } else {
      await tx.run(`UPDATE board_lists SET position = position + 1 WHERE board_id = ? AND list_type = 'label' AND position >= ? AND position < ?`, [boardId, position, old]);
    }
    await tx.run(`UPDATE board_lists SET position = ?, updated_at = ? WHERE id = ?`, [position, now(), listId]);
  });
  return boardList(ctx, boardId, listId);
}

/** Delete a label list, moving those after it up one; answers the list as it was (404 when it went meanwhile). */
export async function deleteBoardList(ctx: AppContext, boardId: number, listId: number): Promise<BoardList> {
  return ctx.data.transaction(async (tx) => {
    await lockBoard(tx, boardId);
    const list = await boardList(ctx, boardId, listId, tx);
    await tx.run(`DELETE FROM board_lists WHERE id = ?`, [listId]);
    await tx.run(`UPDATE board_lists SET position = position - 1 WHERE board_id = ? AND list_type = 'label' AND position > ?`, [boardId, list.position]);
    return list;
  });
}
