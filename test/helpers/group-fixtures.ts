/** Fixture builders for groups, projects and members, through the API (so they run on SQLite and PostgreSQL alike). */
import type { ProjectParams } from '../../daemon/services/projects/projects.js';
import type { TestServer, TestUser } from './app.js';

export interface TestGroup {
  id: number;
  path: string;
}

/** A project made by makeProject: its id, name and path. */
export interface TestProject {
  id: number;
  name: string;
  path: string;
}

/** Create a group as `as` (root by default) through POST /groups. */
export async function makeGroup(s: TestServer, path: string, visibility = 0, as: TestUser = s.root): Promise<TestGroup> {
  const r = await s.api('POST', '/groups', as, { name: path, path, visibility_level: visibility });
  if (r.status !== 201) throw new Error(`group create failed: ${r.status} ${r.text}`);
  return { id: r.body.id, path };
}

/**
 * Create a project through POST /projects: in `owner`'s personal namespace (as the owner), or in a group via
 * namespace_id (as root).
 */
export async function makeProject(s: TestServer, owner: TestUser, p: ProjectParams & { name: string }): Promise<TestProject> {
  const as = p.namespace_id !== undefined ? s.root : owner;
  const r = await s.api('POST', '/projects', as, p);
  if (r.status !== 201) throw new Error(`project create failed: ${r.status} ${r.text}`);
  return { id: r.body.id, name: r.body.name, path: r.body.path };
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
