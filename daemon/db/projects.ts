/**
 * Projects and namespaces by id: the reads that presenters, hooks and services need beside the project they already
 * hold (the access rules and their SQL live in policy/ and db/access). `q`: the database or a transaction.
 */
import type { Queries } from './layer/types.js';
import { toNamespace, toProject, toProjectGroupLink } from './rows.js';
import type { NamespaceRow, ProjectGroupLinkRow, ProjectRow } from './schema.js';
import { rowsWithIds } from './sql.js';

/** A project row by id, or null (a merge request's source project may be gone). */
export async function projectById(q: Queries, id: number | null): Promise<ProjectRow | null> {
  if (id === null) return null;
  const row = await q.get('SELECT * FROM projects WHERE id = ?', [id]);
  return row ? toProject(row) : null;
}

/** Project rows of `ids`, in id order (ids that are gone are skipped). */
export async function projectsByIds(q: Queries, ids: readonly number[]): Promise<ProjectRow[]> {
  if (!ids.length) return [];
  return (await q.all(`SELECT p.* FROM ${q.dialect.idList('j')} CROSS JOIN projects p WHERE p.id = j.value ORDER BY p.id`, [q.dialect.ids(ids)])).map(toProject);
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
  const rows = await q.all<{ id: number }>(`SELECT p.id FROM ${q.dialect.idList('j')} CROSS JOIN projects p WHERE p.id = j.value AND ${condition.sql}`, [q.dialect.ids(ids), ...condition.args]);
  return new Set(rows.map((r) => r.id));
}

/** The ids of the projects in a namespace. */
export async function projectIdsInNamespace(q: Queries, namespaceId: number): Promise<number[]> {
  return (await q.all<{ id: number }>('SELECT id FROM projects WHERE namespace_id = ? ORDER BY id', [namespaceId])).map((p) => p.id);
}

/** A project's name and its namespace's name, or undefined when it is gone. */
export async function projectNames(q: Queries, projectId: number): Promise<{ name: string; namespaceName: string } | undefined> {
  return q.get('SELECT p.name, n.name AS "namespaceName" FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ?', [projectId]);
}

/** Whether another project (not `selfId`) of the namespace has this name / path, case-insensitive. */
export async function projectFieldTaken(q: Queries, namespaceId: number, column: 'name' | 'path', value: string, selfId: number | null): Promise<boolean> {
  return (await q.get(
    `SELECT 1 AS taken FROM projects WHERE namespace_id = ? AND ${q.dialect.nocaseEq(column)}${selfId ? ' AND id <> ?' : ''}`,
    selfId ? [namespaceId, value, selfId] : [namespaceId, value],
  )) !== undefined;
}

/** Lock a namespace row until the transaction ends (PostgreSQL; SQLite runs each transaction alone). */
export async function lockNamespace(tx: Queries, namespaceId: number): Promise<void> {
  if (tx.dialect.name === 'postgres') await tx.get('SELECT id FROM namespaces WHERE id = ? FOR UPDATE', [namespaceId]);
}

/** Whether a project exists; on PostgreSQL its row then stays locked against deletion until the transaction ends. */
export async function projectExistsKeyShared(tx: Queries, projectId: number): Promise<boolean> {
  const lock = tx.dialect.name === 'postgres' ? ' FOR KEY SHARE' : '';
  return !!(await tx.get(`SELECT id FROM projects WHERE id = ?${lock}`, [projectId]));
}

/** The columns of a new project (the rest take their defaults). */
export type NewProject = Pick<ProjectRow,
  | 'name' | 'path' | 'namespaceId' | 'description' | 'visibilityLevel' | 'defaultBranch' | 'issuesEnabled' | 'mergeRequestsEnabled'
  | 'buildsEnabled' | 'wikiEnabled' | 'snippetsEnabled' | 'containerRegistryEnabled' | 'sharedRunnersEnabled' | 'publicBuilds' | 'lfsEnabled'
  | 'requestAccessEnabled' | 'onlyAllowMergeIfBuildSucceeds' | 'importUrl' | 'tagList' | 'creatorId' | 'forkedFromId' | 'runnersTokenSalt'
  | 'runnersTokenHash' | 'createdAt'>;

