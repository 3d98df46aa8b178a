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
import type { DeploymentRow } from '../../db/rows.js';
import {
  deploymentById, deploymentOfBuild, environmentNamedOrNew, environmentValueTaken, insertDeployment, nextDeploymentIid, setEnvironmentState,
} from '../../db/ci/environments.js';
import { pipelineFacts } from '../../db/builds.js';
import { projectPathFacts } from '../../db/projects.js';
import { runnerById } from '../../db/runners.js';
import { userById } from '../../db/users.js';
import { buildVariables, CI_SERVER, expandVariables, parseYamlVariables } from '../../ci/variables.js';
import type { CiEnvironment, CiVariable } from '../../ci/config-types.js';
import { isRowId } from '../../db/builds.js';
import { runnerTags } from '../ci/runners.js';
import { secretVariables } from '../ci/variables.js';
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
  const project = (await projectPathFacts(tx, build.projectId))!;
  const runner = build.runnerId === null ? null : await runnerById(tx, build.runnerId);
  const user = await userById(tx, userId);
  const fullPath = `${project.namespacePath}/${project.path}`;
  return buildVariables({
    build: {
      id: build.id, token: '', sha: pipeline.sha, beforeSha: pipeline.beforeSha, ref: build.ref ?? '', tag: build.tag, name: build.name,
      stage: build.stage ?? '', when: build.when,
    },
    server: CI_SERVER,
    project: { id: project.id, path: project.path, pathWithNamespace: fullPath, namespacePath: project.namespacePath, webUrl: `${ctx.externalUrl()}/${fullPath}` },
    pipeline: { id: pipeline.id },
    runner: runner ? { id: runner.id, description: runner.description, tags: runnerTags(runner) } : null,
    user: user ? { id: user.id, email: user.email } : null,
    yamlVariables: parseYamlVariables(build.yamlVariables),
    secretVariables: await secretVariables(ctx, build.projectId, tx),
  });
}

/** The project's environment of this name, created (available) when missing; a concurrent create is found, not doubled. */
function findOrCreateEnvironment(tx: Queries, projectId: number, name: string) {
  return environmentNamedOrNew(tx, { projectId, name, environmentType: environmentType(name), at: now() });
}

/**
 * CreateDeploymentService for a build that just succeeded, inside the transaction that moved it (`tx`): nothing when
 * the build names no environment, the expanded name or URL is invalid (8.13's failed save), or the job stops the
 * environment (`action: stop`); otherwise the deployment with the project's next iid. Returns it, or null.
 */
export async function recordDeploymentIn(ctx: AppContext, tx: Queries, build: CommitStatusRow): Promise<DeploymentRow | null> {
  if (build.type !== 'build' || !build.environment) return null;
  const existing = await deploymentOfBuild(tx, build.id);
  if (existing) return existing;
  const pipeline = await pipelineFacts(tx, build.pipelineId);
  if (!pipeline) return null;
  const userId = build.userId ?? pipeline.userId;
  const options = environmentOptions(build);
  const variables = await variablesOf(ctx, tx, build, pipeline, userId);

  const name = expandVariables(build.environment, variables);
  if (nameErrors(name).length) return null;
  let env = await findOrCreateEnvironment(tx, build.projectId, name);
  const url = typeof options.url === 'string' ? expandVariables(options.url, variables) : null;
  if (url !== null && url.trim() !== '') {
    if (urlErrors(url).length) return null;
    if (await environmentValueTaken(tx, build.projectId, 'external_url', url, env.id)) return null; // 8.13: external_url is unique in the project, the save fails
  }
  // 8.13's state machine: start moves a stopped environment to available, stop an available one to stopped
  const state = (options.action ?? 'start') === 'stop' ? 'stopped' : 'available';
  const t = now();
  env = await setEnvironmentState(tx, env.id, url !== null && url.trim() !== '' ? url : null, state, t);
  if (env.state === 'stopped') return null;

  return insertDeployment(tx, {
    iid: await nextDeploymentIid(tx, build.projectId), projectId: build.projectId, environmentId: env.id, ref: build.ref ?? '', tag: build.tag,
    sha: pipeline.sha, userId, deployableId: build.id, onStop: typeof options.on_stop === 'string' ? options.on_stop : null, at: t,
  });
}

/** A project's deployment by id, or null. */
export async function findDeployment(ctx: AppContext, projectId: number, id: number): Promise<DeploymentRow | null> {
  if (!isRowId(id)) return null;
  return deploymentById(ctx.data, projectId, id);
}
