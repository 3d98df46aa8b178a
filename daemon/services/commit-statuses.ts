/**
 * Commit statuses posted by external CI (GenericCommitStatus, lib/api/commit_statuses.rb 8.12) and the statuses list
 * of a commit. Statuses live in commit_statuses (type 'generic') and belong to a pipeline for (ref, sha).
 */
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import type { CommitStatusRow } from '../db/schema-ci.js';
import type { Queries } from '../db/layer/types.js';
import { toCommitStatus } from '../db/rows.js';
import { insertStatusRow, updateStatusRow } from '../db/builds.js';
import { statusRowsInOrder } from '../db/builds.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { badRequestMessage, notFound } from '../errors.js';
import { transition, type BuildEvent, type BuildStatus } from '../ci/status.js';
import type { CommitInfo } from '../git/objects.js';
import { applyEvent } from './builds.js';
import { insertPipeline, pipelineCommitColumns, pipelineFor, updatePipelineStatus } from './pipelines.js';
import { projectRepository } from './repositories.js';
import { keysetPage } from '../db/keyset.js';

/** The states a status may be posted with. */
export const COMMIT_STATUS_STATES = ['pending', 'running', 'success', 'failed', 'canceled'] as const;
/** One of COMMIT_STATUS_STATES. */
export type CommitStatusState = (typeof COMMIT_STATUS_STATES)[number];

/** What POST /statuses/:sha carries. */
export interface PostStatusInput {
  state: string;
  ref?: string;
  name?: string;
  targetUrl?: string;
  description?: string;
}

/** The commit a sha (or any revision) names in the project's repository, or throws 404 `Commit Not Found`. */
export async function commitOrNotFound(ctx: AppContext, project: ProjectRow, sha: string): Promise<CommitInfo> {
  const repo = projectRepository(ctx, project);
  // A missing repository or an unreadable revision reads as an unknown commit.
  const commit = sha && repo.exists() ? await repo.readCommit(sha).catch(() => null) : null;
  if (!commit) throw notFound('Commit');
  return commit;
}

/** The ref a status defaults to: the default branch when it contains the commit, else the first such branch (by name). */
async function defaultRefFor(ctx: AppContext, project: ProjectRow, sha: string): Promise<string | null> {
  const repo = projectRepository(ctx, project);
  const heads = await repo.refsUnder('refs/heads/');
  const names = [...heads.keys()].map((r) => r.slice('refs/heads/'.length)).sort();
  const ordered = [project.defaultBranch, ...names.filter((n) => n !== project.defaultBranch)];
  for (const name of ordered) {
    const tip = heads.get(`refs/heads/${name}`);
    if (!tip) continue;
    if (tip === sha || (await repo.isAncestor(sha, tip))) return name;
  }
  return null;
}

/** The state-machine error text of GitLab (StateMachines::InvalidTransition). */
const invalidTransition = (event: BuildEvent, from: string) =>
  badRequestMessage(`Cannot transition status via :${event} from :${from} (Reason(s): Status cannot transition via "${event}")`);

/** The events a posted state fires, in order; `soft` ones may fail silently (running = enqueue, then run!). */
const EVENTS: Record<CommitStatusState, { event: BuildEvent; soft?: boolean }[]> = {
  pending: [{ event: 'enqueue' }],
  running: [{ event: 'enqueue', soft: true }, { event: 'run' }],
  success: [{ event: 'success' }],
  failed: [{ event: 'drop' }],
  canceled: [{ event: 'cancel' }],
};

/**
 * Post a status for a commit (8.12 rules): reuse the caller's running or pending status of the same name and ref in
 * the (ref, sha) pipeline, else start a new one in `created`; then apply the state's events (an impossible move is a
 * 400 with the state-machine text and changes nothing). The pipeline is created when missing and its status updated.
 */
