/** Fixture builders: groups, projects and memberships written straight to the database (fast, no API round trips). */
import type { AppContext } from '../../daemon/context.js';
import { now } from '../../daemon/context.js';
import type { TestServer, TestUser } from './app.js';

/** Project member levels by role name. */
export const LEVELS = { guest: 10, reporter: 20, developer: 30, master: 40 } as const;
/** A member role of the matrix. */
export type Role = keyof typeof LEVELS;

/** Create a project through POST /projects as `owner`; returns the response body (a Project). */
export async function makeProject(
  s: TestServer, owner: TestUser, name: string, opts: { visibility?: number; namespaceId?: number; extra?: Record<string, unknown> } = {},
): Promise<{ id: number; path_with_namespace: string } & Record<string, unknown>> {
  const r = await s.api('POST', '/projects', owner, {
    name, visibility_level: opts.visibility ?? 0, ...(opts.namespaceId ? { namespace_id: opts.namespaceId } : {}), ...opts.extra,
  });
  if (r.status !== 201) throw new Error(`project create failed: ${r.status} ${r.text}`);
  return r.body;
}

/** The cast of an authorization matrix: one user per role, plus an outsider, an external user and the admin. */
export interface Cast {
  owner: TestUser;
  guest: TestUser;
  reporter: TestUser;
  developer: TestUser;
  master: TestUser;
  nonMember: TestUser;
  external: TestUser;
  admin: TestUser;
}

/** Create the users of a Cast (names get `prefix`). */
export async function makeCast(s: TestServer, prefix: string): Promise<Cast> {
  const [owner, guest, reporter, developer, master, nonMember, external] = await Promise.all([
    s.user(`${prefix}owner`, { projects_limit: 100 }), s.user(`${prefix}guest`), s.user(`${prefix}reporter`), s.user(`${prefix}developer`),
    s.user(`${prefix}master`), s.user(`${prefix}outsider`), s.user(`${prefix}external`, { external: true }),
  ]);
  return { owner: owner!, guest: guest!, reporter: reporter!, developer: developer!, master: master!, nonMember: nonMember!, external: external!, admin: s.root };
}

/** Add (or replace) a membership row of a project or group (either engine). */
export async function addMemberAsync(ctx: AppContext, source: { type: 'Project' | 'Namespace'; id: number }, userId: number, level: number): Promise<void> {
  const t = now();
  await ctx.data.run(
    `INSERT INTO members (source_type, source_id, user_id, access_level, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (source_type, source_id, user_id) DO UPDATE SET access_level = excluded.access_level`,
    [source.type, source.id, userId, level, t, t],
  );
}

/** Create a group namespace (and make `owner` its owner, level 50, when given); returns its id (either engine). */
export async function makeGroupAsync(
  ctx: AppContext, path: string, opts: { visibility?: number; owner?: TestUser; shareWithGroupLock?: boolean } = {},
): Promise<number> {
  const t = now();
  const row = await ctx.data.get<{ id: number }>(
    `INSERT INTO namespaces (name, path, kind, visibility_level, share_with_group_lock, created_at, updated_at) VALUES (?, ?, 'group', ?, ?, ?, ?) RETURNING id`,
    [path, path, opts.visibility ?? 0, !!opts.shareWithGroupLock, t, t],
  );
  const id = row!.id;
  if (opts.owner) await addMemberAsync(ctx, { type: 'Namespace', id }, opts.owner.id, 50);
  return id;
}

/** Give the cast's role users their levels on a project (either engine). */
export async function addCastMembers(ctx: AppContext, cast: Cast, projectId: number): Promise<void> {
  for (const role of Object.keys(LEVELS) as Role[]) await addMemberAsync(ctx, { type: 'Project', id: projectId }, cast[role].id, LEVELS[role]);
}
