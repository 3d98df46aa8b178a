/**
 * Notes (comments) on issues, merge requests and snippets, and the system notes written by other services.
 * OWNER: notes/award-emoji engineer. The exported signatures below are a contract used by issues and merge requests.
 *
 * A user note is written in one transaction with what it sets off (8.x Notes::CreateService and its after-steps):
 * the `commented` project event, `mentioned` todos, the note webhook, and the noteable's updated_at (8.x notes
 * `touch` their noteable). System notes set off nothing.
 */
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { issues, notes, type AwardEmojiRow, type IssueRow, type NoteRow, type NoteableType } from '../../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { validationError } from '../../errors.js';
import { noteHookPayload } from '../../hooks/notes.js';
import { recordEvent } from '../events.js';
import { queueHookDeliveries } from '../hook-deliveries.js';
import { awardOnCreate, awardableBodyName, deleteAwardsOf } from './award-emoji.js';
import { mentionedUsernames } from './mentions.js';
import { todosForNote } from './todos.js';
import type { Tx } from './tx.js';
import { statement } from '../../db/statements.js';
import { IN_IDS, idList } from '../../db/sql.js';
import type { Queries } from '../../db/layer/types.js';
import { toNote } from '../../db/rows.js';
import { idOrderedPage } from '../../db/keyset.js';

/** Where a system note goes and who caused it. */
export interface SystemNoteInput {
  projectId: number;
  noteableType: NoteableType;
  noteableId: number;
  authorId: number;
  body: string;
}

/** The longest note body (characters); a longer one is refused with 400 and nothing is stored. */
export const MAX_NOTE_LENGTH = 1_000_000;

/** Write a system note (system = true) in the caller's transaction; no todos, no note hook, no event (as 8.x). */
export function createSystemNote(tx: Tx, input: SystemNoteInput): NoteRow {
  const t = now();
  return tx.insert(notes).values({
    projectId: input.projectId, noteableType: input.noteableType, noteableId: input.noteableId, note: input.body,
    authorId: input.authorId, system: true, createdAt: t, updatedAt: t,
  }).returning().get();
}

/** The async twin of createSystemNote, in the caller's transaction. */
export async function createSystemNoteAsync(tx: Queries, input: SystemNoteInput): Promise<NoteRow> {
  const t = now();
  return toNote((await tx.get<Record<string, unknown>>(
    `INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, created_at, updated_at) VALUES (?, ?, ?, ?, ?, TRUE, ?, ?) RETURNING *`,
    [input.projectId, input.noteableType, input.noteableId, input.body, input.authorId, t, t],
  ))!);
}

/** Number of user (non-system) notes per noteable, for `user_notes_count`: one query for a page. */
export function userNotesCounts(ctx: AppContext, type: NoteableType, ids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  if (!ids.length) return out;
  const unique = [...new Set(ids)];
  for (const id of unique) out.set(id, 0);
  // one cached statement whatever the number of ids (a hot path of every issue list); notes_noteable serves it
  const rows = statement(ctx, `SELECT noteable_id AS id, COUNT(*) AS n FROM notes
    WHERE noteable_type = ? AND noteable_id IN ${IN_IDS} AND system = 0 GROUP BY noteable_id`).all(type, idList(unique)) as { id: number; n: number }[];
  for (const r of rows) out.set(r.id, Number(r.n));
  return out;
}

/** The async twin of userNotesCounts (one statement for a page). */
export async function userNotesCountsAsync(q: Queries, type: NoteableType, ids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!ids.length) return out;
  const unique = [...new Set(ids)];
  for (const id of unique) out.set(id, 0);
  const rows = await q.all<{ id: number; n: number }>(`SELECT noteable_id AS id, COUNT(*) AS n FROM notes
    WHERE noteable_type = ? AND noteable_id IN ${q.dialect.inIds} AND system = FALSE GROUP BY noteable_id`, [type, q.dialect.ids(unique)]);
  for (const r of rows) out.set(r.id, Number(r.n));
  return out;
}

/** What the note code needs to know about the issue, merge request or snippet a note is on. */
export interface Noteable {
  type: NoteableType;
  id: number;
  projectId: number;
  /** Issue and merge request number in the project (null for snippets). */
  iid: number | null;
  title: string;
  authorId: number | null;
  assigneeId: number | null;
  confidential: boolean;
  /** The noteable's own row (IssueRow for issues), for the hook payload. */
  row: unknown;
}

/** An issue row as a Noteable. */
export function issueNoteable(row: IssueRow): Noteable {
  return {
    type: 'Issue', id: row.id, projectId: row.projectId, iid: row.iid, title: row.title, authorId: row.authorId, assigneeId: row.assigneeId,
    confidential: row.confidential, row,
  };
}

/** Live (not deleted) issues by global id as Noteables, in one query (comment events of a page). */
export function issueNoteablesByIds(ctx: AppContext, ids: number[]): Map<number, Noteable> {
  const unique = [...new Set(ids)];
  if (!unique.length) return new Map();
  return new Map(ctx.db.select().from(issues).where(and(inArray(issues.id, unique), isNull(issues.deletedAt))).all().map((r) => [r.id, issueNoteable(r)]));
}

/** Notes of a noteable in database order (system notes included). */
export function listNotes(ctx: AppContext, noteable: Pick<Noteable, 'type' | 'id'>, limit: number, offset: number, total?: number): NoteRow[] {
  return idOrderedPage(ctx, 'notes', and(eq(notes.noteableType, noteable.type), eq(notes.noteableId, noteable.id)), false, limit, offset, total,
    (ids) => ctx.db.select().from(notes).where(inArray(notes.id, ids)).all());
}

