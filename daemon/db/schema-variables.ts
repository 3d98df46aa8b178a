/** Drizzle definitions of project secret variables (migration 0010_variables.sql is the source of truth). */
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';

export const ciVariables = sqliteTable('ci_variables', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  key: text('key').notNull(),
  /** The value sealed with Secrets.seal(); open it with Secrets.open(). */
  value: text('value').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type CiVariableRow = typeof ciVariables.$inferSelect;
