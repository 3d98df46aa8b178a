/**
 * CI runners: registration with the instance registration token (shared runner) or a project's runners token
 * (specific runner), token lookup, contact/info updates, deletion, and the build queue: a runner claims the oldest
 * pending build it may run, atomically (Ci::RegisterBuildService of GitLab 8.13, without the shared fair-share order:
 * the spec says "the oldest pending build").
 */
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { CommitStatusRow, RunnerRow } from '../../db/schema-ci.js';
import {
  countRunnerProjects, deleteRunnerRow, insertRunner, isRunnerLinked, linkRunnerProject, lockRunnerRow, pickBuildFor, runnerById,
  runnerByTokenHash, unlinkRunnerProject, updateRunnerRow,
} from '../../db/runners.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { conflict, forbidden, notFound, validationError } from '../../errors.js';
import { hashToken } from '../../secrets.js';
import { getSettings } from '../instance/settings.js';
import { changeBuildStatusIn } from './builds.js';
import { assignBuildToRunner, isRowId, unclaimedPendingIds } from '../../db/builds.js';
import { newBuildToken, projectForRunnersToken, safeEqual } from './build-tokens.js';
import { counter } from '../../metrics.js';

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
export async function registerRunner(ctx: AppContext, p: RegisterRunnerParams): Promise<{ runner: RunnerRow; token: string }> {
  let projectId: number | null = null;
  const shared = safeEqual(p.token, ctx.secrets.open((await getSettings(ctx)).runnersRegistrationToken));
  if (!shared) {
    projectId = await projectForRunnersToken(ctx, p.token);
    if (projectId === null) throw forbidden();
  }
  const tags = parseTagList(p.tag_list);
  const runUntagged = bool(p.run_untagged) ?? true;
  if (tags.length === 0 && !runUntagged) throw notFound();
  const token = randomBytes(15).toString('hex');
  const at = now();
  const info = infoColumns(p.info);
  try {
    const runner = await ctx.data.transaction(async (tx) => {
      const row = await insertRunner(tx, {
        tokenHash: hashToken(token), description: text(p.description), isShared: shared, locked: bool(p.locked) ?? false, runUntagged,
        tagList: JSON.stringify(tags), ...info, at,
      });
      if (projectId !== null) await linkRunnerProject(tx, row.id, projectId, at);
      return row;
    });
    return { runner, token };
  } catch (e) {
    if (isForeignKeyViolation(e)) throw forbidden(); // the project (and with it its runners token) was deleted meanwhile
    throw e;
  }
}

/** The runner with this token, or null. */
export async function runnerForToken(ctx: AppContext, token: string | undefined | null): Promise<RunnerRow | null> {
  if (!token) return null;
  return runnerByTokenHash(ctx.data, hashToken(token));
}

/** A runner by id, or null. */
export async function findRunner(ctx: AppContext, id: number): Promise<RunnerRow | null> {
  return isRowId(id) ? runnerById(ctx.data, id) : null;
}