/** How many notes a noteable has (system notes included). */
export function countNotes(ctx: AppContext, noteable: Pick<Noteable, 'type' | 'id'>): number {
  return ctx.db.select({ n: sql<number>`count(*)` }).from(notes)
    .where(and(eq(notes.noteableType, noteable.type), eq(notes.noteableId, noteable.id))).get()!.n;
}

/** One note of a noteable, or null. */
export function findNote(ctx: AppContext, noteable: Pick<Noteable, 'type' | 'id'>, noteId: number): NoteRow | null {
  return ctx.db.select().from(notes)
    .where(and(eq(notes.id, noteId), eq(notes.noteableType, noteable.type), eq(notes.noteableId, noteable.id))).get() ?? null;
}

/** Notes by id (any noteable), for presenters of other resources (comment events). */
export function notesByIds(ctx: AppContext, ids: number[]): NoteRow[] {
  const unique = [...new Set(ids)];
  return unique.length ? ctx.db.select().from(notes).where(inArray(notes.id, unique)).all() : [];
}

/** 400 with the validation hash when a note body is too long (nothing is written). */
function checkLength(body: string): void {
  if (body.length > MAX_NOTE_LENGTH) throw validationError({ note: [`is too long (maximum is ${MAX_NOTE_LENGTH} characters)`] });
}

/** The noteable's table, for touching its updated_at (snippets have none yet). */
const NOTEABLE_TABLE: Partial<Record<NoteableType, string>> = { Issue: 'issues', MergeRequest: 'merge_requests' };

/** Parameters of a new note. */
export interface CreateNoteParams {
  body: string;
  /** Only honoured when the route allowed it (admins and project owners). */
  createdAt?: string | null;
}

/** What POST .../notes made: a note, or (8.x) an award emoji when the body was only `:name:`. */
export type CreatedNote = { kind: 'note'; note: NoteRow } | { kind: 'award'; award: AwardEmojiRow };

/**
 * Create a user note by `actor` on `noteable` of `project`, with its event, todos, note hook and the noteable's
 * updated_at in one transaction. A body that is only an emoji the actor may award (`:+1:`) creates that award
 * instead (8.x). Throws 400 for a body over MAX_NOTE_LENGTH.
 */
export function createNote(ctx: AppContext, actor: UserRow, project: ProjectRow, noteable: Noteable, params: CreateNoteParams): CreatedNote {
  checkLength(params.body);
  const emoji = awardableBodyName(params.body);
  if (emoji !== null) {
    const award = awardOnCreate(ctx, actor, { type: noteable.type, id: noteable.id, authorId: noteable.authorId }, emoji);
    if (award) return { kind: 'award', award };
  }
  return ctx.db.transaction((tx) => {
    const t = now();
    const createdAt = params.createdAt ?? t;
    const note = tx.insert(notes).values({
      projectId: project.id, noteableType: noteable.type, noteableId: noteable.id, note: params.body, authorId: actor.id, system: false,
      createdAt, updatedAt: createdAt,
    }).returning().get();
    recordEvent(tx, {
      projectId: project.id, authorId: actor.id, action: 'commented', targetId: note.id, targetType: 'Note', targetTitle: noteable.title, noteId: note.id,
    });
    if (noteable.type !== 'Snippet') {
      todosForNote(ctx, tx, actor, {
        project, target: { type: noteable.type, id: noteable.id }, authorId: noteable.authorId, assigneeId: noteable.assigneeId,
        confidential: noteable.confidential,
      }, note.id, params.body);
    }
    const table = NOTEABLE_TABLE[noteable.type];
    if (table) ctx.db.$client.prepare(`UPDATE ${table} SET updated_at = ? WHERE id = ?`).run(t, noteable.id);
    queueHookDeliveries(tx, project.id, 'note', noteHookPayload(ctx, project, actor, note, noteable));
    return { kind: 'note' as const, note };
  });
}

/**
 * Change a user note's body (8.x Notes::UpdateService): updated_by and updated_at, and `mentioned` todos only for
 * users the new text mentions and the old one did not. Throws 400 for a system note or a body over MAX_NOTE_LENGTH.
 */
export function updateNote(ctx: AppContext, actor: UserRow, project: ProjectRow, noteable: Noteable, note: NoteRow, body: string): NoteRow {
  if (note.system) throw validationError({ note: ['system notes cannot be edited'] });
  checkLength(body);
  return ctx.db.transaction((tx) => {
    const updated = tx.update(notes).set({ note: body, updatedById: actor.id, updatedAt: now() }).where(eq(notes.id, note.id)).returning().get();
    const before = new Set(mentionedUsernames(note.note));
    const added = mentionedUsernames(body).filter((u) => !before.has(u));
    if (added.length && noteable.type !== 'Snippet') {
      todosForNote(ctx, tx, actor, {
        project, target: { type: noteable.type, id: noteable.id }, authorId: noteable.authorId, assigneeId: noteable.assigneeId,
        confidential: noteable.confidential,
      }, note.id, added.map((u) => `@${u}`).join(' '));
    }
    return updated;
  });
}

/** Delete a note and its award emoji (8.x `dependent: :destroy`); todos keep their target and lose the note id. */
export function deleteNote(ctx: AppContext, note: NoteRow): NoteRow {
  ctx.db.transaction((tx) => {
    deleteAwardsOf(tx, 'Note', [note.id]);
    tx.delete(notes).where(eq(notes.id, note.id)).run();
  });
  return note;
}
