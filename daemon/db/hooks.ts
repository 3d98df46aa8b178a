/**
 * The hooks' data module: project hooks, system hooks, the outbox of deliveries (hook_deliveries) and the reads the
 * system hook payloads need. The rules (who may add a hook, which events a payload has, retries and leases) stay in
 * services/hooks/project-hooks.ts, system-hooks.ts, hook-outbox.ts and hook-deliveries.ts. `q`: the database or a transaction.
 */
import type { Queries } from './layer/types.js';
import { toProjectHook, toProjectService, toSystemHook, type ProjectServiceRow, type SystemHookRow } from './rows.js';
import type { ProjectHookRow } from './schema.js';

/** A hook's event switch: a column of project_hooks (and project_services, system_hooks for the push ones). */
export type HookFlagColumn =
  | 'push_events' | 'tag_push_events' | 'issues_events' | 'merge_requests_events' | 'note_events' | 'build_events' | 'pipeline_events'
  | 'wiki_page_events';

/** An INSERT of `set` (column -> value; names from the caller's own list) into `table`, returning the row. */
const insertText = (table: string, set: readonly [string, unknown][]) =>
  `INSERT INTO ${table} (${set.map(([c]) => c).join(', ')}) VALUES (${set.map(() => '?').join(', ')}) RETURNING *`;

// ---- project hooks

/** Number of hooks of a project. */
export async function countProjectHooks(q: Queries, projectId: number): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM project_hooks WHERE project_id = ?', [projectId]))?.n ?? 0);
}

/** A project's hooks, oldest first: all (`limit` -1) or one page. */
export async function projectHooksPage(q: Queries, projectId: number, limit = -1, offset = 0): Promise<ProjectHookRow[]> {
  const rows = limit < 0
    ? await q.all('SELECT * FROM project_hooks WHERE project_id = ? ORDER BY id', [projectId])
    : await q.all('SELECT * FROM project_hooks WHERE project_id = ? ORDER BY id LIMIT ? OFFSET ?', [projectId, limit, offset]);
  return rows.map(toProjectHook);
}

/** A hook of a project, or null. */
export async function projectHookOf(q: Queries, projectId: number, hookId: number): Promise<ProjectHookRow | null> {
  const row = await q.get('SELECT * FROM project_hooks WHERE project_id = ? AND id = ?', [projectId, hookId]);
  return row ? toProjectHook(row) : null;
}

/** Insert a project hook with the columns `set` (project_id among them). */
export async function insertProjectHook(q: Queries, set: readonly [string, unknown][]): Promise<ProjectHookRow | null> {
  const row = await q.get(insertText('project_hooks', set), set.map(([, v]) => v));
  return row ? toProjectHook(row) : null;
}

/** Set columns of a project's hook; the row after, or null when gone. */
export async function updateProjectHookRow(q: Queries, projectId: number, hookId: number, set: readonly [string, unknown][]): Promise<ProjectHookRow | null> {
  const row = await q.get(`UPDATE project_hooks SET ${set.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ? AND project_id = ? RETURNING *`,
    [...set.map(([, v]) => v), hookId, projectId]);
  return row ? toProjectHook(row) : null;
}

/** Delete a project's hook; the deleted row, or null. */
export async function deleteProjectHookRow(q: Queries, projectId: number, hookId: number): Promise<ProjectHookRow | null> {
  const row = await q.get('DELETE FROM project_hooks WHERE project_id = ? AND id = ? RETURNING *', [projectId, hookId]);
  return row ? toProjectHook(row) : null;
}

/** The ids of a project's hooks whose switch `flag` is on, in order. */
export async function projectHookIdsWith(q: Queries, projectId: number, flag: HookFlagColumn): Promise<number[]> {
  return (await q.all<{ id: number }>(`SELECT id FROM project_hooks WHERE project_id = ? AND ${flag} = TRUE ORDER BY id`, [projectId])).map((h) => h.id);
}

/** Whether the project has a hook or an active service whose switch `flag` is on. */
export async function projectHasHookOrServiceWith(q: Queries, projectId: number, flag: HookFlagColumn): Promise<boolean> {
  return !!(await q.get(
    `SELECT 1 AS x FROM project_hooks WHERE project_id = ? AND ${flag} = TRUE
     UNION ALL SELECT 1 AS x FROM project_services WHERE project_id = ? AND active = TRUE AND ${flag} = TRUE LIMIT 1`,
    [projectId, projectId],
  ));
}