/** Insert a project (last_activity_at and updated_at: its creation time). */
export async function insertProject(tx: Queries, p: NewProject): Promise<ProjectRow> {
  const row = await tx.get(
    `INSERT INTO projects (name, path, namespace_id, description, visibility_level, default_branch, issues_enabled,
       merge_requests_enabled, builds_enabled, wiki_enabled, snippets_enabled, container_registry_enabled, shared_runners_enabled, public_builds,
       lfs_enabled, request_access_enabled, only_allow_merge_if_build_succeeds, import_url, tag_list, creator_id, forked_from_id,
       runners_token_salt, runners_token_hash, last_activity_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [
      p.name, p.path, p.namespaceId, p.description, p.visibilityLevel, p.defaultBranch, p.issuesEnabled, p.mergeRequestsEnabled, p.buildsEnabled,
      p.wikiEnabled, p.snippetsEnabled, p.containerRegistryEnabled, p.sharedRunnersEnabled, p.publicBuilds, p.lfsEnabled, p.requestAccessEnabled,
      p.onlyAllowMergeIfBuildSucceeds, p.importUrl, p.tagList, p.creatorId, p.forkedFromId, p.runnersTokenSalt, p.runnersTokenHash,
      p.createdAt, p.createdAt, p.createdAt,
    ],
  );
  return toProject(row!);
}

/** Delete a project's row with its memberships and access requests; forks of it lose their link (the rest cascades). */
export async function deleteProjectRow(tx: Queries, projectId: number): Promise<void> {
  await tx.run(`DELETE FROM members WHERE source_type = 'Project' AND source_id = ?`, [projectId]);
  await tx.run(`DELETE FROM access_requests WHERE source_type = 'Project' AND source_id = ?`, [projectId]);
  await tx.run('UPDATE projects SET forked_from_id = NULL WHERE forked_from_id = ?', [projectId]);
  await tx.run('DELETE FROM projects WHERE id = ?', [projectId]);
}

/** A ProjectRow key as its column (camelCase to snake_case). */
const projectColumn = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Set columns of a project (ProjectRow keys); the row after, or null when gone. */
export async function updateProjectColumns(q: Queries, projectId: number, set: Partial<Omit<ProjectRow, 'id'>>): Promise<ProjectRow | null> {
  const keys = Object.keys(set) as (keyof typeof set)[];
  const row = await q.get(`UPDATE projects SET ${keys.map((k) => `${projectColumn(k)} = ?`).join(', ')} WHERE id = ? RETURNING *`,
    [...keys.map((k) => set[k]), projectId]);
  return row ? toProject(row) : null;
}

/** Whether a project row exists. */
export async function projectExists(q: Queries, projectId: number): Promise<boolean> {
  return (await q.get('SELECT id FROM projects WHERE id = ?', [projectId])) !== undefined;
}

/** Whether this very project still exists: the id with the same runners token salt (an id is never handed out twice, a salt is its own). */
export async function projectStillThere(q: Queries, projectId: number, runnersTokenSalt: string): Promise<boolean> {
  return (await q.get('SELECT id FROM projects WHERE id = ? AND runners_token_salt = ?', [projectId, runnersTokenSalt])) !== undefined;
}

/** Star a project for a user; whether a star was added (false when it was there). */
export async function insertStar(q: Queries, userId: number, projectId: number, at: string): Promise<boolean> {
  return (await q.run('INSERT INTO stars (user_id, project_id, created_at) VALUES (?, ?, ?) ON CONFLICT (user_id, project_id) DO NOTHING',
    [userId, projectId, at])).changes > 0;
}

/** Remove a user's star; whether there was one. */
export async function deleteStar(q: Queries, userId: number, projectId: number): Promise<boolean> {
  return (await q.run('DELETE FROM stars WHERE user_id = ? AND project_id = ?', [userId, projectId])).changes > 0;
}

/** Set a project's fork link to `sourceId` (null removes it), only when it has none (or, to remove, has one); the row after, or null. */
export async function setForkLink(q: Queries, projectId: number, sourceId: number | null, at: string): Promise<ProjectRow | null> {
  const row = sourceId === null
    ? await q.get('UPDATE projects SET forked_from_id = NULL, updated_at = ? WHERE id = ? AND forked_from_id IS NOT NULL RETURNING *', [at, projectId])
    : await q.get('UPDATE projects SET forked_from_id = ?, updated_at = ? WHERE id = ? AND forked_from_id IS NULL RETURNING *', [sourceId, at, projectId]);
  return row ? toProject(row) : null;
}

/** A group (namespace of kind `group`) by id, or null. */
export async function groupById(q: Queries, id: number): Promise<NamespaceRow | null> {
  const row = await q.get(`SELECT * FROM namespaces WHERE id = ? AND kind = 'group'`, [id]);
  return row ? toNamespace(row) : null;
}

/** A namespace by id, its row share-locked until the transaction ends on PostgreSQL; or null. */
export async function namespaceByIdShareLocked(tx: Queries, id: number): Promise<NamespaceRow | null> {
  const lock = tx.dialect.name === 'postgres' ? ' FOR SHARE' : '';
  const row = await tx.get(`SELECT * FROM namespaces WHERE id = ?${lock}`, [id]);
  return row ? toNamespace(row) : null;
}

/** The namespace whose path (first, exact case first) or name is `text`, case-insensitive; or null. */
export async function namespaceByPathOrName(q: Queries, text: string): Promise<NamespaceRow | null> {
  const d = q.dialect;
  const row = await q.get(
    `SELECT * FROM namespaces WHERE ${d.nocaseEq('path')} OR ${d.nocaseEq('name')} ORDER BY CASE WHEN path = ? THEN 0 ELSE 1 END LIMIT 1`, [text, text, text]);
  return row ? toNamespace(row) : null;
}

/** Share a project with a group; the link, or null when it was shared already. */
export async function insertProjectGroupLink(
  tx: Queries, projectId: number, groupId: number, groupAccess: number, expiresAt: string | null, at: string,
): Promise<ProjectGroupLinkRow | null> {
  const row = await tx.get(
    `INSERT INTO project_group_links (project_id, group_id, group_access, expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (project_id, group_id) DO NOTHING RETURNING *`,
    [projectId, groupId, groupAccess, expiresAt, at, at],
  );
  return row ? toProjectGroupLink(row) : null;
}

/** Remove a project's share with a group; whether there was one. */
export async function deleteProjectGroupLink(q: Queries, projectId: number, groupId: number): Promise<boolean> {
  return (await q.run('DELETE FROM project_group_links WHERE project_id = ? AND group_id = ?', [projectId, groupId])).changes > 0;
}

/** An upload's row (the file itself lives under the data dir's uploads/). */
export interface NewUpload {
  projectId: number;
  uploaderId: number;
  secret: string;
  filename: string;
  size: number;
  createdAt: string;
}

/** Record an upload of a project. */
export async function insertUpload(q: Queries, u: NewUpload): Promise<void> {
  await q.run('INSERT INTO uploads (project_id, uploader_id, secret, filename, size, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    [u.projectId, u.uploaderId, u.secret, u.filename, u.size, u.createdAt]);
}

/** Whether an upload of a project is recorded under this secret and file name. */
export async function uploadRecorded(q: Queries, projectId: number, secret: string, filename: string): Promise<boolean> {
  return !!(await q.get('SELECT id FROM uploads WHERE project_id = ? AND secret = ? AND filename = ?', [projectId, secret, filename]));
}

/** The number of projects. */
export async function countAllProjects(q: Queries): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM projects'))!.n);
}

/**
 * How many projects a user reaches through their personal namespace (`ownedOnly`), or also through their groups and
 * direct memberships, each part counted up to `cap` (so it reads at most that many index entries).
 */
export async function projectReach(q: Queries, userId: number, ownedOnly: boolean, cap: number): Promise<number> {
  const namespacesSql = ownedOnly
    ? `SELECT n.id FROM namespaces n WHERE n.kind = 'user' AND n.owner_id = ?`
    : `SELECT n.id FROM namespaces n WHERE n.kind = 'user' AND n.owner_id = ?
       UNION ALL SELECT m.source_id FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ?`;
  const direct = ownedOnly ? '0' : `(SELECT COUNT(*) FROM (SELECT 1 FROM members m WHERE m.user_id = ? AND m.source_type = 'Project' LIMIT ?))`;
  const sql = `SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM projects p WHERE p.namespace_id IN (${namespacesSql}) LIMIT ?)) + ${direct} AS n`;
  return Number((await q.get<{ n: number }>(sql, ownedOnly ? [userId, cap] : [userId, userId, cap, userId, cap]))!.n);
}

/** The number of projects `p` meeting a WHERE text. */
export async function countProjectsWhere(q: Queries, where: string, args: readonly unknown[]): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM projects p WHERE ${where}`, args))!.n);
}

