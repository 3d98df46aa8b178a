/** Notes' data module: notes of issues, merge requests and snippets, their counts and pages. `q`: the database or a transaction. */
import type { AppContext } from '../context.js';
import type { Queries } from './layer/types.js';
import { inIdOrder, keysetPage } from './keyset.js';
import { toCommitNote, toNote } from './rows.js';
import type { CommitNoteRow } from './schema-notes.js';
import type { NoteRow, NoteableType } from './schema-collaboration.js';
import { rowsWithIds } from './sql.js';

/** The text of the notes of `ids` (repeats skipped; notes that are gone are absent). */
export async function noteTextsByIds(q: Queries, ids: readonly (number | null)[]): Promise<Map<number, string>> {
  const wanted = [...new Set(ids.filter((i): i is number => i !== null))];
  if (!wanted.length) return new Map();
  return new Map((await rowsWithIds<{ id: number; note: string }>(q, 'notes', wanted)).map((n) => [n.id, n.note]));
}

/** The fields of a new note. */
export interface NewNote {
  projectId: number | null;
  noteableType: NoteableType;
  noteableId: number;
  body: string;
  authorId: number;
  system: boolean;
  at: string;
}

/** Insert a note; the new row. */
export async function insertNote(tx: Queries, n: NewNote): Promise<NoteRow> {
  return toNote((await tx.get<Record<string, unknown>>(
    `INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [n.projectId, n.noteableType, n.noteableId, n.body, n.authorId, n.system, n.at, n.at],
  ))!);
}

/** Number of user (non-system) notes per noteable, for `user_notes_count`: one query for a page. */
export async function userNotesCounts(q: Queries, type: NoteableType, ids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!ids.length) return out;
  const unique = [...new Set(ids)];
  for (const id of unique) out.set(id, 0);
  const rows = await q.all<{ id: number; n: number }>(`SELECT n.noteable_id AS id, COUNT(*) AS n FROM ${q.dialect.idList('j')} CROSS JOIN notes n
    WHERE n.noteable_type = ? AND n.noteable_id = j.value AND n.system = FALSE GROUP BY n.noteable_id`, [q.dialect.ids(unique), type]);
  for (const r of rows) out.set(r.id, Number(r.n));
  return out;
}

/** What names a noteable: its type and id. */
export interface NoteableRef {
  type: NoteableType;
  id: number;
}

/** One page of the notes of a noteable, oldest first (`q`: ctx.data or the list's snapshot). */
export async function listNotes(
  ctx: AppContext, q: Queries, noteable: NoteableRef, limit: number, offset: number, total?: number,
): Promise<NoteRow[]> {
  const ids = (await keysetPage<{ id: number }>(ctx, q, {
    from: 'notes n', where: 'n.noteable_type = ? AND n.noteable_id = ?', values: [noteable.type, noteable.id], key: 'n.id', id: 'n.id', desc: false,
    select: 'n.id AS id',
  }, limit, offset, total)).map((r) => r.id);
  if (ids.length === 0) return [];
  return inIdOrder(ids, (await rowsWithIds(q, 'notes', ids)).map(toNote));
}

/** Number of notes of a noteable. */
export async function countNotes(q: Queries, noteable: NoteableRef): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM notes WHERE noteable_type = ? AND noteable_id = ?`, [noteable.type, noteable.id]))!.n);
}

/** One note of a noteable (a valid row id), or null. */
export async function noteOf(q: Queries, noteable: NoteableRef, noteId: number): Promise<NoteRow | null> {
  const row = await q.get<Record<string, unknown>>(`SELECT * FROM notes WHERE id = ? AND noteable_type = ? AND noteable_id = ?`, [noteId, noteable.type, noteable.id]);
  return row ? toNote(row) : null;
}

/** Notes of `ids` (valid row ids; any noteable). */
export async function notesByIds(q: Queries, ids: readonly number[]): Promise<NoteRow[]> {
  const unique = [...new Set(ids)];
  if (!unique.length) return [];
  return (await rowsWithIds(q, 'notes', unique)).map(toNote);
}

