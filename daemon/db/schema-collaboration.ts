/**
 * Drizzle definitions of the collaboration tables: issues, labels, milestones, notes, award emoji, subscriptions
 * and todos (migration 0012_collaboration.sql is the source of truth). Polymorphic targets are (type, id) pairs.
 */
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';

const bool = (name: string) => integer(name, { mode: 'boolean' });

/** Target types of label links, notes, award emoji, subscriptions and todos. */
export type NoteableType = 'Issue' | 'MergeRequest' | 'Snippet';
export type AwardableType = 'Issue' | 'MergeRequest' | 'Note' | 'Snippet';
export type SubscribableType = 'Issue' | 'MergeRequest' | 'Label';
export type TodoTargetType = 'Issue' | 'MergeRequest';
export type TodoAction = 'assigned' | 'mentioned' | 'build_failed' | 'marked' | 'approval_required';

export const milestones = sqliteTable('milestones', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  iid: integer('iid').notNull(),
  title: text('title').notNull(),
  description: text('description').notNull().default(''),
  state: text('state', { enum: ['active', 'closed'] }).notNull().default('active'),
  dueDate: text('due_date'),
  startDate: text('start_date'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type MilestoneRow = typeof milestones.$inferSelect;

export const labels = sqliteTable('labels', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  title: text('title').notNull(),
  color: text('color').notNull(),
  description: text('description'),
  template: bool('template').notNull().default(false),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type LabelRow = typeof labels.$inferSelect;

export const issues = sqliteTable('issues', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  iid: integer('iid').notNull(),
  title: text('title').notNull(),
  description: text('description'),
  state: text('state', { enum: ['opened', 'closed'] }).notNull().default('opened'),
  confidential: bool('confidential').notNull().default(false),
  authorId: integer('author_id'),
  assigneeId: integer('assignee_id'),
  milestoneId: integer('milestone_id'),
  dueDate: text('due_date'),
  movedToId: integer('moved_to_id'),
  updatedById: integer('updated_by_id'),
  closedAt: text('closed_at'),
  deletedAt: text('deleted_at'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type IssueRow = typeof issues.$inferSelect;

export const labelLinks = sqliteTable('label_links', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  labelId: integer('label_id').notNull(),
  targetType: text('target_type').notNull(),
  targetId: integer('target_id').notNull(),
  createdAt: text('created_at').notNull(),
});
export type LabelLinkRow = typeof labelLinks.$inferSelect;

export const notes = sqliteTable('notes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  noteableType: text('noteable_type').$type<NoteableType>().notNull(),
  noteableId: integer('noteable_id').notNull(),
  note: text('note').notNull(),
  authorId: integer('author_id'),
  system: bool('system').notNull().default(false),
  attachment: text('attachment'),
  updatedById: integer('updated_by_id'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type NoteRow = typeof notes.$inferSelect;

export const awardEmoji = sqliteTable('award_emoji', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  userId: integer('user_id').notNull(),
  awardableType: text('awardable_type').$type<AwardableType>().notNull(),
  awardableId: integer('awardable_id').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type AwardEmojiRow = typeof awardEmoji.$inferSelect;

export const subscriptions = sqliteTable('subscriptions', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull(),
  subscribableType: text('subscribable_type').$type<SubscribableType>().notNull(),
  subscribableId: integer('subscribable_id').notNull(),
  subscribed: bool('subscribed').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type SubscriptionRow = typeof subscriptions.$inferSelect;

export const todos = sqliteTable('todos', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull(),
  projectId: integer('project_id').notNull(),
  authorId: integer('author_id'),
  targetType: text('target_type').$type<TodoTargetType>().notNull(),
  targetId: integer('target_id').notNull(),
  action: text('action').$type<TodoAction>().notNull(),
  state: text('state', { enum: ['pending', 'done'] }).notNull().default('pending'),
  noteId: integer('note_id'),
  commitId: text('commit_id'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type TodoRow = typeof todos.$inferSelect;
