/**
 * Pipelines: created on push from the .gitlab-ci.yml at the pushed sha (Ci::CreatePipelineService, 8.13), processed
 * stage by stage (ProcessPipelineService) and given their status, timestamps and duration from their latest statuses.
 * Importing this module registers the push listener.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { CommitStatusRow, PipelineRow } from '../../db/schema-ci.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { Queries } from '../../db/layer/types.js';
import { parseCiConfig, jobMatchesRef, type CiJob, type PipelineSource } from '../../ci/config.js';
import {
  isFinished, nextPipelineStatus, nextStageActions, pipelineCancelTargets, pipelineRetryTargets, pipelineStatus,
  type BuildStatus, type ProcessableBuild,
} from '../../ci/status.js';
import type { CiWhen } from '../../ci/config-types.js';
import { insertPipelineRow, insertStatusRow, isRowId, updatePipelineRow } from '../../db/builds.js';
import { isZeroSha, type CommitInfo } from '../../git/objects.js';
import { onPush } from '../repository/push.js';
import { projectNamespace } from '../projects/projects.js';
import { projectRepository } from '../repository/repositories.js';
import { applyEvent, changeBuildStatus, latestPipelineBuilds, retryBuilds } from './builds.js';
import { signalBuildsQueued } from './build-queue.js';
import { queuePipelineHook } from './ci-hooks.js';
import {
  lockPipeline, pipelineBuilds, pipelineById, pipelineStatusesNewestFirst, type PipelineListFilter,
} from '../../db/ci/pipelines.js';

export { countPipelines, listPipelines, pipelineFor, type PipelineListFilter } from '../../db/ci/pipelines.js';


/** What a pushed ref change needs to create a pipeline; `ref` is the branch or tag name (refs/... prefixes are stripped). */
export interface PipelinePush {
  ref: string;
  tag: boolean;
  before: string | null;
  after: string;
}

/** The path of the CI configuration file in a repository. */
export const CI_CONFIG_PATH = '.gitlab-ci.yml';

const SKIP_CI = /\[(ci skip|skip ci)\]/i;

/** A pipeline by id, or null, through `q` (ctx.data or a transaction). */
export async function findPipeline(q: Queries, id: number): Promise<PipelineRow | null> {
  return isRowId(id) ? pipelineById(q, id) : null;
}

/** The commit columns of a pipeline row (message and author, for the hook payloads). */
export function pipelineCommitColumns(commit: Pick<CommitInfo, 'message' | 'author'>): Pick<PipelineRow, 'commitMessage' | 'commitAuthorName' | 'commitAuthorEmail'> {
  return { commitMessage: commit.message, commitAuthorName: commit.author.name, commitAuthorEmail: commit.author.email };
}

/** Insert a pipeline row (status `created` unless given). */
export async function insertPipeline(q: Queries, values: Omit<Partial<PipelineRow>, 'createdAt' | 'updatedAt'>): Promise<PipelineRow> {
  const at = now();
  return insertPipelineRow(q, { status: 'created', tag: false, ...values, createdAt: at, updatedAt: at });
}

/** Build rows for the jobs of a valid config (status created). */
function buildValues(project: ProjectRow, pipeline: PipelineRow, jobs: CiJob[], user: UserRow | null): Partial<CommitStatusRow>[] {
  const at = now();
  return jobs.map((j) => ({
    type: 'build' as const, projectId: project.id, pipelineId: pipeline.id, name: j.name, stage: j.stage, stageIdx: j.stageIdx,
    ref: pipeline.ref, tag: pipeline.tag, status: 'created', allowFailure: j.allowFailure, when: j.when, userId: user?.id ?? null,
    commands: j.commands, options: JSON.stringify(j.options), yamlVariables: JSON.stringify(j.variables), tagList: JSON.stringify(j.tags),
    environment: j.environment?.name ?? null, coverageRegex: j.coverageRegex ?? null, createdAt: at, updatedAt: at,
  }));
}

/**
 * What a push's pipeline will be, read from the repository before any transaction: a pipeline born finished (an
 * invalid .gitlab-ci.yml: failed with yaml_errors; `[ci skip]`: skipped), or one with the jobs that match the ref.
 */
export type PreparedPipeline =
  | { kind: 'finished'; values: Omit<Partial<PipelineRow>, 'createdAt' | 'updatedAt'> }
  | { kind: 'jobs'; values: Omit<Partial<PipelineRow>, 'createdAt' | 'updatedAt'>; jobs: CiJob[] };

