/**
 * Pipelines: created on push from the .gitlab-ci.yml at the pushed sha (Ci::CreatePipelineService, 8.13), processed
 * stage by stage (ProcessPipelineService) and given their status, timestamps and duration from their latest statuses.
 * Importing this module registers the push listener.
 */
import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { commitStatuses, pipelines, type CommitStatusRow, type PipelineRow } from '../db/schema-ci.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { parseCiConfig, jobMatchesRef, type CiJob } from '../ci/config.js';
import {
  compositeStatus, isFinished, nextPipelineStatus, nextStageActions, pipelineCancelTargets, pipelineRetryTargets, pipelineStatus,
  type BuildStatus, type ProcessableBuild,
} from '../ci/status.js';
import type { CiWhen } from '../ci/config-types.js';
import { isZeroSha, type CommitInfo } from '../git/objects.js';
import { onPush, type Tx } from './push.js';
import { projectNamespace } from './projects.js';
import { projectRepository } from './repositories.js';
import { applyEvent, changeBuildStatus, latestPipelineBuilds, retryBuilds } from './builds.js';
import { queuePipelineHook } from './ci-hooks.js';
import { idOrderedPage } from '../db/keyset.js';

/** The database or a transaction handle: the services below run either way. */
export type Db = AppContext['db'] | Tx;

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

/** A pipeline by id, or null. */
export function findPipeline(db: Db, id: number): PipelineRow | null {
  if (!Number.isSafeInteger(id)) return null;
  return db.select().from(pipelines).where(eq(pipelines.id, id)).get() ?? null;
}

/** The commit columns of a pipeline row (message and author, for the hook payloads). */
export function pipelineCommitColumns(commit: Pick<CommitInfo, 'message' | 'author'>): Pick<PipelineRow, 'commitMessage' | 'commitAuthorName' | 'commitAuthorEmail'> {
  return { commitMessage: commit.message, commitAuthorName: commit.author.name, commitAuthorEmail: commit.author.email };
}

/** Insert a pipeline row (status `created` unless given). */
export function insertPipeline(db: Db, values: Omit<typeof pipelines.$inferInsert, 'createdAt' | 'updatedAt'>): PipelineRow {
  const at = now();
  return db.insert(pipelines).values({ ...values, createdAt: at, updatedAt: at }).returning().get();
}

/** Build rows for the jobs of a valid config (status created). */
function buildValues(project: ProjectRow, pipeline: PipelineRow, jobs: CiJob[], user: UserRow | null): (typeof commitStatuses.$inferInsert)[] {
  const at = now();
  return jobs.map((j) => ({
    type: 'build' as const, projectId: project.id, pipelineId: pipeline.id, name: j.name, stage: j.stage, stageIdx: j.stageIdx,
    ref: pipeline.ref, tag: pipeline.tag, status: 'created', allowFailure: j.allowFailure, when: j.when, userId: user?.id ?? null,
    commands: j.commands, options: JSON.stringify(j.options), yamlVariables: JSON.stringify(j.variables), tagList: JSON.stringify(j.tags),
    environment: j.environment?.name ?? null, coverageRegex: j.coverageRegex ?? null, createdAt: at, updatedAt: at,
  }));
}

/**
 * Create the pipeline of a pushed branch or tag (8.13 CreatePipelineService for pushes). Returns null, saving nothing,
 * when builds are disabled, the ref was deleted, the commit or .gitlab-ci.yml is missing, or no job matches the ref. An
 * invalid file gives a `failed` pipeline with yaml_errors and no builds; `[ci skip]` in the message a `skipped` one.
 * Otherwise the builds are created and the pipeline processed (first stage pending).
 */
