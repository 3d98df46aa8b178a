/**
 * The data module of what the database keeps about git refs: releases (a tag's notes) and protected branch rules.
 * `q`: the database or a transaction. Tag lookups and the protection rules stay in services/repository/branches.ts and
 * services/repository/protected-branches.ts.
 */
import type { Queries } from './layer/types.js';
import { toProtectedBranch, toRelease } from './rows.js';
import type { ProtectedBranchRow } from './schema-git.js';
import type { ReleaseRow } from './schema-notes.js';

/** The releases of a project (all of them, or the one of `tagName`). */
export async function releasesOfProject(q: Queries, projectId: number, tagName?: string): Promise<ReleaseRow[]> {
  const rows = tagName === undefined
    ? await q.all('SELECT * FROM releases WHERE project_id = ?', [projectId])
    : await q.all('SELECT * FROM releases WHERE project_id = ? AND tag_name = ?', [projectId, tagName]);
  return rows.map(toRelease);
}

const INSERT_RELEASE = 'INSERT INTO releases (project_id, tag_name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)';

/**
 * Insert a tag's release; with `replace` an existing one gets the new description, without it an existing one is
 * left as it is and the answer is null. A foreign-key violation when the project is gone.
 */
export async function insertRelease(q: Queries, projectId: number, tagName: string, description: string, at: string, replace: boolean): Promise<ReleaseRow | null> {
  const conflict = replace
    ? 'DO UPDATE SET description = excluded.description, updated_at = excluded.updated_at'
    : 'DO NOTHING';
  const row = await q.get(`${INSERT_RELEASE} ON CONFLICT (project_id, tag_name) ${conflict} RETURNING *`, [projectId, tagName, description, at, at]);
  return row ? toRelease(row) : null;
}

/** Change a tag's release notes; the row afterwards, or null when there is none. */
export async function updateReleaseRow(q: Queries, projectId: number, tagName: string, description: string, at: string): Promise<ReleaseRow | null> {
  const row = await q.get('UPDATE releases SET description = ?, updated_at = ? WHERE project_id = ? AND tag_name = ? RETURNING *', [description, at, projectId, tagName]);
  return row ? toRelease(row) : null;
}

/** Delete a tag's release. */
export async function deleteRelease(q: Queries, projectId: number, tagName: string): Promise<void> {
  await q.run('DELETE FROM releases WHERE project_id = ? AND tag_name = ?', [projectId, tagName]);
}

/** A project's protected branch rules, sorted by name. */
export async function protectedBranchRules(q: Queries, projectId: number): Promise<ProtectedBranchRow[]> {
  return (await q.all('SELECT * FROM protected_branches WHERE project_id = ? ORDER BY name', [projectId])).map(toProtectedBranch);
}

/**
 * Upsert a rule on the (project, name) key: a new rule takes a missing (null) flag as false, an existing one keeps its
 * value for it. A foreign-key violation when the project is gone.
 */
export async function upsertProtectedBranch(
  q: Queries, projectId: number, name: string, push: boolean | null, merge: boolean | null, at: string,
): Promise<ProtectedBranchRow> {
  return toProtectedBranch((await q.get(
    `INSERT INTO protected_branches (project_id, name, developers_can_push, developers_can_merge, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, name) DO UPDATE SET
       developers_can_push = COALESCE(?, protected_branches.developers_can_push),
       developers_can_merge = COALESCE(?, protected_branches.developers_can_merge),
       updated_at = excluded.updated_at
     RETURNING *`,
    [projectId, name, push ?? false, merge ?? false, at, at, push, merge],
  ))!);
}

/** Delete the rule with exactly this name; false when there was none. */
export async function deleteProtectedBranch(q: Queries, projectId: number, name: string): Promise<boolean> {
  return (await q.run('DELETE FROM protected_branches WHERE project_id = ? AND name = ?', [projectId, name])).changes > 0;
}
