/**
 * Todos: created for assignment, mentions and by hand; marked done on close and by the user.
 * OWNER: todos engineer. The exported signatures below are a contract called by issues, notes and merge requests
 * inside their transactions. The rules are GitLab 8.x's TodoService: no todo for the actor themself, none for a
 * mentioned user who cannot read the target, and none while the user already has a pending todo on the target.
 */
import { and, desc, eq, inArray } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { todos, type TodoAction, type TodoRow } from '../../db/schema-collaboration.js';
import { projects, type ProjectRow, type UserRow } from '../../db/schema.js';
import { statement } from '../../db/statements.js';
import { canProject, canReadIssuable, readableTodosSql } from '../../policy/permissions.js';
import { mentionedUsers } from './mentions.js';
import type { Target, Tx } from './tx.js';
import { keysetPageIds } from '../../db/keyset.js';

/** What todo hooks need to know about the issuable. */
export interface IssuableInfo {
  project: ProjectRow;
  target: Target;
  authorId: number | null;
  assigneeId: number | null;
  /** Confidential issues: mentioned users who cannot read it get no todo. */
  confidential?: boolean;
}

/**
 * Create one todo per user unless the user already has a pending todo on the target (8.x create_todos: one pending
 * todo per user and target, whatever its action). Returns the rows created.
 */
function createTodos(tx: Tx, userIds: number[], actor: UserRow, issuable: IssuableInfo, action: TodoAction, noteId: number | null = null): TodoRow[] {
  if (userIds.length === 0) return [];
  const { target } = issuable;
  const pending = new Set(
    tx.select({ userId: todos.userId }).from(todos)
      .where(and(eq(todos.targetType, target.type), eq(todos.targetId, target.id), inArray(todos.userId, userIds), eq(todos.state, 'pending')))
      .all().map((r) => r.userId),
  );
  const t = now();
  const created: TodoRow[] = [];
  for (const userId of new Set(userIds)) {
    if (pending.has(userId)) continue;
    created.push(tx.insert(todos).values({
      userId, projectId: issuable.project.id, authorId: actor.id, targetType: target.type, targetId: target.id,
      action, state: 'pending', noteId, createdAt: t, updatedAt: t,
    }).returning().get());
  }
  return created;
}

/** Users mentioned in `text` who get a `mentioned` todo: not the actor, not `skip`, and able to read the target. */
function mentionRecipients(ctx: AppContext, actor: UserRow, issuable: IssuableInfo, text: string | null, skip: Set<number> = new Set()): number[] {
  const readable = { type: issuable.target.type, confidential: issuable.confidential, authorId: issuable.authorId, assigneeId: issuable.assigneeId };
  return mentionedUsers(ctx, text)
    .filter((u) => u.id !== actor.id && !skip.has(u.id) && canReadIssuable(ctx, u, issuable.project, readable))
    .map((u) => u.id);
}

/** An `assigned` todo for the assignee unless the actor assigned themself. */
function assignmentTodo(tx: Tx, actor: UserRow, issuable: IssuableInfo): void {
  if (issuable.assigneeId !== null && issuable.assigneeId !== actor.id) createTodos(tx, [issuable.assigneeId], actor, issuable, 'assigned');
}

/** After create: `assigned` todo for the assignee (unless self-assigned), `mentioned` for users mentioned in `text`. */
export function todosForNewIssuable(ctx: AppContext, tx: Tx, actor: UserRow, issuable: IssuableInfo, text: string | null): void {
  assignmentTodo(tx, actor, issuable);
  createTodos(tx, mentionRecipients(ctx, actor, issuable, text), actor, issuable, 'mentioned');
}

/** After update: `assigned` when the assignee changed, `mentioned` for users newly mentioned (not in `oldText`). */
export function todosForUpdatedIssuable(
  ctx: AppContext, tx: Tx, actor: UserRow, issuable: IssuableInfo, change: { oldAssigneeId: number | null; oldText: string | null; newText: string | null },
): void {
  if (issuable.assigneeId !== change.oldAssigneeId) assignmentTodo(tx, actor, issuable);
  if (change.newText === change.oldText) return;
  const already = new Set(mentionedUsers(ctx, change.oldText).map((u) => u.id));
  createTodos(tx, mentionRecipients(ctx, actor, issuable, change.newText, already), actor, issuable, 'mentioned');
}

/** After a user note: `mentioned` todos for users mentioned in it (with its note id); marks the actor's todos on the target done (8.x). */
export function todosForNote(ctx: AppContext, tx: Tx, actor: UserRow, issuable: IssuableInfo, noteId: number, text: string): void {
  markPendingDone(tx, actor.id, issuable.target);
  createTodos(tx, mentionRecipients(ctx, actor, issuable, text), actor, issuable, 'mentioned', noteId);
}

/** The user's pending todos on a target become done. */
function markPendingDone(tx: Tx, userId: number, target: Target): void {
  tx.update(todos).set({ state: 'done', updatedAt: now() })
    .where(and(eq(todos.userId, userId), eq(todos.targetType, target.type), eq(todos.targetId, target.id), eq(todos.state, 'pending')))
    .run();
}

