/**
 * System hooks (GitLab 8.13's SystemHook and SystemHooksService): instance-wide hooks an administrator adds at /hooks,
 * posted (X-Gitlab-Event `System Hook`) for project create/destroy/rename/transfer, user create/destroy, project
 * membership (user_add_to_team, user_remove_from_team), group create/destroy, group membership (user_add_to_group,
 * user_remove_from_group), user key create/destroy, and, for hooks with push_events / tag_push_events, pushes and tag
 * pushes (8.13's push data without commits).
 *
 * The services that make those changes call queueSystemHooks(tx, data) inside the writing transaction, with the
 * payload from the builders here (each reads what it needs through `tx`, before the rows go for a destroy); the rows go
 * to the durable outbox (services/hook-deliveries.ts) and commit or roll back with the change. The storage of the
 * hooks (list, add, find, delete) is here too; the token is stored and sent, never shown.
 */
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import type { Queries } from '../db/layer/types.js';
import { toSystemHook, type SystemHookRow } from '../db/rows.js';
import { unprocessable } from '../errors.js';
import { insertDeliveriesAsync } from './hook-outbox.js';
import { validHookUrl } from './project-hooks.js';
import type { PushData } from './push.js';

/** Parameters of POST /hooks. */
export interface SystemHookParams {
  url: string;
  token?: string;
  push_events?: boolean;
  tag_push_events?: boolean;
  enable_ssl_verification?: boolean;
}

/** A system hook payload: 8.13's data with its event_name. */
export type SystemHookData = { event_name: string } & Record<string, unknown>;

const isRowId = (id: number) => Number.isSafeInteger(id) && id > 0 && id <= 2147483647;

// ---- storage

/** Number of system hooks. */
export async function countSystemHooks(ctx: AppContext): Promise<number> {
  return Number((await ctx.data.get<{ n: number }>('SELECT COUNT(*) AS n FROM system_hooks'))?.n ?? 0);
}

/** One page of the system hooks, oldest first. */
export async function listSystemHooks(ctx: AppContext, limit: number, offset: number): Promise<SystemHookRow[]> {
  return (await ctx.data.all('SELECT * FROM system_hooks ORDER BY id LIMIT ? OFFSET ?', [limit, offset])).map(toSystemHook);
}

/** A system hook, or null. */
export async function findSystemHook(ctx: AppContext, id: number): Promise<SystemHookRow | null> {
  if (!isRowId(id)) return null;
  const row = await ctx.data.get('SELECT * FROM system_hooks WHERE id = ?', [id]);
  return row ? toSystemHook(row) : null;
}

/** Add a system hook; 422 `Invalid url given` unless the URL is http(s). */
export async function createSystemHook(ctx: AppContext, p: SystemHookParams): Promise<SystemHookRow> {
  if (!validHookUrl(p.url)) throw unprocessable('Invalid url given');
  const set: [string, unknown][] = [['url', p.url], ['created_at', now()]];
  if (p.token !== undefined && p.token !== '') set.push(['token', p.token]);
  for (const f of ['push_events', 'tag_push_events', 'enable_ssl_verification'] as const) if (p[f] !== undefined) set.push([f, !!p[f]]);
  const row = await ctx.data.get(
    `INSERT INTO system_hooks (${set.map(([c]) => c).join(', ')}) VALUES (${set.map(() => '?').join(', ')}) RETURNING *`, set.map(([, v]) => v),
  );
  return toSystemHook(row!);
}

/** Delete a system hook (its deliveries not sent yet go with it); the deleted row, or null when there was none. */
export async function deleteSystemHook(ctx: AppContext, id: number): Promise<SystemHookRow | null> {
  if (!isRowId(id)) return null;
  const row = await ctx.data.get('DELETE FROM system_hooks WHERE id = ? RETURNING *', [id]);
  return row ? toSystemHook(row) : null;
}

/** The payload GET /hooks/:id sends and answers (8.13's, word for word). */
export const TEST_DATA: SystemHookData = {
  event_name: 'project_create', name: 'Ruby', path: 'ruby', project_id: 1, owner_name: 'Someone', owner_email: 'example@gitlabhq.com',
};

/** Test a hook: queue 8.13's sample project_create payload for this hook only; null when the hook is gone. */
export async function testSystemHook(ctx: AppContext, id: number): Promise<SystemHookData | null> {
  if (!isRowId(id)) return null;
  return ctx.data.transaction(async (tx) => {
    if (!(await tx.get('SELECT id FROM system_hooks WHERE id = ?', [id]))) return null;
    await insertDeliveriesAsync(tx, [{ target: 'system_hook_id', id, event: TEST_DATA.event_name, body: JSON.stringify(TEST_DATA) }]);
    return TEST_DATA;
  });
}

