/**
 * SSH keys (GitLab 8.x Key / DeployKey): a user's keys, deploy keys and the projects they are enabled on, and the
 * lookup the SSH server authenticates with. A fingerprint is unique over both kinds, so one key line names at most
 * one user or one deploy key.
 */
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { users, type ProjectRow, type UserRow } from '../../db/schema.js';
import { deployKeysProjects, keys, type KeyRow } from '../../db/schema-keys.js';
import { statement } from '../../db/statements.js';
import { validationError } from '../../errors.js';
import type { Queries } from '../../db/layer/types.js';
import { administeredProjectsSql } from '../../policy/permissions.js';
import { parsePublicKey, type KeyErrors, type ParsedKey } from './parse.js';

/** Title and key line of a new key (POST /user/keys, /users/:id/keys, /projects/:id/deploy_keys). */
export interface KeyParams {
  title: string;
  key: string;
}

/** The longest title accepted (8.x Key: length maximum 255). */
const MAX_TITLE = 255;

/** The key parsed, or a 400 with the validation hash (title, key, fingerprint) in 8.x's order. */
function validKey(ctx: AppContext, params: KeyParams): ParsedKey {
  const errors: KeyErrors & { title?: string[] } = {};
  const title = params.title.trim();
  if (title === '') errors.title = ["can't be blank"];
  else if (title.length > MAX_TITLE) errors.title = [`is too long (maximum is ${MAX_TITLE} characters)`];
  const parsed = parsePublicKey(params.key);
  Object.assign(errors, parsed.errors ?? {});
  if (parsed.key && keyByFingerprint(ctx, parsed.key.fingerprint)) errors.fingerprint = ['has already been taken'];
  if (Object.keys(errors).length > 0 || !parsed.key) throw validationError(errors);
  return parsed.key;
}

/** A key row by its 8.x (MD5) fingerprint, of either kind. */
function keyByFingerprint(ctx: AppContext, fingerprint: string): KeyRow | null {
  return ctx.db.select().from(keys).where(eq(keys.fingerprint, fingerprint)).get() ?? null;
}

/** Insert a key row; a concurrent insert of the same key that wins the UNIQUE index gives 8.x's duplicate error. */
function insertKey(ctx: AppContext, values: Omit<typeof keys.$inferInsert, 'createdAt' | 'updatedAt'>): KeyRow {
  const t = now();
  try {
    return ctx.db.insert(keys).values({ ...values, createdAt: t, updatedAt: t }).returning().get();
  } catch (e) {
    if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw validationError({ fingerprint: ['has already been taken'] });
    throw e;
  }
}

// ---- user keys

/** A user's keys, oldest first. */
export function listUserKeys(ctx: AppContext, userId: number): KeyRow[] {
  return ctx.db.select().from(keys).where(and(eq(keys.type, 'Key'), eq(keys.userId, userId))).orderBy(asc(keys.id)).all();
}

/** One of a user's keys, or null (someone else's key or a deploy key is null too). */
export function findUserKey(ctx: AppContext, userId: number, keyId: number): KeyRow | null {
  return ctx.db.select().from(keys).where(and(eq(keys.id, keyId), eq(keys.type, 'Key'), eq(keys.userId, userId))).get() ?? null;
}

/** Add a key to a user; 400 with the validation hash when the title or key is refused or the key is already used. */
export function createUserKey(ctx: AppContext, user: UserRow, params: KeyParams): KeyRow {
  const parsed = validKey(ctx, params);
  return insertKey(ctx, {
    type: 'Key', userId: user.id, title: params.title.trim(), key: parsed.text, keyType: parsed.type,
    fingerprint: parsed.fingerprint, fingerprintSha256: parsed.fingerprintSha256, canPush: false,
  });
}

/** Delete one of a user's keys; the deleted row, or null when the user has no such key. */
export function deleteUserKey(ctx: AppContext, userId: number, keyId: number): KeyRow | null {
  return ctx.db.delete(keys).where(and(eq(keys.id, keyId), eq(keys.type, 'Key'), eq(keys.userId, userId))).returning().get() ?? null;
}

/** Any key by id (GET /keys/:id) with its user (null for a deploy key), or null. */
export function findKey(ctx: AppContext, keyId: number): { key: KeyRow; user: UserRow | null } | null {
  const key = ctx.db.select().from(keys).where(eq(keys.id, keyId)).get();
  if (!key) return null;
  const user = key.userId === null ? null : ctx.db.select().from(users).where(eq(users.id, key.userId)).get() ?? null;
  return { key, user };
}

// ---- deploy keys

