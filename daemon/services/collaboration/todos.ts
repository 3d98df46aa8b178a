/**
 * Todos: created for assignment, mentions and by hand; marked done on close and by the user.
 * OWNER: todos engineer. The exported signatures below are a contract called by issues, notes and merge requests
 * inside their transactions. The rules are GitLab 8.x's TodoService: no todo for the actor themself, none for a
 * mentioned user who cannot read the target, and none while the user already has a pending todo on the target.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { TodoAction, TodoRow } from '../../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { canProjectAsync, canReadIssuable, readableTodosWhere } from '../../policy/permissions.js';
import { mentionedUsers } from './mentions.js';
import { INT_MAX, LOCKS, lockAsync, type Target } from './tx.js';
import type { Queries } from '../../db/layer/types.js';
import {
  insertTodo, markTargetTodosDone, TODO_TARGET_PRESENT, markTodoRowDone, markUserTodosDone, type TodoListWhere, userTodoWhere, usersWithPendingTodo,
} from '../../db/collaboration/todos.js';

export { countTodos, listTodos, type TodoListWhere } from '../../db/collaboration/todos.js';
import { lookupProjectAsync } from '../projects/projects.js';

/** What todo hooks need to know about the issuable. */
export interface IssuableInfo {
  project: ProjectRow;
  target: Target;
  authorId: number | null;
  assigneeId: number | null;
  /** Confidential issues: mentioned users who cannot read it get no todo. */
  confidential?: boolean;
}

// The todo hooks run inside the caller's transaction `tx` (every read goes through it), on either engine.

/**
 * Create one todo per user unless the user already has a pending todo on the target (8.x create_todos: one pending
 * todo per user and target, whatever its action); returns the rows created. The target's todo writers are serialised
 * (lockAsync), so two requests at once cannot both find no pending todo and both write one.
 */
async function createTodos(
  tx: Queries, userIds: number[], actor: UserRow, issuable: IssuableInfo, action: TodoAction, noteId: number | null = null,
): Promise<TodoRow[]> {
  if (userIds.length === 0) return [];
  const { target } = issuable;
  await lockAsync(tx, target.type === 'Issue' ? LOCKS.todoTarget : LOCKS.mergeRequestTodoTarget, target.id);
  const unique = [...new Set(userIds)];
  const pending = await usersWithPendingTodo(tx, target, unique);
  const t = now();
  const created: TodoRow[] = [];
  for (const userId of unique) {
    if (pending.has(userId)) continue;
    created.push(await insertTodo(tx, { userId, projectId: issuable.project.id, authorId: actor.id, target, action, noteId, at: t }));
  }
  return created;
}

/** Users mentioned in `text` who get a `mentioned` todo: not the actor, not `skip`, and able to read the target. */
async function mentionRecipients(
  ctx: AppContext, tx: Queries, actor: UserRow, issuable: IssuableInfo, text: string | null, skip: Set<number> = new Set(),
): Promise<number[]> {
  const readable = { type: issuable.target.type, confidential: issuable.confidential, authorId: issuable.authorId, assigneeId: issuable.assigneeId };
  const out: number[] = [];
  for (const u of await mentionedUsers(tx, text)) {
    if (u.id !== actor.id && !skip.has(u.id) && (await canReadIssuable(ctx, u, issuable.project, readable, undefined, tx))) out.push(u.id);
  }
  return out;
}

async function assignmentTodo(tx: Queries, actor: UserRow, issuable: IssuableInfo): Promise<void> {
  if (issuable.assigneeId !== null && issuable.assigneeId !== actor.id) await createTodos(tx, [issuable.assigneeId], actor, issuable, 'assigned');
}

/** After create: `assigned` todo for the assignee (unless self-assigned), `mentioned` for users mentioned in `text`. */
export async function todosForNewIssuable(ctx: AppContext, tx: Queries, actor: UserRow, issuable: IssuableInfo, text: string | null): Promise<void> {
  await assignmentTodo(tx, actor, issuable);
  await createTodos(tx, await mentionRecipients(ctx, tx, actor, issuable, text), actor, issuable, 'mentioned');
}

/** After update: `assigned` when the assignee changed, `mentioned` for users newly mentioned (not in `oldText`). */
export async function todosForUpdatedIssuable(
  ctx: AppContext, tx: Queries, actor: UserRow, issuable: IssuableInfo, change: { oldAssigneeId: number | null; oldText: string | null; newText: string | null },
): Promise<void> {
  if (issuable.assigneeId !== change.oldAssigneeId) await assignmentTodo(tx, actor, issuable);
  if (change.newText === change.oldText) return;
  const already = new Set((await mentionedUsers(tx, change.oldText)).map((u) => u.id));
  await createTodos(tx, await mentionRecipients(ctx, tx, actor, issuable, change.newText, already), actor, issuable, 'mentioned');
}

