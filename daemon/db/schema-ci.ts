/** Drizzle definitions of the CI tables (migration 0005_ci.sql is the source of truth). */
import { sqliteTable, integer, text, real, primaryKey } from 'drizzle-orm/sqlite-core';

const bool = (name: string) => integer(name, { mode: 'boolean' });

export const pipelines = sqliteTable('pipelines', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  ref: text('ref'),
  sha: text('sha').notNull(),
  beforeSha: text('before_sha'),
  tag: bool('tag').notNull().default(false),
  yamlErrors: text('yaml_errors'),
  status: text('status').notNull().default('created'),
  userId: integer('user_id'),
  duration: integer('duration'),
  startedAt: text('started_at'),
  finishedAt: text('finished_at'),
  committedAt: text('committed_at'),
  /** The commit's message and author (0011_pipeline_commit.sql), for the hook payloads. */
  commitMessage: text('commit_message'),
  commitAuthorName: text('commit_author_name'),
  commitAuthorEmail: text('commit_author_email'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type PipelineRow = typeof pipelines.$inferSelect;

export const runners = sqliteTable('runners', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  tokenHash: text('token_hash').notNull(),
  description: text('description'),
  name: text('name'),
  version: text('version'),
  revision: text('revision'),
  platform: text('platform'),
  architecture: text('architecture'),
  active: bool('active').notNull().default(true),
  isShared: bool('is_shared').notNull().default(false),
  locked: bool('locked').notNull().default(false),
  runUntagged: bool('run_untagged').notNull().default(true),
  /** JSON array text. */
  tagList: text('tag_list').notNull().default('[]'),
  contactedAt: text('contacted_at'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type RunnerRow = typeof runners.$inferSelect;

export const runnerProjects = sqliteTable(
  'runner_projects',
  {
    runnerId: integer('runner_id').notNull(),
    projectId: integer('project_id').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.runnerId, t.projectId] })],
);

export const commitStatuses = sqliteTable('commit_statuses', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  type: text('type', { enum: ['build', 'generic'] }).notNull(),
  projectId: integer('project_id').notNull(),
  pipelineId: integer('pipeline_id').notNull(),
  name: text('name').notNull(),
  stage: text('stage'),
  stageIdx: integer('stage_idx').notNull().default(0),
  ref: text('ref'),
  tag: bool('tag').notNull().default(false),
  status: text('status').notNull().default('created'),
  description: text('description'),
  targetUrl: text('target_url'),
  allowFailure: bool('allow_failure').notNull().default(false),
  when: text('when').notNull().default('on_success'),
  userId: integer('user_id'),
  runnerId: integer('runner_id'),
  commands: text('commands'),
  /** JSON: the runner `options` (image, services, artifacts, cache, dependencies, after_script, environment). */
  options: text('options'),
  /** JSON array of {key, value, public}. */
  yamlVariables: text('yaml_variables'),
  /** JSON array text. */
  tagList: text('tag_list').notNull().default('[]'),
  environment: text('environment'),
  coverage: real('coverage'),
  coverageRegex: text('coverage_regex'),
  tokenHash: text('token_hash'),
  /** The plain build token sealed with the server secret while the build runs (0028), for trace masking on any daemon. */
  tokenSealed: text('token_sealed'),
  traceSize: integer('trace_size').notNull().default(0),
  artifactsFile: text('artifacts_file'),
  artifactsSize: integer('artifacts_size'),
  artifactsExpireAt: text('artifacts_expire_at'),
  erasedAt: text('erased_at'),
  erasedById: integer('erased_by_id'),
  queuedAt: text('queued_at'),
  startedAt: text('started_at'),
  finishedAt: text('finished_at'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type CommitStatusRow = typeof commitStatuses.$inferSelect;