// ---- queueing

/**
 * Queue `data` for every system hook (or those with `scope` set: push_events, tag_push_events), inside the writing
 * transaction; `data` may be a function that reads the payload through the transaction, called only when a hook wants
 * it (an instance without system hooks pays one indexed read). Returns the number of deliveries queued.
 */
export async function queueSystemHooks(
  tx: Queries, data: SystemHookData | null | (() => Promise<SystemHookData | null>), scope?: 'push_events' | 'tag_push_events',
): Promise<number> {
  if (!data) return 0;
  const hooks = await tx.all<{ id: number }>(`SELECT id FROM system_hooks${scope ? ` WHERE ${scope} = TRUE` : ''} ORDER BY id`);
  if (!hooks.length) return 0;
  // a payload that needs reading is read only when some hook wants it
  const payload = typeof data === 'function' ? await data() : data;
  if (!payload) return 0;
  const body = JSON.stringify(payload);
  return insertDeliveriesAsync(tx, hooks.map((h) => ({ target: 'system_hook_id' as const, id: h.id, event: payload.event_name, body })));
}

// ---- payloads (8.13's SystemHooksService#build_event_data)

/** A stored time as 8.13's xmlschema: `2016-10-31T09:21:04Z`. */
export function xmlschema(t: unknown): string | null {
  if (t === null || t === undefined) return null;
  const d = new Date(t as string);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const VISIBILITY: Record<number, string> = { 0: 'private', 10: 'internal', 20: 'public' };
const HUMAN_ACCESS: Record<number, string> = { 10: 'Guest', 20: 'Reporter', 30: 'Developer', 40: 'Master', 50: 'Owner' };

type Rec = Record<string, unknown>;

/** The project's fields of its system hook data (8.13's project_data), read through `q`; null when it is gone. */
async function projectFields(q: Queries, projectId: number): Promise<(Rec & { created_at: unknown; updated_at: unknown }) | null> {
  const p = await q.get<Rec>(
    `SELECT p.id, p.name, p.path, p.visibility_level, p.created_at, p.updated_at, n.path AS ns_path, n.name AS ns_name, n.kind AS ns_kind,
       u.name AS owner_name, u.email AS owner_email
     FROM projects p JOIN namespaces n ON n.id = p.namespace_id LEFT JOIN users u ON n.kind = 'user' AND u.id = n.owner_id
     WHERE p.id = ?`, [projectId]);
  if (!p) return null;
  const group = p.ns_kind === 'group';
  return {
    name: p.name, path: p.path, path_with_namespace: `${p.ns_path}/${p.path}`, project_id: p.id,
    // a group's project: the group is the owner, which has no email (8.13: "")
    owner_name: group ? p.ns_name : p.owner_name ?? null, owner_email: group ? '' : p.owner_email ?? '',
    project_visibility: VISIBILITY[p.visibility_level as number] ?? 'private',
    created_at: p.created_at, updated_at: p.updated_at,
  };
}

/** project_create, project_destroy (read before the row goes), project_rename and project_transfer (with the old path). */
export async function projectSystemData(
  q: Queries, projectId: number, event: 'create' | 'destroy' | 'rename' | 'transfer', oldPathWithNamespace?: string,
): Promise<SystemHookData | null> {
  const p = await projectFields(q, projectId);
  if (!p) return null;
  const { created_at, updated_at, ...rest } = p;
  return {
    event_name: `project_${event}`, created_at: xmlschema(created_at), updated_at: xmlschema(updated_at), ...rest,
    ...(event === 'rename' || event === 'transfer' ? { old_path_with_namespace: oldPathWithNamespace ?? null } : {}),
  };
}

/** user_create and user_destroy. */
export function userSystemData(
  user: { id: number; name: string; email: string; username: string; createdAt: string; updatedAt: string }, event: 'create' | 'destroy',
): SystemHookData {
  return {
    event_name: `user_${event}`, created_at: xmlschema(user.createdAt), updated_at: xmlschema(user.updatedAt),
    name: user.name, email: user.email, user_id: user.id, username: user.username,
  };
}

/** key_create and key_destroy of a user's SSH key. */
export function keySystemData(
  key: { id: number; key: string; createdAt: string; updatedAt: string }, username: string | null, event: 'create' | 'destroy',
): SystemHookData {
  return {
    event_name: `key_${event}`, created_at: xmlschema(key.createdAt), updated_at: xmlschema(key.updatedAt), key: key.key, id: key.id,
    ...(username !== null ? { username } : {}),
  };
}

/** group_create and group_destroy (read before the row goes); the owner is the namespace's, else its first owner member. */
export async function groupSystemData(q: Queries, groupId: number, event: 'create' | 'destroy'): Promise<SystemHookData | null> {
  const g = await q.get<Rec>('SELECT id, name, path, owner_id, created_at, updated_at FROM namespaces WHERE id = ?', [groupId]);
  if (!g) return null;
  const owner = await q.get<{ name: string; email: string }>(
    g.owner_id !== null && g.owner_id !== undefined
      ? 'SELECT name, email FROM users WHERE id = ?'
      : `SELECT u.name, u.email FROM members m JOIN users u ON u.id = m.user_id
         WHERE m.source_type = 'Namespace' AND m.source_id = ? AND m.access_level = 50 ORDER BY m.id LIMIT 1`,
    [g.owner_id ?? groupId],
  );
  return {
    event_name: `group_${event}`, created_at: xmlschema(g.created_at), updated_at: xmlschema(g.updated_at),
    name: g.name, path: g.path, group_id: g.id, owner_name: owner?.name ?? null, owner_email: owner?.email ?? null,
  };
}

/**
 * user_add_to_team / user_remove_from_team (a project membership) and user_add_to_group / user_remove_from_group (a
 * group membership), for the member row `memberId` (read before it goes for a removal).
 */
export async function memberSystemData(q: Queries, memberId: number, event: 'create' | 'destroy'): Promise<SystemHookData | null> {
  const m = await q.get<Rec>(
    `SELECT m.source_type, m.source_id, m.access_level, m.created_at, m.updated_at, u.id AS user_id, u.username, u.name, u.email
     FROM members m JOIN users u ON u.id = m.user_id WHERE m.id = ?`, [memberId]);
  if (!m) return null;
  const times = { created_at: xmlschema(m.created_at), updated_at: xmlschema(m.updated_at) };
  const user = { user_username: m.username, user_name: m.name, user_email: m.email, user_id: m.user_id };
  const level = HUMAN_ACCESS[m.access_level as number] ?? String(m.access_level);
  if (m.source_type === 'Project') {
    const p = await projectFields(q, m.source_id as number);
    if (!p) return null;
    return {
      event_name: event === 'create' ? 'user_add_to_team' : 'user_remove_from_team', ...times,
      project_name: p.name, project_path: p.path, project_path_with_namespace: p.path_with_namespace, project_id: p.project_id,
      ...user, access_level: level, project_visibility: p.project_visibility,
    };
  }
  const g = await q.get<Rec>('SELECT id, name, path FROM namespaces WHERE id = ?', [m.source_id]);
  if (!g) return null;
  return {
    event_name: event === 'create' ? 'user_add_to_group' : 'user_remove_from_group', ...times,
    group_name: g.name, group_path: g.path, group_id: g.id, ...user, group_access: level,
  };
}

/**
 * A push's system hook data (8.13: the push data built with no commits, and a tag push's message empty): the
 * project hook's data with `commits` [] and `total_commits_count` 0.
 */
export function systemPushData(push: PushData): SystemHookData {
  return { ...push, commits: [], total_commits_count: 0, ...(push.object_kind === 'tag_push' ? { message: '' } : {}) } as unknown as SystemHookData;
}

/**
 * Queue the removal event (user_remove_from_team / user_remove_from_group) of each membership matching `where` (a
 * condition on `members`), before the rows go with what is being deleted (a project, a group, a user).
 */
export async function queueMemberRemovals(tx: Queries, where: string, args: unknown[]): Promise<void> {
  if (!(await tx.get('SELECT 1 AS x FROM system_hooks LIMIT 1'))) return;
  for (const m of await tx.all<{ id: number }>(`SELECT id FROM members WHERE ${where} ORDER BY id`, args)) {
    await queueSystemHooks(tx, () => memberSystemData(tx, m.id, 'destroy'));
  }
}

/** Queue key_destroy for each SSH key of a user being deleted (8.13: the user's keys were destroyed one by one). */
export async function queueUserKeyRemovals(tx: Queries, userId: number, username: string): Promise<void> {
  if (!(await tx.get('SELECT 1 AS x FROM system_hooks LIMIT 1'))) return;
  const keys = await tx.all<{ id: number; key: string; created_at: string; updated_at: string }>(
    "SELECT id, key, created_at, updated_at FROM keys WHERE type = 'Key' AND user_id = ? ORDER BY id", [userId]);
  for (const k of keys) await queueSystemHooks(tx, keySystemData({ id: k.id, key: k.key, createdAt: k.created_at, updatedAt: k.updated_at }, username, 'destroy'));
}
