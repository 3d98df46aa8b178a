/**
 * Notes (comments) on issues, merge requests and snippets, and the system notes written by other services.
 * OWNER: notes/award-emoji engineer. The exported signatures below are a contract used by issues and merge requests.
 *
 * A user note is written in one transaction with what it sets off (8.x Notes::CreateService and its after-steps):
 * the `commented` project event, `mentioned` todos, the note webhook, and the noteable's updated_at (8.x notes
 * `touch` their noteable). System notes set off nothing.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { AwardEmojiRow, IssueRow, NoteRow, NoteableType } from '../../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { badRequest, notFoundMessage, validationError } from '../../errors.js';
import { noteHookPayload } from '../../hooks/notes.js';
import { recordEvent } from '../events.js';
import { queueHookDeliveries } from '../hook-deliveries.js';
import { awardOnCreate, awardableBodyName, deleteAwardsOf } from './award-emoji.js';
import { mentionedUsernames } from './mentions.js';
import { todosForNote } from './todos.js';
import { INT_MAX, LOCKS, lockAsync } from './tx.js';
import { getSettings } from '../settings.js';
import { snippetLive } from '../snippets.js';
import type { Queries } from '../../db/layer/types.js';
import { toNote, toIssue } from '../../db/rows.js';
import { inIdOrder, keysetPage } from '../../db/keyset.js';

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
export async function createSystemNote(tx: Queries, input: SystemNoteInput): Promise<NoteRow> {
  const t = now();
  return toNote((await tx.get<Record<string, unknown>>(
    `INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, created_at, updated_at) VALUES (?, ?, ?, ?, ?, TRUE, ?, ?) RETURNING *`,
    [input.projectId, input.noteableType, input.noteableId, input.body, input.authorId, t, t],
  ))!);
}

/** Number of user (non-system) notes per noteable, for `user_notes_count`: one query for a page. */
export async function userNotesCounts(q: Queries, type: NoteableType, ids: number[]): Promise<Map<number, number>> {
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
  /** A snippet's visibility level (who reads it depends on it); absent for issues and merge requests. */
  visibilityLevel?: number;
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
export async function issueNoteablesByIds(q: Queries, ids: number[]): Promise<Map<number, Noteable>> {
  const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id) && Math.abs(id) <= INT_MAX);
  if (!unique.length) return new Map();
  const rows = await q.all<Record<string, unknown>>(`SELECT * FROM issues WHERE id IN ${q.dialect.inIds} AND deleted_at IS NULL`, [q.dialect.ids(unique)]);
  return new Map(rows.map(toIssue).map((r) => [r.id, issueNoteable(r)]));
}

/** One page of the notes of a noteable, oldest first (`q`: ctx.data or the list's snapshot). */
export async function listNotes(
  ctx: AppContext, q: Queries, noteable: Pick<Noteable, 'type' | 'id'>, limit: number, offset: number, total?: number,
): Promise<NoteRow[]> {
  const ids = (await keysetPage<{ id: number }>(ctx, q, {
    from: 'notes n', where: 'n.noteable_type = ? AND n.noteable_id = ?', values: [noteable.type, noteable.id], key: 'n.id', id: 'n.id', desc: false,
    select: 'n.id AS id',
  }, limit, offset, total)).map((r) => r.id);
  if (ids.length === 0) return [];
  return inIdOrder(ids, (await q.all<Record<string, unknown>>(`SELECT * FROM notes WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(ids)])).map(toNote));
}

/** Number of notes of a noteable. */
export async function countNotes(q: Queries, noteable: Pick<Noteable, 'type' | 'id'>): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM notes WHERE noteable_type = ? AND noteable_id = ?`, [noteable.type, noteable.id]))!.n);
}

/** One note of a noteable, or null. */
export async function findNote(q: Queries, noteable: Pick<Noteable, 'type' | 'id'>, noteId: number): Promise<NoteRow | null> {
  if (!Number.isSafeInteger(noteId) || Math.abs(noteId) > INT_MAX) return null;
  const row = await q.get<Record<string, unknown>>(`SELECT * FROM notes WHERE id = ? AND noteable_type = ? AND noteable_id = ?`, [noteId, noteable.type, noteable.id]);
  return row ? toNote(row) : null;
}

