/** Row types of merge requests and their diff versions (migration 0019_merge_requests.sql is the source of truth). */

export type MergeRequestState = 'opened' | 'reopened' | 'closed' | 'merged' | 'locked';
export type MergeStatus = 'unchecked' | 'can_be_merged' | 'cannot_be_merged';

/** A row of `merge_requests`. */
export interface MergeRequestRow {
  id: number;
  targetProjectId: number;
  iid: number;
  sourceProjectId: number | null;
  sourceBranch: string;
  targetBranch: string;
  title: string;
  description: string | null;
  state: MergeRequestState;
  mergeStatus: MergeStatus;
  authorId: number | null;
  assigneeId: number | null;
  milestoneId: number | null;
  mergeWhenBuildSucceeds: boolean;
  mergeUserId: number | null;
  mergeParams: string | null;
  mergeCommitSha: string | null;
  mergeError: string | null;
  shouldRemoveSourceBranch: boolean;
  forceRemoveSourceBranch: boolean;
  updatedById: number | null;
  mergedAt: string | null;
  closedAt: string | null;
  deletedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A row of `merge_request_diffs`. */
export interface MergeRequestDiffRow {
  id: number;
  mergeRequestId: number;
  state: 'collected' | 'empty' | 'overflow' | 'unrelated';
  baseCommitSha: string | null;
  headCommitSha: string | null;
  startCommitSha: string | null;
  commits: string;
  commitsCount: number;
  realSize: string | null;
  createdAt: string;
}
