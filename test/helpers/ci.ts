/** CI test fixtures: commit files (a .gitlab-ci.yml) into a project's repository and process the push for real. */
import type { AppContext } from '../../daemon/context.js';
import type { ProjectRow, UserRow } from '../../daemon/db/schema.js';
import type { CommitStatusRow, PipelineRow } from '../../daemon/db/schema-ci.js';
import { toCommitStatus, toPipeline } from '../../daemon/db/rows.js';
import { ZERO_SHA } from '../../daemon/git/objects.js';
import { lookupProjectAsync } from '../../daemon/services/projects/projects.js';
import { findUser } from '../../daemon/services/users/users.js';
import { processPush } from '../../daemon/services/repository/push.js';
import { ensureRepository } from '../../daemon/services/repository/repositories.js';
import { changeBuildStatus, settleBuildWork, type BuildStatusEvent } from '../../daemon/services/ci/builds.js';

/** The project and user rows of ids. */
export async function rows(ctx: AppContext, projectId: number, userId: number): Promise<{ project: ProjectRow; user: UserRow }> {
  const project = (await lookupProjectAsync(ctx, projectId))!;
  const user = (await findUser(ctx, userId))!;
  return { project, user };
}

/** Commit `files` on `branch` (created from nothing when missing) as `userId`, then processPush; returns the new sha. */
export async function pushFiles(
  ctx: AppContext, projectId: number, userId: number, files: Record<string, string>, opts: { branch?: string; message?: string; tag?: string; from?: string } = {},
): Promise<string> {
  const { project, user } = await rows(ctx, projectId, userId);
  const repo = await ensureRepository(ctx, project);
  const branch = opts.branch ?? 'master';
  const before = await repo.resolveBranch(branch);
  const parent = before ?? (opts.from ? await repo.resolveBranch(opts.from) : null);
  const changes = await Promise.all(Object.entries(files).map(async ([path, content]) => ({
    action: parent && (await repo.readFileAt(parent, path)) ? ('update' as const) : ('create' as const), path, content: Buffer.from(content),
  })));
  const res = await repo.createCommit({
    branch, parentSha: parent, expectedBranchSha: before, author: { name: 'Ci Tester', email: 'ci@example.com' }, message: opts.message ?? 'ci commit', changes,
  });
  const updates = [{ ref: `refs/heads/${branch}`, before: before ?? ZERO_SHA, after: res.sha }];
  if (opts.tag) {
    await repo.createTag(opts.tag, res.sha);
    updates.push({ ref: `refs/tags/${opts.tag}`, before: ZERO_SHA, after: res.sha });
  }
  // A listener that fails fails the test.
  await processPush(ctx, project, user, updates, { log: (e) => { throw e; } });
  return res.sha;
}

/** Pipelines of a project, oldest first. */
export async function pipelinesOf(ctx: AppContext, projectId: number): Promise<PipelineRow[]> {
  return (await ctx.data.all('SELECT * FROM pipelines WHERE project_id = ? ORDER BY id', [projectId])).map(toPipeline);
}

/** Builds of a pipeline, oldest first. */
export async function buildsOf(ctx: AppContext, pipelineId: number): Promise<CommitStatusRow[]> {
  return (await ctx.data.all('SELECT * FROM commit_statuses WHERE pipeline_id = ? ORDER BY id', [pipelineId])).map(toCommitStatus);
}

/** Name -> status of the latest build of each name in a pipeline. */
export async function statusByName(ctx: AppContext, pipelineId: number): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const b of await buildsOf(ctx, pipelineId)) if (b.type === 'build') out[b.name] = b.status;
  return out;
}

/** The latest build of `name` in a pipeline. */
export async function buildNamed(ctx: AppContext, pipelineId: number, name: string): Promise<CommitStatusRow> {
  const all = (await buildsOf(ctx, pipelineId)).filter((b) => b.name === name);
  if (!all.length) throw new Error(`no build ${name}`);
  return all[all.length - 1]!;
}

/** Apply events to the latest build of `name` (as a runner would), then wait for the after-finish work. */
export async function drive(ctx: AppContext, pipelineId: number, name: string, ...events: BuildStatusEvent[]): Promise<void> {
  for (const e of events) await changeBuildStatus(ctx, (await buildNamed(ctx, pipelineId, name)).id, e, e === 'run' ? { runnerId: undefined } : {});
  await settleBuildWork(ctx);
}