/** The table of the noteables that have updated_at and deleted_at here (snippets are the snippets module's). */
const NOTEABLE_TABLE: Partial<Record<NoteableType, string>> = { Issue: 'issues', MergeRequest: 'merge_requests' };

/** Whether an issue or merge request is there and not deleted (other noteables: true). */
export async function noteableRowLive(q: Queries, noteable: NoteableRef): Promise<boolean> {
  const table = NOTEABLE_TABLE[noteable.type];
  return !table || !!(await q.get(`SELECT 1 AS x FROM ${table} WHERE id = ? AND deleted_at IS NULL`, [noteable.id]));
}

/** Set the noteable's updated_at (8.13 notes touch issues, merge requests and snippets). */
export async function touchNoteable(tx: Queries, noteable: NoteableRef, at: string): Promise<void> {
  const table = noteable.type === 'Snippet' ? 'snippets' : NOTEABLE_TABLE[noteable.type];
  if (table) await tx.run(`UPDATE ${table} SET updated_at = ? WHERE id = ?`, [at, noteable.id]);
}

/** The body of a note, or undefined when it is gone. */
export async function noteBody(q: Queries, id: number): Promise<string | undefined> {
  return (await q.get<{ note: string }>(`SELECT note FROM notes WHERE id = ?`, [id]))?.note;
}

/** Change a note's body; the row afterwards, or null when it is gone. */
export async function updateNoteBody(tx: Queries, id: number, body: string, userId: number, at: string): Promise<NoteRow | null> {
  const row = await tx.get<Record<string, unknown>>(`UPDATE notes SET note = ?, updated_by_id = ?, updated_at = ? WHERE id = ? RETURNING *`, [body, userId, at, id]);
  return row ? toNote(row) : null;
}

/** Delete a note; false when it was gone already. */
export async function deleteNoteRow(tx: Queries, id: number): Promise<boolean> {
  return (await tx.run(`DELETE FROM notes WHERE id = ?`, [id])).changes > 0;
}

/** Copy the notes of an issue onto another issue (in `projectId`), in their order; the map of old note id to new. */
export async function copyIssueNotes(tx: Queries, fromIssueId: number, projectId: number, toIssueId: number): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  const old = await tx.all<Record<string, unknown>>(`SELECT * FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ? ORDER BY id`, [fromIssueId]);
  for (const n of old) {
    const r = await tx.get<{ id: number }>(
      `INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, attachment, updated_by_id, created_at, updated_at)
       VALUES (?, 'Issue', ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      [projectId, toIssueId, n.note, n.author_id, !!n.system, n.attachment, n.updated_by_id, n.created_at, n.updated_at],
    );
    out.set(n.id as number, r!.id);
  }
  return out;
}

/** Number of comments on a commit of a project. */
export async function countCommitNotes(q: Queries, projectId: number, sha: string): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM commit_notes WHERE project_id = ? AND commit_sha = ?', [projectId, sha]))?.n ?? 0);
}

/** One page of the comments on a commit of a project, oldest first. */
export async function listCommitNotes(q: Queries, projectId: number, sha: string, limit: number, offset: number): Promise<CommitNoteRow[]> {
  return (await q.all('SELECT * FROM commit_notes WHERE project_id = ? AND commit_sha = ? ORDER BY id LIMIT ? OFFSET ?', [projectId, sha, limit, offset]))
    .map(toCommitNote);
}

/** The fields of a new commit comment (path, line and line type only for a placed line comment). */
export interface NewCommitNote {
  projectId: number;
  sha: string;
  body: string;
  path: string | null;
  line: number | null;
  lineType: string | null;
  authorId: number;
  at: string;
}

/** Insert a comment on a commit; the new row (a foreign-key violation when the project or user is gone). */
export async function insertCommitNote(tx: Queries, n: NewCommitNote): Promise<CommitNoteRow> {
  return toCommitNote((await tx.get(
    `INSERT INTO commit_notes (project_id, commit_sha, note, path, line, line_type, author_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [n.projectId, n.sha, n.body, n.path, n.line, n.lineType, n.authorId, n.at, n.at],
  ))!);
}
