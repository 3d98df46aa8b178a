/** Commit statuses' data module: a commit's statuses (builds and generic ones) and the generic status a post updates. `q`: the database or a transaction. */
import type { AppContext } from '../../context.js';
import { statusRowsInOrder } from '../builds.js';
import { keysetPage } from '../keyset.js';
import type { Queries } from '../layer/types.js';
import { toCommitStatus } from '../rows.js';
import type { CommitStatusRow } from '../schema-ci.js';

/** On PostgreSQL, serialise the status posts of one project and key (ref and sha) until the end of the transaction. */
export async function lockCommitStatusPosts(tx: Queries, projectId: number, key: string): Promise<void> {
  if (tx.dialect.name === 'postgres') await tx.get('SELECT pg_advisory_xact_lock(?::int, hashtext(?)) AS locked', [projectId, key]);
}

/** The newest running or pending generic status of a pipeline posted by the user under `name` and `ref`, or null. */
export async function activeGenericStatus(
  q: Queries, s: { projectId: number; pipelineId: number; userId: number; name: string; ref: string },
): Promise<CommitStatusRow | null> {
  const found = await q.get(
    `SELECT * FROM commit_statuses WHERE type = 'generic' AND project_id = ? AND pipeline_id = ? AND user_id = ? AND name = ? AND ref = ?
       AND status IN ('running', 'pending') ORDER BY id DESC LIMIT 1`,
    [s.projectId, s.pipelineId, s.userId, s.name, s.ref]);
  return found ? toCommitStatus(found) : null;
}

/** Filters of a commit's statuses list. */
export interface StatusListFilter {
  ref?: string;
  stage?: string;
  name?: string;
  /** Every status, not only the latest per (pipeline, name). */
  all?: boolean;
}

function statusListWhere(projectId: number, sha: string, f: StatusListFilter): { where: string; values: unknown[] } {
  let where = 'cs.pipeline_id IN (SELECT p.id FROM pipelines p WHERE p.project_id = ? AND p.sha = ?)';
  const values: unknown[] = [projectId, sha];
  if (!f.all) where += ' AND cs.id IN (SELECT MAX(c2.id) FROM commit_statuses c2 WHERE c2.pipeline_id = cs.pipeline_id GROUP BY c2.name)';
  if (f.ref) (where += ' AND cs.ref = ?'), values.push(f.ref);
  if (f.stage) (where += ' AND cs.stage = ?'), values.push(f.stage);
  if (f.name) (where += ' AND cs.name = ?'), values.push(f.name);
  return { where, values };
}

/** How many statuses of a commit match the filter. */
export async function countCommitStatuses(q: Queries, projectId: number, sha: string, f: StatusListFilter): Promise<number> {
  const w = statusListWhere(projectId, sha, f);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM commit_statuses cs WHERE ${w.where}`, w.values))?.n ?? 0);
}

/** One page of a commit's statuses (builds and generic ones), oldest first; with `total` a deep page costs what the first does. */
export async function listCommitStatuses(
  ctx: AppContext, q: Queries, projectId: number, sha: string, f: StatusListFilter, limit: number, offset: number, total?: number,
): Promise<CommitStatusRow[]> {
  const w = statusListWhere(projectId, sha, f);
  const ids = await keysetPage<{ id: number }>(ctx, q, { from: 'commit_statuses cs', where: w.where, values: w.values, key: 'cs.id', id: 'cs.id', desc: false }, limit, offset, total, q !== ctx.data);
  return statusRowsInOrder(q, ids.map((r) => r.id));
}
