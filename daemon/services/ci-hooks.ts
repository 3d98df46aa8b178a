/**
 * Build and pipeline hooks (GitLab 8.13 "Build Hook" and "Pipeline Hook"): the payloads of
 * Gitlab::DataBuilder::Build and Gitlab::DataBuilder::Pipeline, built synchronously from the database (the commit
 * message and author were copied to the pipeline row when it was created), and queued in the transaction that
 * changes the status. A project without a hook subscribed to the event costs one indexed query and no payload.
 */
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { namespaces, projectHooks, projects, users, type NamespaceRow, type ProjectRow, type UserRow } from '../db/schema.js';
import { commitStatuses, pipelines, runners, type CommitStatusRow, type PipelineRow } from '../db/schema-ci.js';
import { projectUrls } from '../api/entities/projects.js';
import { avatarUrl } from '../api/entities/users.js';
import { queueHookDeliveries, type HookWriter } from './hook-deliveries.js';

/** A handle that can read (the caller's transaction or ctx.db). */
type Reader = Pick<AppContext['db'], 'select'>;

/** Whether the project has a hook subscribed to build (build_events) or pipeline (pipeline_events) events. */
export function projectWantsHook(db: Reader, projectId: number, event: 'build' | 'pipeline'): boolean {
  const flag = event === 'build' ? projectHooks.buildEvents : projectHooks.pipelineEvents;
  return !!db.select({ id: projectHooks.id }).from(projectHooks).where(and(eq(projectHooks.projectId, projectId), eq(flag, true))).limit(1).get();
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

function projectInfo(ctx: AppContext, db: Reader, projectId: number): ProjectInfo | null {
  const project = db.select().from(projects).where(eq(projects.id, projectId)).get();
  if (!project) return null;
  const ns = db.select().from(namespaces).where(eq(namespaces.id, project.namespaceId)).get();
  if (!ns) return null;
  return { project, ns, urls: projectUrls(ctx, ns, project) };
}

function userOf(db: Reader, id: number | null): UserRow | null {
  return id === null ? null : db.select().from(users).where(eq(users.id, id)).get() ?? null;
}

/** GitLab's User#hook_attrs: name, username, avatar_url. */
function userHookAttrs(ctx: AppContext, u: UserRow | null) {
  return u ? { name: u.name, username: u.username, avatar_url: avatarUrl(ctx, u) } : null;
}

/** The Build Hook payload of a build (Gitlab::DataBuilder::Build, 8.13), or null when its project or pipeline is gone. */
export function buildHookData(ctx: AppContext, db: Reader, build: CommitStatusRow) {
  const info = projectInfo(ctx, db, build.projectId);
  const pipeline = db.select().from(pipelines).where(eq(pipelines.id, build.pipelineId)).get();
  if (!info || !pipeline) return null;
  const { project, ns, urls } = info;
  const user = userOf(db, build.userId);
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
    repository: {
      name: project.name, url: urls.ssh_url_to_repo, description: project.description, homepage: urls.web_url,
      git_http_url: urls.http_url_to_repo, git_ssh_url: urls.ssh_url_to_repo, visibility_level: project.visibilityLevel,
    },
  };
}

/** The Pipeline Hook payload of a pipeline (Gitlab::DataBuilder::Pipeline, 8.13), or null when its project is gone. */
export function pipelineHookData(ctx: AppContext, db: Reader, pipeline: PipelineRow) {
  const info = projectInfo(ctx, db, pipeline.projectId);
  if (!info) return null;
  const { project, ns, urls } = info;
  const statuses = db.select().from(commitStatuses).where(eq(commitStatuses.pipelineId, pipeline.id))
    .orderBy(asc(commitStatuses.stageIdx), asc(commitStatuses.id)).all();
  const stages = [...new Set(statuses.map((s) => s.stage).filter((s): s is string => s !== null))];
  const builds = statuses.filter((s) => s.type === 'build').sort((a, b) => a.id - b.id);
  const userIds = [...new Set(builds.map((b) => b.userId).filter((id): id is number => id !== null))];
  if (pipeline.userId !== null) userIds.push(pipeline.userId);
  const userById = new Map((userIds.length ? db.select().from(users).where(inArray(users.id, userIds)).all() : []).map((u) => [u.id, u]));
  const runnerIds = [...new Set(builds.map((b) => b.runnerId).filter((id): id is number => id !== null))];
  const runnerById = new Map((runnerIds.length ? db.select().from(runners).where(inArray(runners.id, runnerIds)).all() : []).map((r) => [r.id, r]));
  const commitUrl = `${urls.web_url}/commit/${pipeline.sha}`;
  return {
    object_kind: 'pipeline',
    object_attributes: {
      id: pipeline.id, ref: pipeline.ref, tag: pipeline.tag, sha: pipeline.sha, before_sha: pipeline.beforeSha, status: pipeline.status,
      stages, created_at: pipeline.createdAt, finished_at: pipeline.finishedAt, duration: pipeline.duration,
    },
    user: userHookAttrs(ctx, pipeline.userId === null ? null : userById.get(pipeline.userId) ?? null),
    project: {
      name: project.name, description: project.description, web_url: urls.web_url, avatar_url: null, git_ssh_url: urls.ssh_url_to_repo,
      git_http_url: urls.http_url_to_repo, namespace: ns.name, visibility_level: project.visibilityLevel,
      path_with_namespace: `${ns.path}/${project.path}`, default_branch: project.defaultBranch,
    },
    commit: {
      id: pipeline.sha, message: pipeline.commitMessage, timestamp: pipeline.committedAt?.replace(/\.\d{3}Z$/, 'Z') ?? null, url: commitUrl,
      author: { name: pipeline.commitAuthorName, email: pipeline.commitAuthorEmail },
    },
    builds: builds.map((b) => {
      const runner = b.runnerId === null ? undefined : runnerById.get(b.runnerId);
      return {
        id: b.id, stage: b.stage, name: b.name, status: b.status, created_at: b.createdAt, started_at: b.startedAt, finished_at: b.finishedAt,
        when: b.when, manual: b.when === 'manual', user: userHookAttrs(ctx, b.userId === null ? null : userById.get(b.userId) ?? null),
        runner: runner ? { id: runner.id, description: runner.description, active: runner.active, is_shared: runner.isShared } : null,
        artifacts_file: { filename: b.artifactsFile, size: b.artifactsSize },
      };
    }),
  };
}

/** Queue the Build Hook of a build whose status just changed (inside that transaction); generic statuses have none. */
export function queueBuildHook(ctx: AppContext, tx: HookWriter, build: CommitStatusRow): void {
  if (build.type !== 'build' || !projectWantsHook(tx, build.projectId, 'build')) return;
  const data = buildHookData(ctx, tx, build);
  if (data) queueHookDeliveries(tx, build.projectId, 'build', data);
}

/** Queue the Pipeline Hook of a pipeline whose status just changed (inside that transaction). */
export function queuePipelineHook(ctx: AppContext, tx: HookWriter, pipeline: PipelineRow): void {
  if (!projectWantsHook(tx, pipeline.projectId, 'pipeline')) return;
  const data = pipelineHookData(ctx, tx, pipeline);
  if (data) queueHookDeliveries(tx, pipeline.projectId, 'pipeline', data);
}
