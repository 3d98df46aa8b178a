/**
 * The builds' and pipelines' data module (commit_statuses, pipelines) on either engine: rows written from partial
 * row-shaped objects (camelCase fields to snake_case columns), rows read by id, and the id guard of PostgreSQL's
 * integer columns. `q`: the database or a transaction.
 */
import type { AppContext } from '../context.js';
import { keysetPage } from './keyset.js';
import type { Queries } from './layer/types.js';
import { COMMIT_STATUS_COLUMNS, PIPELINE_COLUMNS, toCommitStatus, toPipeline } from './rows.js';
import type { CommitStatusRow, PipelineRow } from './schema-ci.js';
import { rowsWithIds } from './sql.js';

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

/** Commit status rows of `ids`, in the order of `ids` (ids that are gone are skipped). */
export async function statusRowsInOrder(q: Queries, ids: readonly number[]): Promise<CommitStatusRow[]> {
  if (!ids.length) return [];
  const rows = new Map((await rowsWithIds(q, 'commit_statuses', ids)).map((r) => [r.id as number, toCommitStatus(r)]));
  return ids.flatMap((id) => rows.get(id) ?? []);
}

/** Pipeline rows of `ids` (repeats skipped; ids that are gone are absent). */
export async function pipelinesByIds(q: Queries, ids: readonly number[]): Promise<Map<number, PipelineRow>> {
  const wanted = [...new Set(ids)];
  if (!wanted.length) return new Map();
  return new Map((await rowsWithIds(q, 'pipelines', wanted)).map((r) => [r.id as number, toPipeline(r)]));
}

/** What the runner's build payload needs of a pipeline. */
export interface PipelineFacts {
  id: number;
  sha: string;
  beforeSha: string | null;
  userId: number | null;
}

/** The pipeline facts of one pipeline, or undefined when it is gone. */
export async function pipelineFacts(q: Queries, pipelineId: number): Promise<PipelineFacts | undefined> {
  return q.get<PipelineFacts>('SELECT id, sha, before_sha AS "beforeSha", user_id AS "userId" FROM pipelines WHERE id = ?', [pipelineId]);
}

/** The latest build of each name in the pipeline's stages before `stageIdx`, by stage then id (depends_on_builds). */
export async function latestBuildsBeforeStage(q: Queries, pipelineId: number, stageIdx: number | null): Promise<CommitStatusRow[]> {
  const rows = await q.all<{ id: number }>(
    `SELECT id FROM commit_statuses WHERE id IN (
       SELECT MAX(id) FROM commit_statuses WHERE pipeline_id = ? AND type = 'build' GROUP BY name
     ) AND stage_idx < ? ORDER BY stage_idx, id`,
    [pipelineId, stageIdx]);
  return statusRowsInOrder(q, rows.map((r) => r.id));
}

/** Which of the builds of `ids` still wait for a runner (pending, no runner). */
export async function unclaimedPendingIds(q: Queries, ids: readonly number[]): Promise<number[]> {
  if (!ids.length) return [];
  return (await q.all<{ id: number }>(`SELECT c.id FROM ${q.dialect.idList('j')} CROSS JOIN commit_statuses c WHERE c.id = j.value AND c.status = 'pending' AND c.runner_id IS NULL`, [q.dialect.ids(ids)]))
    .map((r) => Number(r.id));
}

/** Give a pending build without a runner to `runnerId` with a new token; false when it was taken meanwhile. */
export async function assignBuildToRunner(
  tx: Queries, buildId: number, runnerId: number, token: { hash: string; sealed: string }, at: string,
): Promise<boolean> {
  const r = await tx.run("UPDATE commit_statuses SET runner_id = ?, token_hash = ?, token_sealed = ?, updated_at = ? WHERE id = ? AND status = 'pending' AND runner_id IS NULL",
    [runnerId, token.hash, token.sealed, at, buildId]);
  return r.changes === 1;
}

/** The stored trace length of a build, or undefined when the build is gone. */
export async function traceSize(q: Queries, buildId: number): Promise<number | undefined> {
  const row = await q.get<{ n: number }>('SELECT trace_size AS n FROM commit_statuses WHERE id = ?', [buildId]);
  return row ? Number(row.n) : undefined;
}

/** Move a build's trace length from `from` to `to` (a conditional UPDATE); false when it was not `from` any more. */
export async function advanceTraceSize(tx: Queries, buildId: number, from: number, to: number, at: string): Promise<boolean> {
  return (await tx.run('UPDATE commit_statuses SET trace_size = ?, updated_at = ? WHERE id = ? AND trace_size = ?', [to, at, buildId, from])).changes === 1;
}

/** Set a build's trace length. */
export async function setTraceSize(tx: Queries, buildId: number, size: number, at: string): Promise<void> {
  await tx.run('UPDATE commit_statuses SET trace_size = ?, updated_at = ? WHERE id = ?', [size, at, buildId]);
}

/** A build (type 'build') by id (a valid row id), or null. */
export async function buildById(q: Queries, id: number): Promise<CommitStatusRow | null> {
  const row = await q.get("SELECT * FROM commit_statuses WHERE id = ? AND type = 'build'", [id]);
  return row ? toCommitStatus(row) : null;
}

