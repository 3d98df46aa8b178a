/** Fixture builders for groups, projects and members (groups through POST /groups, projects through createProject). */
import { eq } from 'drizzle-orm';
import { users, type ProjectRow } from '../../daemon/db/schema.js';
import { createProject, type ProjectParams } from '../../daemon/services/projects.js';
import type { TestServer, TestUser } from './app.js';

export interface TestGroup {
  id: number;
  path: string;
}

/** Create a group as `as` (root by default) through POST /groups. */
export async function makeGroup(s: TestServer, path: string, visibility = 0, as: TestUser = s.root): Promise<TestGroup> {
  const r = await s.api('POST', '/groups', as, { name: path, path, visibility_level: visibility });
  if (r.status !== 201) throw new Error(`group create failed: ${r.status} ${r.text}`);
  return { id: r.body.id, path };
}

/** Create a project directly through the service: in `owner`'s personal namespace, or in a group via namespace_id (as root). */
export function makeProject(s: TestServer, owner: TestUser, p: ProjectParams & { name: string }): ProjectRow {
  const row = (u: TestUser) => s.ctx.db.select().from(users).where(eq(users.id, u.id)).get()!;
  const actor = p.namespace_id !== undefined ? row(s.root) : row(owner);
  return createProject(s.ctx, actor, row(owner), p);
}

/** Add a member through the API as root (`kind` is 'projects' or 'groups'). */
export async function addMember(s: TestServer, kind: 'projects' | 'groups', id: number, user: TestUser, level: number): Promise<void> {
  const r = await s.api('POST', `/${kind}/${id}/members`, s.root, { user_id: user.id, access_level: level });
  if (r.status !== 201) throw new Error(`member add failed: ${r.status} ${r.text}`);
}

/** Check the pagination headers of a list response. */
export function pageHeaders(headers: Record<string, unknown>) {
  return {
    total: headers['x-total'], totalPages: headers['x-total-pages'], perPage: headers['x-per-page'], page: headers['x-page'],
    next: headers['x-next-page'], prev: headers['x-prev-page'], link: headers.link,
  };
}
