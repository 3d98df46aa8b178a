/**
 * Project snippets (GitLab 8.13 ProjectSnippet, CreateSnippetService, UpdateSnippetService): find, list, create,
 * update and delete, and snippets as the noteables their notes and award emoji hang on. Every write is one statement
 * or one transaction on the data layer; deleting a snippet takes its notes and award emoji with it (8.13 `has_many
 * :notes, dependent: :destroy`), serialised with note and award writers by the snippet's lock so none outlives it.
 */
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import type { Queries } from '../db/layer/types.js';
import { toSnippet, type SnippetRow } from '../db/rows.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { notFoundMessage, validationError } from '../errors.js';
import { INT_MAX, LOCKS, lockAsync } from './collaboration/tx.js';
import type { Noteable } from './collaboration/notes.js';
import { restrictedVisibilityLevelsAsync } from './settings.js';

/** The fields of a snippet a caller sets (`content` is the API's `code`). */
export interface SnippetParams {
  title?: string;
  file_name?: string;
  content?: string;
  visibility_level?: number;
}

const VISIBILITY_NAMES: Record<number, string> = { 0: 'private', 10: 'internal', 20: 'public' };
/** 8.13 Gitlab::Regex.file_name_regex and its message. */
const FILE_NAME = /^[a-zA-Z0-9_\-.@]*$/;
const FILE_NAME_MESSAGE = "can contain only letters, digits, '_', '-', '@' and '.'.";

/**
 * The model's validations (8.13 Snippet) of the fields given: the validation hash, empty when fine. A blank title or
 * code is refused (`can't be blank`), so an update never erases them; `restricted`: the levels the settings restrict.
 */
function snippetErrors(actor: UserRow, p: SnippetParams, restricted: readonly number[]): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const err = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (p.visibility_level !== undefined) {
    if (!(p.visibility_level in VISIBILITY_NAMES)) err('visibility_level', 'is not included in the list');
    else if (!actor.isAdmin && restricted.includes(p.visibility_level)) {
      // 8.13 deny_visibility_level: the only error reported, nothing saved
      return { visibility_level: [`${VISIBILITY_NAMES[p.visibility_level]} has been restricted by your GitLab administrator`] };
    }
  }
  if (p.title !== undefined) {
    if (p.title.trim() === '') err('title', "can't be blank");
    else if (p.title.length > 255) err('title', 'is too long (maximum is 255 characters)');
  }
  if (p.file_name !== undefined) {
    if (p.file_name.trim() === '') err('file_name', "can't be blank");
    else if (p.file_name.length > 255) err('file_name', 'is too long (maximum is 255 characters)');
    else if (!FILE_NAME.test(p.file_name)) err('file_name', FILE_NAME_MESSAGE);
  }
  if (p.content !== undefined && p.content.trim() === '') err('content', "can't be blank");
  return errors;
}

/** 400 with the validation hash when the fields are not valid (the restricted levels read only when they matter). */
async function checkSnippet(ctx: AppContext, actor: UserRow, p: SnippetParams): Promise<void> {
  const restricted = p.visibility_level !== undefined && !actor.isAdmin ? await restrictedVisibilityLevelsAsync(ctx) : [];
  const errors = snippetErrors(actor, p, restricted);
  if (Object.keys(errors).length) throw validationError(errors);
}

/** The snippet `id` of the project, or null (an id past PostgreSQL's integers names none). */
export async function findProjectSnippet(q: Queries, projectId: number, id: number): Promise<SnippetRow | null> {
  if (!Number.isSafeInteger(id) || id <= 0 || id > INT_MAX) return null;
  const row = await q.get<Record<string, unknown>>(`SELECT * FROM snippets WHERE id = ? AND project_id = ?`, [id, projectId]);
  return row ? toSnippet(row) : null;
}

/** The condition over `snippets` of one project, limited to `levels` when given (the caller's visible levels). */
function listWhere(projectId: number, levels: number[] | null): { sql: string; args: unknown[] } {
  if (!levels) return { sql: 'project_id = ?', args: [projectId] };
  return { sql: `project_id = ? AND visibility_level IN (${levels.map(() => '?').join(', ')})`, args: [projectId, ...levels] };
}

