/**
 * Commit statuses posted by external CI (GenericCommitStatus, lib/api/commit_statuses.rb 8.12) and the statuses list
 * of a commit. Statuses live in commit_statuses (type 'generic') and belong to a pipeline for (ref, sha).
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { CommitStatusRow } from '../../db/schema-ci.js';
import type { Queries } from '../../db/layer/types.js';
import { insertStatusRow, pipelinesByIds, updateStatusRow } from '../../db/builds.js';
import { activeGenericStatus, lockCommitStatusPosts } from '../../db/ci/commit-statuses.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { badRequestMessage, notFound } from '../../errors.js';
import { transition, type BuildEvent, type BuildStatus } from '../../ci/status.js';
import type { CommitInfo } from '../../git/objects.js';
import { applyEvent } from './builds.js';
import { insertPipeline, pipelineCommitColumns, pipelineFor, updatePipelineStatus } from './pipelines.js';
import { projectRepository } from '../repository/repositories.js';

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
    await lockCommitStatusPosts(tx, project.id, `${ref} ${commit.sha}`);
    let pipeline = await pipelineFor(tx, project.id, ref, commit.sha);
    pipeline ??= await insertPipeline(tx, {
      projectId: project.id, ref, sha: commit.sha, userId: user.id, tag: false, committedAt: commit.committer.date.toISOString(),
      ...pipelineCommitColumns(commit),
    });
    const at = now();
    let status = await activeGenericStatus(tx, { projectId: project.id, pipelineId: pipeline.id, userId: user.id, name, ref });
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

export { countCommitStatuses, listCommitStatuses, type StatusListFilter } from '../../db/ci/commit-statuses.js';

/** The sha of each pipeline among the statuses (for presenting them). */
export async function pipelineShas(ctx: AppContext, rows: readonly CommitStatusRow[], q: Queries = ctx.data): Promise<Map<number, string>> {
  const found = await pipelinesByIds(q, rows.map((r) => r.pipelineId));
  return new Map([...found.values()].map((p) => [p.id, p.sha]));
}
