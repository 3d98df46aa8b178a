/** Environment, EnvironmentBasic and Deployment presenters (GitLab 8.13 entities) and their response schemas. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { DeploymentRow, EnvironmentRow } from '../../db/rows.js';
import { statusRowsInOrder } from '../../db/builds.js';
import { environmentsById } from '../../db/ci/environments.js';
import { Nullable } from '../params.js';
import { BuildSchema, presentBuilds } from './builds.js';
import { usersByIds } from '../../db/users.js';
import { presentProject, ProjectSchema } from './projects.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';

const S = Type.String();
const I = Type.Integer();

/** EnvironmentBasic: id, name, external_url. */
export function environmentBasic(e: EnvironmentRow) {
  return { id: e.id, name: e.name, external_url: e.externalUrl };
}

/** Environment: EnvironmentBasic with the project (the Project entity as the caller sees it). */
export async function presentEnvironments(ctx: AppContext, viewer: UserRow, project: ProjectRow, rows: readonly EnvironmentRow[]) {
  if (!rows.length) return [];
  const p = await presentProject(ctx, viewer, project);
  return rows.map((e) => ({ ...environmentBasic(e), project: p }));
}

/** One Environment. */
export async function presentEnvironment(ctx: AppContext, viewer: UserRow, project: ProjectRow, row: EnvironmentRow) {
  return (await presentEnvironments(ctx, viewer, project, [row]))[0]!;
}

/** Deployment: id, iid, ref, sha, created_at, user (UserBasic), environment (EnvironmentBasic), deployable (Build). */
export async function presentDeployments(ctx: AppContext, project: ProjectRow, rows: readonly DeploymentRow[]) {
  if (!rows.length) return [];
  const users = await usersByIds(ctx.data, rows.map((r) => r.userId));
  const envs = await environmentsById(ctx.data, rows.map((r) => r.environmentId));
  const buildIds = [...new Set(rows.map((r) => r.deployableId).filter((i): i is number => i !== null))];
  const builds = await statusRowsInOrder(ctx.data, buildIds);
  const presented = await presentBuilds(ctx, project, builds);
  const buildById = new Map(builds.map((b, i) => [b.id, presented[i]!]));
  const gravatar = await gravatarEnabledAsync(ctx);
  return rows.map((r) => {
    const user = r.userId === null ? undefined : users.get(r.userId);
    const env = envs.get(r.environmentId);
    return {
      id: r.id, iid: r.iid, ref: r.ref, sha: r.sha, created_at: r.createdAt,
      user: user ? userBasic(ctx, user, gravatar) : null,
      environment: env ? environmentBasic(env) : null,
      deployable: r.deployableId === null ? null : (buildById.get(r.deployableId) ?? null),
    };
  });
}

/** Response schema of EnvironmentBasic. */
export const EnvironmentBasicSchema = Type.Object({ id: I, name: S, external_url: Nullable(S) });
/** Response schema of Environment. */
export const EnvironmentSchema = Type.Object({ ...EnvironmentBasicSchema.properties, project: ProjectSchema });
/** Response schema of Deployment. */
export const DeploymentSchema = Type.Object({
  id: I, iid: I, ref: S, sha: S, created_at: S, user: Nullable(UserBasicSchema), environment: Nullable(EnvironmentBasicSchema), deployable: Nullable(BuildSchema),
});
