/**
 * Merge request presenters (GitLab v3 MergeRequest and MergeRequestChanges, lib/api/entities.rb @ 8.12), batched: a
 * fixed number of queries for a page (labels, milestones, votes, user notes counts, subscriptions, users, project
 * paths, latest diff heads), never one per row.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import type { UserRow } from '../../db/schema.js';
import type { MergeRequestDiffRow } from '../../db/schema-merge-requests.js';
import { diffCommits, latestDiffHeads, workInProgress } from '../../services/merge-requests/find.js';
import { commitTitle, RepoCommitSchema } from './repository.js';
import { Nullable } from '../params.js';
import { issuableFields, loadIssuablePage } from './issuables.js';
import { MilestoneSchema } from './milestones.js';
import { gravatarEnabledAsync, UserBasicSchema } from './users.js';

type Rec = Record<string, unknown>;

/**
 * Present a page of merge requests for `viewer` (subscribed is the viewer's) with a fixed number of queries, read
 * through `q` (ctx.data, or the snapshot the page was read in).
 */
export async function presentMergeRequests(ctx: AppContext, viewer: UserRow | null, rows: MergeRequestRow[], q: Queries = ctx.data): Promise<Rec[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const page = await loadIssuablePage(ctx, viewer, 'MergeRequest', rows.map((r) => ({ ...r, projectId: r.targetProjectId })), q);
  const heads = await latestDiffHeads(q, ids);
  const gravatar = await gravatarEnabledAsync(ctx, q);
  return rows.map((m) => {
    const f = issuableFields(ctx, page, gravatar, m);
    return {
      id: m.id,
      iid: m.iid,
      project_id: m.targetProjectId,
      title: m.title,
      description: m.description,
      state: m.state,
      created_at: m.createdAt,
      updated_at: m.updatedAt,
      target_branch: m.targetBranch,
      source_branch: m.sourceBranch,
      upvotes: f.upvotes,
      downvotes: f.downvotes,
      author: f.author,
      assignee: f.assignee,
      source_project_id: m.sourceProjectId,
      target_project_id: m.targetProjectId,
      labels: f.labels,
      work_in_progress: workInProgress(m.title),
      milestone: f.milestone,
      merge_when_build_succeeds: m.mergeWhenBuildSucceeds,
      merge_status: m.mergeStatus,
      sha: heads.get(m.id) ?? null,
      merge_commit_sha: m.mergeCommitSha,
      subscribed: f.subscribed,
      user_notes_count: f.user_notes_count,
      should_remove_source_branch: m.shouldRemoveSourceBranch,
      force_remove_source_branch: m.forceRemoveSourceBranch,
      web_url: `${page.webUrls.get(m.targetProjectId) ?? ctx.externalUrl()}/merge_requests/${m.iid}`,
    };
  });
}

/** Present one merge request. */
export async function presentMergeRequest(ctx: AppContext, viewer: UserRow | null, row: MergeRequestRow): Promise<Rec> {
  return (await presentMergeRequests(ctx, viewer, [row]))[0]!;
}

const S = Type.String();
const I = Type.Integer();
const B = Type.Boolean();
const NS = Nullable(S);
/** Response schema of MergeRequest. `author` is null only when the author's account was deleted. */
export const MergeRequestSchema = Type.Object({
  id: I, iid: I, project_id: I, title: S, description: NS, state: S, created_at: S, updated_at: S, target_branch: S, source_branch: S,
  upvotes: I, downvotes: I, author: Nullable(UserBasicSchema), assignee: Nullable(UserBasicSchema), source_project_id: Nullable(I),
  target_project_id: I, labels: Type.Array(S), work_in_progress: B, milestone: Nullable(MilestoneSchema), merge_when_build_succeeds: B,
  merge_status: S, sha: NS, merge_commit_sha: NS, subscribed: B, user_notes_count: I, should_remove_source_branch: B,
  force_remove_source_branch: B, web_url: S,
});

/** One entry of `changes` (RepoDiff), with 8.x's too_large flag: true when the patch was cut (its diff is then empty). */
export interface ChangeEntry {
  old_path: string;
  new_path: string;
  a_mode: string;
  b_mode: string;
  diff: string;
  new_file: boolean;
  renamed_file: boolean;
  deleted_file: boolean;
  too_large: boolean;
}

/** Response schema of one change. */
export const ChangeSchema = Type.Object({
  old_path: S, new_path: S, a_mode: S, b_mode: S, diff: S, new_file: B, renamed_file: B, deleted_file: B, too_large: B,
});

/** Response schema of MergeRequestChanges: the merge request plus its changes (and `overflow` when files were left out). */
export const MergeRequestChangesSchema = Type.Object({ ...MergeRequestSchema.properties, changes: Type.Array(ChangeSchema), overflow: B });

/** The commits of a diff version as RepoCommit entities (newest first). */
export function versionCommits(diff: Pick<MergeRequestDiffRow, 'commits'> | null) {
  return diffCommits(diff).map((c) => ({
    id: c.id, short_id: c.id.slice(0, 8), title: commitTitle(c.message), author_name: c.author_name, author_email: c.author_email,
    created_at: c.committed_date, message: c.message,
  }));
}

/** 8.13's MergeRequestDiff entity: one version of a merge request's diff. */
export function mergeRequestDiffEntity(d: MergeRequestDiffRow) {
  return {
    id: d.id, head_commit_sha: d.headCommitSha, base_commit_sha: d.baseCommitSha, start_commit_sha: d.startCommitSha,
    created_at: d.createdAt, merge_request_id: d.mergeRequestId, state: d.state, real_size: d.realSize,
  };
}

/** Response schema of MergeRequestDiff. */
export const MergeRequestDiffSchema = Type.Object({
  id: I, head_commit_sha: NS, base_commit_sha: NS, start_commit_sha: NS, created_at: S, merge_request_id: I, state: S, real_size: NS,
});

/** Response schema of MergeRequestDiffFull: the version, its commits and its file diffs (RepoDiff, too_large as in changes). */
export const MergeRequestDiffFullSchema = Type.Object({
  ...MergeRequestDiffSchema.properties, commits: Type.Array(RepoCommitSchema), diffs: Type.Array(ChangeSchema),
});
