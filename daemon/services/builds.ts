/**
 * Builds (commit_statuses of type 'build'): the state machine of GitLab 8.13 (commit_status.rb, ci/build.rb) applied
 * to rows, and the manual actions (cancel, retry, play, erase, keep artifacts). Every change ends by processing or
 * recomputing the pipeline (services/pipelines.ts), then, for finished builds, extracting coverage from the trace and
 * telling the onBuildFinished listeners.
 */
import { and, desc, eq, inArray, isNotNull, sql, type SQL } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { commitStatuses, pipelines, type CommitStatusRow } from '../db/schema-ci.js';
import type { UserRow } from '../db/schema.js';
import { buildsToReprocess, canErase, canPlay, canRetry, isFinished, transition, type BuildEvent, type BuildStatus } from '../ci/status.js';
import { extractCoverage } from '../ci/coverage.js';
import type { CiWhen } from '../ci/config-types.js';
import { processPipeline, updatePipelineStatus, type Db } from './pipelines.js';
import { readTrace, removeTrace, traceLength } from './traces.js';
import { artifactsFilePath, removeArtifacts, removeExpiredArtifacts } from './artifacts.js';
import { registerWorker } from '../background.js';
import { queueBuildHook } from './ci-hooks.js';
import { idOrderedPage } from '../db/keyset.js';

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
const pendingWork = new Set<Promise<void>>();

/** Wait until the coverage extraction and listeners of every finished build so far have run. */
export async function settleBuildWork(): Promise<void> {
  while (pendingWork.size) await Promise.all([...pendingWork]);
}

function track(work: Promise<void>): void {
  const p = work.catch((e: unknown) => {
    process.stderr.write(`gantry: build listener failed: ${(e as Error)?.message ?? String(e)}\n`);
  });
  pendingWork.add(p);
  void p.finally(() => pendingWork.delete(p));
}

/** A build by id (type 'build' only), or null. */
export function findBuild(ctx: AppContext, id: number): CommitStatusRow | null {
  if (!Number.isSafeInteger(id)) return null;
  return ctx.db.select().from(commitStatuses).where(and(eq(commitStatuses.id, id), eq(commitStatuses.type, 'build'))).get() ?? null;
}

