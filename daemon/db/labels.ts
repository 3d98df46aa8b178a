/**
 * Labels' data module: project labels, their links to issues and merge requests, and the counts of the Label entity.
 * `q`: the database or a transaction. Rules (title format, 409s, 404s) stay in services/collaboration/labels.ts.
 */
import type { Queries } from './layer/types.js';
import { toLabel } from './rows.js';
import type { LabelRow } from './schema-collaboration.js';
import { placeholders, rowsWithIds } from './sql.js';

type Rec = Record<string, unknown>;
/** The LIMIT of "no limit" (both engines take a number there). */
const MAX_ROWS = 2 ** 31 - 1;

/** The labels of one issue or merge request, by title. */
export async function labelsOfTarget(q: Queries, targetType: 'Issue' | 'MergeRequest', targetId: number): Promise<LabelRow[]> {
  return (await q.all(
    `SELECT l.* FROM labels l JOIN label_links ll ON ll.label_id = l.id WHERE ll.target_type = ? AND ll.target_id = ? ORDER BY l.title`,
    [targetType, targetId],
  )).map(toLabel);
}

/** Labels of one project with one of these titles (at most 500 titles: SQLite's bound-parameter limit). */
export async function labelsWithTitles(q: Queries, projectId: number, titles: readonly string[]): Promise<LabelRow[]> {
  if (!titles.length) return [];
  return (await q.all<Rec>(`SELECT * FROM labels WHERE project_id = ? AND title IN (${placeholders(titles)})`, [projectId, ...titles])).map(toLabel);
}

/** Insert a label unless the project has one of that title; the new or the existing row (undefined if the project is gone meanwhile). */
export async function insertLabelIfAbsent(tx: Queries, projectId: number, title: string, color: string, at: string): Promise<LabelRow | undefined> {
  const row = await tx.get<Rec>(
    `INSERT INTO labels (project_id, title, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_id, title) DO NOTHING RETURNING *`,
    [projectId, title, color, at, at],
  ) ?? await tx.get<Rec>(`SELECT * FROM labels WHERE project_id = ? AND title = ?`, [projectId, title]);
  return row ? toLabel(row) : undefined;
}

/** Labels of `ids` (ids that are gone are absent). */
export async function labelsByIds(q: Queries, ids: readonly number[]): Promise<LabelRow[]> {
  if (!ids.length) return [];
  return (await rowsWithIds<Rec>(q, 'labels', ids)).map(toLabel);
}

/** Remove the links of `labelIds` from one issue or merge request. */
export async function unlinkLabels(tx: Queries, targetType: string, targetId: number, labelIds: readonly number[]): Promise<void> {
  if (!labelIds.length) return;
  await tx.run(`DELETE FROM label_links WHERE target_type = ? AND target_id = ? AND label_id IN ${tx.dialect.inIds}`,
    [targetType, targetId, tx.dialect.ids(labelIds)]);
}

/** Link a label to an issue or merge request; false when the link was there already. */
export async function linkLabel(tx: Queries, labelId: number, targetType: string, targetId: number, at: string): Promise<boolean> {
  const r = await tx.run(
    `INSERT INTO label_links (label_id, target_type, target_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (target_type, target_id, label_id) DO NOTHING`,
    [labelId, targetType, targetId, at],
  );
  return r.changes > 0;
}

/** Label titles of each target (sorted by title), for presenters: one query for a page. */
export async function labelTitlesOf(q: Queries, type: 'Issue' | 'MergeRequest', ids: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const id of ids) out.set(id, []);
  if (ids.length === 0) return out;
  const rows = await q.all<{ target_id: number; title: string }>(`SELECT ll.target_id, l.title FROM ${q.dialect.idList('j')} CROSS JOIN label_links ll
    JOIN labels l ON l.id = ll.label_id WHERE ll.target_type = ? AND ll.target_id = j.value ORDER BY l.title`, [q.dialect.ids(ids), type]);
  for (const r of rows) out.get(r.target_id)!.push(r.title);
  return out;
}

/** A project's labels, by title (GET /projects/:id/labels is not paginated in 8.x; the route pages it). */
export async function listProjectLabels(q: Queries, projectId: number, limit = -1, offset = 0): Promise<LabelRow[]> {
  return (await q.all<Rec>(`SELECT * FROM labels WHERE project_id = ? ORDER BY title, id LIMIT ? OFFSET ?`,
    [projectId, limit < 0 ? MAX_ROWS : limit, offset])).map(toLabel);
}

