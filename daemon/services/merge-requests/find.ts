/**
 * Reading merge requests: by id within a target project (readable by a user), by ids in one query, their latest diff
 * versions, and what the collaboration code (todos, notes) needs to know about one. Everything reads through the data
 * layer (`q`: ctx.data, a snapshot or the caller's transaction), on either engine.
 */
import type { AppContext } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { MergeRequestDiffRow, MergeRequestRow } from '../../db/schema-merge-requests.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { notFoundMessage } from '../../errors.js';
import { canReadIssuable } from '../../policy/permissions.js';
import type { Noteable } from '../collaboration/notes.js';
import type { IssuableInfo } from '../collaboration/todos.js';

type Rec = Record<string, unknown>;

/** The largest id an integer column holds (PostgreSQL's int4): larger ids name nothing and never reach a query. */
const INT_MAX = 2147483647;
const validId = (id: number) => Number.isSafeInteger(id) && Math.abs(id) <= INT_MAX;

/** Map a raw `merge_requests` row (snake_case) to its row type. */
export function toMergeRequest(r: Rec): MergeRequestRow {
  return {
    id: r.id as number, targetProjectId: r.target_project_id as number, iid: r.iid as number, sourceProjectId: r.source_project_id as number | null,
    sourceBranch: r.source_branch as string, targetBranch: r.target_branch as string, title: r.title as string,
    description: r.description as string | null, state: r.state as MergeRequestRow['state'], mergeStatus: r.merge_status as MergeRequestRow['mergeStatus'],
    authorId: r.author_id as number | null, assigneeId: r.assignee_id as number | null, milestoneId: r.milestone_id as number | null,
    mergeWhenBuildSucceeds: !!r.merge_when_build_succeeds, mergeUserId: r.merge_user_id as number | null, mergeParams: r.merge_params as string | null,
    mergeCommitSha: r.merge_commit_sha as string | null, mergeError: r.merge_error as string | null,
    shouldRemoveSourceBranch: !!r.should_remove_source_branch, forceRemoveSourceBranch: !!r.force_remove_source_branch,
    updatedById: r.updated_by_id as number | null, mergedAt: r.merged_at as string | null, closedAt: r.closed_at as string | null,
    deletedAt: r.deleted_at as string | null, createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

/** Map a raw `merge_request_diffs` row to its row type. */
export function toMergeRequestDiff(r: Rec): MergeRequestDiffRow {
  return {
    id: r.id as number, mergeRequestId: r.merge_request_id as number, state: r.state as MergeRequestDiffRow['state'],
    baseCommitSha: r.base_commit_sha as string | null, headCommitSha: r.head_commit_sha as string | null,
    startCommitSha: r.start_commit_sha as string | null, commits: r.commits as string, commitsCount: r.commits_count as number,
    realSize: r.real_size as string | null, createdAt: r.created_at as string,
  };
}

/** A live (not deleted) merge request of the target project by its global id, or null. */
export async function findProjectMergeRequest(q: Queries, projectId: number, mergeRequestId: number): Promise<MergeRequestRow | null> {
  if (!validId(mergeRequestId)) return null;
  const r = await q.get<Rec>(`SELECT * FROM merge_requests WHERE id = ? AND target_project_id = ? AND deleted_at IS NULL`, [mergeRequestId, projectId]);
  return r ? toMergeRequest(r) : null;
}

/** A live merge request by global id (any project), or null. */
export async function findMergeRequest(q: Queries, mergeRequestId: number): Promise<MergeRequestRow | null> {
  if (!validId(mergeRequestId)) return null;
  const r = await q.get<Rec>(`SELECT * FROM merge_requests WHERE id = ? AND deleted_at IS NULL`, [mergeRequestId]);
  return r ? toMergeRequest(r) : null;
}

/** Whether `user` may read merge requests of the project (read_merge_request: feature on, project visible); `level` when known. */
export function canReadMergeRequest(ctx: AppContext, user: UserRow | null, project: ProjectRow, mr: MergeRequestRow, level?: number): Promise<boolean> {
  return canReadIssuable(ctx, user, project, { type: 'MergeRequest', authorId: mr.authorId, assigneeId: mr.assigneeId }, level);
}

/** A live merge request of the target project the user may read, or 404 `404 Not found` (8.x's `find` miss). */
export async function findReadableMergeRequest(
  ctx: AppContext, user: UserRow | null, project: ProjectRow, mergeRequestId: number, level?: number,
): Promise<MergeRequestRow> {
  const mr = await findProjectMergeRequest(ctx.data, project.id, mergeRequestId);
  if (!mr || !(await canReadMergeRequest(ctx, user, project, mr, level))) throw notFoundMessage('404 Not found');
  return mr;
}

/** Merge request rows by id (live ones), in the order of `ids` (one query). */
export async function mergeRequestsByIds(q: Queries, ids: number[], opts: { deleted?: boolean } = {}): Promise<MergeRequestRow[]> {
  const wanted = [...new Set(ids)].filter(validId);
  if (wanted.length === 0) return [];
  const rows = await q.all<Rec>(`SELECT * FROM merge_requests WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(wanted)]);
  const byId = new Map(rows.map((r) => [r.id as number, toMergeRequest(r)]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r && (opts.deleted || r.deletedAt === null) ? [r] : [];
  });
}

/** The latest diff version of each merge request (one query), keyed by merge request id. */
export async function latestDiffs(q: Queries, mergeRequestIds: number[]): Promise<Map<number, MergeRequestDiffRow>> {
  const ids = [...new Set(mergeRequestIds)].filter(validId);
  if (ids.length === 0) return new Map();
  const rows = await q.all<Rec>(
    `SELECT d.* FROM merge_request_diffs d WHERE d.id IN (
       SELECT MAX(x.id) FROM merge_request_diffs x WHERE x.merge_request_id IN ${q.dialect.inIds} GROUP BY x.merge_request_id)`,
    [q.dialect.ids(ids)],
  );
  return new Map(rows.map((r) => [r.merge_request_id as number, toMergeRequestDiff(r)]));
}

/**
 * The source head of each merge request's latest diff version (the presenter's `sha`), without reading the versions'
 * stored commit lists (a 5,000-commit merge request keeps 1.5 MB of them).
 */
export async function latestDiffHeads(q: Queries, mergeRequestIds: number[]): Promise<Map<number, string | null>> {
  const ids = [...new Set(mergeRequestIds)].filter(validId);
  if (ids.length === 0) return new Map();
  const rows = await q.all<{ id: number; head: string | null }>(
    `SELECT d.merge_request_id AS id, d.head_commit_sha AS head FROM merge_request_diffs d WHERE d.id IN (
       SELECT MAX(x.id) FROM merge_request_diffs x WHERE x.merge_request_id IN ${q.dialect.inIds} GROUP BY x.merge_request_id)`,
    [q.dialect.ids(ids)],
  );
  return new Map(rows.map((r) => [r.id, r.head]));
}

/** The latest diff version of one merge request, or null before the first one is written. */
export async function latestDiff(q: Queries, mergeRequestId: number): Promise<MergeRequestDiffRow | null> {
  return (await latestDiffs(q, [mergeRequestId])).get(mergeRequestId) ?? null;
}

/** A commit as merge_request_diffs.commits stores it (newest first). */
export interface StoredCommit {
  id: string;
  message: string;
  author_name: string;
  author_email: string;
  authored_date: string;
  committer_name: string;
  committer_email: string;
  committed_date: string;
}

/** The commits of a diff version (newest first). */
export function diffCommits(diff: Pick<MergeRequestDiffRow, 'commits'> | null): StoredCommit[] {
  if (!diff) return [];
  try {
    const v = JSON.parse(diff.commits) as unknown;
    return Array.isArray(v) ? (v as StoredCommit[]) : [];
  } catch {
    return [];
  }
}

/** 8.12 MergeRequest::WIP_REGEX: a title starting with `WIP:`, `[WIP]` or `WIP `. */
const WIP = /^\s*(\[WIP\]\s*|WIP:\s*|WIP\s+)+\s*/i;
/** Whether a merge request is a work in progress (by its title). */
export function workInProgress(title: string): boolean {
  return WIP.test(title);
}

/** Whether a merge request is open (opened or reopened). */
export function isOpen(mr: Pick<MergeRequestRow, 'state'>): boolean {
  return mr.state === 'opened' || mr.state === 'reopened';
}

/** What the todo service needs to know about a merge request (its target project). */
export function mergeRequestInfo(project: ProjectRow, mr: MergeRequestRow): IssuableInfo {
  return { project, target: { type: 'MergeRequest', id: mr.id }, authorId: mr.authorId, assigneeId: mr.assigneeId, confidential: false };
}

/** A merge request row as a Noteable (notes, award emoji, comment events). */
export function mergeRequestNoteable(row: MergeRequestRow): Noteable {
  return {
    type: 'MergeRequest', id: row.id, projectId: row.targetProjectId, iid: row.iid, title: row.title, authorId: row.authorId,
    assigneeId: row.assigneeId, confidential: false, row,
  };
}

/** Live merge requests by global id as Noteables, in one query (comment events of a page). */
export async function mergeRequestNoteablesByIds(q: Queries, ids: number[]): Promise<Map<number, Noteable>> {
  return new Map((await mergeRequestsByIds(q, ids)).map((r) => [r.id, mergeRequestNoteable(r)]));
}
