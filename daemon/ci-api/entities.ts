/**
 * Runner-facing JSON of /ci/api/v1 (GitLab 8.13 Ci::API::Entities): Build, BuildDetails (the build register payload:
 * runner-protocol.md 1.1, runner-1x-wire.md 3) and the runner register answer, with their TypeBox schemas.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.js';
import type { CommitStatusRow, RunnerRow } from '../db/schema-ci.js';
import { buildVariables, CI_SERVER, parseYamlVariables } from '../ci/variables.js';
import { runnerTags } from '../services/ci/runners.js';
import { secretVariables } from '../services/ci/variables.js';
import { triggerRequestOfPipeline } from '../services/ci/triggers.js';
import { latestBuildsBeforeStage, pipelineFacts } from '../db/builds.js';
import { projectPathFacts, type ProjectPathFacts } from '../db/projects.js';
import { userById } from '../db/users.js';

const ZERO_SHA = '0'.repeat(40);
/** Build timeout sent to runners (seconds; GitLab's project default). */
export const BUILD_TIMEOUT = 3600;

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const ArtifactsFileSchema = Type.Object({ filename: Type.String(), size: Type.Integer() });

/** The Build entity (runner view; also the items of depends_on_builds). */
export const RunnerBuildSchema = Type.Object({
  id: Type.Integer(),
  ref: Nullable(Type.String()),
  tag: Type.Boolean(),
  sha: Type.String(),
  status: Type.String(),
  name: Type.String(),
  token: Type.Optional(Type.String()),
  stage: Nullable(Type.String()),
  project_id: Type.Integer(),
  project_name: Type.String(),
  artifacts_file: Type.Optional(ArtifactsFileSchema),
  artifacts_expire_at: Type.Optional(Nullable(Type.String())),
});

/** The BuildDetails entity: the 201 body of builds/register. */
export const BuildDetailsSchema = Type.Object({
  ...RunnerBuildSchema.properties,
  commands: Type.String(),
  repo_url: Type.String(),
  before_sha: Type.String(),
  allow_git_fetch: Type.Boolean(),
  options: Type.Unknown(),
  timeout: Type.Integer(),
  variables: Type.Array(Type.Object({ key: Type.String(), value: Type.String(), public: Type.Boolean() })),
  depends_on_builds: Type.Array(RunnerBuildSchema),
});

type ProjectFacts = ProjectPathFacts;

async function projectFacts(ctx: AppContext, projectId: number): Promise<ProjectFacts> {
  return (await projectPathFacts(ctx.data, projectId))!;
}

function unexpired(b: CommitStatusRow, at = new Date().toISOString()): boolean {
  return !!b.artifactsFile && (b.artifactsExpireAt === null || b.artifactsExpireAt > at);
}

type RunnerBuild = typeof RunnerBuildSchema.static;

function presentBuild(b: CommitStatusRow, sha: string, project: ProjectFacts, token?: string): RunnerBuild {
  const out: RunnerBuild = {
    id: b.id, ref: b.ref, tag: !!b.tag, sha, status: b.status, name: b.name, stage: b.stage,
    project_id: b.projectId, project_name: project.name,
  };
  if (token !== undefined) out.token = token;
  if (unexpired(b)) {
    out.artifacts_file = { filename: b.artifactsFile!, size: b.artifactsSize ?? 0 };
    out.artifacts_expire_at = b.artifactsExpireAt;
  }
  return out;
}

/** The Build entity of one build (runner view, no token). */
export async function runnerBuild(ctx: AppContext, b: CommitStatusRow): Promise<RunnerBuild> {
  return presentBuild(b, (await pipelineFacts(ctx.data, b.pipelineId))?.sha ?? '', await projectFacts(ctx, b.projectId));
}

function parseJson<T>(text: string | null, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** `<scheme>://gitlab-ci-token:<token>@<host>[/prefix]/<ns>/<project>.git`. */
export function repoUrl(ctx: AppContext, fullPath: string, token: string): string {
  const base = new URL(ctx.externalUrl());
  const prefix = base.pathname.replace(/\/+$/, '');
  return `${base.protocol}//gitlab-ci-token:${encodeURIComponent(token)}@${base.host}${prefix}/${fullPath}.git`;
}

/** The BuildDetails payload handed to the runner that just claimed `build` with token `token`. */
export async function buildDetails(ctx: AppContext, build: CommitStatusRow, token: string, runner: RunnerRow): Promise<typeof BuildDetailsSchema.static> {
  const project = await projectFacts(ctx, build.projectId);
  const pipeline = (await pipelineFacts(ctx.data, build.pipelineId))!;
  const fullPath = `${project.namespacePath}/${project.path}`;
  const userId = build.userId ?? pipeline.userId;
  const found = userId ? await userById(ctx.data, userId) : null;
  const user = found ? { id: found.id, email: found.email } : null;
  const secrets = await secretVariables(ctx, build.projectId);
  const triggerRequest = await triggerRequestOfPipeline(ctx, build.pipelineId);
  const variables = buildVariables({
    build: {
      id: build.id, token, sha: pipeline.sha, beforeSha: pipeline.beforeSha, ref: build.ref ?? '', tag: !!build.tag,
      name: build.name, stage: build.stage ?? '', when: build.when, triggered: triggerRequest !== null,
    },
    server: CI_SERVER,
    project: { id: project.id, path: project.path, pathWithNamespace: fullPath, namespacePath: project.namespacePath, webUrl: `${ctx.externalUrl()}/${fullPath}` },
    pipeline: { id: pipeline.id },
    runner: { id: runner.id, description: runner.description, tags: runnerTags(runner) },
    user,
    yamlVariables: parseYamlVariables(build.yamlVariables),
    secretVariables: secrets,
    triggerVariables: Object.entries(triggerRequest?.variables ?? {}).map(([key, value]) => ({ key, value })),
  });
  // Dependencies are downloaded with this build's token: it is valid for artifacts of its own pipeline.
  const depends = (await latestBuildsBeforeStage(ctx.data, build.pipelineId, build.stageIdx)).map((d) => presentBuild(d, pipeline.sha, project, token));
  return {
    ...presentBuild(build, pipeline.sha, project, token),
    commands: build.commands ?? '',
    repo_url: repoUrl(ctx, fullPath, token),
    before_sha: pipeline.beforeSha || ZERO_SHA,
    allow_git_fetch: true,
    options: parseJson<Record<string, unknown>>(build.options, {}),
    timeout: BUILD_TIMEOUT,
    variables,
    depends_on_builds: depends,
  };
}
