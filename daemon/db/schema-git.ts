/** Drizzle definitions of the git hosting tables (migration 0004_git.sql is the source of truth). */
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';

/** Protected branch rules of projects. */
export const protectedBranches = sqliteTable('protected_branches', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  /** A branch name or a `*` pattern. */
  name: text('name').notNull(),
  developersCanPush: integer('developers_can_push', { mode: 'boolean' }).notNull().default(false),
  developersCanMerge: integer('developers_can_merge', { mode: 'boolean' }).notNull().default(false),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
/** A protected_branches row. */
export type ProtectedBranchRow = typeof protectedBranches.$inferSelect;
