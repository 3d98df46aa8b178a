/**
 * Triggers' data module (ci_triggers, ci_trigger_requests): a project's live triggers by token hash, their last use,
 * deletion by deleted_at, and the trigger requests of pipelines. `q`: the database or a transaction.
 */
import type { Queries } from '../layer/types.js';
import { toTrigger, toTriggerRequest, type TriggerRequestRow, type TriggerRow } from '../rows.js';

/** Every column of a trigger and its last use (8.13 Trigger#last_used: the newest trigger request's created_at). */
const SELECT_TRIGGER = `SELECT t.*, (SELECT MAX(r.created_at) FROM ci_trigger_requests r WHERE r.trigger_id = t.id) AS last_used
  FROM ci_triggers t`;

/** Number of live (not deleted) triggers of a project. */
export async function countTriggers(q: Queries, projectId: number): Promise<number> {
  const row = await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM ci_triggers WHERE project_id = ? AND deleted_at IS NULL', [projectId]);
  return Number(row?.n ?? 0);
}

/** One page of a project's live triggers, oldest first. */
export async function listTriggers(q: Queries, projectId: number, limit: number, offset: number): Promise<TriggerRow[]> {
  const rows = await q.all(`${SELECT_TRIGGER} WHERE t.project_id = ? AND t.deleted_at IS NULL ORDER BY t.id LIMIT ? OFFSET ?`, [projectId, limit, offset]);
  return rows.map(toTrigger);
}

/** A project's trigger by its token hash (live ones only unless `deletedToo`), or null. */
export async function triggerByTokenHash(q: Queries, projectId: number, tokenHash: string, deletedToo = false): Promise<TriggerRow | null> {
  const row = await q.get(`${SELECT_TRIGGER} WHERE t.project_id = ? AND t.token_hash = ?${deletedToo ? '' : ' AND t.deleted_at IS NULL'}`, [projectId, tokenHash]);
  return row ? toTrigger(row) : null;
}

/** The id and project of the live trigger of a token hash (any project), or undefined. */
export async function liveTriggerOfTokenHash(q: Queries, tokenHash: string): Promise<{ id: number; projectId: number } | undefined> {
  return q.get<{ id: number; projectId: number }>('SELECT id, project_id AS "projectId" FROM ci_triggers WHERE token_hash = ? AND deleted_at IS NULL', [tokenHash]);
}

/** Whether the trigger is live (not deleted). */
export async function triggerLive(q: Queries, id: number): Promise<boolean> {
  return !!(await q.get('SELECT id FROM ci_triggers WHERE id = ? AND deleted_at IS NULL', [id]));
}

/** Insert a trigger; the new row (a foreign-key violation when the project is gone). */
export async function insertTrigger(q: Queries, projectId: number, tokenHash: string, tokenSealed: string, at: string): Promise<TriggerRow> {
  return toTrigger((await q.get(
    'INSERT INTO ci_triggers (project_id, token_hash, token_sealed, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING *',
    [projectId, tokenHash, tokenSealed, at, at],
  ))!);
}

/** Mark a project's live trigger of a token hash deleted; false when there was none. */
export async function markTriggerDeleted(tx: Queries, projectId: number, tokenHash: string, at: string): Promise<boolean> {
  const r = await tx.run('UPDATE ci_triggers SET deleted_at = ?, updated_at = ? WHERE project_id = ? AND token_hash = ? AND deleted_at IS NULL',
    [at, at, projectId, tokenHash]);
  return r.changes > 0;
}

/** Insert a trigger request for a pipeline (its variables sealed, or null); the new row. */
export async function insertTriggerRequest(tx: Queries, triggerId: number, pipelineId: number, variablesSealed: string | null, at: string): Promise<TriggerRequestRow> {
  return toTriggerRequest((await tx.get('INSERT INTO ci_trigger_requests (trigger_id, pipeline_id, variables, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING *',
    [triggerId, pipelineId, variablesSealed, at, at]))!);
}

/** The trigger request that created a pipeline, or null. */
export async function triggerRequestRowOfPipeline(q: Queries, pipelineId: number): Promise<TriggerRequestRow | null> {
  const row = await q.get('SELECT * FROM ci_trigger_requests WHERE pipeline_id = ? ORDER BY id LIMIT 1', [pipelineId]);
  return row ? toTriggerRequest(row) : null;
}
