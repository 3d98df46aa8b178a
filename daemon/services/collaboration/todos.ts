/**
 * Todos: created for assignment, mentions and by hand; marked done on close and by the user.
 * OWNER: todos engineer. The exported signatures below are a contract called by issues, notes and merge requests
 * inside their transactions.
 */
import type { AppContext } from '../../context.js';
import type { TodoRow } from '../../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { Target, Tx } from './tx.js';

/** What todo hooks need to know about the issuable. */
export interface IssuableInfo {
  project: ProjectRow;
  target: Target;
  authorId: number | null;
  assigneeId: number | null;
  /** Confidential issues: mentioned users who cannot read it get no todo. */
  confidential?: boolean;
}

/** After create: `assigned` todo for the assignee (unless self-assigned), `mentioned` for users mentioned in `text`. */
export function todosForNewIssuable(ctx: AppContext, tx: Tx, actor: UserRow, issuable: IssuableInfo, text: string | null): void {
  throw new Error('not implemented');
}

/** After update: `assigned` when the assignee changed, `mentioned` for users newly mentioned (not in `oldText`). */
export function todosForUpdatedIssuable(
  ctx: AppContext, tx: Tx, actor: UserRow, issuable: IssuableInfo, change: { oldAssigneeId: number | null; oldText: string | null; newText: string | null },
): void {
  throw new Error('not implemented');
}

/** After a user note: `mentioned` todos for users mentioned in it (with its note id); marks the actor's todos on the target done (8.x). */
export function todosForNote(ctx: AppContext, tx: Tx, actor: UserRow, issuable: IssuableInfo, noteId: number, text: string): void {
  throw new Error('not implemented');
}

/** When `actor` closes (or merges) the target: their pending todos on it become done (8.x). */
export function markTodosDoneOnClose(tx: Tx, actor: UserRow, target: Target): void {
  throw new Error('not implemented');
}

/** POST .../todo: a `marked` todo for the caller, or null when a pending one already exists (the route answers 304). */
export function markTodo(ctx: AppContext, tx: Tx, actor: UserRow, issuable: IssuableInfo): TodoRow | null {
  throw new Error('not implemented');
}
