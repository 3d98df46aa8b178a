/** Build presenter (GitLab v3 Build with RepoCommit, User, Runner and PipelineBasic) and its response schema. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { CommitStatusRow } from '../../db/schema-ci.js';
import { pipelinesByIds } from '../../db/builds.js';
import { runnersByIds } from '../../db/runners.js';
import { isoDate, messageTitle, type CommitInfo } from '../../git/objects.js';
import { projectNamespace } from '../../services/projects/projects.js';
import { projectRepository } from '../../services/repository/repositories.js';
import { Nullable } from '../params.js';
import { gravatarEnabledAsync, userEntity, UserSchema } from './users.js';
import { pipelineBasic, PipelineBasicSchema } from './pipelines.js';
import { usersByIds } from '../../db/users.js';
import { runnerEntity, RunnerSchema } from './runners.js';

const S = Type.String();
const NS = Nullable(Type.String());

/** RepoCommit of a build: id, short_id, title, author_name, author_email, created_at (commit date), message. */
export function buildCommit(c: CommitInfo) {
  return {
    id: c.sha, short_id: c.sha.slice(0, 8), title: messageTitle(c.message), author_name: c.author.name, author_email: c.author.email,
    created_at: isoDate(c.committer), message: c.message,
  };
}


/** How a build is presented: `download_url` replaces artifacts_file (erase and keep responses). */
export interface BuildPresentOptions {
  downloadUrl?: boolean;
}

/** Present builds of one project, loading users, runners, pipelines and commits in batches. */
export async function presentBuilds(ctx: AppContext, project: ProjectRow, rows: readonly CommitStatusRow[], opts: BuildPresentOptions = {}) {
  const pipelineById = await pipelinesByIds(ctx.data, rows.map((r) => r.pipelineId));
  const pipelineRows = [...pipelineById.values()];
  const runnerById = await runnersByIds(ctx.data, rows.map((r) => r.runnerId));
  const userById = await usersByIds(ctx.data, rows.map((r) => r.userId));
  const gravatar = await gravatarEnabledAsync(ctx);
  const repo = projectRepository(ctx, project);
  const shas = [...new Set(pipelineRows.map((p) => p.sha))];
  const commits = new Map<string, CommitInfo>();
  if (repo.exists()) for (const c of await repo.readCommits(shas)) commits.set(c.sha, c);
  const base = opts.downloadUrl ? `${ctx.externalUrl()}/${(await projectNamespace(ctx, project)).path}/${project.path}/builds` : '';
  return rows.map((b) => {
    const p = pipelineById.get(b.pipelineId);
    const commit = p ? commits.get(p.sha) : undefined;
    const runner = b.runnerId === null ? undefined : runnerById.get(b.runnerId);
    const user: UserRow | undefined = b.userId === null ? undefined : userById.get(b.userId);
    const hasArtifacts = !!b.artifactsFile;
    return {
      id: b.id, status: b.status, stage: b.stage ?? 'test', name: b.name, ref: b.ref, tag: b.tag, coverage: b.coverage,
      created_at: b.createdAt, started_at: b.startedAt, finished_at: b.finishedAt,
      user: user ? userEntity(ctx, user, gravatar) : null,
      ...(opts.downloadUrl
        ? { download_url: hasArtifacts ? `${base}/${b.id}/artifacts/download` : null }
        : hasArtifacts ? { artifacts_file: { filename: b.artifactsFile as string, size: b.artifactsSize ?? 0 } } : {}),
      commit: commit ? buildCommit(commit) : null,
      runner: runner ? runnerEntity(runner) : null,
      pipeline: p ? pipelineBasic(p) : null,
    };
  });
}

/** Present one build. */
export async function presentBuild(ctx: AppContext, project: ProjectRow, row: CommitStatusRow, opts: BuildPresentOptions = {}) {
  return (await presentBuilds(ctx, project, [row], opts))[0]!;
}

/** Response schema of RepoCommit (as embedded in builds). */
export const BuildCommitSchema = Type.Object({ id: S, short_id: S, title: S, author_name: S, author_email: S, created_at: S, message: S });
/** Response schema of Runner (as embedded in builds). */

/** Response schema of Build. */
export const BuildSchema = Type.Object({
  id: Type.Integer(), status: S, stage: S, name: S, ref: NS, tag: Type.Boolean(), coverage: Nullable(Type.Number()),
  created_at: S, started_at: NS, finished_at: NS, user: Nullable(UserSchema),
  artifacts_file: Type.Optional(Type.Object({ filename: S, size: Type.Integer() })),
  download_url: Type.Optional(NS),
  commit: Nullable(BuildCommitSchema), runner: Nullable(RunnerSchema), pipeline: Nullable(PipelineBasicSchema),
});
