/** Drizzle definitions of merge requests and their diff versions (migration 0019_merge_requests.sql is the source of truth). */
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';

const bool = (name: string) => integer(name, { mode: 'boolean' });

export type MergeRequestState = 'opened' | 'reopened' | 'closed' | 'merged' | 'locked';
export type MergeStatus = 'unchecked' | 'can_be_merged' | 'cannot_be_merged';

export const mergeRequests = sqliteTable('merge_requests', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  targetProjectId: integer('target_project_id').notNull(),
  iid: integer('iid').notNull(),
  sourceProjectId: integer('source_project_id'),
  sourceBranch: text('source_branch').notNull(),
  targetBranch: text('target_branch').notNull(),
  title: text('title').notNull(),
  description: text('description'),
  state: text('state').$type<MergeRequestState>().notNull().default('opened'),
  mergeStatus: text('merge_status').$type<MergeStatus>().notNull().default('unchecked'),
  authorId: integer('author_id'),
  assigneeId: integer('assignee_id'),
  milestoneId: integer('milestone_id'),
  mergeWhenBuildSucceeds: bool('merge_when_build_succeeds').notNull().default(false),
  mergeUserId: integer('merge_user_id'),
  mergeParams: text('merge_params'),
  mergeCommitSha: text('merge_commit_sha'),
  mergeError: text('merge_error'),
  shouldRemoveSourceBranch: bool('should_remove_source_branch').notNull().default(false),
  forceRemoveSourceBranch: bool('force_remove_source_branch').notNull().default(false),
  updatedById: integer('updated_by_id'),
  mergedAt: text('merged_at'),
  closedAt: text('closed_at'),
  deletedAt: text('deleted_at'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type MergeRequestRow = typeof mergeRequests.$inferSelect;

export const mergeRequestDiffs = sqliteTable('merge_request_diffs', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  mergeRequestId: integer('merge_request_id').notNull(),
  state: text('state').$type<'collected' | 'empty' | 'overflow' | 'unrelated'>().notNull(),
  baseCommitSha: text('base_commit_sha'),
  headCommitSha: text('head_commit_sha'),
  startCommitSha: text('start_commit_sha'),
  commits: text('commits').notNull().default('[]'),
  commitsCount: integer('commits_count').notNull().default(0),
  realSize: text('real_size'),
  createdAt: text('created_at').notNull(),
});
export type MergeRequestDiffRow = typeof mergeRequestDiffs.$inferSelect;
