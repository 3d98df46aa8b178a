/**
 * CI runners: registration with the instance registration token (shared runner) or a project's runners token
 * (specific runner), token lookup, contact/info updates, deletion, and the build queue: a runner claims the oldest
 * pending build it may run, atomically (Ci::RegisterBuildService of GitLab 8.13, without the shared fair-share order:
 * the spec says "the oldest pending build").
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { runners, type CommitStatusRow, type RunnerRow } from '../db/schema-ci.js';
import { conflict, forbidden, notFound, validationError } from '../errors.js';
import { hashToken } from '../secrets.js';
import { runnersRegistrationToken } from './settings.js';
import { changeBuildStatus, onBuildFinished } from './builds.js';
import { forgetBuildToken, newBuildToken, projectForRunnersToken, rememberBuildToken, safeEqual } from './build-tokens.js';
import { statement } from '../db/statements.js';
import { counter } from '../metrics.js';

/** The runner facts a runner reports (`info`). */
export interface RunnerInfo {
  name?: unknown;
  version?: unknown;
  revision?: unknown;
  platform?: unknown;
  architecture?: unknown;
}

/** Parameters of POST /ci/api/v1/runners/register. */
export interface RegisterRunnerParams {
  token: string;
  description?: unknown;
  tag_list?: unknown;
  run_untagged?: unknown;
  locked?: unknown;
  info?: unknown;
}

const INFO_KEYS = ['name', 'version', 'revision', 'platform', 'architecture'] as const;

