/** Collaboration fixture builders (issues, todos ...) written straight to the database: fast, no API round trips. */
import type { AppContext } from '../../daemon/context.js';
import { now } from '../../daemon/context.js';
import { join, resolve } from 'node:path';

/** Callers of an authorization matrix: anonymous, outsiders, each member level, the owner and the admin. */
export type Actor = 'anonymous' | 'nonMember' | 'external' | 'guest' | 'reporter' | 'developer' | 'master' | 'owner' | 'admin';
export const ACTORS: Actor[] = ['anonymous', 'nonMember', 'external', 'guest', 'reporter', 'developer', 'master', 'owner', 'admin'];
const ACTOR_LEVEL: Record<Actor, number> = { anonymous: 0, nonMember: 0, external: 0, guest: 10, reporter: 20, developer: 30, master: 40, owner: 50, admin: 100 };

/**
 * The status an actor should get on a project of visibility `vis` (0, 10, 20): 401 anonymous, 404 when the project is
 * hidden from them, `ok` with at least level `min` (or as a logged-in non-member of a visible project when
 * `nonMembers`), else 403.
 */
export function expectedStatus(actor: Actor, vis: number, min: number, ok: number, nonMembers = false): number {
  if (actor === 'anonymous') return 401;
  const level = ACTOR_LEVEL[actor];
  const sees = level > 0 || (actor === 'external' ? vis === 20 : vis >= 10);
  if (!sees) return 404;
  if (level >= min) return ok;
  if (level === 0 && nonMembers) return ok;
  return 403;
}

// Fixtures written through the data layer (ctx.data), on SQLite and on PostgreSQL alike.