/** A commit status (build or generic) by id, or null. */
export async function statusRowById(q: Queries, id: number): Promise<CommitStatusRow | null> {
  const row = await q.get('SELECT * FROM commit_statuses WHERE id = ?', [id]);
  return row ? toCommitStatus(row) : null;
}

/** Filters of a build list: statuses (empty = all) and optionally only the pipelines of one commit. */
export interface BuildListFilter {
  statuses: readonly string[];
  sha?: string;
}

function buildListWhere(projectId: number, f: BuildListFilter): { where: string; values: unknown[] } {
  let where = "cs.project_id = ? AND cs.type = 'build'";
  const values: unknown[] = [projectId];
  if (f.statuses.length) {
    where += ` AND cs.status IN (${f.statuses.map(() => '?').join(', ')})`;
    values.push(...f.statuses);
  }
  if (f.sha !== undefined) {
    where += ' AND cs.pipeline_id IN (SELECT p.id FROM pipelines p WHERE p.project_id = ? AND p.sha = ?)';
    values.push(projectId, f.sha);
  }
  return { where, values };
}

/** How many builds of a project match the filter. */
export async function countBuilds(q: Queries, projectId: number, f: BuildListFilter): Promise<number> {
  const w = buildListWhere(projectId, f);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM commit_statuses cs WHERE ${w.where}`, w.values))?.n ?? 0);
}

/** One page of a project's builds, newest first; with `total` (countBuilds) a deep page costs what the first does (db/keyset.ts). */
export async function listBuilds(
  ctx: AppContext, q: Queries, projectId: number, f: BuildListFilter, limit: number, offset: number, total?: number,
): Promise<CommitStatusRow[]> {
  const w = buildListWhere(projectId, f);
  const ids = await keysetPage<{ id: number }>(ctx, q, { from: 'commit_statuses cs', where: w.where, values: w.values, key: 'cs.id', id: 'cs.id', desc: true }, limit, offset, total, q !== ctx.data);
  return statusRowsInOrder(q, ids.map((r) => r.id));
}

/** The newest successful build named `job` on `ref` that has artifacts, or null. */
export async function latestArtifactsBuild(q: Queries, projectId: number, ref: string, job: string): Promise<CommitStatusRow | null> {
  const row = await q.get(
    `SELECT * FROM commit_statuses WHERE project_id = ? AND type = 'build' AND ref = ? AND name = ? AND status = 'success' AND artifacts_file IS NOT NULL
     ORDER BY id DESC LIMIT 1`, [projectId, ref, job]);
  return row ? toCommitStatus(row) : null;
}

/** Ids of the builds pending or running whose row has not changed since `before`, by id. */
export async function staleActiveBuildIds(q: Queries, before: string): Promise<number[]> {
  return (await q.all<{ id: number }>(
    `SELECT id FROM commit_statuses WHERE type = 'build' AND status IN ('pending', 'running') AND updated_at < ? ORDER BY id`, [before],
  )).map((r) => Number(r.id));
}

/** The build (of any status) whose token hashes to `tokenHash`, or null. */
export async function buildByTokenHash(q: Queries, tokenHash: string): Promise<CommitStatusRow | null> {
  const row = await q.get("SELECT * FROM commit_statuses WHERE token_hash = ? AND type = 'build'", [tokenHash]);
  return row ? toCommitStatus(row) : null;
}

/** The id of the project whose runners token hashes to `tokenHash`, or null. */
export async function projectIdOfRunnersTokenHash(q: Queries, tokenHash: string): Promise<number | null> {
  return (await q.get<{ id: number }>('SELECT id FROM projects WHERE runners_token_hash = ?', [tokenHash]))?.id ?? null;
}

/** The artifacts file name of a build, or null (none, or the build is gone). */
export async function artifactsFileOf(q: Queries, buildId: number): Promise<string | null> {
  return (await q.get<{ f: string | null }>('SELECT artifacts_file AS f FROM commit_statuses WHERE id = ?', [buildId]))?.f ?? null;
}

/** Set (or, with nulls, clear) a build's artifacts columns. */
export async function setArtifactsColumns(
  q: Queries, buildId: number, a: { file: string | null; size: number | null; expireAt: string | null }, at: string,
): Promise<void> {
  await q.run('UPDATE commit_statuses SET artifacts_file = ?, artifacts_size = ?, artifacts_expire_at = ?, updated_at = ? WHERE id = ?',
    [a.file, a.size, a.expireAt, at, buildId]);
}

/** The builds whose artifacts expired before `at` and are still there. */
export async function buildsWithExpiredArtifacts(q: Queries, at: string): Promise<{ id: number; projectId: number }[]> {
  return q.all<{ id: number; projectId: number }>(
    'SELECT id, project_id AS "projectId" FROM commit_statuses WHERE artifacts_expire_at IS NOT NULL AND artifacts_expire_at < ? AND artifacts_file IS NOT NULL',
    [at]);
}

/** How many builds are pending and how many running (the metrics' queue gauges). */
export async function countQueuedBuilds(q: Queries): Promise<{ pending: number; running: number }> {
  const rows = await q.all<{ status: string; n: number }>(
    `SELECT status, COUNT(*) AS n FROM commit_statuses WHERE status IN ('pending', 'running') AND type = 'build' GROUP BY status`);
  const count = (status: string) => Number(rows.find((b) => b.status === status)?.n ?? 0);
  return { pending: count('pending'), running: count('running') };
}