/** When `actor` closes (or merges) the target: their pending todos on it become done (8.x). */
export function markTodosDoneOnClose(tx: Tx, actor: UserRow, target: Target): void {
  markPendingDone(tx, actor.id, target);
}

/**
 * A build of the merge request's head pipeline failed: a `build_failed` todo for the MR's author, written by the author
 * (8.x TodoService#merge_request_build_failed), unless they already have a pending todo on it.
 */
export function todoForBuildFailed(tx: Tx, author: UserRow, issuable: IssuableInfo): TodoRow | null {
  return createTodos(tx, [author.id], author, issuable, 'build_failed')[0] ?? null;
}

/** A failed build was retried: the MR author's pending `build_failed` todos on it become done (8.x merge_request_build_retried). */
export function markBuildFailedTodosDone(tx: Tx, target: Target): void {
  tx.update(todos).set({ state: 'done', updatedAt: now() })
    .where(and(eq(todos.targetType, target.type), eq(todos.targetId, target.id), eq(todos.action, 'build_failed'), eq(todos.state, 'pending')))
    .run();
}

/** POST .../todo: a `marked` todo for the caller, or null when a pending one already exists (the route answers 304). */
export function markTodo(ctx: AppContext, tx: Tx, actor: UserRow, issuable: IssuableInfo): TodoRow | null {
  return createTodos(tx, [actor.id], actor, issuable, 'marked')[0] ?? null;
}

/** Filters of GET /todos (all optional; state defaults to pending). */
export interface TodoFilters {
  action?: TodoAction;
  authorId?: number;
  projectId?: number;
  state?: 'pending' | 'done';
  type?: 'Issue' | 'MergeRequest';
}

/** SQL over `todos t`: its target still exists (merge requests add their own condition when they exist). */
const TARGET_PRESENT = `(t.target_type <> 'Issue' OR EXISTS (SELECT 1 FROM issues i WHERE i.id = t.target_id AND i.deleted_at IS NULL))`;

/**
 * The SQL condition of the user's todos under `filters` (8.x TodosFinder): pending unless state=done; a project the
 * user cannot read matches nothing; todos of deleted issues are hidden (8.x destroyed them with the issue), and so
 * are those whose target the user may no longer read (policy readableTodosSql).
 */
function todoListWhere(ctx: AppContext, user: UserRow, f: TodoFilters): { where: string; params: unknown[] } | null {
  const conds = ['t.user_id = ?', 't.state = ?'];
  const params: unknown[] = [user.id, f.state ?? 'pending'];
  if (f.action) conds.push('t.action = ?'), params.push(f.action);
  if (f.authorId !== undefined) conds.push('t.author_id = ?'), params.push(f.authorId);
  if (f.type) conds.push('t.target_type = ?'), params.push(f.type);
  if (f.projectId !== undefined) {
    const project = ctx.db.select().from(projects).where(eq(projects.id, f.projectId)).get();
    if (!project || !canProject(ctx, user, 'read_project', project)) return null;
    conds.push('t.project_id = ?'), params.push(f.projectId);
  }
  conds.push(TARGET_PRESENT, readableTodosSql(user));
  return { where: conds.join(' AND '), params };
}

/** How many todos GET /todos lists for the user under `filters`. */
export function countTodos(ctx: AppContext, user: UserRow, filters: TodoFilters): number {
  const q = todoListWhere(ctx, user, filters);
  if (!q) return 0;
  return (statement(ctx, `SELECT COUNT(*) AS n FROM todos t WHERE ${q.where}`).get(...q.params) as { n: number }).n;
}

/** One page of GET /todos, newest first (8.x: id descending); with `total` a deep page costs what the first does (db/keyset.ts). */
export function listTodos(ctx: AppContext, user: UserRow, filters: TodoFilters, limit: number, offset: number, total?: number): TodoRow[] {
  const q = todoListWhere(ctx, user, filters);
  if (!q) return [];
  const ids = keysetPageIds(ctx, { from: 'todos t', where: q.where, values: q.params, key: 't.id', id: 't.id', desc: true }, limit, offset, total);
  if (ids.length === 0) return [];
  return ctx.db.select().from(todos).where(inArray(todos.id, ids)).orderBy(desc(todos.id)).all();
}

/** DELETE /todos/:id: the user's todo marked done, or null when it is absent, another user's or about what they may not read (404). */
export function markTodoDone(ctx: AppContext, user: UserRow, id: number): TodoRow | null {
  return ctx.db.transaction((tx) => {
    const visible = statement(ctx, `SELECT 1 FROM todos t WHERE t.id = ? AND t.user_id = ? AND ${TARGET_PRESENT} AND ${readableTodosSql(user)}`).get(id, user.id);
    if (!visible) return null;
    const row = tx.select().from(todos).where(eq(todos.id, id)).get()!;
    if (row.state === 'done') return row;
    return tx.update(todos).set({ state: 'done', updatedAt: now() }).where(eq(todos.id, id)).returning().get();
  });
}

/** DELETE /todos: every pending todo of the user marked done; the number marked. */
export function markAllTodosDone(ctx: AppContext, user: UserRow): number {
  return ctx.db.transaction((tx) =>
    tx.update(todos).set({ state: 'done', updatedAt: now() }).where(and(eq(todos.userId, user.id), eq(todos.state, 'pending'))).run().changes,
  );
}