/** After a user note: `mentioned` todos for users mentioned in it (with its note id); marks the actor's todos on the target done (8.x). */
export async function todosForNote(ctx: AppContext, tx: Queries, actor: UserRow, issuable: IssuableInfo, noteId: number, text: string): Promise<void> {
  await markPendingDone(tx, actor.id, issuable.target);
  await createTodos(tx, await mentionRecipients(ctx, tx, actor, issuable, text), actor, issuable, 'mentioned', noteId);
}

async function markPendingDone(tx: Queries, userId: number, target: Target): Promise<void> {
  await markTargetTodosDone(tx, target, { userId }, now());
}

/** When `actor` closes (or merges) the target: their pending todos on it become done (8.x). */
export function markTodosDoneOnClose(tx: Queries, actor: UserRow, target: Target): Promise<void> {
  return markPendingDone(tx, actor.id, target);
}

/** POST .../todo: a `marked` todo for the caller, or null when a pending one exists (the route answers 304). */
export async function markTodo(tx: Queries, actor: UserRow, issuable: IssuableInfo): Promise<TodoRow | null> {
  return (await createTodos(tx, [actor.id], actor, issuable, 'marked'))[0] ?? null;
}

/** Filters of GET /todos (all optional; state defaults to pending). */
export interface TodoFilters {
  action?: TodoAction;
  authorId?: number;
  projectId?: number;
  state?: 'pending' | 'done';
  type?: 'Issue' | 'MergeRequest';
}


/**
 * The condition of the user's todos under `filters` (8.x TodosFinder): pending unless state=done; a project the user
 * cannot read matches nothing; todos of deleted issues are hidden (8.x destroyed them with the issue), and so are
 * those whose target the user may no longer read (policy readableTodosWhere).
 */
export async function todoListWhere(ctx: AppContext, user: UserRow, f: TodoFilters): Promise<TodoListWhere | null> {
  const conds = ['t.user_id = ?', 't.state = ?'];
  const params: unknown[] = [user.id, f.state ?? 'pending'];
  if (f.action) conds.push('t.action = ?'), params.push(f.action);
  if (f.authorId !== undefined) {
    if (Math.abs(f.authorId) > INT_MAX) return null;
    conds.push('t.author_id = ?'), params.push(f.authorId);
  }
  if (f.type) conds.push('t.target_type = ?'), params.push(f.type);
  if (f.projectId !== undefined) {
    const project = Math.abs(f.projectId) > INT_MAX ? null : await lookupProjectAsync(ctx, f.projectId);
    if (!project || !(await canProjectAsync(ctx, user, 'read_project', project))) return null;
    conds.push('t.project_id = ?'), params.push(f.projectId);
  }
  const readable = readableTodosWhere(ctx.data.dialect, user);
  conds.push(TODO_TARGET_PRESENT, readable.sql);
  params.push(...readable.args);
  return { where: conds.join(' AND '), params };
}

/** DELETE /todos/:id: the user's todo marked done, or null when it is absent, another user's or about what they may not read (404). */
export async function markTodoDone(ctx: AppContext, user: UserRow, id: number): Promise<TodoRow | null> {
  if (!Number.isSafeInteger(id) || Math.abs(id) > INT_MAX) return null;
  const readable = readableTodosWhere(ctx.data.dialect, user);
  return ctx.data.transaction(async (tx) => {
    const row = await userTodoWhere(tx, user.id, id, { sql: `${TODO_TARGET_PRESENT} AND ${readable.sql}`, args: readable.args });
    if (!row) return null;
    if (row.state === 'done') return row;
    return markTodoRowDone(tx, id, now());
  });
}

/** DELETE /todos: every pending todo of the user marked done; the number marked. */
export async function markAllTodosDone(ctx: AppContext, user: UserRow): Promise<number> {
  return markUserTodosDone(ctx.data, user.id, now());
}

/**
 * A build of the merge request's head pipeline failed: a `build_failed` todo for the MR's author, written by the author
 * (8.x TodoService#merge_request_build_failed), unless they already have a pending todo on it.
 */
export async function todoForBuildFailed(tx: Queries, author: UserRow, issuable: IssuableInfo): Promise<TodoRow | null> {
  return (await createTodos(tx, [author.id], author, issuable, 'build_failed'))[0] ?? null;
}

/** A failed build was retried: the MR author's pending `build_failed` todos on it become done (8.x merge_request_build_retried). */
export async function markBuildFailedTodosDone(tx: Queries, target: Target): Promise<void> {
  await markTargetTodosDone(tx, target, { action: 'build_failed' }, now());
}
