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

import { findMergeRequest, findProjectMergeRequest, mergeRequestsByIds } from '../../db/merge-requests.js';
import { latestDiffHeads, latestDiffs } from '../../db/merge-request-diffs.js';

// the reads live in the data modules; their names stay exported here for the callers of this room
export { toMergeRequest, toMergeRequestDiff } from '../../db/rows.js';
export { findMergeRequest, findProjectMergeRequest, latestDiffHeads, latestDiffs, mergeRequestsByIds };

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