/** The active services of a project whose switch `flag` is on, in order: their id, type and JSON properties. */
export async function activeServicesWith(q: Queries, projectId: number, flag: HookFlagColumn): Promise<{ id: number; type: string; properties: string }[]> {
  return q.all(`SELECT id, type, properties FROM project_services WHERE project_id = ? AND active = TRUE AND ${flag} = TRUE ORDER BY id`, [projectId]);
}

// ---- system hooks

/** Number of system hooks. */
export async function countSystemHooks(q: Queries): Promise<number> {
  return Number((await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM system_hooks'))?.n ?? 0);
}

/** One page of the system hooks, oldest first. */
export async function systemHooksPage(q: Queries, limit: number, offset: number): Promise<SystemHookRow[]> {
  return (await q.all('SELECT * FROM system_hooks ORDER BY id LIMIT ? OFFSET ?', [limit, offset])).map(toSystemHook);
}

/** A system hook, or null. */
export async function systemHookById(q: Queries, id: number): Promise<SystemHookRow | null> {
  const row = await q.get('SELECT * FROM system_hooks WHERE id = ?', [id]);
  return row ? toSystemHook(row) : null;
}

/** Insert a system hook with the columns `set`. */
export async function insertSystemHook(q: Queries, set: readonly [string, unknown][]): Promise<SystemHookRow> {
  return toSystemHook((await q.get(insertText('system_hooks', set), set.map(([, v]) => v)))!);
}

/** Delete a system hook; the deleted row, or null. */
export async function deleteSystemHookRow(q: Queries, id: number): Promise<SystemHookRow | null> {
  const row = await q.get('DELETE FROM system_hooks WHERE id = ? RETURNING *', [id]);
  return row ? toSystemHook(row) : null;
}

/** The ids of the system hooks (with `scope`: those whose switch is on), in order. */
export async function systemHookIds(q: Queries, scope?: 'push_events' | 'tag_push_events'): Promise<number[]> {
  return (await q.all<{ id: number }>(`SELECT id FROM system_hooks${scope ? ` WHERE ${scope} = TRUE` : ''} ORDER BY id`)).map((h) => h.id);
}

/** Whether any system hook exists. */
export async function anySystemHook(q: Queries): Promise<boolean> {
  return !!(await q.get('SELECT 1 AS x FROM system_hooks LIMIT 1'));
}

// ---- what the system hook payloads read

/** A project with its namespace and (for a personal project) its owner, as the system hook payloads read it. */
export interface ProjectHookFacts {
  id: number; name: string; path: string; visibility_level: number; created_at: string; updated_at: string;
  ns_path: string; ns_name: string; ns_kind: string; owner_name: string | null; owner_email: string | null;
}

/** The hook facts of a project, or undefined when it is gone. */
export async function projectHookFacts(q: Queries, projectId: number): Promise<ProjectHookFacts | undefined> {
  return q.get<ProjectHookFacts>(
    `SELECT p.id, p.name, p.path, p.visibility_level, p.created_at, p.updated_at, n.path AS ns_path, n.name AS ns_name, n.kind AS ns_kind,
       u.name AS owner_name, u.email AS owner_email
     FROM projects p JOIN namespaces n ON n.id = p.namespace_id LEFT JOIN users u ON n.kind = 'user' AND u.id = n.owner_id
     WHERE p.id = ?`, [projectId]);
}

/** The name and email of a group's first owner member (by membership id), or undefined. */
export async function firstGroupOwner(q: Queries, groupId: number): Promise<{ name: string; email: string } | undefined> {
  return q.get(
    `SELECT u.name, u.email FROM members m JOIN users u ON u.id = m.user_id
     WHERE m.source_type = 'Namespace' AND m.source_id = ? AND m.access_level = 50 ORDER BY m.id LIMIT 1`, [groupId]);
}

/** A membership with its user, as the system hook payloads read it. */
export interface MemberHookFacts {
  source_type: string; source_id: number; access_level: number; created_at: string; updated_at: string;
  user_id: number; username: string; name: string; email: string;
}

/** The hook facts of a membership, or undefined when it is gone. */
export async function memberHookFacts(q: Queries, memberId: number): Promise<MemberHookFacts | undefined> {
  return q.get<MemberHookFacts>(
    `SELECT m.source_type, m.source_id, m.access_level, m.created_at, m.updated_at, u.id AS user_id, u.username, u.name, u.email
     FROM members m JOIN users u ON u.id = m.user_id WHERE m.id = ?`, [memberId]);
}

/** Whose memberships: a user's, or those of one project or group. */
export type MembershipsOf = { userId: number } | { sourceType: 'Project' | 'Namespace'; sourceId: number };

/** The ids of the memberships `of` names, in order. */
export async function membershipIds(q: Queries, of: MembershipsOf): Promise<number[]> {
  const rows = 'userId' in of
    ? await q.all<{ id: number }>('SELECT id FROM members WHERE user_id = ? ORDER BY id', [of.userId])
    : await q.all<{ id: number }>('SELECT id FROM members WHERE source_type = ? AND source_id = ? ORDER BY id', [of.sourceType, of.sourceId]);
  return rows.map((r) => r.id);
}

// ---- the outbox

/** One outbox row: its target column and id, the event and the JSON body. */
export interface DeliveryRow {
  target: 'hook_id' | 'system_hook_id' | 'service_id';
  id: number;
  event: string;
  body: string;
}

/** Write outbox rows, due at `at` (one INSERT; VALUES, so that PostgreSQL knows the parameters' types). */
export async function insertDeliveryRows(tx: Queries, rows: readonly DeliveryRow[], at: string): Promise<void> {
  await tx.run(
    `INSERT INTO hook_deliveries (hook_id, system_hook_id, service_id, event, payload, next_attempt_at, created_at) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
    rows.flatMap((r) => [
      r.target === 'hook_id' ? r.id : null, r.target === 'system_hook_id' ? r.id : null, r.target === 'service_id' ? r.id : null, r.event, r.body, at, at,
    ]),
  );
}

/** A delivery as a claim returns it. */
export interface ClaimedDeliveryRow {
  id: number; hook_id: number | null; system_hook_id: number | null; service_id: number | null; event: string; payload: string; attempts: number;
}

/**
 * Take up to `limit` pending rows due at `at`, in one statement: each gets one more attempt and moves to `leaseUntil`.
 * On PostgreSQL the due rows are locked with SKIP LOCKED (other daemons claiming at once take other rows) and picked
 * once, in a materialized CTE: a `WHERE id IN (... LIMIT n FOR UPDATE SKIP LOCKED)` subquery may be rescanned by the
 * plan, and each rescan skips the rows it locked before and takes others (seen in CI: 15 rows claimed by a worker asking
 * for 3). On SQLite the one writer makes the statement atomic. Run it in a transaction.
 */
export async function claimDueDeliveries(tx: Queries, at: string, leaseUntil: string, limit: number): Promise<ClaimedDeliveryRow[]> {
  const set = 'UPDATE hook_deliveries SET attempts = attempts + 1, next_attempt_at = ?, locked_at = ?';
  const due = "SELECT id FROM hook_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?";
  const returning = 'RETURNING id, hook_id, system_hook_id, service_id, event, payload, attempts';
  return tx.dialect.name === 'postgres'
    ? tx.all<ClaimedDeliveryRow>(`WITH due AS MATERIALIZED (${due} FOR UPDATE SKIP LOCKED)
        ${set} WHERE id IN (SELECT id FROM due) AND status = 'pending' ${returning}`, [at, limit, leaseUntil, at])
    : tx.all<ClaimedDeliveryRow>(`${set} WHERE id IN (${due}) AND status = 'pending' ${returning}`, [leaseUntil, at, at, limit]);
}

/** Where a delivery goes: the URL (a service's JSON properties), its token and whether TLS is verified. */
export interface DeliveryTargetRow {
  id: number;
  url: string;
  token: string | null;
  enable_ssl_verification: unknown;
}

/** The targets of `ids` in the table `column` points to (a service's `url` is its properties), by id. */
export async function deliveryTargets(q: Queries, column: DeliveryRow['target'], ids: readonly number[]): Promise<Map<number, DeliveryTargetRow>> {
  if (!ids.length) return new Map();
  const select = column === 'hook_id' ? 'SELECT id, url, token, enable_ssl_verification FROM project_hooks'
    : column === 'system_hook_id' ? 'SELECT id, url, token, enable_ssl_verification FROM system_hooks'
      : 'SELECT id, properties AS url, NULL AS token, TRUE AS enable_ssl_verification FROM project_services';
  const d = q.dialect;
  return new Map((await q.all<DeliveryTargetRow>(`${select} WHERE id IN ${d.inIds}`, [d.ids(ids)])).map((h) => [h.id, h]));
}

/** The outcome of an attempt, written only while the row is still that attempt's (pending, `attempts` unchanged). */
export interface DeliveryOutcome {
  id: number;
  attempts: number;
  status: number | null;
  error: string | null;
}

const MINE = 'WHERE id = ? AND status = ? AND attempts = ?';
const mine = (o: DeliveryOutcome) => [o.id, 'pending', o.attempts];

/** Mark a delivery delivered at `at`. */
export async function markDelivered(q: Queries, o: DeliveryOutcome, at: string): Promise<void> {
  await q.run(`UPDATE hook_deliveries SET status = 'delivered', delivered_at = ?, locked_at = NULL, last_status_code = ?, last_error = ? ${MINE}`,
    [at, o.status, o.error, ...mine(o)]);
}

/** Mark a delivery failed (no more attempts). */
export async function markFailed(q: Queries, o: DeliveryOutcome): Promise<void> {
  await q.run(`UPDATE hook_deliveries SET status = 'failed', locked_at = NULL, last_status_code = ?, last_error = ? ${MINE}`, [o.status, o.error, ...mine(o)]);
}

/** Make a delivery due again at `at`. */
export async function markRetry(q: Queries, o: DeliveryOutcome, at: string): Promise<void> {
  await q.run(`UPDATE hook_deliveries SET next_attempt_at = ?, locked_at = NULL, last_status_code = ?, last_error = ? ${MINE}`, [at, o.status, o.error, ...mine(o)]);
}

/** Hand pending deliveries back, due at `at`, their interrupted attempt not counted. */
export async function handBackDeliveries(q: Queries, ids: readonly number[], at: string): Promise<void> {
  const d = q.dialect;
  await q.run(`UPDATE hook_deliveries SET attempts = ${d.greatest('attempts - 1', '0')}, next_attempt_at = ?, locked_at = NULL
     WHERE id IN ${d.inIds} AND status = 'pending'`, [at, d.ids(ids)]);
}

/** When the next pending delivery is due, or null. */
export async function nextDeliveryDue(q: Queries): Promise<string | null> {
  return (await q.get<{ at: string | null }>("SELECT MIN(next_attempt_at) AS at FROM hook_deliveries WHERE status = 'pending'"))?.at ?? null;
}

/** Remove delivered and failed rows created before `before`. */
export async function pruneDeliveries(q: Queries, before: string): Promise<void> {
  await q.run("DELETE FROM hook_deliveries WHERE status <> 'pending' AND created_at < ?", [before]);
}

// ---- project services (Slack): their rows; their messages go through the outbox above

/** A project's service row of a type, or null. */
export async function projectServiceRow(q: Queries, projectId: number, type: string): Promise<ProjectServiceRow | null> {
  const row = await q.get('SELECT * FROM project_services WHERE project_id = ? AND type = ?', [projectId, type]);
  return row ? toProjectService(row) : null;
}

/** Make a project's service row with these properties (JSON) unless it exists. */
export async function insertProjectServiceRow(q: Queries, projectId: number, type: string, properties: string, at: string): Promise<void> {
  await q.run(
    'INSERT INTO project_services (project_id, type, properties, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_id, type) DO NOTHING',
    [projectId, type, properties, at, at]);
}

/** Set a service's properties (JSON), active switch and the given event switches; the row after, or null when gone. */
export async function updateProjectServiceRow(
  q: Queries, id: number, properties: string, active: boolean, flags: readonly [HookFlagColumn, boolean][], at: string,
): Promise<ProjectServiceRow | null> {
  const row = await q.get(
    `UPDATE project_services SET properties = ?, active = ?, updated_at = ?${flags.map(([f]) => `, ${f} = ?`).join('')} WHERE id = ? RETURNING *`,
    [properties, active, at, ...flags.map(([, v]) => v), id]);
  return row ? toProjectService(row) : null;
}

/** Drop a service's deliveries not sent yet. */
export async function deletePendingServiceDeliveries(q: Queries, serviceId: number): Promise<void> {
  await q.run("DELETE FROM hook_deliveries WHERE service_id = ? AND status = 'pending'", [serviceId]);
}

/** How many hook deliveries wait to be sent (the outbox depth). */
export async function countPendingHookDeliveries(q: Queries): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM hook_deliveries WHERE status = 'pending'`))?.n ?? 0);
}
