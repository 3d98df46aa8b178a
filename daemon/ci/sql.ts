/**
 * SQL helpers of the CI room on the data layer (either engine): rows written from partial row-shaped objects
 * (camelCase fields to snake_case columns), and the id guard of PostgreSQL's integer columns.
 */
import type { Queries } from '../db/layer/types.js';
import { COMMIT_STATUS_COLUMNS, PIPELINE_COLUMNS, toCommitStatus, toPipeline } from '../db/rows.js';
import type { CommitStatusRow, PipelineRow } from '../db/schema-ci.js';

/** Whether `id` can name a row (a positive safe integer within PostgreSQL's `integer`). */
export const isRowId = (id: number): boolean => Number.isSafeInteger(id) && id > 0 && id <= 2147483647;

/** `a = ?, b = ?` and the values of the defined fields of `set`. */
function assignments(columns: Record<string, string>, set: Record<string, unknown>): { sql: string; args: unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) continue;
    const col = columns[k];
    if (!col) throw new Error(`unknown column for ${k}`);
    parts.push(`${col} = ?`);
    args.push(v);
  }
  return { sql: parts.join(', '), args };
}

/** `(a, b) VALUES (?, ?)` and the values of the defined fields of `values`. */
function insertion(columns: Record<string, string>, values: Record<string, unknown>): { sql: string; args: unknown[] } {
  const cols: string[] = [];
  const args: unknown[] = [];
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    const col = columns[k];
    if (!col) throw new Error(`unknown column for ${k}`);
    cols.push(col);
    args.push(v);
  }
  return { sql: `(${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, args };
}

/** UPDATE a commit status row; the row afterwards, or null when it is gone. `where` adds a condition (and its values). */
export async function updateStatusRow(
  q: Queries, id: number, set: Partial<CommitStatusRow>, where: { sql: string; args: unknown[] } = { sql: '', args: [] },
): Promise<CommitStatusRow | null> {
  const a = assignments(COMMIT_STATUS_COLUMNS, set);
  const row = await q.get(`UPDATE commit_statuses SET ${a.sql} WHERE id = ?${where.sql} RETURNING *`, [...a.args, id, ...where.args]);
  return row ? toCommitStatus(row) : null;
}

/** INSERT a commit status row; the new row. */
export async function insertStatusRow(q: Queries, values: Partial<CommitStatusRow>): Promise<CommitStatusRow> {
  const i = insertion(COMMIT_STATUS_COLUMNS, values);
  return toCommitStatus((await q.get(`INSERT INTO commit_statuses ${i.sql} RETURNING *`, i.args))!);
}

/** UPDATE a pipeline row; the row afterwards, or null when it is gone. */
export async function updatePipelineRow(q: Queries, id: number, set: Partial<PipelineRow>): Promise<PipelineRow | null> {
  const a = assignments(PIPELINE_COLUMNS, set);
  const row = await q.get(`UPDATE pipelines SET ${a.sql} WHERE id = ? RETURNING *`, [...a.args, id]);
  return row ? toPipeline(row) : null;
}

/** INSERT a pipeline row; the new row. */
export async function insertPipelineRow(q: Queries, values: Partial<PipelineRow>): Promise<PipelineRow> {
  const i = insertion(PIPELINE_COLUMNS, values);
  return toPipeline((await q.get(`INSERT INTO pipelines ${i.sql} RETURNING *`, i.args))!);
}
