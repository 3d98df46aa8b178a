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
import { recordEvent } from '../instance/events.js';
import { queueHookDeliveries } from '../hooks/deliveries.js';
import { awardOnCreate, awardableBodyName, deleteAwardsOf } from './award-emoji.js';
import { mentionedUsernames } from './mentions.js';
import { todosForNote } from './todos.js';
import { INT_MAX, LOCKS, lockAsync } from './tx.js';
import { getSettings } from '../instance/settings.js';
import { snippetLive } from '../projects/snippets.js';
import type { Queries } from '../../db/layer/types.js';
import {
  deleteNoteRow, insertNote, noteableRowLive, noteBody, noteOf, notesByIds as notesOfIds, touchNoteable, updateNoteBody,
} from '../../db/notes.js';
import { liveIssuesByIds } from '../../db/issues.js';

export { countNotes, listNotes, userNotesCounts } from '../../db/notes.js';

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
  return insertNote(tx, { ...input, system: true, at: now() });
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
  return new Map([...(await liveIssuesByIds(q, unique)).values()].map((r) => [r.id, issueNoteable(r)]));
}

/** One note of a noteable, or null. */
export async function findNote(q: Queries, noteable: Pick<Noteable, 'type' | 'id'>, noteId: number): Promise<NoteRow | null> {
  if (!Number.isSafeInteger(noteId) || Math.abs(noteId) > INT_MAX) return null;
  return noteOf(q, noteable, noteId);
}

/** Notes by id (any noteable), for presenters of other resources (comment events). */
export async function notesByIds(q: Queries, ids: number[]): Promise<NoteRow[]> {
  const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id) && Math.abs(id) <= INT_MAX);
  return notesOfIds(q, unique);
}

/** 400 with the validation hash when a note body is too long (nothing is written). */
function checkLength(body: string): void {
  if (body.length > MAX_NOTE_LENGTH) throw validationError({ note: [`is too long (maximum is ${MAX_NOTE_LENGTH} characters)`] });
}

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
  return noteableRowLive(tx, noteable);
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
    const note = await insertNote(tx, {
      projectId: project.id, noteableType: noteable.type, noteableId: noteable.id, body: params.body, authorId: actor.id, system: false, at: createdAt,
    });
    await recordEvent(tx, {
      projectId: project.id, authorId: actor.id, action: 'commented', targetId: note.id, targetType: 'Note', targetTitle: noteable.title, noteId: note.id,
    });
    if (noteable.type !== 'Snippet') {
      await todosForNote(ctx, tx, actor, {
        project, target: { type: noteable.type, id: noteable.id }, authorId: noteable.authorId, assigneeId: noteable.assigneeId,
        confidential: noteable.confidential,
      }, note.id, params.body);
    }
    await touchNoteable(tx, noteable, t);
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
    const before = await noteBody(tx, note.id);
    if (before === undefined) return null;
    const row = (await updateNoteBody(tx, note.id, body, actor.id, now()))!;
    const had = new Set(mentionedUsernames(before));
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
    return deleteNoteRow(tx, note.id);
  });
  if (!deleted) throw notFoundMessage('404 Not found');
  return note;
}
