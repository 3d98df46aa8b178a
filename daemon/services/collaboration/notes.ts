/**
 * Notes (comments) on issues, merge requests and snippets, and the system notes written by other services.
 * OWNER: notes/award-emoji engineer. The exported signatures below are a contract used by issues and merge requests.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { notes, type NoteRow, type NoteableType } from '../../db/schema-collaboration.js';
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
  const t = now();
  return tx.insert(notes).values({
    projectId: input.projectId, noteableType: input.noteableType, noteableId: input.noteableId, note: input.body,
    authorId: input.authorId, system: true, createdAt: t, updatedAt: t,
  }).returning().get();
}

/** Number of user (non-system) notes per noteable, for `user_notes_count`: one query for a page. */
export function userNotesCounts(ctx: AppContext, type: NoteableType, ids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  if (!ids.length) return out;
  const unique = [...new Set(ids)];
  for (const id of unique) out.set(id, 0);
  // chunked below SQLite's variable limit; notes_noteable (noteable_type, noteable_id, id) serves it
  for (let i = 0; i < unique.length; i += 500) {
    const rows = ctx.db.select({ id: notes.noteableId, n: sql<number>`count(*)` }).from(notes)
      .where(and(eq(notes.noteableType, type), inArray(notes.noteableId, unique.slice(i, i + 500)), eq(notes.system, false)))
      .groupBy(notes.noteableId).all();
    for (const r of rows) out.set(r.id, Number(r.n));
  }
  return out;
}
