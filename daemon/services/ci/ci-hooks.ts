/**
 * Build and pipeline hooks (GitLab 8.13 "Build Hook" and "Pipeline Hook"): the payloads of
 * Gitlab::DataBuilder::Build and Gitlab::DataBuilder::Pipeline, built synchronously from the database (the commit
 * message and author were copied to the pipeline row when it was created), read through the transaction that changes
 * the status and queued in it (queueHookDeliveries), on either engine. A project without a hook subscribed to the event costs one indexed query and no payload.
 */
import type { AppContext } from '../../context.js';
import { settingsColumn } from '../../db/settings.js';
import type { NamespaceRow, ProjectRow, UserRow } from '../../db/schema.js';
import type { CommitStatusRow, PipelineRow } from '../../db/schema-ci.js';
import type { Queries } from '../../db/layer/types.js';
import { pipelineById, pipelineStatusesByStage } from '../../db/ci/pipelines.js';
import { projectWithNamespace } from '../../db/projects.js';
import { runnersByIds } from '../../db/runners.js';
import { avatarUrl, commitWebUrl, projectUrls } from '../../web-urls.js';
import { projectWantsEvent, queueHookDeliveries } from '../hooks/deliveries.js';
import { userById, usersByIds } from '../../db/users.js';
import { pipelineProjectHookAttrs, repositoryHookAttrsWithGitUrls } from '../../hooks/project.js';

/** Whether the project has a hook or an active service subscribed to build (build_events) or pipeline (pipeline_events) events. */
export async function projectWantsHook(q: Queries, projectId: number, event: 'build' | 'pipeline'): Promise<boolean> {
  return projectWantsEvent(q, projectId, event);
}

/** Seconds between two time stamps (to `now` while unfinished), or null before the start (8.13 calculate_duration). */
function secondsBetween(start: string | null, end: string | null): number | null {
  if (!start) return null;
  const s = Date.parse(start);
  const e = end ? Date.parse(end) : Date.now();
  return Number.isFinite(s) && Number.isFinite(e) ? Math.max(0, e - s) / 1000 : null;
}

interface ProjectInfo {
  project: ProjectRow;
  ns: NamespaceRow;
  urls: ReturnType<typeof projectUrls>;
}

async function projectInfo(ctx: AppContext, q: Queries, projectId: number): Promise<ProjectInfo | null> {
  const found = await projectWithNamespace(q, projectId);
  if (!found) return null;
  const { project, namespace: ns } = found;
  return { project, ns, urls: projectUrls(ctx, ns, project) };
}


/** The gravatar_enabled setting, read through `q` (the status-changing transaction). */
async function gravatarOn(q: Queries): Promise<boolean> {
  const g = await settingsColumn(q, 'gravatar_enabled');
  return g === undefined ? true : !!g;
}

/** GitLab's User#hook_attrs: name, username, avatar_url. */
function userHookAttrs(ctx: AppContext, u: UserRow | null, gravatar: boolean) {
  return u ? { name: u.name, username: u.username, avatar_url: avatarUrl(u, gravatar) } : null;
}

/** The Build Hook payload of a build (Gitlab::DataBuilder::Build, 8.13), or null when its project or pipeline is gone. */
export async function buildHookData(ctx: AppContext, q: Queries, build: CommitStatusRow) {
  const info = await projectInfo(ctx, q, build.projectId);
  const pipeline = await pipelineById(q, build.pipelineId);
  if (!info || !pipeline) return null;
  const { project, ns, urls } = info;
  const user = await userById(q, build.userId);
  return {
    object_kind: 'build',
    ref: build.ref,
    tag: build.tag,
    before_sha: pipeline.beforeSha,
    sha: pipeline.sha,
    build_id: build.id,
    build_name: build.name,
    build_stage: build.stage,
    build_status: build.status,
    build_started_at: build.startedAt,
    build_finished_at: build.finishedAt,
    build_duration: secondsBetween(build.startedAt, build.finishedAt),
    build_allow_failure: build.allowFailure,
    project_id: project.id,
    project_name: `${ns.name} / ${project.name}`,
    user: { id: user?.id ?? null, name: user?.name ?? null, email: user?.email ?? null },
    commit: {
      id: pipeline.id,
      sha: pipeline.sha,
      message: pipeline.commitMessage,
      author_name: pipeline.commitAuthorName,
      author_email: pipeline.commitAuthorEmail,
      status: pipeline.status,
      duration: pipeline.duration,
      started_at: pipeline.startedAt,
      finished_at: pipeline.finishedAt,
    },
    repository: repositoryHookAttrsWithGitUrls(project, urls),
  };
}

