/**
 * GET /projects/:id/users (8.13 lib/api/projects.rb: `project.team.users`): the owner of a personal project, its
 * members, its group's members and those of the groups it is shared with, once each, by id; `search` on name, email
 * or username; pagination; 401 anonymous, 404 for callers who cannot read the project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeGroupAsync, makeProject } from '../helpers/fixtures.js';

let s: TestServer;
let owner: TestUser;
let dev: TestUser;
let groupie: TestUser;
let sharer: TestUser;
let expired: TestUser;
let outsider: TestUser;
let personal: { id: number };
let grouped: { id: number };

const names = (body: Array<{ username: string }>) => body.map((u) => u.username);

beforeAll(async () => {
  s = await startTestServer();
  owner = await s.user('puowner', { projects_limit: 100 });
  dev = await s.user('pudev');
  groupie = await s.user('pugroupie');
  sharer = await s.user('pusharer');
  expired = await s.user('puexpired');
  outsider = await s.user('puoutsider');
  personal = await makeProject(s, owner, 'team', { visibility: 0 });
  await addMemberAsync(s.ctx, { type: 'Project', id: personal.id }, dev.id, 30);
  await addMemberAsync(s.ctx, { type: 'Project', id: personal.id }, expired.id, 30);
  await s.ctx.data.run(`UPDATE members SET expires_at = '2001-01-01' WHERE source_type = 'Project' AND source_id = ? AND user_id = ?`, [personal.id, expired.id]);
  const shared = await makeGroupAsync(s.ctx, 'pusharers', { visibility: 20 });
  await addMemberAsync(s.ctx, { type: 'Namespace', id: shared }, sharer.id, 30);
  const share = await s.api('POST', `/projects/${personal.id}/share`, owner, { group_id: shared, group_access: 20 });
  expect(share.status).toBe(201);

  const group = await makeGroupAsync(s.ctx, 'puteam', { owner });
  await addMemberAsync(s.ctx, { type: 'Namespace', id: group }, groupie.id, 10);
  grouped = await makeProject(s, owner, 'grouped', { visibility: 20, namespaceId: group });
  await addMemberAsync(s.ctx, { type: 'Project', id: grouped.id }, dev.id, 30);
});
afterAll(async () => {
  await s.close();
});

describe('GET /projects/:id/users', () => {
  it('lists the owner, members and shared groups\' members once each, by id, as UserBasic; not expired members', async () => {
    const r = await s.api('GET', `/projects/${personal.id}/users`, dev);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['puowner', 'pudev', 'pusharer']);
    expect(r.headers['x-total']).toBe('3');
    expect(Object.keys(r.body[0]).sort()).toEqual(['avatar_url', 'id', 'name', 'state', 'username', 'web_url']);
    expect(r.body[0]).toMatchObject({ id: owner.id, username: 'puowner', state: 'active', web_url: expect.stringMatching(/\/puowner$/) });
  });

  it('includes the members of the project\'s group (the owner once, though member twice)', async () => {
    const r = await s.api('GET', `/projects/${grouped.id}/users`, outsider);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['puowner', 'pudev', 'pugroupie']);
  });

  it('searches name, email and username, case-insensitively, with LIKE characters taken literally', async () => {
    const url = `/projects/${personal.id}/users`;
    expect(names((await s.api('GET', `${url}?search=SHAR`, dev)).body)).toEqual(['pusharer']);
    const email = (await s.api('GET', `/users/${dev.id}`, s.root)).body.email as string;
    expect(names((await s.api('GET', `${url}?search=${encodeURIComponent(email)}`, dev)).body)).toEqual(['pudev']);
    expect((await s.api('GET', `${url}?search=%25`, dev)).body).toEqual([]);
    expect((await s.api('GET', `${url}?search=nobody`, dev)).body).toEqual([]);
    expect(names((await s.api('GET', `${url}?search=`, dev)).body)).toHaveLength(3);
  });

  it('paginates', async () => {
    const r = await s.api('GET', `/projects/${personal.id}/users?per_page=2&page=2`, owner);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['pusharer']);
    expect(r.headers['x-total-pages']).toBe('2');
  });

  it('is 401 anonymous, 404 to a caller who cannot read the project or for an unknown one, 200 for admins', async () => {
    expect((await s.api('GET', `/projects/${personal.id}/users`, null)).status).toBe(401);
    const hidden = await s.api('GET', `/projects/${personal.id}/users`, outsider);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ message: '404 Project Not Found' });
    expect((await s.api('GET', '/projects/999999/users', owner)).status).toBe(404);
    expect(names((await s.api('GET', `/projects/${personal.id}/users`, s.root)).body)).toEqual(['puowner', 'pudev', 'pusharer']);
  });
});
