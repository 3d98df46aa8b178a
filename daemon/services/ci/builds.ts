/**
 * Builds (commit_statuses of type 'build'): the state machine of GitLab 8.13 (commit_status.rb, ci/build.rb) applied
 * to rows, and the manual actions (cancel, retry, play, erase, keep artifacts). Every change ends by processing or
 * recomputing the pipeline (services/ci/pipelines.ts), then, for finished builds, extracting coverage from the trace and
 * telling the onBuildFinished listeners. Everything runs on the data layer (ctx.data), on either engine.
 */
import type { AppContext } from '../../context.js';
import { now, stateSlot } from '../../context.js';
import type { CommitStatusRow } from '../../db/schema-ci.js';
import type { UserRow } from '../../db/schema.js';
import type { Database, Queries } from '../../db/layer/types.js';
import { buildsToReprocess, canErase, canPlay, canRetry, isFinished, transition, type BuildEvent, type BuildStatus } from '../../ci/status.js';
import { extractCoverage } from '../../ci/coverage.js';
import type { CiWhen } from '../../ci/config-types.js';
import { buildById, insertStatusRow, isRowId, staleActiveBuildIds, statusRowById, updateStatusRow } from '../../db/builds.js';
import { pipelineBuilds } from '../../db/ci/pipelines.js';
import { processPipeline, updatePipelineStatus } from './pipelines.js';
import { notifyTrace, readTrace, removeTrace } from './traces.js';
import { artifactsFilePath, removeArtifacts, removeExpiredArtifacts } from './artifacts.js';
import { periodicWorker, type BackgroundWorker } from '../../background.js';
import { queueBuildHook } from './ci-hooks.js';
import { recordDeploymentIn } from '../environments/index.js';
import { signalBuildQueued } from './build-queue.js';

/** The events changeBuildStatus accepts (the runner, the API and processing fire them). */
export type BuildStatusEvent = 'enqueue' | 'run' | 'success' | 'drop' | 'cancel' | 'skip';

/** Something that reacts to a finished build (success, failed or canceled). */
export type BuildFinishedListener = (ctx: AppContext, build: CommitStatusRow) => void | Promise<void>;

const finishedListeners: BuildFinishedListener[] = [];
// Hook points (runner-protocol.md section 6), to be registered here by the merge request helpers:
// - build_failed todo: on every build that reaches `failed` (allowed failures included), a BUILD_FAILED todo for the
//   author of each open MR whose source branch is the build's ref and whose pipeline sha is the build's sha.
// - merge-when-build-succeeds: when the build's pipeline reaches `success`, queue the merge of MRs with MWBS set
//   (listeners see the build; read its pipeline with findPipeline to check the pipeline status).
// - retry closes the MR author's pending todos: see onBuildRetried.

/** Register a listener for finished builds (merge-when-build-succeeds, build_failed todo); returns its remover. */
export function onBuildFinished(listener: BuildFinishedListener): () => void {
  finishedListeners.push(listener);
  return () => {
    const i = finishedListeners.indexOf(listener);
    if (i >= 0) finishedListeners.splice(i, 1);
  };
}

/** Something that reacts to a retried build (old and new row), e.g. closing the MR author's pending todos. */
export type BuildRetriedListener = (ctx: AppContext, old: CommitStatusRow, retried: CommitStatusRow) => void | Promise<void>;
const retriedListeners: BuildRetriedListener[] = [];

/** Register a listener for build retries; returns its remover. */
export function onBuildRetried(listener: BuildRetriedListener): () => void {
  retriedListeners.push(listener);
  return () => {
    const i = retriedListeners.indexOf(listener);
    if (i >= 0) retriedListeners.splice(i, 1);
  };
}

// After-finish work runs after the response; tests (and shutdown) can wait for it with settleBuildWork.
const PENDING_WORK = stateSlot('after-finish build work', () => new Set<Promise<void>>());

/** Wait until the coverage extraction and listeners of every build these daemons finished so far have run. */
export async function settleBuildWork(...ctxs: AppContext[]): Promise<void> {
  if (!ctxs.length) throw new Error('settleBuildWork: name the daemons whose work to wait for (their contexts)');
  for (const ctx of ctxs) {
    const pendingWork = ctx.state.get(PENDING_WORK);
    while (pendingWork.size) await Promise.all([...pendingWork]);
  }
}

function track(ctx: AppContext, work: Promise<void>): void {
  const p = work.catch((e: unknown) => {
    process.stderr.write(`gantry: build listener failed: ${(e as Error)?.message ?? String(e)}\n`);
  });
  const pendingWork = ctx.state.get(PENDING_WORK);
  pendingWork.add(p);
  void p.finally(() => pendingWork.delete(p));
}