/** Insert an issue row (next iid of the project) and return its id and iid. */
export async function insertIssue(
  ctx: AppContext, projectId: number,
  opts: { title?: string; description?: string | null; authorId?: number | null; assigneeId?: number | null; confidential?: boolean; state?: 'opened' | 'closed' } = {},
): Promise<{ id: number; iid: number }> {
  const t = now();
  const iid = (await nextIid(ctx, 'issues', 'project_id', projectId));
  const row = await ctx.data.get<{ id: number }>(
    `INSERT INTO issues (project_id, iid, title, description, state, confidential, author_id, assignee_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [projectId, iid, opts.title ?? `Issue ${iid}`, opts.description ?? null, opts.state ?? 'opened', !!opts.confidential, opts.authorId ?? null, opts.assigneeId ?? null, t, t],
  );
  return { id: row!.id, iid };
}

async function nextIid(ctx: AppContext, table: string, column: string, id: number): Promise<number> {
  return Number((await ctx.data.get<{ n: number }>(`SELECT COALESCE(MAX(iid), 0) + 1 AS n FROM ${table} WHERE ${column} = ?`, [id]))!.n);
}

/** Insert a todo row directly (pending unless told) and return its id. */
export async function insertTodo(
  ctx: AppContext,
  t: { userId: number; projectId: number; targetId: number; authorId?: number | null; action?: string; state?: 'pending' | 'done'; targetType?: 'Issue' | 'MergeRequest' },
): Promise<number> {
  const ts = now();
  const row = await ctx.data.get<{ id: number }>(
    `INSERT INTO todos (user_id, project_id, author_id, target_type, target_id, action, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [t.userId, t.projectId, t.authorId ?? null, t.targetType ?? 'Issue', t.targetId, t.action ?? 'assigned', t.state ?? 'pending', ts, ts],
  );
  return row!.id;
}

/** Insert a label row of a project and return its id. */
export async function insertLabel(ctx: AppContext, projectId: number, title: string, opts: { color?: string; description?: string | null } = {}): Promise<number> {
  const t = now();
  const row = await ctx.data.get<{ id: number }>(
    `INSERT INTO labels (project_id, title, color, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
    [projectId, title, opts.color ?? '#428BCA', opts.description ?? null, t, t],
  );
  return row!.id;
}

/** Put a label on an issue or merge request. */
export async function linkLabel(ctx: AppContext, labelId: number, target: { type: 'Issue' | 'MergeRequest'; id: number }): Promise<void> {
  await ctx.data.run(`INSERT INTO label_links (label_id, target_type, target_id, created_at) VALUES (?, ?, ?, ?)`, [labelId, target.type, target.id, now()]);
}

/** Insert a milestone row (next iid of the project) and return its id and iid. */
export async function insertMilestone(
  ctx: AppContext, projectId: number, opts: { title?: string; state?: 'active' | 'closed'; dueDate?: string | null; description?: string } = {},
): Promise<{ id: number; iid: number }> {
  const t = now();
  const iid = await nextIid(ctx, 'milestones', 'project_id', projectId);
  const row = await ctx.data.get<{ id: number }>(
    `INSERT INTO milestones (project_id, iid, title, description, state, due_date, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [projectId, iid, opts.title ?? `Milestone ${iid}`, opts.description ?? '', opts.state ?? 'active', opts.dueDate ?? null, t, t],
  );
  return { id: row!.id, iid };
}

/** Set the milestone of an issue. */
export async function setIssueMilestone(ctx: AppContext, issueId: number, milestoneId: number | null): Promise<void> {
  await ctx.data.run(`UPDATE issues SET milestone_id = ? WHERE id = ?`, [milestoneId, issueId]);
}

/** Insert an open merge request row (branches `feature` -> `master`) of a project and return its id. */
export async function insertMergeRequest(ctx: AppContext, projectId: number, opts: { state?: 'opened' | 'reopened' | 'closed' | 'merged'; authorId?: number | null } = {}): Promise<number> {
  const t = now();
  const iid = await nextIid(ctx, 'merge_requests', 'target_project_id', projectId);
  const row = await ctx.data.get<{ id: number }>(
    `INSERT INTO merge_requests (target_project_id, iid, source_project_id, source_branch, target_branch, title, state, author_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'master', ?, ?, ?, ?, ?) RETURNING id`,
    [projectId, iid, projectId, `feature-${iid}`, `MR ${iid}`, opts.state ?? 'opened', opts.authorId ?? null, t, t],
  );
  return row!.id;
}

/** One value of a query through the data layer (`SELECT count(*) AS n ...` and the like). */
export async function sqlValue<T = number>(ctx: AppContext, sql: string, args: unknown[] = []): Promise<T | undefined> {
  const row = await ctx.data.get<Record<string, unknown>>(sql, args);
  if (!row) return undefined;
  const v = Object.values(row)[0];
  return (typeof v === 'bigint' ? Number(v) : v) as T;
}

/**
 * How many statements `fn` sends to the database, on either engine (SQLite: better-sqlite3 statement runs;
 * PostgreSQL: queries of pg clients, BEGIN and COMMIT included). For "a fixed number of queries" tests.
 */
export async function countStatements(ctx: AppContext, fn: () => Promise<unknown>): Promise<number> {
  const { vi } = await import('vitest');
  const spies: { mockRestore(): void; mock: { calls: unknown[]; contexts: unknown[] } }[] = [];
  if (ctx.data.dialect.name === 'sqlite') {
    // better-sqlite3's Statement prototype (shared by every connection), from a throwaway in-memory one
    const BetterSqlite = (await import('better-sqlite3')).default;
    const probe = new BetterSqlite(':memory:');
    const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
    probe.close();
    for (const m of ['all', 'get', 'run'] as const) spies.push(vi.spyOn(proto as never, m as never) as never);
  } else {
    const pg = ((await import('pg')) as unknown as { default: { Client: { prototype: Record<string, unknown> } } }).default;
    spies.push(vi.spyOn(pg.Client.prototype as never, 'query' as never) as never);
  }
  // Only this daemon's statements: the prototypes are the process's, and the worker may hold other test files' daemons
  // (a statement's connection is its database file; a pg client's, its database, a fresh one per test server).
  const own = ctx.data.dialect.name === 'sqlite'
    ? (c: unknown) => resolve(String((c as { database?: { name?: unknown } } | undefined)?.database?.name ?? '')) === resolve(join(ctx.config.dataDir, 'gantry.db'))
    : (c: unknown) => (c as { database?: unknown } | undefined)?.database === new URL(ctx.config.databaseUrl!).pathname.slice(1);
  try {
    await fn();
    // SQLite's write-version check (PRAGMA data_version, read at most every 100 ms) is a clock's doing, not the request's
    const counted = (c: unknown) => own(c) && !/^\s*PRAGMA/i.test(String((c as { source?: unknown } | undefined)?.source ?? ''));
    return spies.reduce((n, s) => n + s.mock.contexts.filter(counted).length, 0);
  } finally {
    for (const s of spies) s.mockRestore();
  }
}

/**
 * A project's events as GET /projects/:id/events shows them to `viewer` (newest first): through the API on SQLite; on
 * PostgreSQL, where the events room answers 501 until it is ported, the stored rows with the entity's action_name.
 */
export async function projectEventsOf(
  s: { ctx: AppContext; api: (method: string, path: string, user: { token: string } | null) => Promise<{ body: unknown }> },
  projectId: number, viewer: { token: string },
): Promise<{ action_name: string; target_type: string | null; target_id: number | null; target_title: string | null; author_id: number | null }[]> {
  if (s.ctx.data.dialect.name === 'sqlite') return (await s.api('GET', `/projects/${projectId}/events?per_page=100`, viewer)).body as never;
  const { actionName } = await import('../../daemon/api/entities/events.js');
  const rows = await s.ctx.data.all<Record<string, unknown>>(`SELECT * FROM events WHERE project_id = ? ORDER BY id DESC LIMIT 100`, [projectId]);
  return rows.map((e) => ({
    action_name: actionName({ action: e.action as never, targetId: e.target_id as number | null, targetType: e.target_type as string | null }, null),
    target_type: e.target_type as string | null, target_id: e.target_id as number | null, target_title: e.target_title as string | null,
    author_id: e.author_id as number | null,
  }));
}

/**
 * A project hook as POST /projects/:id/hooks makes it (answers `{ status, body: { id } }`): through the API on SQLite;
 * on PostgreSQL, where the hooks room answers 501 until it is ported, the row written directly.
 */
export async function addProjectHook(
  s: { ctx: AppContext; api: (method: string, path: string, user: { token: string } | null, body?: unknown) => Promise<{ status: number; body: any }> }, // eslint-disable-line @typescript-eslint/no-explicit-any
  projectId: number, user: { token: string }, hook: { url: string; push_events?: boolean; issues_events?: boolean; note_events?: boolean },
): Promise<{ status: number; body: { id: number } }> {
  if (s.ctx.data.dialect.name === 'sqlite') return s.api('POST', `/projects/${projectId}/hooks`, user, hook);
  const row = await s.ctx.data.get<{ id: number }>(
    `INSERT INTO project_hooks (project_id, url, push_events, issues_events, note_events, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
    [projectId, hook.url, hook.push_events ?? true, hook.issues_events ?? false, hook.note_events ?? false, now()],
  );
  return { status: 201, body: { id: row!.id } };
}

/** Rows of a query through the data layer (booleans read back as SQLite's 0/1, so one expectation fits both engines). */
export async function sqlRows(ctx: AppContext, sql: string, args: unknown[] = []): Promise<Record<string, any>[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return (await ctx.data.all<Record<string, unknown>>(sql, args)).map((r) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'boolean' ? Number(v) : typeof v === 'bigint' ? Number(v) : v])));
}

/**
 * The live issue counts kept by the triggers (issue_counts, migration 0018 / the PostgreSQL baseline) beside a recount
 * of the live issues: a test file that writes issues ends with `expect(kept).toEqual(recount)`.
 */
export async function issueCountsAndRecount(ctx: AppContext): Promise<{ kept: Record<string, unknown>[]; recount: Record<string, unknown>[] }> {
  const kept = await sqlRows(ctx, `SELECT project_id, author_id, state, confidential, n FROM issue_counts WHERE n <> 0
    ORDER BY project_id, author_id, state, confidential`);
  const recount = await sqlRows(ctx, `SELECT project_id, COALESCE(author_id, 0) AS author_id, state, confidential, COUNT(*) AS n FROM issues
    WHERE deleted_at IS NULL GROUP BY project_id, COALESCE(author_id, 0), state, confidential ORDER BY project_id, author_id, state, confidential`);
  return { kept, recount };
}

/** A merge request row between branches (same project unless `sourceProjectId`), with no diff version; returns its id. */
export async function insertMergeRequestBetween(ctx: AppContext, o: {
  targetProjectId: number; sourceBranch: string; targetBranch?: string; sourceProjectId?: number; title?: string; description?: string | null;
  authorId?: number | null; state?: 'opened' | 'reopened' | 'closed' | 'merged'; forceRemoveSourceBranch?: boolean;
}): Promise<number> {
  const t = now();
  const iid = await nextIid(ctx, 'merge_requests', 'target_project_id', o.targetProjectId);
  const row = await ctx.data.get<{ id: number }>(
    `INSERT INTO merge_requests (target_project_id, iid, source_project_id, source_branch, target_branch, title, description, state, author_id,
       force_remove_source_branch, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [o.targetProjectId, iid, o.sourceProjectId ?? o.targetProjectId, o.sourceBranch, o.targetBranch ?? 'master', o.title ?? `MR ${iid}`,
      o.description ?? null, o.state ?? 'opened', o.authorId ?? null, !!o.forceRemoveSourceBranch, t, t],
  );
  return row!.id;
}
