/**
 * Merge request webhook payloads (GitLab 8.x MergeRequest#to_hook_data plus MergeRequests::BaseService#hook_data):
 * object_kind "merge_request", user, project, repository, object_attributes (the columns, source and target project
 * blocks, last_commit, work_in_progress, url, action and, after a push, oldrev), assignee and labels.
 * Below the API: services build payloads without importing presenters.
 */
import type { AppContext } from '../context.js';
import type { MergeRequestRow } from '../db/schema-merge-requests.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import type { Queries } from '../db/layer/types.js';
import { leadingArrayObjects } from '../json-head.js';
import { labelHookAttributes, projectHookBlocks, userHookAttributes } from './issues.js';
import { labelsOfTarget } from '../db/labels.js';
import { latestDiffCommitsJson } from '../db/merge-requests.js';
import { projectById } from '../db/projects.js';
import { commitWebUrl, mergeRequestWebUrl } from '../web-urls.js';
import { userById } from '../db/users.js';

/** The `action` of a merge request hook (8.x: open, close, reopen, update, merge). */
export type MergeRequestHookAction = 'open' | 'close' | 'reopen' | 'update' | 'merge';

/** 8.12 MergeRequest::WIP_REGEX. */
const WIP = /^\s*(\[WIP\]\s*|WIP:\s*|WIP\s+)+\s*/i;

/** merge_params as an object (8.x serialized a Hash). */
function mergeParamsOf(mr: MergeRequestRow): Record<string, unknown> {
  if (!mr.mergeParams) return {};
  try {
    const v = JSON.parse(mr.mergeParams) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The merge request's columns as 8.x's `attributes` (hook_attrs without the added blocks), also embedded in note payloads. */
export function mergeRequestHookColumns(mr: MergeRequestRow): Record<string, unknown> {
  return {
    id: mr.id,
    target_branch: mr.targetBranch,
    source_branch: mr.sourceBranch,
    source_project_id: mr.sourceProjectId,
    author_id: mr.authorId,
    assignee_id: mr.assigneeId,
    title: mr.title,
    created_at: mr.createdAt,
    updated_at: mr.updatedAt,
    milestone_id: mr.milestoneId,
    state: mr.state,
    merge_status: mr.mergeStatus,
    target_project_id: mr.targetProjectId,
    iid: mr.iid,
    description: mr.description,
    position: 0,
    locked_at: null,
    updated_by_id: mr.updatedById,
    merge_error: mr.mergeError,
    merge_params: mergeParamsOf(mr),
    merge_when_build_succeeds: mr.mergeWhenBuildSucceeds,
    merge_user_id: mr.mergeUserId,
    merge_commit_sha: mr.mergeCommitSha,
    deleted_at: mr.deletedAt,
    in_progress_merge_commit_sha: null,
  };
}

/** Commit#hook_attrs of the newest commit of the merge request's latest diff, or null. */
async function lastCommit(q: Queries, mr: MergeRequestRow, projectWebUrl: string): Promise<Record<string, unknown> | null> {
  // The newest commit is the first of the stored list: read the list's head, and all of it only when the first commit
  // is longer than that (a diff version of 5,000 commits is over a megabyte of JSON, read and parsed per hook before).
  const head = await latestDiffCommitsJson(q, mr.id, COMMITS_HEAD_CHARS);
  if (head === null) return null;
  let first = leadingArrayObjects(head, 1)[0] as Record<string, string> | undefined;
  if (first === undefined && head.length >= COMMITS_HEAD_CHARS) {
    const all = await latestDiffCommitsJson(q, mr.id);
    first = all ? (leadingArrayObjects(all, 1)[0] as Record<string, string> | undefined) : undefined;
  }
  if (!first) return null;
  return {
    id: first.id,
    message: first.message,
    timestamp: String(first.committed_date ?? '').replace(/\.\d{3}(?=[+-Z])/, ''),
    url: commitWebUrl(projectWebUrl, first.id!),
    author: { name: first.author_name, email: first.author_email },
  };
}

/** How much of a stored commit list is read to find its first commit. */
const COMMITS_HEAD_CHARS = 16_384;

/**
 * MergeRequest#hook_attrs plus url and action: the columns, `source` and `target` (Project#hook_attrs), last_commit,
 * work_in_progress. Used as object_attributes of merge request hooks and as `merge_request` of note payloads; read
 * through `q` (the writing transaction, or ctx.data).
 */
export async function mergeRequestHookAttributes(ctx: AppContext, q: Queries, mr: MergeRequestRow, target?: ProjectRow): Promise<Record<string, unknown>> {
  const targetProject = target ?? (await projectById(q, mr.targetProjectId))!;
  const targetBlock = (await projectHookBlocks(ctx, q, targetProject)).project;
  const source = mr.sourceProjectId === targetProject.id ? targetProject : await projectById(q, mr.sourceProjectId);
  return {
    ...mergeRequestHookColumns(mr),
    source: source ? (await projectHookBlocks(ctx, q, source)).project : null,
    target: targetBlock,
    last_commit: await lastCommit(q, mr, targetBlock.web_url as string),
    work_in_progress: WIP.test(mr.title),
  };
}

/**
 * The whole merge request hook payload of a change by `actor`, read through the writing transaction `tx` (call it
 * after the write: it reads the current labels, assignee and latest diff). `gravatar`: the setting, read before the
 * transaction. `oldrev` is the source head before a push (action update).
 */
export async function mergeRequestHookPayload(
  ctx: AppContext, tx: Queries, project: ProjectRow, mr: MergeRequestRow, actor: UserRow, action: MergeRequestHookAction, gravatar: boolean,
  oldrev?: string | null,
): Promise<Record<string, unknown>> {
  const blocks = await projectHookBlocks(ctx, tx, project);
  const labels = (await labelsOfTarget(tx, 'MergeRequest', mr.id)).map(labelHookAttributes);
  const attrs: Record<string, unknown> = {
    ...(await mergeRequestHookAttributes(ctx, tx, mr, project)),
    url: mergeRequestWebUrl(blocks.project.web_url as string, mr.iid),
    action,
  };
  if (oldrev && !/^0+$/.test(oldrev)) attrs.oldrev = oldrev;
  const payload: Record<string, unknown> = {
    object_kind: 'merge_request',
    user: userHookAttributes(ctx, actor, gravatar),
    project: blocks.project,
    repository: blocks.repository,
    object_attributes: attrs,
    labels,
  };
  const assignee = await userById(tx, mr.assigneeId);
  if (assignee) payload.assignee = userHookAttributes(ctx, assignee, gravatar);
  return payload;
}
