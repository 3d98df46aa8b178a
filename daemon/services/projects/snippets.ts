/**
 * Project snippets (GitLab 8.13 ProjectSnippet, CreateSnippetService, UpdateSnippetService): find, list, create,
 * update and delete, and snippets as the noteables their notes and award emoji hang on. Every write is one statement
 * or one transaction on the data layer; deleting a snippet takes its notes and award emoji with it (8.13 `has_many
 * :notes, dependent: :destroy`), serialised with note and award writers by the snippet's lock so none outlives it.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { SnippetRow } from '../../db/rows.js';
import {
  countProjectSnippets, deleteSnippetRows, insertSnippet, projectSnippetsPage, snippetExists, snippetOf, snippetsByIds, updateSnippetColumns,
  type SnippetColumn,
} from '../../db/snippets.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { notFoundMessage, validationError } from '../../errors.js';
import { INT_MAX, LOCKS, lockAsync } from '../collaboration/tx.js';
import type { Noteable } from '../collaboration/notes.js';
import { restrictedVisibilityLevelsAsync } from '../instance/settings.js';

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
  return snippetOf(q, projectId, id);
}

/** How many snippets of the project the caller lists. */
export async function countSnippets(q: Queries, projectId: number, levels: number[] | null): Promise<number> {
  return countProjectSnippets(q, projectId, levels);
}

/** A page of the project's snippets the caller lists, newest first (8.13 `fresh`). */
export async function listSnippets(q: Queries, projectId: number, levels: number[] | null, limit: number, offset: number): Promise<SnippetRow[]> {
  return projectSnippetsPage(q, projectId, levels, limit, offset);
}

/** Create a snippet of `project` by `actor`; 400 with the validation hash when a field is not valid. */
export async function createSnippet(
  ctx: AppContext, actor: UserRow, project: ProjectRow, p: Required<SnippetParams>,
): Promise<SnippetRow> {
  await checkSnippet(ctx, actor, p);
  const t = now();
  return insertSnippet(ctx.data, {
    projectId: project.id, authorId: actor.id, title: p.title, fileName: p.file_name, content: p.content, visibilityLevel: p.visibility_level, createdAt: t,
  });
}

/**
 * Change the given fields of a snippet (8.13 UpdateSnippetService: a visibility the settings restrict is refused only
 * when it changes); 400 with the validation hash, 404 when the snippet was deleted meanwhile. Nothing given: unchanged.
 */
export async function updateSnippet(ctx: AppContext, actor: UserRow, snippet: SnippetRow, p: SnippetParams): Promise<SnippetRow> {
  const given = Object.entries(p).filter(([, v]) => v !== undefined) as [SnippetColumn, string | number][];
  const changesVisibility = p.visibility_level !== undefined && p.visibility_level !== snippet.visibilityLevel;
  // the level it already has needs no check (and is valid)
  await checkSnippet(ctx, actor, changesVisibility ? p : { ...p, visibility_level: undefined });
  if (!given.length) {
    const row = await findProjectSnippet(ctx.data, snippet.projectId, snippet.id);
    if (!row) throw notFoundMessage('404 Not found');
    return row;
  }
  const row = await updateSnippetColumns(ctx.data, snippet.id, given, now());
  if (!row) throw notFoundMessage('404 Not found');
  return row;
}

/**
 * Delete a snippet with its notes, their award emoji and its own (8.13 `dependent: :destroy`), in one transaction
 * under the snippet's lock (note and award writers take it too); 404 when it was deleted meanwhile.
 */
export async function deleteSnippet(ctx: AppContext, snippet: SnippetRow): Promise<SnippetRow> {
  const deleted = await ctx.data.transaction(async (tx) => {
    await lockAsync(tx, LOCKS.snippet, snippet.id);
    return deleteSnippetRows(tx, snippet.id);
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
  return new Map((await snippetsByIds(q, unique)).map((r) => [r.id, snippetNoteable(r)]));
}

/** Whether the snippet is still there, inside a writing transaction, under its lock (notes and awards on it). */
export async function snippetLive(tx: Queries, id: number): Promise<boolean> {
  await lockAsync(tx, LOCKS.snippet, id);
  return snippetExists(tx, id);
}
