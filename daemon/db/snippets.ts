/**
 * The project snippets' data module: the snippet rows and what goes with a deleted snippet (its notes and award
 * emoji). The rules (visibility, validation, the snippet lock) stay in services/projects/snippets.ts. `q`: the database or a
 * transaction.
 */
import type { Queries } from './layer/types.js';
import { toSnippet, type SnippetRow } from './rows.js';
import { rowsWithIds } from './sql.js';

type Rec = Record<string, unknown>;

/** The snippet `id` of the project, or null. */
export async function snippetOf(q: Queries, projectId: number, id: number): Promise<SnippetRow | null> {
  const row = await q.get<Rec>(`SELECT * FROM snippets WHERE id = ? AND project_id = ?`, [id, projectId]);
  return row ? toSnippet(row) : null;
}

/** The condition over `snippets` of one project, limited to `levels` when given. */
function listWhere(projectId: number, levels: readonly number[] | null): { sql: string; args: unknown[] } {
  if (!levels) return { sql: 'project_id = ?', args: [projectId] };
  return { sql: `project_id = ? AND visibility_level IN (${levels.map(() => '?').join(', ')})`, args: [projectId, ...levels] };
}

/** How many snippets the project has (at `levels`, when given). */
export async function countProjectSnippets(q: Queries, projectId: number, levels: readonly number[] | null): Promise<number> {
  const w = listWhere(projectId, levels);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM snippets WHERE ${w.sql}`, w.args))!.n);
}

/** A page of the project's snippets (at `levels`, when given), newest first. */
export async function projectSnippetsPage(q: Queries, projectId: number, levels: readonly number[] | null, limit: number, offset: number): Promise<SnippetRow[]> {
  const w = listWhere(projectId, levels);
  return (await q.all<Rec>(`SELECT * FROM snippets WHERE ${w.sql} ORDER BY id DESC LIMIT ? OFFSET ?`, [...w.args, limit, offset])).map(toSnippet);
}

/** The columns of a new snippet. */
export type NewSnippet = Pick<SnippetRow, 'projectId' | 'authorId' | 'title' | 'fileName' | 'content' | 'visibilityLevel' | 'createdAt'>;

/** Insert a snippet. */
export async function insertSnippet(q: Queries, s: NewSnippet): Promise<SnippetRow> {
  return toSnippet((await q.get<Rec>(
    `INSERT INTO snippets (project_id, author_id, title, file_name, content, visibility_level, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [s.projectId, s.authorId, s.title, s.fileName, s.content, s.visibilityLevel, s.createdAt, s.createdAt],
  ))!);
}

/** The columns an update may set (request parameter = column). */
export type SnippetColumn = 'title' | 'file_name' | 'content' | 'visibility_level';

/** Set columns of a snippet and its updated_at; the row after, or null when gone. */
export async function updateSnippetColumns(q: Queries, id: number, set: readonly [SnippetColumn, unknown][], at: string): Promise<SnippetRow | null> {
  const row = await q.get<Rec>(`UPDATE snippets SET ${set.map(([k]) => `${k} = ?`).join(', ')}, updated_at = ? WHERE id = ? RETURNING *`,
    [...set.map(([, v]) => v), at, id]);
  return row ? toSnippet(row) : null;
}

/** Delete a snippet with its notes, their award emoji and its own; whether the snippet was there. */
export async function deleteSnippetRows(tx: Queries, id: number): Promise<boolean> {
  const noteIds = (await tx.all<{ id: number }>(`SELECT id FROM notes WHERE noteable_type = 'Snippet' AND noteable_id = ?`, [id])).map((r) => r.id);
  if (noteIds.length) {
    await tx.run(`DELETE FROM award_emoji WHERE awardable_type = 'Note' AND awardable_id IN ${tx.dialect.inIds}`, [tx.dialect.ids(noteIds)]);
    await tx.run(`DELETE FROM notes WHERE id IN ${tx.dialect.inIds}`, [tx.dialect.ids(noteIds)]);
  }
  await tx.run(`DELETE FROM award_emoji WHERE awardable_type = 'Snippet' AND awardable_id = ?`, [id]);
  return (await tx.run(`DELETE FROM snippets WHERE id = ?`, [id])).changes > 0;
}

/** Snippets by id, in one query (ids that are gone are skipped). */
export async function snippetsByIds(q: Queries, ids: readonly number[]): Promise<SnippetRow[]> {
  if (!ids.length) return [];
  return (await rowsWithIds<Rec>(q, 'snippets', ids)).map(toSnippet);
}

/** Whether a snippet exists. */
export async function snippetExists(q: Queries, id: number): Promise<boolean> {
  return !!(await q.get(`SELECT 1 AS x FROM snippets WHERE id = ?`, [id]));
}