export async function createPipelineForPush(ctx: AppContext, project: ProjectRow, user: UserRow | null, push: PipelinePush): Promise<PipelineRow | null> {
  if (!project.buildsEnabled || isZeroSha(push.after)) return null;
  const ref = push.ref.replace(/^refs\/(heads|tags)\//, '');
  const repo = projectRepository(ctx, project);
  const commit = await repo.readCommit(push.after);
  if (!commit) return null;
  const file = await repo.readFileAt(commit.sha, CI_CONFIG_PATH);
  if (!file) return null;
  const base = {
    projectId: project.id, ref, sha: commit.sha, beforeSha: push.before ?? null, tag: push.tag, userId: user?.id ?? null,
    committedAt: commit.committer.date.toISOString(), ...pipelineCommitColumns(commit),
  };
  // A pipeline born finished (invalid file, [ci skip]) gets its Pipeline Hook with the insert.
  const insertFinished = (values: Omit<typeof pipelines.$inferInsert, 'createdAt' | 'updatedAt'>) => ctx.db.transaction((tx) => {
    const p = insertPipeline(tx, values);
    queuePipelineHook(ctx, tx, p);
    return p;
  });
  const parsed = parseCiConfig(file.content.toString('utf8'));
  if (!parsed.ok) {
    const at = now();
    return insertFinished({ ...base, status: 'failed', yamlErrors: parsed.error, finishedAt: at });
  }
  if (SKIP_CI.test(commit.message)) return insertFinished({ ...base, status: 'skipped' });
  const ns = projectNamespace(ctx, project);
  const refCtx = { ref, tag: push.tag, source: 'push' as const, projectPath: `${ns.path}/${project.path}` };
  const jobs = parsed.config.jobs.filter((j) => jobMatchesRef(j, refCtx));
  if (!jobs.length) return null;
  const created = ctx.db.transaction((tx) => {
    const pipeline = insertPipeline(tx, base);
    tx.insert(commitStatuses).values(buildValues(project, pipeline, jobs, user)).run();
    return processPipeline(ctx, pipeline.id, tx);
  });
  return created;
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
export function processPipeline(ctx: AppContext, pipelineId: number, tx?: Tx): PipelineRow | null {
  const run = (db: Tx) => {
    const latest = latestPipelineBuilds(db, pipelineId).map(asStatus);
    const actions = nextStageActions(latest);
    for (const b of actions.enqueue) applyEvent(ctx, db, b.row, 'enqueue');
    for (const b of actions.skip) applyEvent(ctx, db, b.row, 'skip');
    return updatePipelineStatus(ctx, db, pipelineId);
  };
  return tx ? run(tx) : ctx.db.transaction(run);
}

/** The latest statuses (builds and generic) of a pipeline: highest id per name. */
export function latestPipelineStatuses(db: Db, pipelineId: number): CommitStatusRow[] {
  const rows = db.select().from(commitStatuses).where(eq(commitStatuses.pipelineId, pipelineId)).orderBy(desc(commitStatuses.id)).all();
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
 * transaction (services/ci-hooks.ts). Returns the pipeline.
 */
export function updatePipelineStatus(ctx: AppContext, db: Db, pipelineId: number): PipelineRow | null {
  const p = findPipeline(db, pipelineId);
  if (!p) return null;
  const latest = latestPipelineStatuses(db, pipelineId);
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
  const updated = db.update(pipelines).set(set).where(eq(pipelines.id, pipelineId)).returning().get();
  if (!updated) return p;
  queuePipelineHook(ctx, db, updated);
  return updated;
}

/**
 * The combined status of every pipeline of a commit (the single commit's `status` field): the composite of the
 * pipeline statuses, or null when the commit has no pipeline.
 */
export function commitStatusOf(ctx: AppContext, projectId: number, sha: string): string | null {
  const rows = ctx.db
    .select({ status: pipelines.status })
    .from(pipelines)
    .where(and(eq(pipelines.projectId, projectId), eq(pipelines.sha, sha)))
    .all();
  if (!rows.length) return null;
  return compositeStatus(rows.map((r) => ({ status: r.status as BuildStatus, allowFailure: false })));
}

/** The newest pipeline of a project for (ref, sha), or null. */
export function pipelineFor(db: Db, projectId: number, ref: string | null, sha: string): PipelineRow | null {
  const refCond = ref === null ? sql`${pipelines.ref} IS NULL` : eq(pipelines.ref, ref);
  return db.select().from(pipelines).where(and(eq(pipelines.projectId, projectId), eq(pipelines.sha, sha), refCond)).orderBy(desc(pipelines.id)).get() ?? null;
}

/** Scopes of GET /projects/:id/pipelines. */
export const PIPELINE_SCOPES = ['running', 'pending', 'finished', 'branches', 'tags'] as const;
/** One of PIPELINE_SCOPES. */
export type PipelineScope = (typeof PIPELINE_SCOPES)[number];

/** A pipeline list filter: the scope, with the current branch or tag names for `branches`/`tags`. */
export interface PipelineListFilter {
  scope?: PipelineScope;
  /** For branches/tags: the ref names that exist now. */
  refs?: readonly string[];
}

/** The list filter of a scope; `branches`/`tags` read the ref names that exist now from the repository. */
export async function pipelineListFilter(ctx: AppContext, project: ProjectRow, scope?: PipelineScope): Promise<PipelineListFilter> {
  if (scope !== 'branches' && scope !== 'tags') return { scope };
  const prefix = scope === 'branches' ? 'refs/heads/' : 'refs/tags/';
  const repo = projectRepository(ctx, project);
  const refs = repo.exists() ? [...(await repo.refsUnder(prefix)).keys()].map((r) => r.slice(prefix.length)) : [];
  return { scope, refs };
}

function pipelineListWhere(projectId: number, f: PipelineListFilter): SQL {
  const conds: SQL[] = [eq(pipelines.projectId, projectId)];
  switch (f.scope) {
    case 'running':
    case 'pending':
      conds.push(eq(pipelines.status, f.scope));
      break;
    case 'finished':
      conds.push(inArray(pipelines.status, ['success', 'failed', 'canceled']));
      break;
    case 'branches':
    case 'tags': {
      const refs = [...(f.refs ?? [])];
      if (!refs.length) return sql`0`;
      // The newest pipeline of each existing ref.
      conds.push(sql`${pipelines.id} IN (SELECT MAX(p2.id) FROM pipelines p2 WHERE p2.project_id = ${projectId} AND p2.tag = ${f.scope === 'tags' ? 1 : 0}
        AND p2.ref IN (${sql.join(refs.map((r) => sql`${r}`), sql`, `)}) GROUP BY p2.ref)`);
      break;
    }
    default:
      break;
  }
  return and(...conds) as SQL;
}

/** How many pipelines of a project match the filter. */
export function countPipelines(ctx: AppContext, projectId: number, f: PipelineListFilter): number {
  return ctx.db.select({ n: sql<number>`COUNT(*)` }).from(pipelines).where(pipelineListWhere(projectId, f)).get()?.n ?? 0;
}

/** One page of a project's pipelines, newest first; with `total` (countPipelines) a deep page costs what the first does (db/keyset.ts). */
export function listPipelines(ctx: AppContext, projectId: number, f: PipelineListFilter, limit: number, offset: number, total?: number): PipelineRow[] {
  return idOrderedPage(ctx, 'pipelines', pipelineListWhere(projectId, f), true, limit, offset, total,
    (ids) => ctx.db.select().from(pipelines).where(inArray(pipelines.id, ids)).all());
}

/** A pipeline of a project by id, or null. */
export function findProjectPipeline(ctx: AppContext, projectId: number, id: number): PipelineRow | null {
  const p = findPipeline(ctx.db, id);
  return p && p.projectId === projectId ? p : null;
}

/**
 * Retry a pipeline: every latest build that failed or was canceled and can be retried gets a copy (8.x
 * `builds.latest.failed_or_canceled`), and the pipeline's status is recomputed, all in one transaction: the answer
 * reads `pending` at once.
 */
export function retryPipeline(ctx: AppContext, pipeline: PipelineRow, user: UserRow | null): PipelineRow {
  const latest = latestPipelineBuilds(ctx.db, pipeline.id);
  const targets = pipelineRetryTargets(latest.map((b) => ({ status: b.status as BuildStatus, commands: b.commands, row: b })));
  retryBuilds(ctx, targets.map((t) => t.row), user);
  return findPipeline(ctx.db, pipeline.id) ?? pipeline;
}

/** Cancel a pipeline: its pending and running builds are canceled; created ones are then skipped by processing. */
export function cancelPipeline(ctx: AppContext, pipeline: PipelineRow): PipelineRow {
  const rows = ctx.db.select().from(commitStatuses).where(and(eq(commitStatuses.pipelineId, pipeline.id), eq(commitStatuses.type, 'build'))).all();
  const targets = pipelineCancelTargets(rows.map((b) => ({ status: b.status as BuildStatus, row: b })));
  for (const t of targets) changeBuildStatus(ctx, t.row.id, 'cancel');
  return findPipeline(ctx.db, pipeline.id) ?? pipeline;
}

onPush({
  async afterCommit(ctx, push) {
    for (const u of push.updates) {
      const tag = u.ref.startsWith('refs/tags/');
      if (!tag && !u.ref.startsWith('refs/heads/')) continue;
      if (isZeroSha(u.after)) continue;
      try {
        await createPipelineForPush(ctx, push.project, push.user, { ref: u.ref, tag, before: u.before, after: u.after });
      } catch (e) {
        process.stderr.write(`gantry: pipeline creation failed for ${u.ref}: ${(e as Error)?.message ?? String(e)}\n`);
      }
    }
  },
});