// ---- what the Project entity presents beside the rows (api/entities/projects.ts)

/** One row of projectPageNumbers: kind `k` (stars, forks, issues, links, pa, ga), project (or namespace) id and values. */
export interface ProjectNumberRow {
  k: string;
  id: number;
  n: number | string;
  g: number | null;
  name: string | null;
  o: number | null;
}

const numbersTexts = new Map<string, string>();
/**
 * The per-project numbers and the group shares of a page in one statement (a UNION ALL; parameters: ids x4, then
 * with access the ids and the viewer, the namespace ids and the viewer): rows (k, id, n, g, name, o).
 */
function numbersText(d: Queries['dialect'], withAccess: boolean): string {
  const key = `${d.name}:${withAccess}`;
  let text = numbersTexts.get(key);
  if (!text) {
    const parts = [
      `SELECT 'stars' AS k, s.project_id AS id, COUNT(*) AS n, CAST(NULL AS INTEGER) AS g, CAST(NULL AS TEXT) AS name, CAST(NULL AS INTEGER) AS o
         FROM ${d.idList('j')} CROSS JOIN stars s WHERE s.project_id = j.value GROUP BY s.project_id`,
      `SELECT 'forks', f.forked_from_id, COUNT(*), NULL, NULL, NULL FROM ${d.idList('j')} CROSS JOIN projects f WHERE f.forked_from_id = j.value GROUP BY f.forked_from_id`,
      `SELECT 'issues', c.project_id, SUM(c.n), NULL, NULL, NULL FROM ${d.idList('j')} CROSS JOIN issue_counts c WHERE c.project_id = j.value AND c.state = 'opened' GROUP BY c.project_id`,
      `SELECT 'links', l.project_id, l.group_access, l.group_id, n.name, l.id FROM ${d.idList('j')} CROSS JOIN project_group_links l JOIN namespaces n ON n.id = l.group_id
         WHERE l.project_id = j.value`,
    ];
    if (withAccess) {
      parts.push(
        `SELECT 'pa', m.source_id, m.access_level, NULL, NULL, NULL FROM ${d.idList('j')} CROSS JOIN members m WHERE m.source_type = 'Project' AND m.user_id = ? AND m.source_id = j.value`,
        `SELECT 'ga', m.source_id, m.access_level, NULL, NULL, NULL FROM ${d.idList('j')} CROSS JOIN members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND m.source_id = j.value`,
      );
    }
    text = parts.join('\n UNION ALL ');
    numbersTexts.set(key, text);
  }
  return text;
}

