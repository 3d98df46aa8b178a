/**
 * Deployments (GitLab 8.13 Deployment, CreateDeploymentService run by BuildSuccessWorker): a build whose job names an
 * environment records, when it succeeds, a deployment of its ref and sha to that environment (created if missing,
 * its URL set from the job's `url`). Names and URLs are expanded with the build's variables ($VAR, ${VAR}, %VAR%).
 * Recorded inside the transaction that moves the build to success, so a success reported twice, or through two
 * daemons, records one deployment (that move is conditional; UNIQUE (deployable_id) backs it).
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { CommitStatusRow } from '../../db/schema-ci.js';
import { toDeployment, toEnvironment, type DeploymentRow, type EnvironmentRow } from '../../db/rows.js';
import { buildVariables, CI_SERVER, expandVariables, parseYamlVariables } from '../../ci/variables.js';
import type { CiEnvironment, CiVariable } from '../../ci/config-types.js';
import { isRowId } from '../../db/builds.js';
import { runnerTags } from '../runners.js';
import { secretVariables } from '../variables.js';
import { environmentType, nameErrors, urlErrors } from './environments.js';

function parseJson(text: string | null): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The `environment` entry of a build's stored options ({} when absent). */
function environmentOptions(build: CommitStatusRow): Partial<CiEnvironment> {
  const options = parseJson(build.options) as { environment?: unknown } | null;
  const env = options?.environment;
  return env && typeof env === 'object' ? (env as Partial<CiEnvironment>) : {};
}

/**
 * The build's variables as 8.13's Ci::Build#variables (the runner's list, read through `tx`), for expanding the
 * environment's name and URL. The build token is left out: a name like `$CI_BUILD_TOKEN` must not publish it.
 */
async function variablesOf(ctx: AppContext, tx: Queries, build: CommitStatusRow, pipeline: { id: number; sha: string; beforeSha: string | null }, userId: number | null): Promise<CiVariable[]> {
  const project = (await tx.get<{ id: number; path: string; ns: string }>(
    'SELECT p.id, p.path, n.path AS ns FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ?', [build.projectId]))!;
  const runner = build.runnerId === null ? undefined
    : await tx.get<{ id: number; description: string | null; tag_list: string }>('SELECT id, description, tag_list FROM runners WHERE id = ?', [build.runnerId]);
  const user = userId === null ? undefined : await tx.get<{ id: number; email: string }>('SELECT id, email FROM users WHERE id = ?', [userId]);
  const fullPath = `${project.ns}/${project.path}`;
  return buildVariables({
    build: {
      id: build.id, token: '', sha: pipeline.sha, beforeSha: pipeline.beforeSha, ref: build.ref ?? '', tag: build.tag, name: build.name,
      stage: build.stage ?? '', when: build.when,
    },
    server: CI_SERVER,
    project: { id: project.id, path: project.path, pathWithNamespace: fullPath, namespacePath: project.ns, webUrl: `${ctx.externalUrl()}/${fullPath}` },
    pipeline: { id: pipeline.id },
    runner: runner ? { id: runner.id, description: runner.description, tags: runnerTags({ tagList: runner.tag_list }) } : null,
    user: user ?? null,
    yamlVariables: parseYamlVariables(build.yamlVariables),
    secretVariables: await secretVariables(ctx, build.projectId, tx),
  });
}

/** The project's environment of this name, created (available) when missing; a concurrent create is found, not doubled. */
async function findOrCreateEnvironment(tx: Queries, projectId: number, name: string): Promise<EnvironmentRow> {
  const t = now();
  await tx.run(
    `INSERT INTO environments (project_id, name, external_url, environment_type, state, created_at, updated_at)
     VALUES (?, ?, NULL, ?, 'available', ?, ?) ON CONFLICT (project_id, name) DO NOTHING`,
    [projectId, name, environmentType(name), t, t],
  );
  return toEnvironment((await tx.get('SELECT * FROM environments WHERE project_id = ? AND name = ?', [projectId, name]))!);
}

