/** Todos' data module: pending todos per target, new todos, marking done, and the pages of GET /todos. `q`: the database or a transaction. */
import type { AppContext } from '../../context.js';
import { inIdOrder, keysetPage } from '../keyset.js';
import type { Queries } from '../layer/types.js';
import { rowsWithIds } from '../sql.js';
import { toTodo } from '../rows.js';
import type { TodoAction, TodoRow } from '../schema-collaboration.js';

/** What a todo is about: an issue or merge request. */
interface TodoTarget {
  type: string;
  id: number;
}

/** Those of `userIds` with a pending todo on the target. */
export async function usersWithPendingTodo(tx: Queries, target: TodoTarget, userIds: readonly number[]): Promise<Set<number>> {
  if (!userIds.length) return new Set();
  return new Set((await tx.all<{ user_id: number }>(
    `SELECT user_id FROM todos WHERE target_type = ? AND target_id = ? AND user_id IN ${tx.dialect.inIds} AND state = 'pending'`,
    [target.type, target.id, tx.dialect.ids(userIds)],
  )).map((r) => r.user_id));
}

/** The fields of a new (pending) todo. */
export interface NewTodo {
  userId: number;
  projectId: number;
  authorId: number;
  target: TodoTarget;
  action: TodoAction;
  noteId: number | null;
  at: string;
}

/** Insert a pending todo; the new row. */
export async function insertTodo(tx: Queries, t: NewTodo): Promise<TodoRow> {
  return toTodo((await tx.get<Record<string, unknown>>(
    `INSERT INTO todos (user_id, project_id, author_id, target_type, target_id, action, state, note_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) RETURNING *`,
    [t.userId, t.projectId, t.authorId, t.target.type, t.target.id, t.action, t.noteId, t.at, t.at],
  ))!);
}

/** Mark done the pending todos on the target: the user's (`userId`), or those of one action (`action`). */
export async function markTargetTodosDone(tx: Queries, target: TodoTarget, by: { userId?: number; action?: TodoAction }, at: string): Promise<void> {
  const conds = ['target_type = ?', 'target_id = ?', "state = 'pending'"];
  const args: unknown[] = [at, target.type, target.id];
  if (by.userId !== undefined) conds.push('user_id = ?'), args.push(by.userId);
  if (by.action !== undefined) conds.push('action = ?'), args.push(by.action);
  await tx.run(`UPDATE todos SET state = 'done', updated_at = ? WHERE ${conds.join(' AND ')}`, args);
}

/** SQL over `todos t`: its target still exists (merge requests add their own condition when they exist). */
export const TODO_TARGET_PRESENT = `(t.target_type <> 'Issue' OR EXISTS (SELECT 1 FROM issues i2 WHERE i2.id = t.target_id AND i2.deleted_at IS NULL))`;

/** A todo list's condition over `todos t` and its values. */
export interface TodoListWhere {
  where: string;
  params: unknown[];
}

/** How many todos match the condition. */
export async function countTodos(q: Queries, w: TodoListWhere | null): Promise<number> {
  if (!w) return 0;
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM todos t WHERE ${w.where}`, w.params))!.n);
}

/** One page of the todos matching the condition, newest first (8.x: id descending); with `total` a deep page costs what the first does (db/keyset.ts). */
export async function listTodos(ctx: AppContext, q: Queries, w: TodoListWhere | null, limit: number, offset: number, total?: number): Promise<TodoRow[]> {
  if (!w) return [];
  const ids = (await keysetPage<{ id: number }>(ctx, q, { from: 'todos t', where: w.where, values: w.params, key: 't.id', id: 't.id', desc: true, select: 't.id AS id' },
    limit, offset, total)).map((r) => r.id);
  if (ids.length === 0) return [];
  return inIdOrder(ids, (await rowsWithIds(q, 'todos', ids)).map(toTodo));
}

/** The user's todo `id` if it meets `condition` (over `todos t`), or null. */
export async function userTodoWhere(q: Queries, userId: number, id: number, condition: { sql: string; args: unknown[] }): Promise<TodoRow | null> {
  const row = await q.get<Record<string, unknown>>(`SELECT t.* FROM todos t WHERE t.id = ? AND t.user_id = ? AND ${condition.sql}`, [id, userId, ...condition.args]);
  return row ? toTodo(row) : null;
}

/** Mark one todo done; the row afterwards, or null when it is gone. */
export async function markTodoRowDone(tx: Queries, id: number, at: string): Promise<TodoRow | null> {
  const row = await tx.get<Record<string, unknown>>(`UPDATE todos SET state = 'done', updated_at = ? WHERE id = ? RETURNING *`, [at, id]);
  return row ? toTodo(row) : null;
}

/** Mark every pending todo of the user done; the number marked. */
export async function markUserTodosDone(q: Queries, userId: number, at: string): Promise<number> {
  return (await q.run(`UPDATE todos SET state = 'done', updated_at = ? WHERE user_id = ? AND state = 'pending'`, [at, userId])).changes;
}
