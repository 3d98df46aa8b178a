/**
 * The access data module: the only SQL that answers "who is calling" and "what may they reach" (REVIEW.md section 4,
 * "policy keeps only rules"): the access levels, a caller's level on a project or group, a project row with its
 * caller's level, and the token -> user lookups of authentication. daemon/policy/ holds the rules that read these.
 *
 * A route resolves the project of `:id` and the caller's level ONCE per request (projectAccessAsync, or
 * peekProjectAccess for a synchronous cache hit) and hands both down; nothing below reads the level again.
 */
import type { AppContext } from '../context.js';
import type { Dialect, Queries } from './layer/types.js';
import type { NamespaceRow, ProjectRow, UserRow } from './schema.js';
import { toProject } from './rows.js';
import { UntilNextWrite } from './read-cache.js';

export const GUEST = 10;
export const REPORTER = 20;
export const DEVELOPER = 30;
export const MASTER = 40;
export const OWNER = 50;

/** A membership is active: no expiry, or an expiry today or later (over a `members` alias `m`), in a dialect. */
export const memberActiveSql = (d: Dialect) => `(m.expires_at IS NULL OR m.expires_at >= ${d.today})`;

/** One statement text per dialect, built on first use. */
function perDialect(build: (d: Dialect) => string): (d: Dialect) => string {
  const texts = new Map<string, string>();
  return (d) => {
    let text = texts.get(d.name);
    if (text === undefined) texts.set(d.name, (text = build(d)));
    return text;
  };
}

/**
 * The union of a user's claims on a project: owner of its personal namespace (50), a direct member, a member of its
 * group, a member of a group it is shared with (capped by the share's group_access). `ns`, `project`: the SQL naming
 * the project's namespace id and id (a parameter `?` or a column); the user id is bound four times, in order.
 */
const levelUnion = (d: Dialect, ns: string, project: string) => {
  const user = '?';
  const active = memberActiveSql(d);
  return `SELECT MAX(t.level) AS level FROM (
         SELECT CASE WHEN n.kind = 'user' AND n.owner_id = ${user} THEN ${OWNER} ELSE 0 END AS level FROM namespaces n WHERE n.id = ${ns}
         UNION ALL SELECT m.access_level FROM members m
           WHERE m.source_type = 'Project' AND m.source_id = ${project} AND m.user_id = ${user} AND ${active}
         UNION ALL SELECT m.access_level FROM members m
           WHERE m.source_type = 'Namespace' AND m.source_id = ${ns} AND m.user_id = ${user} AND ${active}
         UNION ALL SELECT ${d.least('m.access_level', 'l.group_access')} FROM project_group_links l
           JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.group_id AND m.user_id = ${user}
           WHERE l.project_id = ${project} AND (l.expires_at IS NULL OR l.expires_at >= ${d.today})
       ) t`;
};

/** projectAccessLevelAsync's statement: parameters user, ns, project, user, ns, user, user, project. */
const accessLevelText = perDialect((d) => levelUnion(d, '?', '?'));

/**
 * The caller's effective access level on a project: max(direct membership, group membership through the
 * namespace, group share capped by its group_access); 50 for the personal namespace owner. 0 when none. One statement
 * through the data layer (`q`: ctx.data or a transaction).
 */
export async function projectAccessLevelAsync(ctx: Pick<AppContext, 'data'>, user: UserRow | null, project: ProjectRow, q: Queries = ctx.data): Promise<number> {
  if (!user) return 0;
  const row = await q.get<{ level: number | null }>(accessLevelText(q.dialect), [
    user.id, project.namespaceId, project.id, user.id, project.namespaceId, user.id, user.id, project.id,
  ]);
  return row?.level ?? 0;
}

/** The caller's level as a correlated column of a `projects p` SELECT (parameters: the user id four times). */
const levelColumn = perDialect((d) => `(${levelUnion(d, 'p.namespace_id', 'p.id')})`);

/** A project row and, when asked for (a user id was given), that user's access level on it. */
export interface ProjectWithLevel {
  row: ProjectRow | null;
  level?: number;
}

/** An id as PostgreSQL's integer columns take it. */
const MAX_ID = 2147483647;

/**
 * The project `text` names (a numeric id, or `namespace/path`, case-insensitive with the exact case preferred) and,
 * with `userId`, that user's access level on it in the same statement (one round trip on either engine).
 */
