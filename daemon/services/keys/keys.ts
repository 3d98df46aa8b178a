/**
 * SSH keys (GitLab 8.x Key / DeployKey): a user's keys, deploy keys and the projects they are enabled on, and the
 * lookup the SSH server authenticates with. A fingerprint is unique over both kinds, so one key line names at most
 * one user or one deploy key. Everything runs on the data layer (ctx.data), on SQLite and PostgreSQL alike.
 */
import { keySystemData, queueSystemHooks } from '../hooks/system-hooks.js';
import type { AppContext } from '../../context.js';
import { now, stateSlot } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { KeyRow } from '../../db/schema-keys.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import type { Queries } from '../../db/layer/types.js';
import {
  countDeployKeys, countProjectDeployKeys, deleteDeployKeysOnlyOn, deleteKeyIfUnlinked, deleteUserKeyRow, deployKeyOnProjects,
  deployKeyProjectIds, deployKeysPage, insertKey, keyByFingerprint, keyById, keyBySha256Fingerprint, linkDeployKeyRow, lockDeployKeys,
  projectDeployKey, projectDeployKeysPage, touchKeyRow, unlinkDeployKey, userKey, userKeys,
} from '../../db/keys.js';
import { projectById } from '../../db/projects.js';
import { notFound, validationError, type ApiError } from '../../errors.js';
import { administeredProjectsWhere } from '../../policy/permissions.js';
import type { Listing } from '../users/groups.js';
import { parsePublicKey, type KeyErrors, type ParsedKey } from './parse.js';
import { userById } from '../../db/users.js';

/** Title and key line of a new key (POST /user/keys, /users/:id/keys, /projects/:id/deploy_keys). */
export interface KeyParams {
  title: string;
  key: string;
}

/** The longest title accepted (8.x Key: length maximum 255). */
const MAX_TITLE = 255;

/** Whether an id can name a row (PostgreSQL's ids are `integer`: a larger number must not reach a query). */
const validId = (id: number) => Number.isSafeInteger(id) && id > 0 && id <= 2147483647;

/** 8.x's answer to a key whose fingerprint another key (of either kind) has. */
const fingerprintTaken = () => validationError({ fingerprint: ['has already been taken'] });

/**
 * The key parsed, or a 400 with the validation hash (title, key, fingerprint) in 8.x's order. `onlyTaken` answers
 * instead when the one thing wrong is a fingerprint already taken (a deploy key added to the project meanwhile).
 */
async function validKey(ctx: AppContext, params: KeyParams): Promise<ParsedKey>;
async function validKey(ctx: AppContext, params: KeyParams, onlyTaken: (fingerprint: string) => Promise<KeyRow | null>): Promise<ParsedKey | KeyRow>;
async function validKey(ctx: AppContext, params: KeyParams, onlyTaken?: (fingerprint: string) => Promise<KeyRow | null>): Promise<ParsedKey | KeyRow> {
  const errors: KeyErrors & { title?: string[] } = {};
  const title = params.title.trim();
  if (title === '') errors.title = ["can't be blank"];
  else if (title.length > MAX_TITLE) errors.title = [`is too long (maximum is ${MAX_TITLE} characters)`];
  const parsed = parsePublicKey(params.key);
  Object.assign(errors, parsed.errors ?? {});
  if (parsed.key && (await keyByFingerprint(ctx.data, parsed.key.fingerprint))) {
    const answer = Object.keys(errors).length === 0 && onlyTaken ? await onlyTaken(parsed.key.fingerprint) : null;
    if (answer) return answer;
    errors.fingerprint = ['has already been taken'];
  }
  if (Object.keys(errors).length > 0 || !parsed.key) throw validationError(errors);
  return parsed.key;
}

// ---- user keys

/** A user's keys, oldest first. */
export async function listUserKeys(ctx: AppContext, userId: number): Promise<KeyRow[]> {
  if (!validId(userId)) return [];
  return userKeys(ctx.data, userId);
}

/** One of a user's keys, or null (someone else's key or a deploy key is null too). */
export async function findUserKey(ctx: AppContext, userId: number, keyId: number): Promise<KeyRow | null> {
  if (!validId(userId) || !validId(keyId)) return null;
  return userKey(ctx.data, userId, keyId);
}

/**
 * Add a key to a user; 400 with the validation hash when the title or key is refused or the key is already used (also
 * when the same key was added by another request meanwhile). A user deleted meanwhile: `userGone()` (404 User).
 */
