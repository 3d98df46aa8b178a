/**
 * Environments' and deployments' data module (environments, deployments, deployment_iids). `q`: the database or a
 * transaction. The validations and the deployment rules stay in services/environments/.
 */
import type { Queries } from '../layer/types.js';
import { toDeployment, toEnvironment, type DeploymentRow, type EnvironmentRow } from '../rows.js';
import { rowsWithIds } from '../sql.js';

/** Whether another environment of the project (not `exceptId`) has this name or external URL. */
export async function environmentValueTaken(
  q: Queries, projectId: number, column: 'name' | 'external_url', value: string, exceptId: number | null,
): Promise<boolean> {
  return !!(await q.get(`SELECT 1 AS x FROM environments WHERE project_id = ? AND ${column} = ? AND id <> ?`, [projectId, value, exceptId ?? 0]));
}

/** Number of environments of a project. */
export async function countEnvironments(q: Queries, projectId: number): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM environments WHERE project_id = ?', [projectId]))?.n ?? 0);
}

/** One page of a project's environments, oldest first. */
export async function listEnvironments(q: Queries, projectId: number, limit: number, offset: number): Promise<EnvironmentRow[]> {
  return (await q.all('SELECT * FROM environments WHERE project_id = ? ORDER BY id LIMIT ? OFFSET ?', [projectId, limit, offset])).map(toEnvironment);
}

/** Environments by id (for the deployments' presenter). */
export async function environmentsById(q: Queries, ids: readonly number[]): Promise<Map<number, EnvironmentRow>> {
  const wanted = [...new Set(ids)];
  if (!wanted.length) return new Map();
  return new Map((await rowsWithIds(q, 'environments', wanted)).map((r) => [r.id as number, toEnvironment(r)]));
}

/** A project's environment by id, or null. */
export async function environmentById(q: Queries, projectId: number, id: number): Promise<EnvironmentRow | null> {
  const row = await q.get('SELECT * FROM environments WHERE id = ? AND project_id = ?', [id, projectId]);
  return row ? toEnvironment(row) : null;
}

/** The fields of a new environment (created available). */
export interface NewEnvironment {
  projectId: number;
  name: string;
  externalUrl: string | null;
  environmentType: string | null;
  at: string;
}

/** Insert an environment; the new row (unique and foreign-key violations are the caller's to map). */
export async function insertEnvironment(q: Queries, e: NewEnvironment): Promise<EnvironmentRow> {
  return toEnvironment((await q.get(
    `INSERT INTO environments (project_id, name, external_url, environment_type, state, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'available', ?, ?) RETURNING *`,
    [e.projectId, e.name, e.externalUrl, e.environmentType, e.at, e.at],
  ))!);
}

/** The project's environment of this name, inserted (available, no URL) when missing; a concurrent insert is found, not doubled. */
export async function environmentNamedOrNew(tx: Queries, e: Omit<NewEnvironment, 'externalUrl'>): Promise<EnvironmentRow> {
  await tx.run(
    `INSERT INTO environments (project_id, name, external_url, environment_type, state, created_at, updated_at)
     VALUES (?, ?, NULL, ?, 'available', ?, ?) ON CONFLICT (project_id, name) DO NOTHING`,
    [e.projectId, e.name, e.environmentType, e.at, e.at],
  );
  return toEnvironment((await tx.get('SELECT * FROM environments WHERE project_id = ? AND name = ?', [e.projectId, e.name]))!);
}

/** Rename an environment and set its URL; the row afterwards, or null when it is gone. */
export async function updateEnvironmentRow(
  q: Queries, projectId: number, id: number, set: { name: string; externalUrl: string | null; environmentType: string | null; at: string },
): Promise<EnvironmentRow | null> {
  const row = await q.get(
    'UPDATE environments SET name = ?, external_url = ?, environment_type = ?, updated_at = ? WHERE id = ? AND project_id = ? RETURNING *',
    [set.name, set.externalUrl, set.environmentType, set.at, id, projectId],
  );
  return row ? toEnvironment(row) : null;
}

/** Set an environment's state, and its URL when `url` is not null; the row afterwards. */
export async function setEnvironmentState(tx: Queries, id: number, url: string | null, state: EnvironmentRow['state'], at: string): Promise<EnvironmentRow> {
  return toEnvironment((await tx.get(
    'UPDATE environments SET external_url = COALESCE(?, external_url), state = ?, updated_at = ? WHERE id = ? RETURNING *',
    [url, state, at, id],
  ))!);
}

/** Delete a project's environment (its deployments go with it); the deleted row, or null when there was none. */
export async function deleteEnvironmentRow(q: Queries, projectId: number, id: number): Promise<EnvironmentRow | null> {
  const row = await q.get('DELETE FROM environments WHERE id = ? AND project_id = ? RETURNING *', [id, projectId]);
  return row ? toEnvironment(row) : null;
}

/** The deployment a build recorded, or null. */
export async function deploymentOfBuild(q: Queries, buildId: number): Promise<DeploymentRow | null> {
  const row = await q.get('SELECT * FROM deployments WHERE deployable_id = ?', [buildId]);
  return row ? toDeployment(row) : null;
}

/** The project's next deployment iid (counted in deployment_iids, so two daemons never hand out one twice). */
export async function nextDeploymentIid(tx: Queries, projectId: number): Promise<number> {
  return (await tx.get<{ last_iid: number }>(
    `INSERT INTO deployment_iids (project_id, last_iid) VALUES (?, 1)
     ON CONFLICT (project_id) DO UPDATE SET last_iid = deployment_iids.last_iid + 1 RETURNING last_iid`,
    [projectId],
  ))!.last_iid;
}

/** The fields of a new deployment (`at`: its created_at and updated_at). */
export type NewDeployment = Pick<DeploymentRow, 'iid' | 'projectId' | 'environmentId' | 'ref' | 'tag' | 'sha' | 'userId' | 'onStop'> & {
  deployableId: number;
  at: string;
};

/** Insert a deployment; the new row, or null when the build recorded one already. */
export async function insertDeployment(tx: Queries, d: NewDeployment): Promise<DeploymentRow | null> {
  const row = await tx.get(
    `INSERT INTO deployments (iid, project_id, environment_id, ref, tag, sha, user_id, deployable_id, on_stop, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (deployable_id) DO NOTHING RETURNING *`,
    [d.iid, d.projectId, d.environmentId, d.ref, d.tag, d.sha, d.userId, d.deployableId, d.onStop, d.at, d.at],
  );
  return row ? toDeployment(row) : null;
}

/** Number of deployments of a project. */
export async function countDeployments(q: Queries, projectId: number): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM deployments WHERE project_id = ?', [projectId]))?.n ?? 0);
}

/** One page of a project's deployments, oldest first (8.13's `project.deployments`, by id). */
export async function listDeployments(q: Queries, projectId: number, limit: number, offset: number): Promise<DeploymentRow[]> {
  return (await q.all('SELECT * FROM deployments WHERE project_id = ? ORDER BY id LIMIT ? OFFSET ?', [projectId, limit, offset])).map(toDeployment);
}

/** A project's deployment by id, or null. */
export async function deploymentById(q: Queries, projectId: number, id: number): Promise<DeploymentRow | null> {
  const row = await q.get('SELECT * FROM deployments WHERE id = ? AND project_id = ?', [id, projectId]);
  return row ? toDeployment(row) : null;
}
