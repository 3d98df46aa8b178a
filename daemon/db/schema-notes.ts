/** Drizzle definitions of the repository API tables: commit comments and tag releases (migration 0007_commit_notes.sql is the source of truth). */
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';

export const commitNotes = sqliteTable('commit_notes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  /** The full sha of the commented commit. */
  commitSha: text('commit_sha').notNull(),
  note: text('note').notNull(),
  path: text('path'),
  line: integer('line'),
  lineType: text('line_type', { enum: ['new', 'old'] }),
  authorId: integer('author_id'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type CommitNoteRow = typeof commitNotes.$inferSelect;

export const releases = sqliteTable('releases', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  tagName: text('tag_name').notNull(),
  description: text('description').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type ReleaseRow = typeof releases.$inferSelect;
