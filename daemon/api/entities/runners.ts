/** Runner presenters (GitLab v3 Runner and RunnerDetails) and their response schemas. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { RunnerRow } from '../../db/schema-ci.js';
import { projectIdsMeeting, projectsByIds } from '../../db/projects.js';
import { authorizedProjectsWhere, canProjectAsync } from '../../policy/permissions.js';
import { runnerTags } from '../../services/ci/runners.js';
import { runnerProjectIds } from '../../db/runners.js';
import { Nullable } from '../params.js';
import { BasicProjectSchema, presentBasicProjects } from './projects.js';

/** The Runner entity (also the `runner` of a Build). */
export function runnerEntity(r: RunnerRow) {
  return { id: r.id, description: r.description, active: r.active, is_shared: r.isShared, name: r.name };
}

/** Response schema of Runner. */
export const RunnerSchema = Type.Object({
  id: Type.Integer(), description: Nullable(Type.String()), active: Type.Boolean(), is_shared: Type.Boolean(), name: Nullable(Type.String()),
});

/** The RunnerDetails entity; `projects` lists only those the viewer is authorized on (all for admins). */
export async function runnerDetails(ctx: AppContext, viewer: UserRow, runner: RunnerRow) {
  const ids = await runnerProjectIds(ctx.data, runner.id);
  const rows = await projectsByIds(ctx.data, ids);
  let visible: ProjectRow[] = rows;
  if (!viewer.isAdmin && rows.length) {
    const authorized = await projectIdsMeeting(ctx.data, ids, authorizedProjectsWhere(ctx.data.dialect, viewer.id));
    visible = [];
    for (const p of rows) if (authorized.has(p.id) && (await canProjectAsync(ctx, viewer, 'read_project', p))) visible.push(p);
  }
  return {
    ...runnerEntity(runner), tag_list: runnerTags(runner), run_untagged: runner.runUntagged, locked: runner.locked, version: runner.version,
    revision: runner.revision, platform: runner.platform, architecture: runner.architecture, contacted_at: runner.contactedAt,
    projects: await presentBasicProjects(ctx, visible),
  };
}

/** Response schema of RunnerDetails. */
export const RunnerDetailsSchema = Type.Object({
  ...RunnerSchema.properties,
  tag_list: Type.Array(Type.String()), run_untagged: Type.Boolean(), locked: Type.Boolean(), version: Nullable(Type.String()),
  revision: Nullable(Type.String()), platform: Nullable(Type.String()), architecture: Nullable(Type.String()),
  contacted_at: Nullable(Type.String()), projects: Type.Array(BasicProjectSchema),
});