export async function postCommitStatus(ctx: AppContext, project: ProjectRow, user: UserRow, sha: string, input: PostStatusInput): Promise<CommitStatusRow> {
  const commit = await commitOrNotFound(ctx, project, sha);
  const ref = input.ref || (await defaultRefFor(ctx, project, commit.sha));
  if (!ref) throw notFound('References for commit');
  if (!(COMMIT_STATUS_STATES as readonly string[]).includes(input.state)) throw badRequestMessage('invalid state');
  const state = input.state as CommitStatusState;
  const name = input.name || 'default';
  return ctx.data.transaction(async (tx) => {
    // Two posts for one commit and ref through two daemons: the second waits here for the first to commit, so both
    // find (or one makes) the same pipeline and the same running status (SQLite's single writer already serialises).
    if (tx.dialect.name === 'postgres') await tx.get('SELECT pg_advisory_xact_lock(?::int, hashtext(?)) AS locked', [project.id, `${ref} ${commit.sha}`]);
    let pipeline = await pipelineFor(tx, project.id, ref, commit.sha);
    pipeline ??= await insertPipeline(tx, {
      projectId: project.id, ref, sha: commit.sha, userId: user.id, tag: false, committedAt: commit.committer.date.toISOString(),
      ...pipelineCommitColumns(commit),
    });
    const at = now();
    const found = await tx.get(
      `SELECT * FROM commit_statuses WHERE type = 'generic' AND project_id = ? AND pipeline_id = ? AND user_id = ? AND name = ? AND ref = ?
         AND status IN ('running', 'pending') ORDER BY id DESC LIMIT 1`,
      [project.id, pipeline.id, user.id, name, ref]);
    let status: CommitStatusRow | null = found ? toCommitStatus(found) : null;
    // Check the whole move before writing anything.
    let from = (status?.status ?? 'created') as BuildStatus;
    for (const step of EVENTS[state]) {
      const to = transition(from, step.event);
      if (to) from = to;
      else if (!step.soft) throw invalidTransition(step.event, from);
    }
    const attrs: Partial<CommitStatusRow> = {};
    if (input.targetUrl) attrs.targetUrl = input.targetUrl;
    if (input.description) attrs.description = input.description;
    if (!status) {
      status = await insertStatusRow(tx, {
        type: 'generic', projectId: project.id, pipelineId: pipeline.id, name, stage: 'external', ref, status: 'created',
        userId: user.id, targetUrl: input.targetUrl || null, description: input.description || null, createdAt: at, updatedAt: at,
      });
    } else if (Object.keys(attrs).length) {
      status = (await updateStatusRow(tx, status.id, { ...attrs, updatedAt: at })) ?? status;
    }
    for (const step of EVENTS[state]) {
      if (!status) break;
      status = (await applyEvent(ctx, tx, status, step.event)) ?? status;
    }
    await updatePipelineStatus(ctx, tx, pipeline.id);
    return status as CommitStatusRow;
  });
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
export async function countCommitStatuses(ctx: AppContext, projectId: number, sha: string, f: StatusListFilter, q: Queries = ctx.data): Promise<number> {
  const w = statusListWhere(projectId, sha, f);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM commit_statuses cs WHERE ${w.where}`, w.values))?.n ?? 0);
}

/** One page of a commit's statuses (builds and generic ones), oldest first; with `total` a deep page costs what the first does. */
export async function listCommitStatuses(
  ctx: AppContext, projectId: number, sha: string, f: StatusListFilter, limit: number, offset: number, total?: number, q: Queries = ctx.data,
): Promise<CommitStatusRow[]> {
  const w = statusListWhere(projectId, sha, f);
  const ids = await keysetPage<{ id: number }>(ctx, q, { from: 'commit_statuses cs', where: w.where, values: w.values, key: 'cs.id', id: 'cs.id', desc: false }, limit, offset, total, q !== ctx.data);
  return statusRowsInOrder(q, ids.map((r) => r.id));
}

/** The sha of each pipeline among the statuses (for presenting them). */
export async function pipelineShas(ctx: AppContext, rows: readonly CommitStatusRow[], q: Queries = ctx.data): Promise<Map<number, string>> {
  const ids = [...new Set(rows.map((r) => r.pipelineId))];
  if (!ids.length) return new Map();
  const found = await q.all<{ id: number; sha: string }>(`SELECT id, sha FROM pipelines WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(ids)]);
  return new Map(found.map((p) => [p.id, p.sha]));
}
