/** The runners' data module: runners by id and the filtered pages of the runner lists. `q`: the database or a transaction. */
import type { Dialect, Queries } from './layer/types.js';
import { toProject, toRunner } from './rows.js';
import type { RunnerRow } from './schema-ci.js';
import type { ProjectRow } from './schema.js';
import { rowsWithIds } from './sql.js';

/** Runner rows of `ids` (repeats skipped; ids that are gone are absent). */
export async function runnersByIds(q: Queries, ids: readonly (number | null)[]): Promise<Map<number, RunnerRow>> {
  const wanted = [...new Set(ids.filter((i): i is number => i !== null))];
  if (!wanted.length) return new Map();
  return new Map((await rowsWithIds(q, 'runners', wanted)).map((r) => [r.id as number, toRunner(r)]));
}

/** The scopes of the runner lists (GitLab 8.13's Ci::Runner scopes). */
export type RunnerScope = 'specific' | 'shared' | 'active' | 'paused' | 'online';

/**
 * Which runners a list shows: `scope` (`online`: contacted after `onlineSince`), only `ids` when given, and for
 * `project` its specific runners plus the shared ones.
 */
export interface RunnerListFilter {
  scope?: RunnerScope;
  onlineSince?: string;
  ids?: readonly number[];
  project?: number;
}

function runnerWhere(d: Dialect, f: RunnerListFilter): { sql: string; args: unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  if (f.ids) {
    if (!f.ids.length) return { sql: '1 = 0', args: [] };
    parts.push(`r.id IN ${d.inIds}`);
    args.push(d.ids(f.ids));
  }
  if (f.project !== undefined) {
    parts.push('(r.is_shared = TRUE OR r.id IN (SELECT runner_id FROM runner_projects WHERE project_id = ?))');
    args.push(f.project);
  }
  switch (f.scope) {
    case 'specific': parts.push('r.is_shared = FALSE'); break;
    case 'shared': parts.push('r.is_shared = TRUE'); break;
    case 'active': parts.push('r.active = TRUE'); break;
    case 'paused': parts.push('r.active = FALSE'); break;
    case 'online': parts.push('r.contacted_at > ?'); args.push(f.onlineSince ?? new Date().toISOString()); break;
    default: break;
  }
  return { sql: parts.length ? parts.join(' AND ') : '1 = 1', args };
}

/** The number of runners a list shows. */
export async function countRunners(q: Queries, f: RunnerListFilter): Promise<number> {
  const w = runnerWhere(q.dialect, f);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM runners r WHERE ${w.sql}`, w.args))?.n ?? 0);
}

/** One page of the runners a list shows, by id. */
export async function runnersPage(q: Queries, f: RunnerListFilter, limit: number, offset: number): Promise<RunnerRow[]> {
  const w = runnerWhere(q.dialect, f);
  return (await q.all(`SELECT * FROM runners r WHERE ${w.sql} ORDER BY r.id LIMIT ? OFFSET ?`, [...w.args, limit, offset])).map(toRunner);
}

/** The columns of a new runner (the token is stored as its hash). */
export interface NewRunner {
  tokenHash: string;
  description: string | null;
  isShared: boolean;
  locked: boolean;
  runUntagged: boolean;
  tagList: string;
  name?: string | null;
  version?: string | null;
  revision?: string | null;
  platform?: string | null;
  architecture?: string | null;
  at: string;
}

/** Insert a runner; the new row. */
export async function insertRunner(tx: Queries, r: NewRunner): Promise<RunnerRow> {
  return toRunner((await tx.get(
    `INSERT INTO runners (token_hash, description, is_shared, locked, run_untagged, tag_list, name, version, revision, platform, architecture, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    [r.tokenHash, r.description, r.isShared, r.locked, r.runUntagged, r.tagList, r.name ?? null, r.version ?? null,
      r.revision ?? null, r.platform ?? null, r.architecture ?? null, r.at, r.at],
  ))!);
}