/** Notes by id (any noteable), for presenters of other resources (comment events). */
export async function notesByIds(q: Queries, ids: number[]): Promise<NoteRow[]> {
  const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id) && Math.abs(id) <= INT_MAX);
  if (!unique.length) return [];
  return (await q.all<Record<string, unknown>>(`SELECT * FROM notes WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(unique)])).map(toNote);
}

/** 400 with the validation hash when a note body is too long (nothing is written). */
function checkLength(body: string): void {
  if (body.length > MAX_NOTE_LENGTH) throw validationError({ note: [`is too long (maximum is ${MAX_NOTE_LENGTH} characters)`] });
}

/** The noteable's table, for touching its updated_at (8.13 notes touch snippets too). */
const NOTEABLE_TABLE: Partial<Record<NoteableType, string>> = { Issue: 'issues', MergeRequest: 'merge_requests', Snippet: 'snippets' };

/** Parameters of a new note. */
export interface CreateNoteParams {
  body: string;
  /** Only honoured when the route allowed it (admins and project owners). */
  createdAt?: string | null;
}

/** What POST .../notes made: a note, or (8.x) an award emoji when the body was only `:name:`. */
export type CreatedNote = { kind: 'note'; note: NoteRow } | { kind: 'award'; award: AwardEmojiRow };

/**
 * Whether the noteable is still there, inside the writing transaction (an issue's writers serialised), so a note never
 * lands on an issue or merge request deleted meanwhile (the route answers 404). Snippets have no table here.
 */
async function noteableLive(tx: Queries, noteable: Pick<Noteable, 'type' | 'id'>): Promise<boolean> {
  if (noteable.type === 'Snippet') return snippetLive(tx, noteable.id);
  if (noteable.type === 'Issue') await lockAsync(tx, LOCKS.issue, noteable.id);
  const table = NOTEABLE_TABLE[noteable.type];
  return !table || !!(await tx.get(`SELECT 1 AS x FROM ${table} WHERE id = ? AND deleted_at IS NULL`, [noteable.id]));
}

/**
 * Create a user note by `actor` on `noteable` of `project`: the note, its event, todos, note hook and the noteable's
 * updated_at in one transaction on the data layer; 404 `404 Not found` when the noteable was deleted meanwhile. A body
 * that is only an emoji the actor may award (`:+1:`) creates that award instead (8.x). Throws 400 for a body over
 * MAX_NOTE_LENGTH and 400 `"body" not given` for a blank one.
 */
export async function createNote(ctx: AppContext, actor: UserRow, project: ProjectRow, noteable: Noteable, params: CreateNoteParams): Promise<CreatedNote> {
  if (params.body.trim() === '') throw badRequest('body');
  checkLength(params.body);
  const emoji = awardableBodyName(params.body);
  if (emoji !== null) {
    const award = await awardOnCreate(ctx, actor, { type: noteable.type, id: noteable.id, authorId: noteable.authorId }, emoji);
    if (award) return { kind: 'award', award };
  }
  const gravatar = (await getSettings(ctx)).gravatarEnabled;
  const made = await ctx.data.transaction(async (tx) => {
    if (!(await noteableLive(tx, noteable))) return null;
    const t = now();
    const createdAt = params.createdAt ?? t;
    const note = toNote((await tx.get<Record<string, unknown>>(
      `INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, created_at, updated_at) VALUES (?, ?, ?, ?, ?, FALSE, ?, ?) RETURNING *`,
      [project.id, noteable.type, noteable.id, params.body, actor.id, createdAt, createdAt],
    ))!);
    await recordEvent(tx, {
      projectId: project.id, authorId: actor.id, action: 'commented', targetId: note.id, targetType: 'Note', targetTitle: noteable.title, noteId: note.id,
    });
    if (noteable.type !== 'Snippet') {
      await todosForNote(ctx, tx, actor, {
        project, target: { type: noteable.type, id: noteable.id }, authorId: noteable.authorId, assigneeId: noteable.assigneeId,
        confidential: noteable.confidential,
      }, note.id, params.body);
    }
    const table = NOTEABLE_TABLE[noteable.type];
    if (table) await tx.run(`UPDATE ${table} SET updated_at = ? WHERE id = ?`, [t, noteable.id]);
    await queueHookDeliveries(tx, project.id, 'note', await noteHookPayload(ctx, tx, project, actor, note, noteable, gravatar));
    return { kind: 'note' as const, note };
  });
  if (!made) throw notFoundMessage('404 Not found');
  return made;
}

/**
 * Change a user note's body (8.x Notes::UpdateService): updated_by and updated_at, and `mentioned` todos only for
 * users the new text mentions and the old one did not. Throws 400 for a system note or a body over MAX_NOTE_LENGTH;
 * 404 when the note was deleted meanwhile.
 */
export async function updateNote(ctx: AppContext, actor: UserRow, project: ProjectRow, noteable: Noteable, note: NoteRow, body: string): Promise<NoteRow> {
  if (note.system) throw validationError({ note: ['system notes cannot be edited'] });
  checkLength(body);
  const updated = await ctx.data.transaction(async (tx) => {
    await lockAsync(tx, LOCKS.note, note.id);
    const before = await tx.get<{ note: string }>(`SELECT note FROM notes WHERE id = ?`, [note.id]);
    if (!before) return null;
    const row = toNote((await tx.get<Record<string, unknown>>(`UPDATE notes SET note = ?, updated_by_id = ?, updated_at = ? WHERE id = ? RETURNING *`,
      [body, actor.id, now(), note.id]))!);
    const had = new Set(mentionedUsernames(before.note));
    const added = mentionedUsernames(body).filter((u) => !had.has(u));
    if (added.length && noteable.type !== 'Snippet') {
      await todosForNote(ctx, tx, actor, {
        project, target: { type: noteable.type, id: noteable.id }, authorId: noteable.authorId, assigneeId: noteable.assigneeId,
        confidential: noteable.confidential,
      }, note.id, added.map((u) => `@${u}`).join(' '));
    }
    return row;
  });
  if (!updated) throw notFoundMessage('404 Not found');
  return updated;
}

/** Delete a note and its award emoji (8.x `dependent: :destroy`); todos keep their target and lose the note id. 404 when already gone. */
export async function deleteNote(ctx: AppContext, note: NoteRow): Promise<NoteRow> {
  const deleted = await ctx.data.transaction(async (tx) => {
    await lockAsync(tx, LOCKS.note, note.id);
    await deleteAwardsOf(tx, 'Note', [note.id]);
    return (await tx.run(`DELETE FROM notes WHERE id = ?`, [note.id])).changes > 0;
  });
  if (!deleted) throw notFoundMessage('404 Not found');
  return note;
}