export async function readProject(q: Queries, text: string, userId?: number): Promise<ProjectWithLevel> {
  const slash = text.indexOf('/');
  const d = q.dialect;
  const level = userId === undefined ? '' : `, ${levelColumn(d)} AS caller_level`;
  const levelArgs = userId === undefined ? [] : [userId, userId, userId, userId];
  const found = (raw: Record<string, unknown>): ProjectWithLevel =>
    ({ row: toProject(raw), ...(userId === undefined ? {} : { level: Number(raw.caller_level ?? 0) }) });
  if (slash > 0) {
    const nsPath = text.slice(0, slash);
    const path = text.slice(slash + 1);
    const candidates = await q.all<Record<string, unknown>>(
      `SELECT p.*, n.path AS ns_path${level} FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE ${d.nocaseEq('n.path')} AND ${d.nocaseEq('p.path')}`,
      [...levelArgs, nsPath, path],
    );
    const exact = candidates.find((c) => c.ns_path === nsPath && c.path === path) ?? candidates[0];
    if (exact) return found(exact);
  }
  if (!/^\d+$/.test(text)) return { row: null };
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id > MAX_ID) return { row: null };
  const row = await q.get<Record<string, unknown>>(`SELECT p.*${level} FROM projects p WHERE p.id = ?`, [...levelArgs, id]);
  return row ? found(row) : { row: null };
}

/** Whether a caller's level is worth reading: only an active non-admin's abilities depend on it. */
const needsLevel = (user: UserRow | null): user is UserRow => !!user && user.state === 'active' && !user.isAdmin;

/** (caller id, `:id` text) -> the project row and the caller's level, exact until the next write (db/read-cache.ts). */
const projectAccess = new UntilNextWrite<ProjectWithLevel>(1000, { postgres: true });
const accessKey = (user: UserRow | null, text: string) => `${needsLevel(user) ? user.id : '-'}\u0000${text}`;

/**
 * The project `idOrPath` names and the caller's level on it (undefined when no rule needs it: admins, blocked or
 * anonymous callers), through the cache: on SQLite kept until the next write; on PostgreSQL kept under `version`
 * when the caller read one for this request (readVersionOnce), else read every time (one statement).
 */
export async function projectAccessAsync(ctx: Pick<AppContext, 'data'>, user: UserRow | null, idOrPath: string | number, version?: string): Promise<ProjectWithLevel> {
  const text = String(idOrPath);
  const read = () => readProject(ctx.data, text, needsLevel(user) ? user.id : undefined);
  if (!ctx.data.sqlite && version === undefined) return read();
  return projectAccess.getAsync(ctx, accessKey(user, text), read, false, version);
}

/** projectAccessAsync's answer when it is kept and current on SQLite, synchronously (undefined otherwise). */
export function peekProjectAccess(ctx: Pick<AppContext, 'data'>, user: UserRow | null, idOrPath: string | number): ProjectWithLevel | undefined {
  return projectAccess.peek(ctx, accessKey(user, String(idOrPath)));
}

/** The caller's access level in a group (0 when not a member), through the data layer. One statement. */
const groupLevelText = perDialect((d) =>
  `SELECT m.access_level AS level FROM members m WHERE m.source_type = 'Namespace' AND m.source_id = ? AND m.user_id = ? AND ${memberActiveSql(d)}`);
export async function groupAccessLevelAsync(ctx: Pick<AppContext, 'data'>, user: UserRow | null, group: NamespaceRow, q: Queries = ctx.data): Promise<number> {
  if (!user) return 0;
  const row = await q.get<{ level: number }>(groupLevelText(q.dialect), [group.id, user.id]);
  return row?.level ?? 0;
}

const USER_BY_PRIVATE_TOKEN = 'SELECT * FROM users WHERE private_token_hash = ?';
const USER_BY_PERSONAL_TOKEN = `SELECT u.* FROM personal_access_tokens t JOIN users u ON u.id = t.user_id
  WHERE t.token_hash = ? AND t.revoked = FALSE AND (t.expires_at IS NULL OR t.expires_at > ?)`;

/**
 * The raw `users` row whose private token, else whose personal access token (not revoked, not expired on `today`),
 * hashes to `hash`: one statement for a private token, two for a personal access token.
 */
export async function userRowForTokenHash(q: Queries, hash: string, today: string): Promise<Record<string, unknown> | undefined> {
  return (await q.get(USER_BY_PRIVATE_TOKEN, [hash])) ?? (await q.get(USER_BY_PERSONAL_TOKEN, [hash, today]));
}

/** The `users` row of a sudo target: by id (a number that fits a row id) or username (case-insensitive); lowest id first. */
export async function sudoUserRow(q: Queries, sudo: string): Promise<Record<string, unknown> | undefined> {
  const d = q.dialect;
  const id = /^\d+$/.test(sudo) ? Number(sudo) : NaN;
  return id <= MAX_ID
    ? q.get(`SELECT * FROM users WHERE id = ? OR ${d.nocaseEq('username')} ORDER BY id LIMIT 1`, [id, sudo])
    : q.get(`SELECT * FROM users WHERE ${d.nocaseEq('username')}`, [sudo]);
}
