/**
 * The project secret variables' data module (ci_variables). Values are stored as given (sealed by the service, which
 * also opens them); the key rules stay in services/ci/variables.ts. `q`: the database or a transaction.
 */
import type { Queries } from './layer/types.js';

/** A variable row as stored: its value sealed. */
export interface VariableRow {
  id: number;
  key: string;
  value: string;
}

/** A project's variable by key, or undefined. */
export function variableRow(q: Queries, projectId: number, key: string): Promise<VariableRow | undefined> {
  return q.get<VariableRow>('SELECT id, key, value FROM ci_variables WHERE project_id = ? AND key = ?', [projectId, key]);
}

/** Number of variables of a project. */
export async function countVariableRows(q: Queries, projectId: number): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM ci_variables WHERE project_id = ?', [projectId]))?.n ?? 0);
}

/** A project's variables, oldest first: all (`limit` -1) or one page. */
export function variableRows(q: Queries, projectId: number, limit = -1, offset = 0): Promise<VariableRow[]> {
  return limit < 0
    ? q.all<VariableRow>('SELECT id, key, value FROM ci_variables WHERE project_id = ? ORDER BY id', [projectId])
    : q.all<VariableRow>('SELECT id, key, value FROM ci_variables WHERE project_id = ? ORDER BY id LIMIT ? OFFSET ?', [projectId, limit, offset]);
}

/** Insert a variable (the UNIQUE index on project and key refuses a second one). */
export async function insertVariable(q: Queries, projectId: number, key: string, sealed: string, at: string): Promise<void> {
  await q.run('INSERT INTO ci_variables (project_id, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', [projectId, key, sealed, at, at]);
}

/** Set a variable's value; whether it exists. */
export async function updateVariableValue(q: Queries, projectId: number, key: string, sealed: string, at: string): Promise<boolean> {
  return (await q.run('UPDATE ci_variables SET value = ?, updated_at = ? WHERE project_id = ? AND key = ?', [sealed, at, projectId, key])).changes > 0;
}

/** Delete a variable; the deleted row, or undefined. */
export function deleteVariableRow(q: Queries, projectId: number, key: string): Promise<VariableRow | undefined> {
  return q.get<VariableRow>('DELETE FROM ci_variables WHERE project_id = ? AND key = ? RETURNING id, key, value', [projectId, key]);
}
