/**
 * Pipelines' data module (the reads and list pages of pipelines; rows are written through db/builds.ts). `q`: the
 * database or a transaction. Processing and status rules stay in services/ci/pipelines.ts.
 */
import type { AppContext } from '../../context.js';
import { keysetPage } from '../keyset.js';
import type { Queries } from '../layer/types.js';
import { toCommitStatus, toPipeline } from '../rows.js';
import type { CommitStatusRow, PipelineRow } from '../schema-ci.js';
import { rowsWithIds } from '../sql.js';

/** A pipeline by id (a valid row id), or null. */
export async function pipelineById(q: Queries, id: number): Promise<PipelineRow | null> {
  const row = await q.get('SELECT * FROM pipelines WHERE id = ?', [id]);
  return row ? toPipeline(row) : null;
}

/** A pipeline by id, its row locked on PostgreSQL until the end of the transaction (FOR NO KEY UPDATE); null when gone. */
export async function lockPipeline(tx: Queries, id: number): Promise<PipelineRow | null> {
  const row = await tx.get(`SELECT * FROM pipelines WHERE id = ?${tx.dialect.name === 'postgres' ? ' FOR NO KEY UPDATE' : ''}`, [id]);
  return row ? toPipeline(row) : null;
}

/** Every status (builds and generic) of a pipeline, newest first. */
export async function pipelineStatusesNewestFirst(q: Queries, pipelineId: number): Promise<CommitStatusRow[]> {
  return (await q.all('SELECT * FROM commit_statuses WHERE pipeline_id = ? ORDER BY id DESC', [pipelineId])).map(toCommitStatus);
}

/** Every status (builds and generic) of a pipeline, by stage then id. */
export async function pipelineStatusesByStage(q: Queries, pipelineId: number): Promise<CommitStatusRow[]> {
  return (await q.all('SELECT * FROM commit_statuses WHERE pipeline_id = ? ORDER BY stage_idx, id', [pipelineId])).map(toCommitStatus);
}

/** Every build of a pipeline, by id. */
export async function pipelineBuilds(q: Queries, pipelineId: number): Promise<CommitStatusRow[]> {
  return (await q.all("SELECT * FROM commit_statuses WHERE pipeline_id = ? AND type = 'build' ORDER BY id", [pipelineId])).map(toCommitStatus);
}

/** The statuses of the pipelines of a commit in a project. */
export async function commitPipelineStatuses(q: Queries, projectId: number, sha: string): Promise<string[]> {
  return (await q.all<{ status: string }>('SELECT status FROM pipelines WHERE project_id = ? AND sha = ?', [projectId, sha])).map((r) => r.status);
}

/** The newest pipeline of a project for (ref, sha), or null. */
export async function pipelineFor(q: Queries, projectId: number, ref: string | null, sha: string): Promise<PipelineRow | null> {
  const row = ref === null
    ? await q.get('SELECT * FROM pipelines WHERE project_id = ? AND sha = ? AND ref IS NULL ORDER BY id DESC LIMIT 1', [projectId, sha])
    : await q.get('SELECT * FROM pipelines WHERE project_id = ? AND sha = ? AND ref = ? ORDER BY id DESC LIMIT 1', [projectId, sha, ref]);
  return row ? toPipeline(row) : null;
}

/** A pipeline list filter: the scope, with the current branch or tag names for `branches`/`tags`. */
export interface PipelineListFilter {
  scope?: 'running' | 'pending' | 'finished' | 'branches' | 'tags';
  /** For branches/tags: the ref names that exist now. */
  refs?: readonly string[];
}

function pipelineListWhere(dialect: 'sqlite' | 'postgres', projectId: number, f: PipelineListFilter): { where: string; values: unknown[] } {
  const values: unknown[] = [projectId];
  let where = 'pl.project_id = ?';
  switch (f.scope) {
    case 'running':
    case 'pending':
      where += ' AND pl.status = ?';
      values.push(f.scope);
      break;
    case 'finished':
      where += " AND pl.status IN ('success', 'failed', 'canceled')";
      break;
    case 'branches':
    case 'tags': {
      const refs = [...(f.refs ?? [])];
      if (!refs.length) return { where: '1 = 0', values: [] };
      // The newest pipeline of each existing ref.
      where += ` AND pl.id IN (SELECT MAX(p2.id) FROM pipelines p2 WHERE p2.project_id = ? AND p2.tag = ${f.scope === 'tags' ? 'TRUE' : 'FALSE'}
        AND p2.ref IN (SELECT value FROM ${dialect === 'postgres' ? 'json_array_elements_text(?::json) AS t(value)' : 'json_each(?)'}) GROUP BY p2.ref)`;
      values.push(projectId, JSON.stringify(refs));
      break;
    }
    default:
      break;
  }
  return { where, values };
}

/** How many pipelines of a project match the filter. */
export async function countPipelines(q: Queries, projectId: number, f: PipelineListFilter): Promise<number> {
  const w = pipelineListWhere(q.dialect.name, projectId, f);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM pipelines pl WHERE ${w.where}`, w.values))?.n ?? 0);
}

/** One page of a project's pipelines, newest first; with `total` (countPipelines) a deep page costs what the first does (db/keyset.ts). */
export async function listPipelines(
  ctx: AppContext, q: Queries, projectId: number, f: PipelineListFilter, limit: number, offset: number, total?: number,
): Promise<PipelineRow[]> {
  const w = pipelineListWhere(q.dialect.name, projectId, f);
  const ids = (await keysetPage<{ id: number }>(ctx, q, { from: 'pipelines pl', where: w.where, values: w.values, key: 'pl.id', id: 'pl.id', desc: true }, limit, offset, total, q !== ctx.data)).map((r) => r.id);
  if (!ids.length) return [];
  const rows = new Map((await rowsWithIds(q, 'pipelines', ids)).map((r) => [r.id as number, toPipeline(r)]));
  return ids.flatMap((id) => rows.get(id) ?? []);
}

/** A project's pipelines of `ref` whose commit is one of `shas`, newest first, at most `limit`. */
export async function pipelinesOfShas(q: Queries, projectId: number, ref: string, shas: readonly string[], limit: number): Promise<PipelineRow[]> {
  const set = q.dialect.name === 'postgres' ? 'json_array_elements_text(?::json) AS t(value)' : 'json_each(?)';
  const rows = await q.all<Record<string, unknown>>(
    `SELECT * FROM pipelines WHERE project_id = ? AND ref = ? AND sha IN (SELECT value FROM ${set}) ORDER BY id DESC LIMIT ?`,
    [projectId, ref, JSON.stringify(shas), limit],
  );
  return rows.map(toPipeline);
}