/**
 * CreateDeploymentService for a build that just succeeded, inside the transaction that moved it (`tx`): nothing when
 * the build names no environment, the expanded name or URL is invalid (8.13's failed save), or the job stops the
 * environment (`action: stop`); otherwise the deployment with the project's next iid. Returns it, or null.
 */
export async function recordDeploymentIn(ctx: AppContext, tx: Queries, build: CommitStatusRow): Promise<DeploymentRow | null> {
  if (build.type !== 'build' || !build.environment) return null;
  const existing = await tx.get('SELECT * FROM deployments WHERE deployable_id = ?', [build.id]);
  if (existing) return toDeployment(existing);
  const pipeline = await tx.get<{ id: number; sha: string; before_sha: string | null; user_id: number | null }>(
    'SELECT id, sha, before_sha, user_id FROM pipelines WHERE id = ?', [build.pipelineId]);
  if (!pipeline) return null;
  const userId = build.userId ?? pipeline.user_id;
  const options = environmentOptions(build);
  const variables = await variablesOf(ctx, tx, build, { id: pipeline.id, sha: pipeline.sha, beforeSha: pipeline.before_sha }, userId);

  const name = expandVariables(build.environment, variables);
  if (nameErrors(name).length) return null;
  let env = await findOrCreateEnvironment(tx, build.projectId, name);
  const url = typeof options.url === 'string' ? expandVariables(options.url, variables) : null;
  if (url !== null && url.trim() !== '') {
    if (urlErrors(url).length) return null;
    const other = await tx.get('SELECT 1 AS x FROM environments WHERE project_id = ? AND external_url = ? AND id <> ?', [build.projectId, url, env.id]);
    if (other) return null; // 8.13: external_url is unique in the project, the save fails
  }
  // 8.13's state machine: start moves a stopped environment to available, stop an available one to stopped
  const state = (options.action ?? 'start') === 'stop' ? 'stopped' : 'available';
  const t = now();
  env = toEnvironment((await tx.get(
    'UPDATE environments SET external_url = COALESCE(?, external_url), state = ?, updated_at = ? WHERE id = ? RETURNING *',
    [url !== null && url.trim() !== '' ? url : null, state, t, env.id],
  ))!);
  if (env.state === 'stopped') return null;

  const iid = (await tx.get<{ last_iid: number }>(
    `INSERT INTO deployment_iids (project_id, last_iid) VALUES (?, 1)
     ON CONFLICT (project_id) DO UPDATE SET last_iid = deployment_iids.last_iid + 1 RETURNING last_iid`,
    [build.projectId],
  ))!.last_iid;
  const row = await tx.get(
    `INSERT INTO deployments (iid, project_id, environment_id, ref, tag, sha, user_id, deployable_id, on_stop, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (deployable_id) DO NOTHING RETURNING *`,
    [iid, build.projectId, env.id, build.ref ?? '', build.tag, pipeline.sha, userId, build.id, typeof options.on_stop === 'string' ? options.on_stop : null, t, t],
  );
  return row ? toDeployment(row) : null;
}

/** Number of deployments of a project. */
export async function countDeployments(ctx: AppContext, projectId: number, q: Queries = ctx.data): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM deployments WHERE project_id = ?', [projectId]))?.n ?? 0);
}

/** One page of a project's deployments, oldest first (8.13's `project.deployments`, by id). */
export async function listDeployments(ctx: AppContext, projectId: number, limit: number, offset: number, q: Queries = ctx.data): Promise<DeploymentRow[]> {
  return (await q.all('SELECT * FROM deployments WHERE project_id = ? ORDER BY id LIMIT ? OFFSET ?', [projectId, limit, offset])).map(toDeployment);
}

/** A project's deployment by id, or null. */
export async function findDeployment(ctx: AppContext, projectId: number, id: number): Promise<DeploymentRow | null> {
  if (!isRowId(id)) return null;
  const row = await ctx.data.get('SELECT * FROM deployments WHERE id = ? AND project_id = ?', [id, projectId]);
  return row ? toDeployment(row) : null;
}
