/** CommitStatus presenter (GitLab v3 CommitStatus) and its response schema. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { UserRow } from '../../db/schema.js';
import type { CommitStatusRow } from '../../db/schema-ci.js';
import { pipelineShas } from '../../services/ci/commit-statuses.js';
import { Nullable } from '../params.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';
import { usersByIds } from '../../db/users.js';

const S = Type.String();
const NS = Nullable(Type.String());

/** CommitStatus: id, sha, ref, status, name, target_url, description, timestamps, allow_failure, author (UserBasic). */
export function commitStatusEntity(ctx: AppContext, s: CommitStatusRow, sha: string, author: UserRow | null | undefined, gravatar: boolean) {
  return {
    id: s.id, sha, ref: s.ref, status: s.status, name: s.name, target_url: s.targetUrl, description: s.description,
    created_at: s.createdAt, started_at: s.startedAt, finished_at: s.finishedAt, allow_failure: s.allowFailure,
    author: author ? userBasic(ctx, author, gravatar) : null,
  };
}

/** Present statuses with their authors and pipeline shas loaded in batches. */
export async function presentCommitStatuses(ctx: AppContext, rows: readonly CommitStatusRow[]) {
  const shas = await pipelineShas(ctx, rows);
  const authors = await usersByIds(ctx.data, rows.map((r) => r.userId));
  const gravatar = await gravatarEnabledAsync(ctx);
  return rows.map((r) => commitStatusEntity(ctx, r, shas.get(r.pipelineId) ?? '', r.userId === null ? null : authors.get(r.userId), gravatar));
}

/** Response schema of CommitStatus. */
export const CommitStatusSchema = Type.Object({
  id: Type.Integer(), sha: S, ref: NS, status: S, name: S, target_url: NS, description: NS, created_at: S, started_at: NS,
  finished_at: NS, allow_failure: Type.Boolean(), author: Nullable(UserBasicSchema),
});
