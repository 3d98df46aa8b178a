/**
 * Projects and namespaces by id: the reads that presenters, hooks and services need beside the project they already
 * hold (the access rules and their SQL live in policy/ and db/access). `q`: the database or a transaction.
 */
import type { Queries } from './layer/types.js';
import { toNamespace, toProject } from './rows.js';
import type { NamespaceRow, ProjectRow } from './schema.js';

/** A project row by id, or null (a merge request's source project may be gone). */
export async function projectById(q: Queries, id: number | null): Promise<ProjectRow | null> {
  if (id === null) return null;
  const row = await q.get('SELECT * FROM projects WHERE id = ?', [id]);
  return row ? toProject(row) : null;
}

/** Project rows of `ids`, in id order (ids that are gone are skipped). */
export async function projectsByIds(q: Queries, ids: readonly number[]): Promise<ProjectRow[]> {
  if (!ids.length) return [];
  return (await q.all(`SELECT * FROM projects WHERE id IN ${q.dialect.inIds} ORDER BY id`, [q.dialect.ids(ids)])).map(toProject);
}

/** A namespace row by id, or null. */
export async function namespaceById(q: Queries, id: number): Promise<NamespaceRow | null> {
  const row = await q.get('SELECT * FROM namespaces WHERE id = ?', [id]);
  return row ? toNamespace(row) : null;
}

/** What the runner's build payload needs of a project: its name, path and namespace path. */
export interface ProjectPathFacts {
  id: number;
  name: string;
  path: string;
  namespacePath: string;
}

/** The path facts of one project, or undefined when it is gone. */
export async function projectPathFacts(q: Queries, projectId: number): Promise<ProjectPathFacts | undefined> {
  return q.get<ProjectPathFacts>(
    'SELECT p.id, p.name, p.path, n.path AS "namespacePath" FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ?', [projectId]);
}

/** Those of `ids` whose project row `p` meets `condition` (an access rule's SQL over `projects p`, from policy/). */
export async function projectIdsMeeting(q: Queries, ids: readonly number[], condition: { sql: string; args: readonly unknown[] }): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await q.all<{ id: number }>(`SELECT p.id FROM projects p WHERE p.id IN ${q.dialect.inIds} AND ${condition.sql}`, [q.dialect.ids(ids), ...condition.args]);
  return new Set(rows.map((r) => r.id));
}

/** A project with its namespace, in one query, or null. */
export async function projectWithNamespace(q: Queries, projectId: number): Promise<{ project: ProjectRow; namespace: NamespaceRow } | null> {
  const row = await q.get(
    `SELECT p.*, n.id AS ns_id, n.name AS ns_name, n.path AS ns_path, n.kind AS ns_kind, n.owner_id AS ns_owner_id, n.description AS ns_description,
       n.visibility_level AS ns_visibility_level, n.share_with_group_lock AS ns_share_with_group_lock, n.request_access_enabled AS ns_request_access_enabled,
       n.lfs_enabled AS ns_lfs_enabled, n.created_at AS ns_created_at, n.updated_at AS ns_updated_at
     FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ?`, [projectId]);
  if (!row) return null;
  const namespace = toNamespace(Object.fromEntries(Object.entries(row).filter(([k]) => k.startsWith('ns_')).map(([k, v]) => [k.slice(3), v])));
  return { project: toProject(row), namespace };
}

/** The namespace path and project path of each project of `ids` (ids that are gone are absent). */
export async function projectFullPaths(q: Queries, ids: readonly number[]): Promise<Map<number, { namespacePath: string; path: string }>> {
  if (!ids.length) return new Map();
  const rows = await q.all<{ id: number; ns: string; path: string }>(
    `SELECT p.id AS id, n.path AS ns, p.path AS path FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id IN ${q.dialect.inIds}`,
    [q.dialect.ids([...new Set(ids)])]);
  return new Map(rows.map((r) => [r.id, { namespacePath: r.ns, path: r.path }]));
}
