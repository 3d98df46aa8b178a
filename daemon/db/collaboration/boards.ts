/**
 * Boards' data module: a project's board and its lists (backlog, done, and label lists at positions 0..n-1).
 * `q`: the database or a transaction. The position rules and errors stay in services/collaboration/boards.ts.
 */
import type { Queries } from '../layer/types.js';
import { type BoardListRow, toBoardList } from '../rows.js';

/** A label list with the label it shows (LabelBasic: name, color, description). */
export interface BoardList extends BoardListRow {
  label: { name: string; color: string; description: string | null } | null;
}

type Rec = Record<string, unknown>;
const LIST_WITH_LABEL = `SELECT l.*, lb.title AS label_title, lb.color AS label_color, lb.description AS label_description
  FROM board_lists l LEFT JOIN labels lb ON lb.id = l.label_id`;
const toList = (r: Rec): BoardList => ({
  ...toBoardList(r),
  label: r.label_id == null ? null : { name: r.label_title as string, color: r.label_color as string, description: (r.label_description ?? null) as string | null },
});

/** Insert a project's board with its backlog and done lists. */
export async function insertBoard(tx: Queries, projectId: number, t: string): Promise<void> {
  const board = await tx.get<{ id: number }>(`INSERT INTO boards (project_id, created_at, updated_at) VALUES (?, ?, ?) RETURNING id`, [projectId, t, t]);
  await tx.run(
    `INSERT INTO board_lists (board_id, list_type, created_at, updated_at) VALUES (?, 'backlog', ?, ?), (?, 'done', ?, ?)`,
    [board!.id, t, t, board!.id, t, t],
  );
}

/** The id of the project's board, or undefined. */
export async function boardIdOfProject(q: Queries, projectId: number): Promise<number | undefined> {
  return (await q.get<{ id: number }>(`SELECT id FROM boards WHERE project_id = ?`, [projectId]))?.id;
}

/** Whether the board exists; on PostgreSQL it also locks the board row until the end of the transaction. */
export async function lockBoardRow(tx: Queries, boardId: number): Promise<boolean> {
  const lock = tx.dialect.name === 'postgres' ? ' FOR UPDATE' : '';
  return !!(await tx.get(`SELECT id FROM boards WHERE id = ?${lock}`, [boardId]));
}

/** The label lists of a board, by position. */
export async function labelListsOfBoard(q: Queries, boardId: number): Promise<BoardList[]> {
  return (await q.all<Rec>(`${LIST_WITH_LABEL} WHERE l.board_id = ? AND l.list_type = 'label' ORDER BY l.position, l.id`, [boardId])).map(toList);
}

/** One label list of a board, or undefined. */
export async function findLabelList(q: Queries, boardId: number, listId: number): Promise<BoardList | undefined> {
  const row = await q.get<Rec>(`${LIST_WITH_LABEL} WHERE l.id = ? AND l.board_id = ? AND l.list_type = 'label'`, [listId, boardId]);
  return row ? toList(row) : undefined;
}

/** Whether the board has a list for the label. */
export async function boardHasLabelList(q: Queries, boardId: number, labelId: number): Promise<boolean> {
  return !!(await q.get(`SELECT 1 AS one FROM board_lists WHERE board_id = ? AND label_id = ?`, [boardId, labelId]));
}

/** The number of label lists of a board. */
export async function countLabelLists(q: Queries, boardId: number): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM board_lists WHERE board_id = ? AND list_type = 'label'`, [boardId]))!.n);
}

/** Insert a label list at the end of the board; its id. */
export async function appendLabelList(tx: Queries, boardId: number, labelId: number, t: string): Promise<number> {
  const max = await tx.get<{ p: number | null }>(`SELECT MAX(position) AS p FROM board_lists WHERE board_id = ? AND list_type = 'label'`, [boardId]);
  const row = await tx.get<{ id: number }>(
    `INSERT INTO board_lists (board_id, label_id, list_type, position, created_at, updated_at) VALUES (?, ?, 'label', ?, ?, ?) RETURNING id`,
    [boardId, labelId, max?.p == null ? 0 : Number(max.p) + 1, t, t],
  );
  return row!.id;
}

/** Move a label list from `old` to `position`, shifting the label lists between by one. */
export async function moveLabelList(tx: Queries, boardId: number, listId: number, old: number, position: number, t: string): Promise<void> {
  if (old < position) {
    await tx.run(`UPDATE board_lists SET position = position - 1 WHERE board_id = ? AND list_type = 'label' AND position > ? AND position <= ?`, [boardId, old, position]);
  } else {
    await tx.run(`UPDATE board_lists SET position = position + 1 WHERE board_id = ? AND list_type = 'label' AND position >= ? AND position < ?`, [boardId, position, old]);
  }
  await tx.run(`UPDATE board_lists SET position = ?, updated_at = ? WHERE id = ?`, [position, t, listId]);
}

/** Delete a label list at `position`, moving the label lists after it up one. */
export async function deleteLabelList(tx: Queries, boardId: number, listId: number, position: number | null): Promise<void> {
  await tx.run(`DELETE FROM board_lists WHERE id = ?`, [listId]);
  await tx.run(`UPDATE board_lists SET position = position - 1 WHERE board_id = ? AND list_type = 'label' AND position > ?`, [boardId, position]);
}