/** The Pipeline Hook payload of a pipeline (Gitlab::DataBuilder::Pipeline, 8.13), or null when its project is gone. */
export async function pipelineHookData(ctx: AppContext, q: Queries, pipeline: PipelineRow) {
  const info = await projectInfo(ctx, q, pipeline.projectId);
  if (!info) return null;
  const { project, ns, urls } = info;
  const statuses = await pipelineStatusesByStage(q, pipeline.id);
  const stages = [...new Set(statuses.map((s) => s.stage).filter((s): s is string => s !== null))];
  const builds = statuses.filter((s) => s.type === 'build').sort((a, b) => a.id - b.id);
  const userIds = [...new Set(builds.map((b) => b.userId).filter((id): id is number => id !== null))];
  if (pipeline.userId !== null) userIds.push(pipeline.userId);
  const userById = await usersByIds(q, userIds);
  const runnerIds = [...new Set(builds.map((b) => b.runnerId).filter((id): id is number => id !== null))];
  const runnerById = await runnersByIds(q, runnerIds);
  const gravatar = await gravatarOn(q);
  const commitUrl = commitWebUrl(urls.web_url, pipeline.sha);
  return {
    object_kind: 'pipeline',
    object_attributes: {
      id: pipeline.id, ref: pipeline.ref, tag: pipeline.tag, sha: pipeline.sha, before_sha: pipeline.beforeSha, status: pipeline.status,
      stages, created_at: pipeline.createdAt, finished_at: pipeline.finishedAt, duration: pipeline.duration,
    },
    user: userHookAttrs(ctx, pipeline.userId === null ? null : userById.get(pipeline.userId) ?? null, gravatar),
    project: pipelineProjectHookAttrs(ns, project, urls),
    commit: {
      id: pipeline.sha, message: pipeline.commitMessage, timestamp: pipeline.committedAt?.replace(/\.\d{3}Z$/, 'Z') ?? null, url: commitUrl,
      author: { name: pipeline.commitAuthorName, email: pipeline.commitAuthorEmail },
    },
    builds: builds.map((b) => {
      const runner = b.runnerId === null ? undefined : runnerById.get(b.runnerId);
      return {
        id: b.id, stage: b.stage, name: b.name, status: b.status, created_at: b.createdAt, started_at: b.startedAt, finished_at: b.finishedAt,
        when: b.when, manual: b.when === 'manual', user: userHookAttrs(ctx, b.userId === null ? null : userById.get(b.userId) ?? null, gravatar),
        runner: runner ? { id: runner.id, description: runner.description, active: runner.active, is_shared: runner.isShared } : null,
        artifacts_file: { filename: b.artifactsFile, size: b.artifactsSize },
      };
    }),
  };
}

/** Queue the Build Hook of a build whose status just changed (inside that transaction); generic statuses have none. */
export async function queueBuildHook(ctx: AppContext, tx: Queries, build: CommitStatusRow): Promise<void> {
  if (build.type !== 'build' || !(await projectWantsHook(tx, build.projectId, 'build'))) return;
  const data = await buildHookData(ctx, tx, build);
  if (data) await queueHookDeliveries(tx, build.projectId, 'build', data);
}

/** Queue the Pipeline Hook of a pipeline whose status just changed (inside that transaction). */
export async function queuePipelineHook(ctx: AppContext, tx: Queries, pipeline: PipelineRow): Promise<void> {
  if (!(await projectWantsHook(tx, pipeline.projectId, 'pipeline'))) return;
  const data = await pipelineHookData(ctx, tx, pipeline);
  if (data) await queueHookDeliveries(tx, pipeline.projectId, 'pipeline', data);
}