/** Delete a runner and its project links (its builds keep running without it). */
export async function deleteRunner(ctx: AppContext, runner: RunnerRow): Promise<void> {
  await deleteRunnerRow(ctx.data, runner.id);
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
 * `{message: {tags_list: [...]}}` and nothing changes (the 8.12 model's tag_constraints validation). 404 when the
 * runner was deleted meanwhile.
 */
export async function updateRunner(ctx: AppContext, runner: RunnerRow, p: RunnerUpdate): Promise<RunnerRow> {
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
  const updated = await updateRunnerRow(ctx.data, runner.id, { ...set, updatedAt: now() });
  if (!updated) throw notFound('Runner');
  return updated;
}

/** Enable a runner for one more project; 409 when it already is (404 when the runner or project went meanwhile). */
export async function enableRunner(ctx: AppContext, runner: RunnerRow, projectId: number): Promise<void> {
  let linked;
  try {
    linked = await linkRunnerProject(ctx.data, runner.id, projectId, now());
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Runner');
    throw e;
  }
  if (!linked) throw conflict('Runner was already enabled for this project');
}

/**
 * Disable a runner for a project: 404 when it is not enabled there, 403 when that is its only project (the runner
 * would be left without any; remove it instead). Both checks and the delete run in one transaction (on PostgreSQL
 * after locking the runner's row, so two disables of its last two projects cannot both pass the count).
 */
export async function disableRunner(ctx: AppContext, runnerId: number, projectId: number): Promise<void> {
  if (!isRowId(runnerId)) throw notFound('Runner');
  await ctx.data.transaction(async (tx) => {
    await lockRunnerRow(tx, runnerId);
    if (!(await isRunnerLinked(tx, runnerId, projectId))) throw notFound('Runner');
    if ((await countRunnerProjects(tx, runnerId)) === 1) throw forbidden('Only one project associated with the runner. Please remove the runner instead');
    await unlinkRunnerProject(tx, runnerId, projectId);
  });
}

/** How long a contact is remembered before contacted_at is written again (GitLab throttles this too). */
const CONTACT_THROTTLE_MS = 60_000;

/** Record that the runner called in (contacted_at) and the `info` it sent; throttled unless the info changed. */
export async function touchRunner(ctx: AppContext, runner: RunnerRow, info: unknown): Promise<RunnerRow> {
  const cols = infoColumns(info);
  const changed = Object.entries(cols).some(([k, v]) => runner[k as keyof RunnerRow] !== v);
  const last = runner.contactedAt ? Date.parse(runner.contactedAt) : 0;
  if (!changed && Date.now() - last < CONTACT_THROTTLE_MS) return runner;
  const at = now();
  return (await updateRunnerRow(ctx.data, runner.id, { ...cols, contactedAt: at })) ?? runner;
}

/** Which of these builds still wait for a runner (pending, no runner): held runners stop trying once none does. */
export async function pendingBuildIds(ctx: AppContext, ids: readonly number[]): Promise<number[]> {
  return unclaimedPendingIds(ctx.data, ids.filter(isRowId));
}

/**
 * Claim the oldest pending build this runner may run: in one transaction, the candidate (locked on PostgreSQL), a
 * conditional UPDATE (still pending, no runner) giving it the runner, a new build token (hashed, and sealed for trace
 * masking), then the `run` event moving it to running. Two runners, on one daemon or several, never get the same
 * build. Returns the build and its plain token, or null when there is nothing to do.
 */
export async function claimBuild(ctx: AppContext, runner: RunnerRow): Promise<{ build: CommitStatusRow; token: string } | null> {
  const claimed = await claimOne(ctx, runner);
  (claimed ? CLAIMED : NOTHING).inc();
  return claimed;
}

const claims = counter('gantry_runner_build_requests_total', 'Claims of a build for a runner (POST /ci/api/v1/builds/register; a held request claims on arrival and on each wake-up): claimed one, or none to run');
const CLAIMED = claims({ result: 'claimed' });
const NOTHING = claims({ result: 'none' });

async function claimOne(ctx: AppContext, runner: RunnerRow): Promise<{ build: CommitStatusRow; token: string } | null> {
  const tags = runnerTags(runner);
  // A candidate whose conditional UPDATE changed nothing (taken meanwhile) is picked again.
  for (let attempt = 0; attempt < 16; attempt++) {
    const { token, hash, sealed } = newBuildToken(ctx);
    const result = await ctx.data.transaction(async (tx) => {
      const candidate = await pickBuildFor(tx, runner, tags);
      if (candidate === undefined) return { done: true as const, build: null };
      if (!(await assignBuildToRunner(tx, candidate, runner.id, { hash, sealed }, now()))) return { done: false as const, build: null };
      const running = await changeBuildStatusIn(ctx, tx, candidate, 'run', { runnerId: runner.id });
      if (!running || running.status !== 'running') throw new Error(`claimed build ${candidate} did not start running`);
      return { done: true as const, build: running };
    });
    if (result.build) return { build: result.build, token };
    if (result.done) return null;
  }
  return null;
}