/** Number of labels of a project. */
export async function countProjectLabels(q: Queries, projectId: number): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM labels WHERE project_id = ?`, [projectId]))!.n);
}

/** A project label by exact title, or null. */
export async function findLabelByTitle(q: Queries, projectId: number, title: string): Promise<LabelRow | null> {
  const row = await q.get<Rec>(`SELECT * FROM labels WHERE project_id = ? AND title = ?`, [projectId, title]);
  return row ? toLabel(row) : null;
}

/** A project label by id, or null. */
export async function findProjectLabel(q: Queries, projectId: number, id: number): Promise<LabelRow | null> {
  const row = await q.get<Rec>(`SELECT * FROM labels WHERE project_id = ? AND id = ?`, [projectId, id]);
  return row ? toLabel(row) : null;
}

/** Whether the label still exists. */
export async function labelExists(q: Queries, id: number): Promise<boolean> {
  return !!(await q.get(`SELECT 1 AS x FROM labels WHERE id = ?`, [id]));
}

/** The fields of a new label. */
export interface NewLabel {
  projectId: number;
  title: string;
  color: string;
  description: string | null;
  at: string;
}

/** Insert a label; the new row (unique and foreign-key violations are the caller's to map). */
export async function insertLabel(q: Queries, l: NewLabel): Promise<LabelRow> {
  return toLabel((await q.get<Rec>(
    `INSERT INTO labels (project_id, title, color, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *`,
    [l.projectId, l.title, l.color, l.description, l.at, l.at],
  ))!);
}

/** Update a label's title, colour and description (the defined ones); the row afterwards, or null when it is gone. */
export async function updateLabelRow(
  q: Queries, id: number, set: { title?: string; color?: string; description?: string; at: string },
): Promise<LabelRow | null> {
  const sets = ['updated_at = ?'];
  const args: unknown[] = [set.at];
  if (set.title !== undefined) sets.push('title = ?'), args.push(set.title);
  if (set.color !== undefined) sets.push('color = ?'), args.push(set.color);
  if (set.description !== undefined) sets.push('description = ?'), args.push(set.description);
  const row = await q.get<Rec>(`UPDATE labels SET ${sets.join(', ')} WHERE id = ? RETURNING *`, [...args, id]);
  return row ? toLabel(row) : null;
}

/** Delete a label with its links and subscriptions; false when it was gone already. */
export async function deleteLabelRow(tx: Queries, id: number): Promise<boolean> {
  await tx.run(`DELETE FROM label_links WHERE label_id = ?`, [id]);
  await tx.run(`DELETE FROM subscriptions WHERE subscribable_type = 'Label' AND subscribable_id = ?`, [id]);
  return (await tx.run(`DELETE FROM labels WHERE id = ?`, [id])).changes > 0;
}

/** Issue and merge request counts of one label. */
export interface LabelCounts {
  openIssues: number;
  closedIssues: number;
  openMergeRequests: number;
}

/**
 * Issue and merge request counts per label by state, for the Label entity: two queries for a list. `issueFilter` is a
 * condition over `issues i` (which issues the viewer may count).
 */
export async function labelCounts(
  q: Queries, labelIds: number[], issueFilter: { sql: string; args: unknown[] } = { sql: 'TRUE', args: [] },
): Promise<Map<number, LabelCounts>> {
  const out = new Map<number, LabelCounts>();
  for (const id of labelIds) out.set(id, { openIssues: 0, closedIssues: 0, openMergeRequests: 0 });
  if (labelIds.length === 0) return out;
  const ids = q.dialect.ids([...new Set(labelIds)]);
  const issueRows = await q.all<{ label_id: number; state: string; n: number }>(`
    SELECT ll.label_id, i.state, COUNT(*) AS n FROM ${q.dialect.idList('j')} CROSS JOIN label_links ll JOIN issues i ON i.id = ll.target_id
    WHERE ll.target_type = 'Issue' AND ll.label_id = j.value AND i.deleted_at IS NULL AND ${issueFilter.sql}
    GROUP BY ll.label_id, i.state`, [ids, ...issueFilter.args]);
  for (const r of issueRows) {
    const c = out.get(r.label_id)!;
    if (r.state === 'closed') c.closedIssues += Number(r.n);
    else c.openIssues += Number(r.n);
  }
  const mrRows = await q.all<{ label_id: number; n: number }>(`
    SELECT ll.label_id, COUNT(*) AS n FROM ${q.dialect.idList('j')} CROSS JOIN label_links ll JOIN merge_requests m ON m.id = ll.target_id
    WHERE ll.target_type = 'MergeRequest' AND ll.label_id = j.value AND m.state IN ('opened', 'reopened') AND m.deleted_at IS NULL
    GROUP BY ll.label_id`, [ids]);
  for (const r of mrRows) out.get(r.label_id)!.openMergeRequests += Number(r.n);
  return out;
}
