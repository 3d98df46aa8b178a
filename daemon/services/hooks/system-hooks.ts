/**
 * System hooks (GitLab 8.13's SystemHook and SystemHooksService): instance-wide hooks an administrator adds at /hooks,
 * posted (X-Gitlab-Event `System Hook`) for project create/destroy/rename/transfer, user create/destroy, project
 * membership (user_add_to_team, user_remove_from_team), group create/destroy, group membership (user_add_to_group,
 * user_remove_from_group), user key create/destroy, and, for hooks with push_events / tag_push_events, pushes and tag
 * pushes (8.13's push data without commits).
 *
 * The services that make those changes call queueSystemHooks(tx, data) inside the writing transaction, with the
 * payload from the builders here (each reads what it needs through `tx`, before the rows go for a destroy); the rows go
 * to the durable outbox (services/hooks/deliveries.ts) and commit or roll back with the change. The storage of the
 * hooks (list, add, find, delete) is here too; the token is stored and sent, never shown.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { SystemHookRow } from '../../db/rows.js';
import {
  anySystemHook, countSystemHooks as countSystemHookRows, deleteSystemHookRow, firstGroupOwner, insertSystemHook, memberHookFacts,
  membershipIds, projectHookFacts, systemHookById, systemHookIds, systemHooksPage, type MembershipsOf,
} from '../../db/hooks.js';
import { namespaceById } from '../../db/projects.js';
import { userById } from '../../db/users.js';
import { userKeys } from '../../db/keys.js';
import { unprocessable } from '../../errors.js';
import { insertDeliveriesAsync } from './outbox.js';
import { validHookUrl } from './project-hooks.js';
import type { PushData } from '../repository/push.js';

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
  return countSystemHookRows(ctx.data);
}

/** One page of the system hooks, oldest first. */
export async function listSystemHooks(ctx: AppContext, limit: number, offset: number): Promise<SystemHookRow[]> {
  return systemHooksPage(ctx.data, limit, offset);
}

/** A system hook, or null. */
export async function findSystemHook(ctx: AppContext, id: number): Promise<SystemHookRow | null> {
  if (!isRowId(id)) return null;
  return systemHookById(ctx.data, id);
}

/** Add a system hook; 422 `Invalid url given` unless the URL is http(s). */
export async function createSystemHook(ctx: AppContext, p: SystemHookParams): Promise<SystemHookRow> {
  if (!validHookUrl(p.url)) throw unprocessable('Invalid url given');
  const set: [string, unknown][] = [['url', p.url], ['created_at', now()]];
  if (p.token !== undefined && p.token !== '') set.push(['token', p.token]);
  for (const f of ['push_events', 'tag_push_events', 'enable_ssl_verification'] as const) if (p[f] !== undefined) set.push([f, !!p[f]]);
  return insertSystemHook(ctx.data, set);
}

/** Delete a system hook (its deliveries not sent yet go with it); the deleted row, or null when there was none. */
export async function deleteSystemHook(ctx: AppContext, id: number): Promise<SystemHookRow | null> {
  if (!isRowId(id)) return null;
  return deleteSystemHookRow(ctx.data, id);
}

/** The payload GET /hooks/:id sends and answers (8.13's, word for word). */
export const TEST_DATA: SystemHookData = {
  event_name: 'project_create', name: 'Ruby', path: 'ruby', project_id: 1, owner_name: 'Someone', owner_email: 'example@gitlabhq.com',
};

/** Test a hook: queue 8.13's sample project_create payload for this hook only; null when the hook is gone. */
export async function testSystemHook(ctx: AppContext, id: number): Promise<SystemHookData | null> {
  if (!isRowId(id)) return null;
  return ctx.data.transaction(async (tx) => {
    if (!(await systemHookById(tx, id))) return null;
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
  const hooks = await systemHookIds(tx, scope);
  if (!hooks.length) return 0;
  // a payload that needs reading is read only when some hook wants it
  const payload = typeof data === 'function' ? await data() : data;
  if (!payload) return 0;
  const body = JSON.stringify(payload);
  return insertDeliveriesAsync(tx, hooks.map((id) => ({ target: 'system_hook_id' as const, id, event: payload.event_name, body })));
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
  const p = await projectHookFacts(q, projectId);
  if (!p) return null;
  const group = p.ns_kind === 'group';
  return {
    name: p.name, path: p.path, path_with_namespace: `${p.ns_path}/${p.path}`, project_id: p.id,
    // a group's project: the group is the owner, which has no email (8.13: "")
    owner_name: group ? p.ns_name : p.owner_name ?? null, owner_email: group ? '' : p.owner_email ?? '',
    project_visibility: VISIBILITY[p.visibility_level] ?? 'private',
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
  const g = await namespaceById(q, groupId);
  if (!g) return null;
  const owner = g.ownerId !== null ? await userById(q, g.ownerId) : await firstGroupOwner(q, groupId);
  return {
    event_name: `group_${event}`, created_at: xmlschema(g.createdAt), updated_at: xmlschema(g.updatedAt),
    name: g.name, path: g.path, group_id: g.id, owner_name: owner?.name ?? null, owner_email: owner?.email ?? null,
  };
}

/**
 * user_add_to_team / user_remove_from_team (a project membership) and user_add_to_group / user_remove_from_group (a
 * group membership), for the member row `memberId` (read before it goes for a removal).
 */
export async function memberSystemData(q: Queries, memberId: number, event: 'create' | 'destroy'): Promise<SystemHookData | null> {
  const m = await memberHookFacts(q, memberId);
  if (!m) return null;
  const times = { created_at: xmlschema(m.created_at), updated_at: xmlschema(m.updated_at) };
  const user = { user_username: m.username, user_name: m.name, user_email: m.email, user_id: m.user_id };
  const level = HUMAN_ACCESS[m.access_level] ?? String(m.access_level);
  if (m.source_type === 'Project') {
    const p = await projectFields(q, m.source_id);
    if (!p) return null;
    return {
      event_name: event === 'create' ? 'user_add_to_team' : 'user_remove_from_team', ...times,
      project_name: p.name, project_path: p.path, project_path_with_namespace: p.path_with_namespace, project_id: p.project_id,
      ...user, access_level: level, project_visibility: p.project_visibility,
    };
  }
  const g = await namespaceById(q, m.source_id);
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
 * Queue the removal event (user_remove_from_team / user_remove_from_group) of each membership `of` names (a user's, or
 * a project's or group's), before the rows go with what is being deleted (a project, a group, a user).
 */
export async function queueMemberRemovals(tx: Queries, of: MembershipsOf): Promise<void> {
  if (!(await anySystemHook(tx))) return;
  for (const id of await membershipIds(tx, of)) {
    await queueSystemHooks(tx, () => memberSystemData(tx, id, 'destroy'));
  }
}

/** Queue key_destroy for each SSH key of a user being deleted (8.13: the user's keys were destroyed one by one). */
export async function queueUserKeyRemovals(tx: Queries, userId: number, username: string): Promise<void> {
  if (!(await anySystemHook(tx))) return;
  for (const k of await userKeys(tx, userId)) await queueSystemHooks(tx, keySystemData(k, username, 'destroy'));
}
