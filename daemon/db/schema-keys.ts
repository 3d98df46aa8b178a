/** Drizzle definitions of SSH keys and deploy-key links (migration 0024_keys.sql is the source of truth). */
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';

export const keys = sqliteTable('keys', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  /** 'Key' for a user's key, 'DeployKey' for a deploy key (8.x single-table inheritance). */
  type: text('type', { enum: ['Key', 'DeployKey'] }).notNull(),
  /** The owner of a user key; NULL for a deploy key. */
  userId: integer('user_id'),
  title: text('title').notNull(),
  /** The public key line as stored: `<type> <base64>` (the comment kept as given). */
  key: text('key').notNull(),
  /** ssh-rsa, ssh-ed25519, ecdsa-sha2-nistp256, ... */
  keyType: text('key_type').notNull(),
  /** 8.x's fingerprint: MD5 of the blob, colon-separated lower-case hex. */
  fingerprint: text('fingerprint').notNull(),
  /** OpenSSH's `SHA256:<unpadded base64>` of the blob; the SSH server's lookup key. */
  fingerprintSha256: text('fingerprint_sha256').notNull(),
  canPush: integer('can_push', { mode: 'boolean' }).notNull().default(false),
  lastUsedAt: text('last_used_at'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type KeyRow = typeof keys.$inferSelect;

export const deployKeysProjects = sqliteTable('deploy_keys_projects', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  deployKeyId: integer('deploy_key_id').notNull(),
  projectId: integer('project_id').notNull(),
  createdAt: text('created_at').notNull(),
});