/** The deploy keys enabled on a project (a drizzle query to page or narrow). */
function projectDeployKeys(ctx: AppContext, projectId: number, ...more: SQL[]) {
  return ctx.db.select({ key: keys }).from(keys)
    .innerJoin(deployKeysProjects, eq(deployKeysProjects.deployKeyId, keys.id))
    .where(and(eq(deployKeysProjects.projectId, projectId), eq(keys.type, 'DeployKey'), ...more));
}

/** Number of deploy keys (GET /deploy_keys). */
export function countDeployKeys(ctx: AppContext): number {
  return ctx.db.select({ n: sql<number>`count(*)` }).from(keys).where(eq(keys.type, 'DeployKey')).get()!.n;
}

/** One page of every deploy key, oldest first (GET /deploy_keys, admins). */
export function listDeployKeys(ctx: AppContext, limit = -1, offset = 0): KeyRow[] {
  return ctx.db.select().from(keys).where(eq(keys.type, 'DeployKey')).orderBy(asc(keys.id)).limit(limit).offset(offset).all();
}

/** Number of deploy keys enabled on a project. */
export function countProjectDeployKeys(ctx: AppContext, projectId: number): number {
  return ctx.db.select({ n: sql<number>`count(*)` }).from(deployKeysProjects).where(eq(deployKeysProjects.projectId, projectId)).get()!.n;
}

/** One page of the deploy keys enabled on a project, oldest key first. */
export function listProjectDeployKeys(ctx: AppContext, projectId: number, limit = -1, offset = 0): KeyRow[] {
  return projectDeployKeys(ctx, projectId).orderBy(asc(keys.id)).limit(limit).offset(offset).all().map((r) => r.key);
}

/** A deploy key enabled on the project, or null. */
export function findProjectDeployKey(ctx: AppContext, projectId: number, keyId: number): KeyRow | null {
  return projectDeployKeys(ctx, projectId, eq(keys.id, keyId)).get()?.key ?? null;
}

/** The deploy keys a user may enable on their projects (those of the projects they master), or the one of `keyId`. */
function accessibleDeployKeyRows(ctx: AppContext, user: UserRow, keyId?: number): KeyRow[] {
  const administered = sql.raw(`SELECT dkp.deploy_key_id FROM deploy_keys_projects dkp WHERE dkp.project_id IN (${administeredProjectsSql(user)})`);
  return ctx.db.select().from(keys)
    .where(and(eq(keys.type, 'DeployKey'), keyId === undefined ? undefined : eq(keys.id, keyId), sql`${keys.id} IN (${administered})`))
    .orderBy(asc(keys.id)).all();
}

/** The deploy keys a user may enable on their projects: those of the projects they administer (master and up). */
export function accessibleDeployKeys(ctx: AppContext, user: UserRow): KeyRow[] {
  return accessibleDeployKeyRows(ctx, user);
}

/** One of the user's accessible deploy keys by id, or null. */
function accessibleDeployKey(ctx: AppContext, user: UserRow, keyId: number): KeyRow | null {
  return accessibleDeployKeyRows(ctx, user, keyId)[0] ?? null;
}

/** Link a deploy key to a project (nothing when it is already linked). */
function linkDeployKey(ctx: AppContext, keyId: number, projectId: number): void {
  statement(ctx, `INSERT OR IGNORE INTO deploy_keys_projects (deploy_key_id, project_id, created_at) VALUES (?, ?, ?)`)
    .run(keyId, projectId, now());
}

/**
 * Add a deploy key to a project, as 8.14 meant it (8.12 fell through): the key already on the project is returned as
 * it is; one of the caller's accessible deploy keys is enabled on the project; otherwise a new deploy key is created
 * (400 with the validation hash when refused, or when the key is a user's key or a deploy key the caller cannot reach).
 * Keys are matched by fingerprint, so the same key with another comment is the same key. Read-only (can_push false).
 */
export function addProjectDeployKey(ctx: AppContext, actor: UserRow, project: ProjectRow, params: KeyParams): KeyRow {
  const parsed = parsePublicKey(params.key).key;
  const existing = parsed ? keyByFingerprint(ctx, parsed.fingerprint) : null;
  if (existing?.type === 'DeployKey') {
    const onProject = findProjectDeployKey(ctx, project.id, existing.id);
    if (onProject) return onProject;
    if (accessibleDeployKey(ctx, actor, existing.id)) {
      linkDeployKey(ctx, existing.id, project.id);
      return existing;
    }
  }
  const key = validKey(ctx, params);
  return ctx.db.transaction(() => {
    const row = insertKey(ctx, {
      type: 'DeployKey', userId: null, title: params.title.trim(), key: key.text, keyType: key.type,
      fingerprint: key.fingerprint, fingerprintSha256: key.fingerprintSha256, canPush: false,
    });
    linkDeployKey(ctx, row.id, project.id);
    return row;
  });
}

