/** Pipeline presenters (GitLab v3 Pipeline, PipelineBasic) and their response schemas. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { UserRow } from '../../db/schema.js';
import type { PipelineRow } from '../../db/schema-ci.js';
import { usersByIds } from '../../db/users.js';
import { Nullable } from '../params.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';

const S = Type.String();
const NS = Nullable(Type.String());

/** Pipeline: id, status, ref, sha, before_sha, tag, yaml_errors, user (UserBasic), timestamps, duration. */
export function pipelineEntity(ctx: AppContext, p: PipelineRow, user: UserRow | null | undefined, gravatar: boolean) {
  return {
    id: p.id, status: p.status, ref: p.ref, sha: p.sha, before_sha: p.beforeSha, tag: p.tag, yaml_errors: p.yamlErrors,
    user: user ? userBasic(ctx, user, gravatar) : null, created_at: p.createdAt, updated_at: p.updatedAt, started_at: p.startedAt,
    finished_at: p.finishedAt, committed_at: p.committedAt, duration: p.duration,
  };
}

/** Present pipelines with their users loaded in one query. */
export async function presentPipelines(ctx: AppContext, rows: readonly PipelineRow[]) {
  const byId = await usersByIds(ctx.data, rows.map((p) => p.userId));
  const gravatar = await gravatarEnabledAsync(ctx);
  return rows.map((p) => pipelineEntity(ctx, p, p.userId === null ? null : byId.get(p.userId), gravatar));
}

/** Response schema of Pipeline. */
export const PipelineSchema = Type.Object({
  id: Type.Integer(), status: S, ref: NS, sha: S, before_sha: NS, tag: Type.Boolean(), yaml_errors: NS, user: Nullable(UserBasicSchema),
  created_at: S, updated_at: S, started_at: NS, finished_at: NS, committed_at: NS, duration: Nullable(Type.Integer()),
});

/** PipelineBasic (8.13): id, sha, ref, status. */
export function pipelineBasic(p: Pick<PipelineRow, 'id' | 'sha' | 'ref' | 'status'>) {
  return { id: p.id, sha: p.sha, ref: p.ref, status: p.status };
}

/** Response schema of PipelineBasic. */
export const PipelineBasicSchema = Type.Object({ id: Type.Integer(), sha: S, ref: NS, status: S });