/** A build by id (type 'build' only), or null; read through `q` (a transaction) when given. */
export async function findBuild(ctx: AppContext, id: number): Promise<CommitStatusRow | null> {
  return isRowId(id) ? buildById(ctx.data, id) : null;
}

/** A build of a project by id, or null (another project's build is not found). */
export async function findProjectBuild(ctx: AppContext, projectId: number, id: number): Promise<CommitStatusRow | null> {
  const b = await findBuild(ctx, id);
  return b && b.projectId === projectId ? b : null;
}

/**
 * The columns one state-machine event changes (8.13 before_transition callbacks): queued_at on entering pending
 * (leaving created, or a played manual build), started_at on reaching running, finished_at on success/failed/canceled.
 */
export function transitionColumns(row: Pick<CommitStatusRow, 'status' | 'queuedAt'>, event: BuildEvent, at = now()): Partial<CommitStatusRow> | null {
  const to = transition(row.status as BuildStatus, event);
  if (!to) return null;
  const set: Partial<CommitStatusRow> = { status: to, updatedAt: at };
  if (to === 'pending' || (row.status === 'created' && to === 'running')) set.queuedAt = row.queuedAt ?? at;
  if (to === 'running') set.startedAt = at;
  if (isFinished(to)) set.finishedAt = at;
  return set;
}

/**
 * Apply one event to a status row inside a transaction; the updated row, or null when the move is impossible or the
 * row changed meanwhile (the UPDATE is conditional on the status it was read with, so two daemons never apply two
 * moves from one state). A build (not a generic status) that moved gets its Build Hook queued in the same
 * transaction (services/ci/ci-hooks.ts), and its deployment recorded when it succeeded with an environment
 * (services/environments/); one that stopped running loses its sealed token.
 */
export async function applyEvent(
  ctx: AppContext, tx: Queries, row: CommitStatusRow, event: BuildEvent, extra: Partial<CommitStatusRow> = {}, queued?: CommitStatusRow[],
): Promise<CommitStatusRow | null> {
  const set = transitionColumns(row, event);
  if (!set) return null;
  if (set.status !== 'running' && row.tokenSealed) set.tokenSealed = null;
  const next = await updateStatusRow(tx, row.id, { ...set, ...extra }, { sql: ' AND status = ?', args: [row.status] });
  if (next) await queueBuildHook(ctx, tx, next);
  // Runners held by builds/register (on any daemon) learn that a build waits for them (the caller signals `queued`).
  if (next?.status === 'pending') {
    if (queued) queued.push(next);
    else await signalBuildQueued(tx, next);
  }
  // 8.13's BuildSuccessWorker: a build that names an environment records its deployment (once: this move is conditional)
  if (next?.status === 'success' && next.type === 'build' && next.environment) await recordDeploymentIn(ctx, tx, next);
  return next;
}

/**
 * The part of changeBuildStatus that runs inside a transaction: the event, then the pipeline processed (a finished
 * build) or its status recomputed. Null when the build does not exist or the move is impossible.
 */
export async function changeBuildStatusIn(ctx: AppContext, tx: Queries, buildId: number, event: BuildStatusEvent, extra: Partial<CommitStatusRow> = {}): Promise<CommitStatusRow | null> {
  const row = isRowId(buildId) ? await buildById(tx, buildId) : null;
  if (!row) return null;
  const next = await applyEvent(ctx, tx, row, event, extra);
  if (!next) return null;
  if (isFinished(next.status as BuildStatus)) {
    await processPipeline(ctx, next.pipelineId, tx);
    // Followers of the live trace on other daemons learn that it ended.
    await notifyTrace(tx, next.id, true);
  } else await updatePipelineStatus(ctx, tx, next.pipelineId);
  return next;
}

/**
 * Apply one state-machine event to a build in a transaction (impossible moves return null and change nothing). A build
 * that is now finished gets the pipeline processed (next stages, status, duration), its coverage extracted and the
 * onBuildFinished listeners run (asynchronously); any other move recomputes the pipeline status.
 */
export async function changeBuildStatus(ctx: AppContext, buildId: number, event: BuildStatusEvent, opts: { runnerId?: number } = {}): Promise<CommitStatusRow | null> {
  const extra: Partial<CommitStatusRow> = {};
  if (event === 'run' && opts.runnerId !== undefined) extra.runnerId = opts.runnerId;
  const updated = await ctx.data.transaction((tx) => changeBuildStatusIn(ctx, tx, buildId, event, extra));
  if (updated && isFinished(updated.status as BuildStatus)) afterFinished(ctx, updated);
  return updated;
}