/** A build of a project by id, or null (another project's build is not found). */
export function findProjectBuild(ctx: AppContext, projectId: number, id: number): CommitStatusRow | null {
  const b = findBuild(ctx, id);
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
 * Apply one event to a status row inside a transaction; the updated row, or null when the move is impossible. A build
 * (not a generic status) that moved gets its Build Hook queued in the same transaction (services/ci-hooks.ts).
 */
export function applyEvent(ctx: AppContext, tx: Db, row: CommitStatusRow, event: BuildEvent, extra: Partial<CommitStatusRow> = {}): CommitStatusRow | null {
  const set = transitionColumns(row, event);
  if (!set) return null;
  const next = tx.update(commitStatuses).set({ ...set, ...extra }).where(eq(commitStatuses.id, row.id)).returning().get() ?? null;
  if (next) queueBuildHook(ctx, tx, next);
  return next;
}

/**
 * Apply one state-machine event to a build in a transaction (impossible moves return null and change nothing). A build
 * that is now finished gets the pipeline processed (next stages, status, duration), its coverage extracted and the
 * onBuildFinished listeners run (asynchronously); any other move recomputes the pipeline status.
 */
export function changeBuildStatus(ctx: AppContext, buildId: number, event: BuildStatusEvent, opts: { runnerId?: number } = {}): CommitStatusRow | null {
  const updated = ctx.db.transaction((tx) => {
    const row = tx.select().from(commitStatuses).where(and(eq(commitStatuses.id, buildId), eq(commitStatuses.type, 'build'))).get();
    if (!row) return null;
    const extra: Partial<CommitStatusRow> = {};
    if (event === 'run' && opts.runnerId !== undefined) extra.runnerId = opts.runnerId;
    const next = applyEvent(ctx, tx, row, event, extra);
    if (!next) return null;
    if (isFinished(next.status as BuildStatus)) processPipeline(ctx, next.pipelineId, tx);
    else updatePipelineStatus(ctx, tx, next.pipelineId);
    return next;
  });
  if (updated && isFinished(updated.status as BuildStatus)) afterFinished(ctx, updated);
  return updated;
}

/** Coverage extraction and the finished-build listeners, after the commit. */
function afterFinished(ctx: AppContext, build: CommitStatusRow): void {
  track(
    (async () => {
      let current = build;
      if (build.coverageRegex) {
        const trace = await readTrace(ctx, build);
        const coverage = trace ? extractCoverage(trace.toString('utf8'), build.coverageRegex) : null;
        if (coverage !== null) {
          current = ctx.db.update(commitStatuses).set({ coverage }).where(eq(commitStatuses.id, build.id)).returning().get() ?? current;
        }
      }
      for (const l of [...finishedListeners]) await l(ctx, current);
    })(),
  );
}

/** Cancel a build (created, pending or running → canceled); an impossible move leaves it as it is. Returns the row. */
export function cancelBuild(ctx: AppContext, build: CommitStatusRow): CommitStatusRow {
  return changeBuildStatus(ctx, build.id, 'cancel') ?? findBuild(ctx, build.id) ?? build;
}

/** Columns copied from a build to its retry (Build.retry in 8.13). */
function retryValues(b: CommitStatusRow, user: UserRow | null, at: string): typeof commitStatuses.$inferInsert {
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
export function retryBuild(ctx: AppContext, build: CommitStatusRow, user: UserRow | null): CommitStatusRow | null {
  return retryBuilds(ctx, [build], user)[0] ?? null;
}

/**
 * Retry several builds of one pipeline in one transaction (a pipeline retry): each gets its copy, then the pipeline is
 * processed and its status recomputed once, from all the copies together. Returns the new builds.
 */
export function retryBuilds(ctx: AppContext, builds: readonly CommitStatusRow[], user: UserRow | null): CommitStatusRow[] {
  const done = ctx.db.transaction((tx) => {
    const out: { old: CommitStatusRow; retried: CommitStatusRow }[] = [];
    for (const build of builds) {
      const b = tx.select().from(commitStatuses).where(eq(commitStatuses.id, build.id)).get();
      if (!b || b.type !== 'build' || !canRetry({ status: b.status as BuildStatus, commands: b.commands })) continue;
      const retried = tx.insert(commitStatuses).values(retryValues(b, user, now())).returning().get();
      queueBuildHook(ctx, tx, retried);
      reprocessLaterStages(ctx, tx, b.pipelineId, b.stageIdx);
      out.push({ old: b, retried });
    }
    for (const pipelineId of new Set(out.map((r) => r.old.pipelineId))) processPipeline(ctx, pipelineId, tx);
    return out;
  });
  for (const result of done) for (const l of [...retriedListeners]) track(Promise.resolve().then(() => l(ctx, result.old, result.retried)));
  return done.map((r) => r.retried);
}

/** The latest builds of a pipeline (highest id per name), as processing and statuses see them. */
export function latestPipelineBuilds(db: Db, pipelineId: number): CommitStatusRow[] {
  const rows = db.select().from(commitStatuses).where(and(eq(commitStatuses.pipelineId, pipelineId), eq(commitStatuses.type, 'build'))).orderBy(desc(commitStatuses.id)).all();
  const seen = new Set<string>();
  return rows.filter((r) => (seen.has(r.name) ? false : (seen.add(r.name), true))).reverse();
}

/** After a retry in stage `stageIdx`: later-stage skipped builds go back to created (`process` event). */
function reprocessLaterStages(ctx: AppContext, tx: Db, pipelineId: number, stageIdx: number): void {
  const latest = latestPipelineBuilds(tx, pipelineId).map((b) => ({ ...b, status: b.status as BuildStatus }));
  for (const b of buildsToReprocess(latest, stageIdx)) applyEvent(ctx, tx, b, 'process');
}

/**
 * Play a manual build waiting in skipped: it moves to pending with the player as its user; if it cannot be enqueued a
 * retried copy is made. Returns the played build, or null when it is not playable.
 */
export function playBuild(ctx: AppContext, build: CommitStatusRow, user: UserRow | null): CommitStatusRow | null {
  if (!canPlay({ status: build.status as BuildStatus, when: build.when as CiWhen, commands: build.commands })) return null;
  const played = ctx.db.transaction((tx) => {
    const b = tx.select().from(commitStatuses).where(eq(commitStatuses.id, build.id)).get();
    if (!b) return null;
    const next = applyEvent(ctx, tx, b, 'enqueue', { userId: user?.id ?? b.userId });
    if (next) updatePipelineStatus(ctx, tx, b.pipelineId);
    return next;
  });
  return played ?? retryBuild(ctx, build, user);
}

/** Erase a finished build that has artifacts or a trace: both are removed, erased_at/erased_by set. Null when not erasable. */
export async function eraseBuild(ctx: AppContext, build: CommitStatusRow, user: UserRow | null): Promise<CommitStatusRow | null> {
  const hasTrace = traceLength(ctx, build) > 0 || (await readTrace(ctx, build)) !== null;
  const hasArtifacts = artifactsFilePath(ctx, build) !== null || !!build.artifactsFile;
  if (!canErase({ status: build.status as BuildStatus, hasArtifacts, hasTrace })) return null;
  await removeArtifacts(ctx, build);
  removeTrace(ctx, build);
  const at = now();
  return ctx.db.update(commitStatuses).set({ erasedAt: at, erasedById: user?.id ?? null, traceSize: 0, updatedAt: at })
    .where(eq(commitStatuses.id, build.id)).returning().get() ?? null;
}

/** Keep a build's artifacts (clear their expiry). Null when the build has no artifacts. */
export function keepArtifacts(ctx: AppContext, build: CommitStatusRow): CommitStatusRow | null {
  if (!build.artifactsFile) return null;
  return ctx.db.update(commitStatuses).set({ artifactsExpireAt: null, updatedAt: now() }).where(eq(commitStatuses.id, build.id)).returning().get() ?? null;
}

/** Filters of a build list: statuses (empty = all) and optionally only the pipelines of one commit. */
export interface BuildListFilter {
  statuses: readonly BuildStatus[];
  sha?: string;
}

function buildListWhere(projectId: number, f: BuildListFilter): SQL {
  const conds: SQL[] = [eq(commitStatuses.projectId, projectId), eq(commitStatuses.type, 'build')];
  if (f.statuses.length) conds.push(inArray(commitStatuses.status, [...f.statuses]));
  if (f.sha !== undefined) {
    conds.push(sql`${commitStatuses.pipelineId} IN (SELECT ${pipelines.id} FROM ${pipelines} WHERE ${pipelines.projectId} = ${projectId} AND ${pipelines.sha} = ${f.sha})`);
  }
  return and(...conds) as SQL;
}

/** How many builds of a project match the filter. */
export function countBuilds(ctx: AppContext, projectId: number, f: BuildListFilter): number {
  return ctx.db.select({ n: sql<number>`COUNT(*)` }).from(commitStatuses).where(buildListWhere(projectId, f)).get()?.n ?? 0;
}

/** One page of a project's builds, newest first; with `total` (countBuilds) a deep page costs what the first does (db/keyset.ts). */
export function listBuilds(ctx: AppContext, projectId: number, f: BuildListFilter, limit: number, offset: number, total?: number): CommitStatusRow[] {
  return idOrderedPage(ctx, 'commit_statuses', buildListWhere(projectId, f), true, limit, offset, total,
    (ids) => ctx.db.select().from(commitStatuses).where(inArray(commitStatuses.id, ids)).all());
}

/** The newest successful build named `job` on `ref` that has artifacts, or null. */
export function latestArtifactsBuild(ctx: AppContext, projectId: number, ref: string, job: string): CommitStatusRow | null {
  return ctx.db.select().from(commitStatuses)
    .where(and(
      eq(commitStatuses.projectId, projectId), eq(commitStatuses.type, 'build'), eq(commitStatuses.ref, ref), eq(commitStatuses.name, job),
      eq(commitStatuses.status, 'success'), isNotNull(commitStatuses.artifactsFile),
    ))
    .orderBy(desc(commitStatuses.id)).get() ?? null;
}

/** How often expired artifacts are removed (and once at start). */
export const ARTIFACTS_EXPIRY_INTERVAL_MS = 60 * 60 * 1000;

/** Start the expired-artifacts sweeper for a context: once now, then every `intervalMs`. Returns its stopper. */
export function startArtifactsExpiryWorker(ctx: AppContext, intervalMs = ARTIFACTS_EXPIRY_INTERVAL_MS): () => void {
  let busy = false;
  const sweep = () => {
    if (busy) return;
    busy = true;
    removeExpiredArtifacts(ctx)
      .catch((e: unknown) => process.stderr.write(`gantry: removing expired artifacts failed: ${(e as Error)?.message ?? String(e)}\n`))
      .finally(() => {
        busy = false;
      });
  };
  sweep();
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

const expiryWorkers = new Map<AppContext, () => void>();
registerWorker({
  name: 'artifact expiry',
  start(ctx) {
    if (!expiryWorkers.has(ctx)) expiryWorkers.set(ctx, startArtifactsExpiryWorker(ctx));
  },
  stop() {
    for (const stop of expiryWorkers.values()) stop();
    expiryWorkers.clear();
  },
});