/**
 * The stars, forks, open issues and group shares of a page of projects, and (with `viewerId`) the viewer's direct
 * project and group memberships, in one statement.
 */
export function projectPageNumbers(q: Queries, projectIds: readonly number[], namespaceIds: readonly number[], viewerId: number | null): Promise<ProjectNumberRow[]> {
  const d = q.dialect;
  const ids = d.ids(projectIds);
  return q.all<ProjectNumberRow>(numbersText(d, viewerId !== null),
    viewerId !== null ? [ids, ids, ids, ids, ids, viewerId, d.ids(namespaceIds), viewerId] : [ids, ids, ids, ids]);
}

/** Namespaces by id with their (personal) owner's columns `owner_user_id`, `owner_username`, `owner_name`, `owner_state`, `owner_email`, `owner_created_at`. */
export function namespacesWithOwners(q: Queries, namespaceIds: readonly number[]): Promise<Record<string, unknown>[]> {
  const d = q.dialect;
  return q.all(`SELECT n.*, u.id AS owner_user_id, u.username AS owner_username, u.name AS owner_name, u.state AS owner_state,
      u.email AS owner_email, u.created_at AS owner_created_at
    FROM ${d.idList('j')} CROSS JOIN namespaces n LEFT JOIN users u ON n.kind = 'user' AND u.id = n.owner_id WHERE n.id = j.value`, [d.ids(namespaceIds)]);
}

/** Projects by id with their names and paths and their namespace's (`ns_path`, `ns_name`). */
export function projectPathsByIds(q: Queries, ids: readonly number[]): Promise<{ id: number; name: string; path: string; ns_path: string; ns_name: string }[]> {
  const d = q.dialect;
  return q.all(`SELECT p.id, p.name, p.path, n.path AS ns_path, n.name AS ns_name FROM ${d.idList('j')} CROSS JOIN projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = j.value`,
    [d.ids(ids)]);
}

/** Namespaces by id. */
export async function namespacesByIds(q: Queries, ids: readonly number[]): Promise<Map<number, NamespaceRow>> {
  if (!ids.length) return new Map();
  return new Map((await rowsWithIds(q, 'namespaces', ids)).map((n) => [n.id as number, toNamespace(n)]));
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
    `SELECT p.id AS id, n.path AS ns, p.path AS path FROM ${q.dialect.idList('j')} CROSS JOIN projects p JOIN namespaces n ON n.id = p.namespace_id
     WHERE p.id = j.value`,
    [q.dialect.ids(ids)]);
  return new Map(rows.map((r) => [r.id, { namespacePath: r.ns, path: r.path }]));
}

/** Move a project's last_activity_at to `at`, never backwards (two daemons may commit pushes out of clock order). */
export async function touchProjectActivity(tx: Queries, projectId: number, at: string): Promise<void> {
  await tx.run('UPDATE projects SET last_activity_at = ? WHERE id = ? AND last_activity_at < ?', [at, projectId, at]);
}