export async function createUserKey(ctx: AppContext, user: UserRow, params: KeyParams, userGone: () => ApiError = () => notFound('User')): Promise<KeyRow> {
  const parsed = await validKey(ctx, params);
  try {
    return await ctx.data.transaction(async (tx) => {
      const key = await insertKey(tx, 'Key', user.id, params.title.trim(), parsed, now());
      await queueSystemHooks(tx, keySystemData(key, user.username, 'create'));
      return key;
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw fingerprintTaken();
    if (isForeignKeyViolation(e)) throw userGone();
    throw e;
  }
}

/** Delete one of a user's keys; the deleted row, or null when the user has no such key. */
export async function deleteUserKey(ctx: AppContext, userId: number, keyId: number): Promise<KeyRow | null> {
  if (!validId(userId) || !validId(keyId)) return null;
  return ctx.data.transaction(async (tx) => {
    const key = await deleteUserKeyRow(tx, userId, keyId);
    if (!key) return null;
    await queueSystemHooks(tx, async () => {
      const user = await userById(tx, userId);
      return keySystemData(key, user?.username ?? null, 'destroy');
    });
    return key;
  });
}

/** Any key by id (GET /keys/:id) with its user (null for a deploy key), or null. */
export async function findKey(ctx: AppContext, keyId: number): Promise<{ key: KeyRow; user: UserRow | null } | null> {
  if (!validId(keyId)) return null;
  const key = await keyById(ctx.data, keyId);
  if (!key) return null;
  return { key, user: await userById(ctx.data, key.userId) };
}

// ---- deploy keys

/** Every deploy key, oldest first (GET /deploy_keys, admins): a count and a page fetcher. */
export function listDeployKeys(): Listing<KeyRow> {
  return {
    count: (q) => countDeployKeys(q),
    fetch: (q, limit, offset) => deployKeysPage(q, limit, offset),
  };
}

/** The deploy keys enabled on a project, oldest key first: a count and a page fetcher. */
export function listProjectDeployKeys(projectId: number): Listing<KeyRow> {
  return {
    count: (q) => countProjectDeployKeys(q, projectId),
    fetch: (q, limit, offset) => projectDeployKeysPage(q, projectId, limit, offset),
  };
}

/** A deploy key enabled on the project, or null. */
export async function findProjectDeployKey(ctx: AppContext, projectId: number, keyId: number, q: Queries = ctx.data): Promise<KeyRow | null> {
  if (!validId(keyId)) return null;
  return projectDeployKey(q, projectId, keyId);
}

/**
 * One of the deploy keys the user may enable on their projects (those of the projects they administer: master and
 * up; any for an admin) by id, or null.
 */
async function accessibleDeployKey(ctx: AppContext, user: UserRow, keyId: number): Promise<KeyRow | null> {
  if (!validId(keyId)) return null;
  return deployKeyOnProjects(ctx.data, keyId, administeredProjectsWhere(ctx.data.dialect, user));
}

/**
 * Link a deploy key to a project (nothing when it is already linked). False when the key was deleted meanwhile; a
 * project deleted meanwhile is 404 Project.
 */
async function linkDeployKey(ctx: AppContext, keyId: number, projectId: number): Promise<boolean> {
  try {
    await linkDeployKeyRow(ctx.data, keyId, projectId, now());
    return true;
  } catch (e) {
    if (!isForeignKeyViolation(e)) throw e;
    if (!(await projectById(ctx.data, projectId))) throw notFound('Project');
    return false;
  }
}

/** The deploy key of this fingerprint already on the project, or one of the actor's accessible ones enabled on it now. */
async function reusableDeployKey(ctx: AppContext, actor: UserRow, project: ProjectRow, fingerprint: string): Promise<KeyRow | null> {
  const existing = await keyByFingerprint(ctx.data, fingerprint);
  if (existing?.type !== 'DeployKey') return null;
  const onProject = await findProjectDeployKey(ctx, project.id, existing.id);
  if (onProject) return onProject;
  if (await accessibleDeployKey(ctx, actor, existing.id)) return (await linkDeployKey(ctx, existing.id, project.id)) ? existing : null;
  return null;
}

/**
 * Add a deploy key to a project, as 8.14 meant it (8.12 fell through): the key already on the project is returned as
 * it is; one of the caller's accessible deploy keys is enabled on the project; otherwise a new deploy key is created
 * (400 with the validation hash when refused, or when the key is a user's key or a deploy key the caller cannot reach).
 * Keys are matched by fingerprint, so the same key with another comment is the same key. Read-only (can_push false).
 * The same key added by another request meanwhile is answered as if it had been there; a project deleted meanwhile
 * is 404 Project.
 */
export async function addProjectDeployKey(ctx: AppContext, actor: UserRow, project: ProjectRow, params: KeyParams): Promise<KeyRow> {
  const fingerprint = parsePublicKey(params.key).key?.fingerprint;
  const reused = fingerprint ? await reusableDeployKey(ctx, actor, project, fingerprint) : null;
  if (reused) return reused;
  // Added to the project by another request since the lookup above: answered as if it had been there then.
  const valid = await validKey(ctx, params, (f) => reusableDeployKey(ctx, actor, project, f));
  if (!('blob' in valid)) return valid;
  const parsed = valid;
  try {
    return await ctx.data.transaction(async (tx) => {
      const row = await insertKey(tx, 'DeployKey', null, params.title.trim(), parsed, now());
      await linkDeployKeyRow(tx, row.id, project.id, now());
      return row;
    });
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project');
    if (!isUniqueViolation(e)) throw e;
    const added = await reusableDeployKey(ctx, actor, project, parsed.fingerprint);
    if (added) return added;
    throw fingerprintTaken();
  }
}

/** Enable one of the caller's accessible deploy keys on a project (8.11+ EnableDeployKeyService); null when not one. */
export async function enableDeployKey(ctx: AppContext, actor: UserRow, project: ProjectRow, keyId: number): Promise<KeyRow | null> {
  const key = await accessibleDeployKey(ctx, actor, keyId);
  if (!key) return null;
  return (await linkDeployKey(ctx, key.id, project.id)) ? key : null;
}

/** Disable a deploy key on a project (the key stays for its other projects); the key, or null when not enabled there. */
export async function disableDeployKey(ctx: AppContext, project: ProjectRow, keyId: number): Promise<KeyRow | null> {
  const key = await findProjectDeployKey(ctx, project.id, keyId);
  if (!key) return null;
  return (await unlinkDeployKey(ctx.data, keyId, project.id)) ? key : null; // disabled by another request meanwhile: as if not found
}

/**
 * Remove a deploy key from a project and delete it when no other project uses it (8.x deleted it everywhere, so a
 * master of one project could cut off another project's deploys). The key as it was, or null when not enabled there.
 */
export async function removeProjectDeployKey(ctx: AppContext, project: ProjectRow, keyId: number): Promise<KeyRow | null> {
  if (!validId(keyId)) return null;
  return ctx.data.transaction(async (tx) => {
    // Locked (PostgreSQL) so that two transactions that each remove one link of the same key cannot both see the
    // other's link and leave the key behind with none.
    await lockDeployKeys(tx, keyId);
    const key = await projectDeployKey(tx, project.id, keyId);
    if (!key) return null;
    await unlinkDeployKey(tx, keyId, project.id);
    await deleteKeyIfUnlinked(tx, keyId);
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
  await lockDeployKeys(tx, null, projectId);
  await deleteDeployKeysOnlyOn(tx, projectId);
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
export async function keyForSshAsync(ctx: AppContext, fingerprintSha256: string): Promise<SshKeyIdentity | null> {
  const key = await keyBySha256Fingerprint(ctx.data, fingerprintSha256);
  if (!key) return null;
  if (key.type === 'Key') {
    const user = await userById(ctx.data, key.userId);
    return user ? { key, user, deployProjectIds: [] } : null;
  }
  return { key, user: null, deployProjectIds: await deployKeyProjectIds(ctx.data, key.id) };
}

/** How often a key's last_used_at is written at most (8.x: once a minute per key). */
const TOUCH_INTERVAL_MS = 60_000;
/** When this daemon last wrote each key's last_used_at (ms), by key id. */
const TOUCHED = stateSlot('key last-used writes', () => new Map<number, number>());

/**
 * Record that a key was used (SSH authentication), at most once a minute per key; never throws. The map only saves
 * writes of this daemon: the conditional UPDATE keeps several daemons to about one write a minute per key as well.
 */
export async function touchKeyUsed(ctx: AppContext, keyId: number, at = Date.now()): Promise<void> {
  const touched = ctx.state.get(TOUCHED);
  const last = touched.get(keyId);
  if (last !== undefined && at - last < TOUCH_INTERVAL_MS) return;
  // Bounded, so that many keys never grow it without end.
  if (touched.size >= 10_000) touched.clear();
  touched.set(keyId, at);
  const stamp = new Date(at).toISOString();
  const before = new Date(at - TOUCH_INTERVAL_MS).toISOString();
  try {
    await touchKeyRow(ctx.data, keyId, stamp, before);
  } catch {
    // A busy database only loses a usage timestamp; authentication must not fail for it.
  }
}