/** Coverage extraction and the finished-build listeners, after the commit. */
function afterFinished(ctx: AppContext, build: CommitStatusRow): void {
  track(
    ctx,
    (async () => {
      let current = build;
      if (build.coverageRegex) {
        const trace = await readTrace(ctx, build);
        const coverage = trace ? extractCoverage(trace.toString('utf8'), build.coverageRegex) : null;
        if (coverage !== null) current = (await updateStatusRow(ctx.data, build.id, { coverage })) ?? current;
      }
      // Each listener on its own: one that fails never keeps the others from running.
      for (const l of [...finishedListeners]) track(ctx, Promise.resolve().then(() => l(ctx, current)));
    })(),
  );
}

/** Cancel a build (created, pending or running → canceled); an impossible move leaves it as it is. Returns the row. */
export async function cancelBuild(ctx: AppContext, build: CommitStatusRow): Promise<CommitStatusRow> {
  return (await changeBuildStatus(ctx, build.id, 'cancel')) ?? (await findBuild(ctx, build.id)) ?? build;
}

/** Columns copied from a build to its retry (Build.retry in 8.13). */
function retryValues(b: CommitStatusRow, user: UserRow | null, at: string): Partial<CommitStatusRow> {
  return {
    type: 'build', projectId: b.projectId, pipelineId: b.pipelineId, name: b.name, stage: b.stage, stageIdx: b.stageIdx, ref: b.ref,
    tag: b.tag, status: 'pending', allowFailure: b.allowFailure, when: b.when, userId: user?.id ?? null, commands: b.commands,
    options: b.options, yamlVariables: b.yamlVariables, tagList: b.tagList, environment: b.environment, coverageRegex: b.coverageRegex,
    queuedAt: at, createdAt: at, updatedAt: at,
  };
}

/**
 * Retry a finished build with commands: a new build row in pending copying it (the old row stays), and the later-stage
 * skipped builds of the pipeline back to created. Returns the new build, or null when the build cannot be retried.
 */
export async function retryBuild(ctx: AppContext, build: CommitStatusRow, user: UserRow | null): Promise<CommitStatusRow | null> {
  return (await retryBuilds(ctx, [build], user))[0] ?? null;
}

/**
 * Retry several builds of one pipeline in one transaction (a pipeline retry): each gets its copy, then the pipeline is
 * processed and its status recomputed once, from all the copies together. Returns the new builds.
 */
export async function retryBuilds(ctx: AppContext, builds: readonly CommitStatusRow[], user: UserRow | null): Promise<CommitStatusRow[]> {
  const done = await ctx.data.transaction(async (tx) => {
    const out: { old: CommitStatusRow; retried: CommitStatusRow }[] = [];
    for (const build of builds) {
      const b = await statusRowById(tx, build.id);
      if (!b || b.type !== 'build' || !canRetry({ status: b.status as BuildStatus, commands: b.commands })) continue;
      const retried = await insertStatusRow(tx, retryValues(b, user, now()));
      await queueBuildHook(ctx, tx, retried);
      await signalBuildQueued(tx, retried);
      await reprocessLaterStages(ctx, tx, b.pipelineId, b.stageIdx);
      out.push({ old: b, retried });
    }
    for (const pipelineId of new Set(out.map((r) => r.old.pipelineId))) await processPipeline(ctx, pipelineId, tx);
    return out;
  });
  for (const result of done) for (const l of [...retriedListeners]) track(ctx, Promise.resolve().then(() => l(ctx, result.old, result.retried)));
  return done.map((r) => r.retried);
}

/** The latest builds of a pipeline (highest id per name), as processing and statuses see them. */
export async function latestPipelineBuilds(q: Queries, pipelineId: number): Promise<CommitStatusRow[]> {
  const rows = (await pipelineBuilds(q, pipelineId)).reverse();
  const seen = new Set<string>();
  return rows.filter((r) => (seen.has(r.name) ? false : (seen.add(r.name), true))).reverse();
}

/** After a retry in stage `stageIdx`: later-stage skipped builds go back to created (`process` event). */
async function reprocessLaterStages(ctx: AppContext, tx: Queries, pipelineId: number, stageIdx: number): Promise<void> {
  const latest = (await latestPipelineBuilds(tx, pipelineId)).map((b) => ({ ...b, status: b.status as BuildStatus }));
  for (const b of buildsToReprocess(latest, stageIdx)) await applyEvent(ctx, tx, b, 'process');
}

/**
 * Play a manual build waiting in skipped: it moves to pending with the player as its user; if it cannot be enqueued a
 * retried copy is made. Returns the played build, or null when it is not playable.
 */