/** Link a runner to a project; false when it was linked already (a foreign-key violation when either is gone). */
export async function linkRunnerProject(q: Queries, runnerId: number, projectId: number, at: string): Promise<boolean> {
  return (await q.run('INSERT INTO runner_projects (runner_id, project_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [runnerId, projectId, at])).changes > 0;
}

/** The runner whose token hashes to `tokenHash`, or null. */
export async function runnerByTokenHash(q: Queries, tokenHash: string): Promise<RunnerRow | null> {
  const row = await q.get('SELECT * FROM runners WHERE token_hash = ?', [tokenHash]);
  return row ? toRunner(row) : null;
}

/** A runner by id (a valid row id), or null. */
export async function runnerById(q: Queries, id: number): Promise<RunnerRow | null> {
  const row = await q.get('SELECT * FROM runners WHERE id = ?', [id]);
  return row ? toRunner(row) : null;
}

/** Ids of the projects a runner is assigned to. */
export async function runnerProjectIds(q: Queries, runnerId: number): Promise<number[]> {
  return (await q.all<{ id: number }>('SELECT project_id AS id FROM runner_projects WHERE runner_id = ? ORDER BY project_id', [runnerId])).map((r) => r.id);
}

/** Delete a runner (its project links go with it). */
export async function deleteRunnerRow(q: Queries, id: number): Promise<void> {
  await q.run('DELETE FROM runners WHERE id = ?', [id]);
}

const RUNNER_COLUMNS: Record<string, string> = {
  description: 'description', active: 'active', runUntagged: 'run_untagged', locked: 'locked', tagList: 'tag_list', updatedAt: 'updated_at',
  contactedAt: 'contacted_at', name: 'name', version: 'version', revision: 'revision', platform: 'platform', architecture: 'architecture',
};

/** UPDATE a runner row from camelCase fields; the row afterwards, or null when it is gone. */
export async function updateRunnerRow(q: Queries, id: number, set: Partial<RunnerRow>): Promise<RunnerRow | null> {
  const keys = Object.keys(set).filter((k) => set[k as keyof RunnerRow] !== undefined);
  const row = await q.get(`UPDATE runners SET ${keys.map((k) => `${RUNNER_COLUMNS[k]} = ?`).join(', ')} WHERE id = ? RETURNING *`,
    [...keys.map((k) => set[k as keyof RunnerRow]), id]);
  return row ? toRunner(row) : null;
}

/** On PostgreSQL, lock the runner's row until the end of the transaction (SQLite's writer is alone already). */
export async function lockRunnerRow(tx: Queries, runnerId: number): Promise<void> {
  if (tx.dialect.name === 'postgres') await tx.get('SELECT id FROM runners WHERE id = ? FOR UPDATE', [runnerId]);
}

/** Whether the runner is linked to the project. */
export async function isRunnerLinked(q: Queries, runnerId: number, projectId: number): Promise<boolean> {
  return !!(await q.get('SELECT 1 AS one FROM runner_projects WHERE runner_id = ? AND project_id = ?', [runnerId, projectId]));
}

/** The number of projects a runner is linked to. */
export async function countRunnerProjects(q: Queries, runnerId: number): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM runner_projects WHERE runner_id = ?', [runnerId]))!.n);
}

/** Remove a runner's link to a project. */
export async function unlinkRunnerProject(tx: Queries, runnerId: number, projectId: number): Promise<void> {
  await tx.run('DELETE FROM runner_projects WHERE runner_id = ? AND project_id = ?', [runnerId, projectId]);
}

/**
 * The id of the oldest pending build `runner` may take (one statement text per kind of runner), given the runner's
 * `tags`. On PostgreSQL the row is locked with `FOR UPDATE OF cs SKIP LOCKED`: a build another daemon's claim holds is
 * passed over, never waited on or taken twice; the tags are a jsonb containment there, json_each on SQLite (whose
 * single writer serialises claims).
 */
export async function pickBuildFor(tx: Queries, runner: RunnerRow, tags: readonly string[]): Promise<number | undefined> {
  const dialect = tx.dialect.name;
  const inProjects = 'cs.project_id IN (SELECT project_id FROM runner_projects WHERE runner_id = ?)';
  const scope = runner.isShared
    ? `p.shared_runners_enabled = TRUE${runner.locked ? ` AND ${inProjects}` : ''}`
    : inProjects;
  const untagged = runner.runUntagged ? '' : " AND cs.tag_list <> '[]'";
  const tagCheck = dialect === 'postgres'
    ? ' AND cs.tag_list::jsonb <@ ?::jsonb'
    : ' AND NOT EXISTS (SELECT 1 FROM json_each(cs.tag_list) t WHERE t.value NOT IN (SELECT value FROM json_each(?)))';
  const args: unknown[] = [];
  if (!runner.isShared || runner.locked) args.push(runner.id);
  args.push(JSON.stringify(tags));
  const row = await tx.get<{ id: number }>(`SELECT cs.id FROM commit_statuses cs JOIN projects p ON p.id = cs.project_id
    WHERE cs.status = 'pending' AND cs.type = 'build' AND cs.runner_id IS NULL AND p.builds_enabled = TRUE AND ${scope}${untagged}${tagCheck}
    ORDER BY cs.id LIMIT 1${dialect === 'postgres' ? ' FOR UPDATE OF cs SKIP LOCKED' : ''}`, args);
  return row?.id;
}

/** The projects a runner is assigned to, by id. */
export async function runnerProjectRows(q: Queries, runnerId: number): Promise<ProjectRow[]> {
  return (await q.all('SELECT p.* FROM projects p JOIN runner_projects rp ON rp.project_id = p.id WHERE rp.runner_id = ? ORDER BY p.id', [runnerId])).map(toProject);
}

/** The projects that have a runner and meet `condition` (an access rule's SQL over `projects p`, from policy/). */
export async function projectsWithRunnersMeeting(q: Queries, condition: { sql: string; args: readonly unknown[] }): Promise<ProjectRow[]> {
  return (await q.all(`SELECT p.* FROM projects p WHERE p.id IN (SELECT rp.project_id FROM runner_projects rp) AND ${condition.sql} ORDER BY p.id`, condition.args))
    .map(toProject);
}

/** The ids of the specific (not shared) runners of any of these projects. */
export async function specificRunnerIdsOfProjects(q: Queries, projectIds: readonly number[]): Promise<number[]> {
  if (!projectIds.length) return [];
  return (await q.all<{ id: number }>(
    `SELECT DISTINCT rp.runner_id AS id FROM runner_projects rp JOIN runners r ON r.id = rp.runner_id WHERE r.is_shared = FALSE AND rp.project_id IN ${q.dialect.inIds} ORDER BY rp.runner_id`,
    [q.dialect.ids(projectIds)],
  )).map((r) => Number(r.id));
}

/** How many projects a runner is assigned to. */
export async function runnerProjectCount(q: Queries, runnerId: number): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM runner_projects WHERE runner_id = ?', [runnerId]))?.n ?? 0);
}