/** Where a pipeline's commit comes from: a pushed ref change, or a ref named to the trigger API. */
interface PipelineOrigin {
  ref: string;
  tag: boolean;
  before: string | null;
  sha: string;
  source: PipelineSource;
}

/**
 * Read the pipeline of `origin` from its commit's .gitlab-ci.yml (8.13 CreatePipelineService): null when the commit or
 * the file is missing or no job matches the ref; born failed for an invalid file; born skipped for `[ci skip]` unless
 * the trigger API asked (ignore_skip_ci). Reads the repository, so it runs before the writing transaction.
 */
async function preparePipeline(ctx: AppContext, project: ProjectRow, user: UserRow | null, origin: PipelineOrigin): Promise<PreparedPipeline | null> {
  const repo = projectRepository(ctx, project);
  const commit = await repo.readCommit(origin.sha);
  if (!commit) return null;
  const file = await repo.readFileAt(commit.sha, CI_CONFIG_PATH);
  if (!file) return null;
  const { ref, tag } = origin;
  const base = {
    projectId: project.id, ref, sha: commit.sha, beforeSha: origin.before, tag, userId: user?.id ?? null,
    committedAt: commit.committer.date.toISOString(), ...pipelineCommitColumns(commit),
  };
  const parsed = parseCiConfig(file.content.toString('utf8'));
  if (!parsed.ok) return { kind: 'finished', values: { ...base, status: 'failed', yamlErrors: parsed.error, finishedAt: now() } };
  if (origin.source !== 'trigger' && SKIP_CI.test(commit.message)) return { kind: 'finished', values: { ...base, status: 'skipped' } };
  const ns = await projectNamespace(ctx, project);
  const refCtx = { ref, tag, source: origin.source, projectPath: `${ns.path}/${project.path}` };
  const jobs = parsed.config.jobs.filter((j) => jobMatchesRef(j, refCtx));
  if (!jobs.length) return null;
  return { kind: 'jobs', values: base, jobs };
}

/**
 * Read what the pipeline of a pushed branch or tag needs (8.13 CreatePipelineService for pushes): null when builds
 * are disabled, the ref was deleted, the commit or .gitlab-ci.yml is missing, or no job matches the ref. Reads the
 * repository, so it runs before the transaction that writes the pipeline (writePreparedPipeline).
 */
