/**
 * The SSH keys' data module: user keys, deploy keys and their links to projects (deploy_keys_projects). The rules
 * (who may add, enable or remove which key) stay in services/keys/. `q`: the database or a transaction.
 */
import type { Queries } from './layer/types.js';
import { toKey } from './rows.js';
import type { KeyRow } from './schema-keys.js';

type Rec = Record<string, unknown>;

/** A key row by its 8.x (MD5) fingerprint, of either kind. */
export async function keyByFingerprint(q: Queries, fingerprint: string): Promise<KeyRow | null> {
  const row = await q.get<Rec>('SELECT * FROM keys WHERE fingerprint = ?', [fingerprint]);
  return row ? toKey(row) : null;
}

/** A key row by its OpenSSH SHA256 fingerprint (`SHA256:...`), of either kind. */
export async function keyBySha256Fingerprint(q: Queries, fingerprintSha256: string): Promise<KeyRow | null> {
  const row = await q.get<Rec>('SELECT * FROM keys WHERE fingerprint_sha256 = ?', [fingerprintSha256]);
  return row ? toKey(row) : null;
}

/** Any key by id, or null. */
export async function keyById(q: Queries, keyId: number): Promise<KeyRow | null> {
  const row = await q.get<Rec>('SELECT * FROM keys WHERE id = ?', [keyId]);
  return row ? toKey(row) : null;
}

/** The columns of a new key that its parse gives. */
export interface NewKeyText {
  text: string;
  type: string;
  fingerprint: string;
  fingerprintSha256: string;
}

/** Insert a key row, read-only (the UNIQUE indexes on the fingerprints are the last guard against the same key twice). */
export async function insertKey(q: Queries, type: 'Key' | 'DeployKey', userId: number | null, title: string, k: NewKeyText, at: string): Promise<KeyRow> {
  const row = await q.get<Rec>(
    `INSERT INTO keys (type, user_id, title, key, key_type, fingerprint, fingerprint_sha256, can_push, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, FALSE, ?, ?) RETURNING *`,
    [type, userId, title, k.text, k.type, k.fingerprint, k.fingerprintSha256, at, at],
  );
  return toKey(row!);
}

/** A user's keys, oldest first. */
export async function userKeys(q: Queries, userId: number): Promise<KeyRow[]> {
  return (await q.all<Rec>(`SELECT * FROM keys WHERE type = 'Key' AND user_id = ? ORDER BY id`, [userId])).map(toKey);
}

/** One of a user's keys, or null. */
export async function userKey(q: Queries, userId: number, keyId: number): Promise<KeyRow | null> {
  const row = await q.get<Rec>(`SELECT * FROM keys WHERE id = ? AND type = 'Key' AND user_id = ?`, [keyId, userId]);
  return row ? toKey(row) : null;
}

/** Delete one of a user's keys; the deleted row, or null when the user has no such key. */
export async function deleteUserKeyRow(q: Queries, userId: number, keyId: number): Promise<KeyRow | null> {
  const row = await q.get<Rec>(`DELETE FROM keys WHERE id = ? AND type = 'Key' AND user_id = ? RETURNING *`, [keyId, userId]);
  return row ? toKey(row) : null;
}

/** The number of deploy keys. */
export async function countDeployKeys(q: Queries): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM keys WHERE type = 'DeployKey'`))!.n);
}

/** A page of every deploy key, oldest first. */
export async function deployKeysPage(q: Queries, limit: number, offset: number): Promise<KeyRow[]> {
  return (await q.all<Rec>(`SELECT * FROM keys WHERE type = 'DeployKey' ORDER BY id LIMIT ? OFFSET ?`, [limit, offset])).map(toKey);
}

const PROJECT_DEPLOY_KEYS = `SELECT k.* FROM keys k JOIN deploy_keys_projects dkp ON dkp.deploy_key_id = k.id
  WHERE dkp.project_id = ? AND k.type = 'DeployKey'`;

/** The number of deploy keys enabled on a project. */
export async function countProjectDeployKeys(q: Queries, projectId: number): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM deploy_keys_projects WHERE project_id = ?`, [projectId]))!.n);
}