export async function playBuild(ctx: AppContext, build: CommitStatusRow, user: UserRow | null): Promise<CommitStatusRow | null> {
  if (!canPlay({ status: build.status as BuildStatus, when: build.when as CiWhen, commands: build.commands })) return null;
  const played = await ctx.data.transaction(async (tx) => {
    const b = isRowId(build.id) ? await buildById(tx, build.id) : null;
    if (!b) return null;
    const next = await applyEvent(ctx, tx, b, 'enqueue', { userId: user?.id ?? b.userId });
    if (next) await updatePipelineStatus(ctx, tx, b.pipelineId);
    return next;
  });
  return played ?? retryBuild(ctx, build, user);
}

/** Erase a finished build that has artifacts or a trace: both are removed, erased_at/erased_by set. Null when not erasable. */
export async function eraseBuild(ctx: AppContext, build: CommitStatusRow, user: UserRow | null): Promise<CommitStatusRow | null> {
  const hasTrace = build.traceSize > 0 || (await readTrace(ctx, build)) !== null;
  const hasArtifacts = (await artifactsFilePath(ctx, build)) !== null || !!build.artifactsFile;
  if (!canErase({ status: build.status as BuildStatus, hasArtifacts, hasTrace })) return null;
  await removeArtifacts(ctx, build);
  await removeTrace(ctx, build);
  const at = now();
  return updateStatusRow(ctx.data, build.id, { erasedAt: at, erasedById: user?.id ?? null, traceSize: 0, updatedAt: at });
}

/** Keep a build's artifacts (clear their expiry). Null when the build has no artifacts. */
export async function keepArtifacts(ctx: AppContext, build: CommitStatusRow): Promise<CommitStatusRow | null> {
  if (!build.artifactsFile) return null;
  return updateStatusRow(ctx.data, build.id, { artifactsExpireAt: null, updatedAt: now() });
}

export type { BuildListFilter } from '../../db/builds.js';

/** How often expired artifacts are removed (and once at start). */
export const ARTIFACTS_EXPIRY_INTERVAL_MS = 60 * 60 * 1000;

/** The advisory lock key of the expired-artifacts sweep (one daemon sweeps at a time on PostgreSQL). */
export const ARTIFACTS_EXPIRY_LOCK = 0x6761_0001;

/**
 * One sweep of expired artifacts. On PostgreSQL it runs only in the daemon that gets the session advisory lock
 * (pg_try_advisory_lock on a connection of its own, released after the sweep; a dead daemon's session ends and frees
 * it): the others skip this tick. Returns how many builds lost their artifacts, or null when another daemon sweeps.
 */
export async function sweepExpiredArtifacts(ctx: AppContext): Promise<number | null> {
  const data: Database = ctx.data;
  if (data.withAdvisoryLock) return data.withAdvisoryLock(ARTIFACTS_EXPIRY_LOCK, () => removeExpiredArtifacts(ctx));
  return removeExpiredArtifacts(ctx);
}

/** The expired-artifacts sweeper: once at the start, then every ARTIFACTS_EXPIRY_INTERVAL_MS. */
export const artifactExpiryWorker: BackgroundWorker = periodicWorker('artifact expiry', {
  everyMs: () => ARTIFACTS_EXPIRY_INTERVAL_MS, what: 'removing expired artifacts', job: sweepExpiredArtifacts,
});

/** A pending or running build whose row has not changed for this long is stuck (8.13 StuckCiBuildsWorker: 1 day). */
export const STUCK_BUILD_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/** How often each daemon looks for stuck builds (8.13: a daily cron; hourly here, so one is dropped within 25 h). */
export const STUCK_BUILDS_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Drop (fail) the builds still pending or running whose row has not changed for STUCK_BUILD_TIMEOUT_MS (a trace append
 * changes it), as 8.13's StuckCiBuildsWorker does: a build whose runner vanished, or whose claim answer was lost when
 * the daemon that handed it out died (the runner never learnt it had it), would otherwise hold its pipeline for ever.
 * Each drop is the state machine's, conditional on the status read, so daemons sweeping at once drop a build once (its
 * pipeline processed, its hook queued once). Returns how many this call dropped.
 */
export async function dropStuckBuilds(ctx: AppContext, at = Date.now()): Promise<number> {
  const before = new Date(at - STUCK_BUILD_TIMEOUT_MS).toISOString();
  let dropped = 0;
  for (const id of await staleActiveBuildIds(ctx.data, before)) if (await changeBuildStatus(ctx, id, 'drop')) dropped++;
  return dropped;
}

/** The stuck builds sweeper: once at the start, then every STUCK_BUILDS_INTERVAL_MS. */
export const stuckBuildsWorker: BackgroundWorker = periodicWorker('stuck builds', {
  everyMs: () => STUCK_BUILDS_INTERVAL_MS, what: 'dropping stuck builds', job: (ctx) => dropStuckBuilds(ctx),
});
