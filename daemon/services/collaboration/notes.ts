/**
 * Notes (comments) on issues, merge requests and snippets, and the system notes written by other services.
 * OWNER: notes/award-emoji engineer. The exported signatures below are a contract used by issues and merge requests.
 */
import type { AppContext } from '../../context.js';
import type { NoteRow, NoteableType } from '../../db/schema-collaboration.js';
import type { Tx } from './tx.js';

/** Where a system note goes and who caused it. */
export interface SystemNoteInput {
  projectId: number;
  noteableType: NoteableType;
  noteableId: number;
  authorId: number;
  body: string;
}

/** Write a system note (system = true) in the caller's transaction; no todos, no note hook, no event (as 8.x). */
export function createSystemNote(tx: Tx, input: SystemNoteInput): NoteRow {
  throw new Error('not implemented');
}

/** Number of user (non-system) notes per noteable, for `user_notes_count`: one query for a page. */
export function userNotesCounts(ctx: AppContext, type: NoteableType, ids: number[]): Map<number, number> {
  throw new Error('not implemented');
}