/** A page of the deploy keys enabled on a project, oldest key first. */
export async function projectDeployKeysPage(q: Queries, projectId: number, limit: number, offset: number): Promise<KeyRow[]> {
  return (await q.all<Rec>(`${PROJECT_DEPLOY_KEYS} ORDER BY k.id LIMIT ? OFFSET ?`, [projectId, limit, offset])).map(toKey);
}

/** A deploy key enabled on the project, or null. */
export async function projectDeployKey(q: Queries, projectId: number, keyId: number): Promise<KeyRow | null> {
  const row = await q.get<Rec>(`${PROJECT_DEPLOY_KEYS} AND k.id = ?`, [projectId, keyId]);
  return row ? toKey(row) : null;
}

/**
 * The deploy key `keyId` when it is enabled on some project that meets `projects` (SQL selecting project ids, from
 * policy/, with its arguments), else null.
 */
export async function deployKeyOnProjects(q: Queries, keyId: number, projects: { sql: string; args: readonly unknown[] }): Promise<KeyRow | null> {
  const row = await q.get<Rec>(
    `SELECT k.* FROM keys k WHERE k.type = 'DeployKey' AND k.id = ?
       AND k.id IN (SELECT dkp.deploy_key_id FROM deploy_keys_projects dkp WHERE dkp.project_id IN (${projects.sql}))`,
    [keyId, ...projects.args],
  );
  return row ? toKey(row) : null;
}

/** Link a deploy key to a project (nothing when it is already linked). */
export async function linkDeployKeyRow(q: Queries, keyId: number, projectId: number, at: string): Promise<void> {
  await q.run(
    `INSERT INTO deploy_keys_projects (deploy_key_id, project_id, created_at) VALUES (?, ?, ?) ON CONFLICT (deploy_key_id, project_id) DO NOTHING`,
    [keyId, projectId, at],
  );
}

/** Unlink a deploy key from a project; whether a link went. */
export async function unlinkDeployKey(q: Queries, keyId: number, projectId: number): Promise<boolean> {
  return (await q.run('DELETE FROM deploy_keys_projects WHERE deploy_key_id = ? AND project_id = ?', [keyId, projectId])).changes > 0;
}

/** Delete a key when no project uses it any more. */
export async function deleteKeyIfUnlinked(q: Queries, keyId: number): Promise<void> {
  await q.run(`DELETE FROM keys WHERE id = ? AND NOT EXISTS (SELECT 1 FROM deploy_keys_projects o WHERE o.deploy_key_id = keys.id)`, [keyId]);
}

/**
 * Lock deploy key rows until the transaction ends (PostgreSQL; SQLite runs each transaction alone), in id order:
 * the key `keyId`, or (keyId null) the deploy keys enabled on `projectId`.
 */
export async function lockDeployKeys(tx: Queries, keyId: number | null, projectId?: number): Promise<void> {
  if (tx.dialect.name !== 'postgres') return;
  if (keyId !== null) await tx.all('SELECT id FROM keys WHERE id = ? ORDER BY id FOR UPDATE', [keyId]);
  else await tx.all(`SELECT id FROM keys WHERE type = 'DeployKey' AND id IN (SELECT deploy_key_id FROM deploy_keys_projects WHERE project_id = ?) ORDER BY id FOR UPDATE`, [projectId]);
}

/** Delete the deploy keys enabled on `projectId` and on no other project. */
export async function deleteDeployKeysOnlyOn(tx: Queries, projectId: number): Promise<void> {
  await tx.run(
    `DELETE FROM keys WHERE type = 'DeployKey'
       AND id IN (SELECT deploy_key_id FROM deploy_keys_projects WHERE project_id = ?)
       AND NOT EXISTS (SELECT 1 FROM deploy_keys_projects o WHERE o.deploy_key_id = keys.id AND o.project_id <> ?)`,
    [projectId, projectId],
  );
}

/** The ids of the projects a deploy key is enabled on, in order. */
export async function deployKeyProjectIds(q: Queries, keyId: number): Promise<number[]> {
  return (await q.all<{ id: number }>('SELECT project_id AS id FROM deploy_keys_projects WHERE deploy_key_id = ? ORDER BY project_id', [keyId])).map((r) => r.id);
}

/** Set a key's last_used_at to `stamp` unless it was set at or after `before`. */
export async function touchKeyRow(q: Queries, keyId: number, stamp: string, before: string): Promise<void> {
  await q.run(`UPDATE keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`, [stamp, keyId, before]);
}