/** How many snippets of the project the caller lists. */
export async function countSnippets(q: Queries, projectId: number, levels: number[] | null): Promise<number> {
  const w = listWhere(projectId, levels);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM snippets WHERE ${w.sql}`, w.args))!.n);
}

/** A page of the project's snippets the caller lists, newest first (8.13 `fresh`). */
export async function listSnippets(q: Queries, projectId: number, levels: number[] | null, limit: number, offset: number): Promise<SnippetRow[]> {
  const w = listWhere(projectId, levels);
  return (await q.all<Record<string, unknown>>(`SELECT * FROM snippets WHERE ${w.sql} ORDER BY id DESC LIMIT ? OFFSET ?`, [...w.args, limit, offset]))
    .map(toSnippet);
}

/** Create a snippet of `project` by `actor`; 400 with the validation hash when a field is not valid. */
export async function createSnippet(
  ctx: AppContext, actor: UserRow, project: ProjectRow, p: Required<SnippetParams>,
): Promise<SnippetRow> {
  await checkSnippet(ctx, actor, p);
  const t = now();
  return toSnippet((await ctx.data.get<Record<string, unknown>>(
    `INSERT INTO snippets (project_id, author_id, title, file_name, content, visibility_level, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [project.id, actor.id, p.title, p.file_name, p.content, p.visibility_level, t, t],
  ))!);
}

/**
 * Change the given fields of a snippet (8.13 UpdateSnippetService: a visibility the settings restrict is refused only
 * when it changes); 400 with the validation hash, 404 when the snippet was deleted meanwhile. Nothing given: unchanged.
 */
export async function updateSnippet(ctx: AppContext, actor: UserRow, snippet: SnippetRow, p: SnippetParams): Promise<SnippetRow> {
  const given = Object.entries(p).filter(([, v]) => v !== undefined) as [keyof SnippetParams, string | number][];
  const changesVisibility = p.visibility_level !== undefined && p.visibility_level !== snippet.visibilityLevel;
  // the level it already has needs no check (and is valid)
  await checkSnippet(ctx, actor, changesVisibility ? p : { ...p, visibility_level: undefined });
  if (!given.length) {
    const row = await findProjectSnippet(ctx.data, snippet.projectId, snippet.id);
    if (!row) throw notFoundMessage('404 Not found');
    return row;
  }
  const sets = given.map(([k]) => `${k} = ?`).join(', ');
  const row = await ctx.data.get<Record<string, unknown>>(`UPDATE snippets SET ${sets}, updated_at = ? WHERE id = ? RETURNING *`,
    [...given.map(([, v]) => v), now(), snippet.id]);
  if (!row) throw notFoundMessage('404 Not found');
  return toSnippet(row);
}

/**
 * Delete a snippet with its notes, their award emoji and its own (8.13 `dependent: :destroy`), in one transaction
 * under the snippet's lock (note and award writers take it too); 404 when it was deleted meanwhile.
 */
export async function deleteSnippet(ctx: AppContext, snippet: SnippetRow): Promise<SnippetRow> {
  const deleted = await ctx.data.transaction(async (tx) => {
    await lockAsync(tx, LOCKS.snippet, snippet.id);
    const noteIds = (await tx.all<{ id: number }>(`SELECT id FROM notes WHERE noteable_type = 'Snippet' AND noteable_id = ?`, [snippet.id])).map((r) => r.id);
    if (noteIds.length) {
      await tx.run(`DELETE FROM award_emoji WHERE awardable_type = 'Note' AND awardable_id IN ${tx.dialect.inIds}`, [tx.dialect.ids(noteIds)]);
      await tx.run(`DELETE FROM notes WHERE id IN ${tx.dialect.inIds}`, [tx.dialect.ids(noteIds)]);
    }
    await tx.run(`DELETE FROM award_emoji WHERE awardable_type = 'Snippet' AND awardable_id = ?`, [snippet.id]);
    return (await tx.run(`DELETE FROM snippets WHERE id = ?`, [snippet.id])).changes > 0;
  });
  if (!deleted) throw notFoundMessage('404 Not found');
  return snippet;
}

/** A snippet as a Noteable (notes, award emoji, comment events): no iid, never confidential, its visibility kept. */
export function snippetNoteable(row: SnippetRow): Noteable {
  return {
    type: 'Snippet', id: row.id, projectId: row.projectId, iid: null, title: row.title, authorId: row.authorId, assigneeId: null,
    confidential: false, visibilityLevel: row.visibilityLevel, row,
  };
}

/** Snippets by global id as Noteables, in one query (the comment events of a page). */
export async function snippetNoteablesByIds(q: Queries, ids: number[]): Promise<Map<number, Noteable>> {
  const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id) && id > 0 && id <= INT_MAX);
  if (!unique.length) return new Map();
  const rows = await q.all<Record<string, unknown>>(`SELECT * FROM snippets WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(unique)]);
  return new Map(rows.map(toSnippet).map((r) => [r.id, snippetNoteable(r)]));
}

/** Whether the snippet is still there, inside a writing transaction, under its lock (notes and awards on it). */
export async function snippetLive(tx: Queries, id: number): Promise<boolean> {
  await lockAsync(tx, LOCKS.snippet, id);
  return !!(await tx.get(`SELECT 1 AS x FROM snippets WHERE id = ?`, [id]));
}