export async function preparePipelineForPush(ctx: AppContext, project: ProjectRow, user: UserRow | null, push: PipelinePush): Promise<PreparedPipeline | null> {
  if (!project.buildsEnabled || isZeroSha(push.after)) return null;
  const ref = push.ref.replace(/^refs\/(heads|tags)\//, '');
  return preparePipeline(ctx, project, user, { ref, tag: push.tag, before: push.before ?? null, sha: push.after, source: 'push' });
}

/**
 * Read the pipeline the trigger API asks for on a branch or tag (8.13 CreatePipelineService with a trigger request:
 * no user, `[ci skip]` ignored, a tag of that name wins over a branch as git's own lookup does; `refs/heads/` and
 * `refs/tags/` prefixes are stripped). Null when builds are disabled, the ref names no branch or tag, or no pipeline
 * comes of it (see preparePipeline).
 */
export async function preparePipelineForTrigger(ctx: AppContext, project: ProjectRow, refName: string): Promise<PreparedPipeline | null> {
  if (!project.buildsEnabled) return null;
  const ref = refName.replace(/^refs\/(heads|tags)\//, '');
  const repo = projectRepository(ctx, project);
  const tagged = (await repo.refValue(`refs/tags/${ref}`)) ? await repo.resolveRef(`refs/tags/${ref}`) : null;
  const sha = tagged ?? (await repo.resolveBranch(ref));
  if (!sha) return null;
  return preparePipeline(ctx, project, null, { ref, tag: tagged !== null, before: null, sha, source: 'trigger' });
}

/**
 * Write a prepared pipeline inside `tx` (the push's transaction, or one of its own): a pipeline born finished gets its
 * Pipeline Hook with the insert; otherwise its builds are created and the pipeline processed (first stage pending).
 */
export async function writePreparedPipeline(ctx: AppContext, tx: Queries, project: ProjectRow, user: UserRow | null, prepared: PreparedPipeline): Promise<PipelineRow> {
  if (prepared.kind === 'finished') {
    const p = await insertPipeline(tx, prepared.values);
    await queuePipelineHook(ctx, tx, p);
    return p;
  }
  const pipeline = await insertPipeline(tx, prepared.values);
  for (const values of buildValues(project, pipeline, prepared.jobs, user)) await insertStatusRow(tx, values);
  return (await processPipeline(ctx, pipeline.id, tx)) ?? pipeline;
}

/**
 * Create the pipeline of a pushed branch or tag: preparePipelineForPush, then writePreparedPipeline in a transaction
 * of its own. Returns null, saving nothing, when there is no pipeline to make (see preparePipelineForPush).
 */
export async function createPipelineForPush(ctx: AppContext, project: ProjectRow, user: UserRow | null, push: PipelinePush): Promise<PipelineRow | null> {
  const prepared = await preparePipelineForPush(ctx, project, user, push);
  if (!prepared) return null;
  return ctx.data.transaction((tx) => writePreparedPipeline(ctx, tx, project, user, prepared));
}

/** A status row as the status logic sees it. */
function asStatus(r: CommitStatusRow): ProcessableBuild & { row: CommitStatusRow } {
  return { status: r.status as BuildStatus, allowFailure: r.allowFailure, when: r.when as CiWhen, stageIdx: r.stageIdx, row: r };
}

/**
 * One processing pass (ProcessPipelineService): created builds of each stage whose earlier stages are finished are
 * enqueued or skipped by their `when`; then the pipeline status is recomputed. Runs in `tx` when given. Returns the
 * pipeline, or null when it does not exist.
 */
export async function processPipeline(ctx: AppContext, pipelineId: number, tx?: Queries): Promise<PipelineRow | null> {
  const run = async (q: Queries) => {
    const latest = (await latestPipelineBuilds(q, pipelineId)).map(asStatus);
    const actions = nextStageActions(latest);
    const queued: CommitStatusRow[] = [];
    for (const b of actions.enqueue) await applyEvent(ctx, q, b.row, 'enqueue', {}, queued);
    await signalBuildsQueued(q, queued); // one wake-up for the stage's builds
    for (const b of actions.skip) await applyEvent(ctx, q, b.row, 'skip');
    return updatePipelineStatus(ctx, q, pipelineId);
  };
  return tx ? run(tx) : ctx.data.transaction(run);
}

/** The latest statuses (builds and generic) of a pipeline: highest id per name. */
export async function latestPipelineStatuses(q: Queries, pipelineId: number): Promise<CommitStatusRow[]> {
  const rows = await pipelineStatusesNewestFirst(q, pipelineId);
  const seen = new Set<string>();
  return rows.filter((r) => (seen.has(r.name) ? false : (seen.add(r.name), true))).reverse();
}

/**
 * Pipeline duration in seconds (8.13 Gitlab::Ci::PipelineDuration): the length of the union of the running periods
 * (started_at to finished_at, or now) of its latest started builds, so parallel builds count once and gaps do not
 * count. Null when no build has started.
 */
export function pipelineDuration(builds: readonly Pick<CommitStatusRow, 'startedAt' | 'finishedAt'>[], at = Date.now()): number | null {
  const periods = builds
    .filter((b) => b.startedAt)
    .map((b) => [Date.parse(b.startedAt as string), b.finishedAt ? Date.parse(b.finishedAt) : at] as const)
    .filter(([s, e]) => Number.isFinite(s) && Number.isFinite(e))
    .sort((a, b) => a[0] - b[0]);
  if (!periods.length) return null;
  let total = 0;
  let [curStart, curEnd] = periods[0]!;
  for (const [s, e] of periods.slice(1)) {
    if (s > curEnd) {
      total += Math.max(0, curEnd - curStart);
      curStart = s;
      curEnd = e;
    } else if (e > curEnd) curEnd = e;
  }
  total += Math.max(0, curEnd - curStart);
  return Math.round(total / 1000);
}

/**
 * Recompute a pipeline's status from its latest statuses (8.13 update_status): the pipeline event for the computed
 * status, started_at on leaving created/pending for running, finished_at and duration on reaching success, failed or
 * canceled (finished_at is cleared again when a retry makes it active). A change queues the Pipeline Hook in the same
 * transaction (services/ci/ci-hooks.ts). Returns the pipeline. On PostgreSQL the pipeline row is locked first, so two
 * daemons changing builds of one pipeline recompute its status one after the other, each from the other's commit.
 */
export async function updatePipelineStatus(ctx: AppContext, q: Queries, pipelineId: number): Promise<PipelineRow | null> {
  if (!isRowId(pipelineId)) return null;
  const p = await lockPipeline(q, pipelineId);
  if (!p) return null;
  const latest = await latestPipelineStatuses(q, pipelineId);
  const computed = pipelineStatus(latest.map(asStatus), { yamlErrors: !!p.yamlErrors });
  const current = p.status as BuildStatus;
  const next = nextPipelineStatus(current, computed);
  if (next === current) return p;
  const at = now();
  const set: Partial<PipelineRow> = { status: next, updatedAt: at };
  if (next === 'running' && !p.startedAt) set.startedAt = at;
  if (isFinished(next)) {
    set.finishedAt = at;
    set.duration = pipelineDuration(latest.filter((r) => r.type === 'build'));
  } else if (next === 'pending' || next === 'running') set.finishedAt = null;
  const updated = await updatePipelineRow(q, pipelineId, set);
  if (!updated) return p;
  await queuePipelineHook(ctx, q, updated);
  return updated;
}

/** Scopes of GET /projects/:id/pipelines. */
export const PIPELINE_SCOPES = ['running', 'pending', 'finished', 'branches', 'tags'] as const;
/** One of PIPELINE_SCOPES. */
export type PipelineScope = (typeof PIPELINE_SCOPES)[number];

/** The list filter of a scope; `branches`/`tags` read the ref names that exist now from the repository. */
export async function pipelineListFilter(ctx: AppContext, project: ProjectRow, scope?: PipelineScope): Promise<PipelineListFilter> {
  if (scope !== 'branches' && scope !== 'tags') return { scope };
  const prefix = scope === 'branches' ? 'refs/heads/' : 'refs/tags/';
  const repo = projectRepository(ctx, project);
  const refs = repo.exists() ? [...(await repo.refsUnder(prefix)).keys()].map((r) => r.slice(prefix.length)) : [];
  return { scope, refs };
}

/** A pipeline of a project by id, or null. */
export async function findProjectPipeline(ctx: AppContext, projectId: number, id: number): Promise<PipelineRow | null> {
  const p = await findPipeline(ctx.data, id);
  return p && p.projectId === projectId ? p : null;
}

/**
 * Retry a pipeline: every latest build that failed or was canceled and can be retried gets a copy (8.x
 * `builds.latest.failed_or_canceled`), and the pipeline's status is recomputed, all in one transaction: the answer
 * reads `pending` at once.
 */
export async function retryPipeline(ctx: AppContext, pipeline: PipelineRow, user: UserRow | null): Promise<PipelineRow> {
  const latest = await latestPipelineBuilds(ctx.data, pipeline.id);
  const targets = pipelineRetryTargets(latest.map((b) => ({ status: b.status as BuildStatus, commands: b.commands, row: b })));
  await retryBuilds(ctx, targets.map((t) => t.row), user);
  return (await findPipeline(ctx.data, pipeline.id)) ?? pipeline;
}

/** Cancel a pipeline: its pending and running builds are canceled; created ones are then skipped by processing. */
export async function cancelPipeline(ctx: AppContext, pipeline: PipelineRow): Promise<PipelineRow> {
  const rows = await pipelineBuilds(ctx.data, pipeline.id);
  const targets = pipelineCancelTargets(rows.map((b) => ({ status: b.status as BuildStatus, row: b })));
  for (const t of targets) await changeBuildStatus(ctx, t.row.id, 'cancel');
  return (await findPipeline(ctx.data, pipeline.id)) ?? pipeline;
}

// The pipelines of a push are written in the push's own transaction, with its events: what they need (the commit and
// its .gitlab-ci.yml) is read from the repository before the transaction starts (prepare), never inside it.
onPush({
  name: 'pipelines',
  async prepare(ctx, push) {
    const out: PreparedPipeline[] = [];
    for (const u of push.updates) {
      const tag = u.ref.startsWith('refs/tags/');
      if (!tag && !u.ref.startsWith('refs/heads/')) continue;
      if (isZeroSha(u.after)) continue;
      const prepared = await preparePipelineForPush(ctx, push.project, push.user, { ref: u.ref, tag, before: u.before, after: u.after });
      if (prepared) out.push(prepared);
    }
    return out;
  },
  async inTransactionAsync(tx, ctx, push, prepared) {
    for (const p of (prepared as PreparedPipeline[] | undefined) ?? []) await writePreparedPipeline(ctx, tx, push.project, push.user, p);
  },
});