/** A tag list from a comma-separated string or an array (acts-as-taggable): trimmed, blanks dropped, unique. */
export function parseTagList(input: unknown): string[] {
  const items = Array.isArray(input) ? input.map((x) => String(x)) : typeof input === 'string' ? input.split(',') : [];
  const out: string[] = [];
  for (const raw of items) {
    const t = raw.trim().slice(0, 255);
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

/** A runner's tags. */
export function runnerTags(runner: Pick<RunnerRow, 'tagList'>): string[] {
  try {
    const v: unknown = JSON.parse(runner.tagList);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.slice(0, 255) : typeof v === 'number' ? String(v) : null);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

/** The non-blank `info` fields as runner columns. */
function infoColumns(info: unknown): Partial<RunnerRow> {
  if (!info || typeof info !== 'object') return {};
  const out: Partial<RunnerRow> = {};
  for (const k of INFO_KEYS) {
    const v = text((info as Record<string, unknown>)[k]);
    if (v !== null) out[k] = v;
  }
  return out;
}

/**
 * Register a runner: the instance registration token makes a shared runner, a project's runners token a specific
 * runner of that project; anything else is 403. A runner without tags that may not run untagged builds is invalid
 * (404, as 8.13). Returns the runner and its token (shown once; stored as SHA-256).
 */
export function registerRunner(ctx: AppContext, p: RegisterRunnerParams): { runner: RunnerRow; token: string } {
  let projectId: number | null = null;
  const shared = safeEqual(p.token, runnersRegistrationToken(ctx));
  if (!shared) {
    projectId = projectForRunnersToken(ctx, p.token);
    if (projectId === null) throw forbidden();
  }
  const tags = parseTagList(p.tag_list);
  const runUntagged = bool(p.run_untagged) ?? true;
  if (tags.length === 0 && !runUntagged) throw notFound();
  const token = randomBytes(15).toString('hex');
  const at = now();
  const runner = ctx.db.transaction((tx) => {
    const row = tx
      .insert(runners)
      .values({
        tokenHash: hashToken(token), description: text(p.description), isShared: shared, locked: bool(p.locked) ?? false,
        runUntagged, tagList: JSON.stringify(tags), ...infoColumns(p.info), createdAt: at, updatedAt: at,
      })
      .returning()
      .get();
    if (projectId !== null) {
      statement(ctx, `INSERT INTO runner_projects (runner_id, project_id, created_at) VALUES (?, ?, ?)`).run(row.id, projectId, at);
    }
    return row;
  });
  return { runner, token };
}

/** The runner with this token, or null. */
export function runnerForToken(ctx: AppContext, token: string | undefined | null): RunnerRow | null {
  if (!token) return null;
  return ctx.db.select().from(runners).where(eq(runners.tokenHash, hashToken(token))).get() ?? null;
}

/** A runner by id, or null. */
export function findRunner(ctx: AppContext, id: number): RunnerRow | null {
  if (!Number.isSafeInteger(id)) return null;
  return ctx.db.select().from(runners).where(eq(runners.id, id)).get() ?? null;
}

/** Ids of the projects a runner is assigned to. */
export function runnerProjectIds(ctx: AppContext, runnerId: number): number[] {
  return (statement(ctx, `SELECT project_id AS id FROM runner_projects WHERE runner_id = ? ORDER BY project_id`).all(runnerId) as { id: number }[]).map((r) => r.id);
}

/** Delete a runner and its project links (its builds keep running without it). */
export function deleteRunner(ctx: AppContext, runner: RunnerRow): void {
  ctx.db.delete(runners).where(eq(runners.id, runner.id)).run();
}

/** What PUT /runners/:id may change (only the given keys are written). */
export interface RunnerUpdate {
  description?: string;
  active?: boolean;
  tag_list?: string | string[];
  run_untagged?: boolean;
  locked?: boolean;
}

/**
 * Update a runner's settings. A runner left without tags that may not run untagged builds is invalid: 400
 * `{message: {tags_list: [...]}}` and nothing changes (the 8.12 model's tag_constraints validation).
 */
export function updateRunner(ctx: AppContext, runner: RunnerRow, p: RunnerUpdate): RunnerRow {
  const set: Partial<RunnerRow> = {};
  if (p.description !== undefined) set.description = p.description.slice(0, 255);
  if (p.active !== undefined) set.active = p.active;
  if (p.run_untagged !== undefined) set.runUntagged = p.run_untagged;
  if (p.locked !== undefined) set.locked = p.locked;
  if (p.tag_list !== undefined) set.tagList = JSON.stringify(parseTagList(p.tag_list));
  if (Object.keys(set).length === 0) return runner;
  const tags = set.tagList !== undefined ? runnerTags({ tagList: set.tagList }) : runnerTags(runner);
  if (tags.length === 0 && !(set.runUntagged ?? runner.runUntagged)) {
    throw validationError({ tags_list: ['can not be empty when runner is not allowed to pick untagged jobs'] });
  }
  return ctx.db.update(runners).set({ ...set, updatedAt: now() }).where(eq(runners.id, runner.id)).returning().get() ?? runner;
}

/** Enable a runner for one more project; 409 when it already is. */
export function enableRunner(ctx: AppContext, runner: RunnerRow, projectId: number): void {
  const r = statement(ctx, `INSERT OR IGNORE INTO runner_projects (runner_id, project_id, created_at) VALUES (?, ?, ?)`)
    .run(runner.id, projectId, now());
  if (r.changes === 0) throw conflict('Runner was already enabled for this project');
}

/**
 * Disable a runner for a project: 404 when it is not enabled there, 403 when that is its only project (the runner
 * would be left without any; remove it instead). Both checks and the delete run in one transaction.
 */
export function disableRunner(ctx: AppContext, runnerId: number, projectId: number): void {
  ctx.db.$client.transaction(() => {
    const linked = statement(ctx, `SELECT 1 FROM runner_projects WHERE runner_id = ? AND project_id = ?`).get(runnerId, projectId);
    if (!linked) throw notFound('Runner');
    const n = (statement(ctx, `SELECT COUNT(*) AS n FROM runner_projects WHERE runner_id = ?`).get(runnerId) as { n: number }).n;
    if (n === 1) throw forbidden('Only one project associated with the runner. Please remove the runner instead');
    statement(ctx, `DELETE FROM runner_projects WHERE runner_id = ? AND project_id = ?`).run(runnerId, projectId);
  }).immediate();
}

/** How long a contact is remembered before contacted_at is written again (GitLab throttles this too). */
const CONTACT_THROTTLE_MS = 60_000;

/** Record that the runner called in (contacted_at) and the `info` it sent; throttled unless the info changed. */
export function touchRunner(ctx: AppContext, runner: RunnerRow, info: unknown): RunnerRow {
  const cols = infoColumns(info);
  const changed = Object.entries(cols).some(([k, v]) => runner[k as keyof RunnerRow] !== v);
  const last = runner.contactedAt ? Date.parse(runner.contactedAt) : 0;
  if (!changed && Date.now() - last < CONTACT_THROTTLE_MS) return runner;
  const at = now();
  return ctx.db.update(runners).set({ ...cols, contactedAt: at }).where(eq(runners.id, runner.id)).returning().get() ?? runner;
}

/** SQL choosing the oldest pending build a runner may take (parameters: runner, shared, locked, untagged, tags). */
const CANDIDATE_SQL = `
  SELECT cs.id FROM commit_statuses cs JOIN projects p ON p.id = cs.project_id
  WHERE cs.status = 'pending' AND cs.type = 'build' AND cs.runner_id IS NULL AND p.builds_enabled = 1
    AND (
      (@shared = 1 AND p.shared_runners_enabled = 1
        AND (@locked = 0 OR cs.project_id IN (SELECT project_id FROM runner_projects WHERE runner_id = @runner)))
      OR (@shared = 0 AND cs.project_id IN (SELECT project_id FROM runner_projects WHERE runner_id = @runner))
    )
    AND (@untagged = 1 OR json_array_length(cs.tag_list) > 0)
    AND NOT EXISTS (SELECT 1 FROM json_each(cs.tag_list) t WHERE t.value NOT IN (SELECT value FROM json_each(@tags)))
    AND cs.id > @after
  ORDER BY cs.id LIMIT 1`;

class LostClaim extends Error {}

/**
 * Claim the oldest pending build this runner may run: in one immediate transaction, a conditional UPDATE (still
 * pending, no runner) gives it the runner and a new build token, then the `run` event moves it to running. Two
 * runners never get the same build. Returns the build and its plain token, or null when there is nothing to do.
 */
export function claimBuild(ctx: AppContext, runner: RunnerRow): { build: CommitStatusRow; token: string } | null {
  const claimed = claimOne(ctx, runner);
  (claimed ? CLAIMED : NOTHING).inc();
  return claimed;
}

const claims = counter('gantry_runner_build_requests_total', 'Runner requests for a build (POST /ci/api/v1/builds/register): claimed one, or none to run');
const CLAIMED = claims({ result: 'claimed' });
const NOTHING = claims({ result: 'none' });

function claimOne(ctx: AppContext, runner: RunnerRow): { build: CommitStatusRow; token: string } | null {
  const params = {
    runner: runner.id, shared: runner.isShared ? 1 : 0, locked: runner.locked ? 1 : 0,
    untagged: runner.runUntagged ? 1 : 0, tags: JSON.stringify(runnerTags(runner)), after: 0,
  };
  const pick = statement(ctx, CANDIDATE_SQL);
  const claim = statement(ctx, 
    `UPDATE commit_statuses SET runner_id = ?, token_hash = ?, updated_at = ? WHERE id = ? AND status = 'pending' AND runner_id IS NULL`,
  );
  // A candidate another runner took between the read and the claim is skipped (never possible within one
  // connection, but the loop keeps the claim correct whatever the scheduling).
  for (let attempt = 0; attempt < 16; attempt++) {
    const candidate = pick.get(params) as { id: number } | undefined;
    if (!candidate) return null;
    const { token, hash } = newBuildToken();
    try {
      const build = ctx.db.$client.transaction(() => {
        if (claim.run(runner.id, hash, now(), candidate.id).changes !== 1) throw new LostClaim();
        const running = changeBuildStatus(ctx, candidate.id, 'run', { runnerId: runner.id });
        if (!running || running.status !== 'running') throw new LostClaim();
        return running;
      }).immediate();
      rememberBuildToken(build.id, token);
      return { build, token };
    } catch (e) {
      if (!(e instanceof LostClaim)) throw e;
      params.after = candidate.id;
    }
  }
  return null;
}

onBuildFinished((_ctx, build) => forgetBuildToken(build.id));