/** Enable one of the caller's accessible deploy keys on a project (8.11+ EnableDeployKeyService); null when not one. */
export function enableDeployKey(ctx: AppContext, actor: UserRow, project: ProjectRow, keyId: number): KeyRow | null {
  const key = accessibleDeployKey(ctx, actor, keyId);
  if (!key) return null;
  linkDeployKey(ctx, key.id, project.id);
  return key;
}

/** Disable a deploy key on a project (the key stays for its other projects); the key, or null when not enabled there. */
export function disableDeployKey(ctx: AppContext, project: ProjectRow, keyId: number): KeyRow | null {
  const key = findProjectDeployKey(ctx, project.id, keyId);
  if (!key) return null;
  ctx.db.delete(deployKeysProjects).where(and(eq(deployKeysProjects.deployKeyId, keyId), eq(deployKeysProjects.projectId, project.id))).run();
  return key;
}

/**
 * Remove a deploy key from a project and delete it when no other project uses it (8.x deleted it everywhere, so a
 * master of one project could cut off another project's deploys). The key as it was, or null when not enabled there.
 */
export function removeProjectDeployKey(ctx: AppContext, project: ProjectRow, keyId: number): KeyRow | null {
  return ctx.db.transaction(() => {
    const key = disableDeployKey(ctx, project, keyId);
    if (!key) return null;
    const used = ctx.db.select({ id: deployKeysProjects.id }).from(deployKeysProjects).where(eq(deployKeysProjects.deployKeyId, keyId)).get();
    if (!used) ctx.db.delete(keys).where(eq(keys.id, keyId)).run();
    return key;
  });
}

/**
 * Delete the deploy keys that only the project `projectId` uses, inside the caller's transaction (`tx`, either engine),
 * before the project's row goes: a deleted project must not leave a key that no project uses, which nobody could
 * remove and whose fingerprint would stay taken (GitLab's later behaviour; 8.x left them). Keys enabled on other
 * projects stay for them; the project's links cascade with its row.
 */
export async function deleteProjectOnlyDeployKeysIn(tx: Queries, projectId: number): Promise<void> {
  await tx.run(
    `DELETE FROM keys WHERE type = 'DeployKey'
       AND id IN (SELECT deploy_key_id FROM deploy_keys_projects WHERE project_id = ?)
       AND NOT EXISTS (SELECT 1 FROM deploy_keys_projects o WHERE o.deploy_key_id = keys.id AND o.project_id <> ?)`,
    [projectId, projectId],
  );
}

// ---- the SSH server's side

/** What a presented key authenticates as: a user's key (with its user) or a deploy key (with its projects). */
export interface SshKeyIdentity {
  key: KeyRow;
  /** The key's user (blocked users included: the caller refuses them); null for a deploy key. */
  user: UserRow | null;
  /** The projects a deploy key is enabled on (empty for a user's key). */
  deployProjectIds: number[];
}

/** The key with this OpenSSH SHA256 fingerprint (`SHA256:...`, see sha256Fingerprint), or null when unknown. */
export function keyForSsh(ctx: AppContext, fingerprintSha256: string): SshKeyIdentity | null {
  const key = ctx.db.select().from(keys).where(eq(keys.fingerprintSha256, fingerprintSha256)).get();
  if (!key) return null;
  if (key.type === 'Key') {
    const user = ctx.db.select().from(users).where(eq(users.id, key.userId!)).get() ?? null;
    return user ? { key, user, deployProjectIds: [] } : null;
  }
  const projectIds = (statement(ctx, `SELECT project_id AS id FROM deploy_keys_projects WHERE deploy_key_id = ? ORDER BY project_id`)
    .all(key.id) as { id: number }[]).map((r) => r.id);
  return { key, user: null, deployProjectIds: projectIds };
}

/** How often a key's last_used_at is written at most (8.x: once a minute per key). */
const TOUCH_INTERVAL_MS = 60_000;
const touched = new Map<number, number>();

/** Record that a key was used (SSH authentication), at most once a minute per key; never throws. */
export function touchKeyUsed(ctx: AppContext, keyId: number, at = Date.now()): void {
  const last = touched.get(keyId);
  if (last !== undefined && at - last < TOUCH_INTERVAL_MS) return;
  // The map only saves writes; bounded so that many keys never grow it without end.
  if (touched.size >= 10_000) touched.clear();
  touched.set(keyId, at);
  const stamp = new Date(at).toISOString();
  const before = new Date(at - TOUCH_INTERVAL_MS).toISOString();
  try {
    statement(ctx, `UPDATE keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`).run(stamp, keyId, before);
  } catch {
    // A busy database only loses a usage timestamp; authentication must not fail for it.
  }
}
