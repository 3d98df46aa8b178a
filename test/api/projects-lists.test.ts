import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { now } from '../../daemon/context.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeGroupAsync, makeProject } from '../helpers/fixtures.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let ext: TestUser;
const ids: Record<string, number> = {};

const paths = (body: { path: string }[]) => body.map((p) => p.path).sort();

beforeAll(async () => {
  s = await startTestServer();
  [alice, bob, ext] = await Promise.all([s.user('alice', { projects_limit: 50 }), s.user('bob', { projects_limit: 50 }), s.user('ext', { external: true })]);
  const mk = async (owner: TestUser, name: string, visibility: number, extra: Record<string, unknown> = {}, namespaceId?: number) => {
    ids[name] = (await makeProject(s, owner, name, { visibility, extra, ...(namespaceId ? { namespaceId } : {}) })).id;
  };
  await mk(alice, 'a-private', 0, { description: 'Contains the Needle here' });
  await mk(alice, 'a-internal', 10);
  await mk(alice, 'a-public', 20);
  await mk(alice, 'a-archived', 0);
  // Archive, share and star are written directly (their routes are not on the data layer yet), as those routes store them.
  await s.ctx.data.run('UPDATE projects SET archived = TRUE WHERE id = ?', [ids['a-archived']]);
  await mk(bob, 'b-private', 0);
  await mk(bob, 'b-internal', 10);
  await mk(bob, 'b-public', 20);
  await mk(bob, 'b-member', 0);
  await mk(bob, 'b-shared', 0);
  const g = await makeGroupAsync(s.ctx, 'bgroup', { owner: bob });
  await mk(bob, 'g-proj', 0, {}, g);
  await addMemberAsync(s.ctx, { type: 'Namespace', id: g }, alice.id, 30);
  await addMemberAsync(s.ctx, { type: 'Project', id: ids['b-member']! }, alice.id, 20);
  const sharedWith = await makeGroupAsync(s.ctx, 'friends', { owner: bob });
  await addMemberAsync(s.ctx, { type: 'Namespace', id: sharedWith }, alice.id, 10);
  const t = now();
  await s.ctx.data.run('INSERT INTO project_group_links (project_id, group_id, group_access, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    [ids['b-shared'], sharedWith, 30, t, t]);
  for (const name of ['b-public', 'a-public']) {
    await s.ctx.data.run('INSERT INTO stars (user_id, project_id, created_at) VALUES (?, ?, ?)', [alice.id, ids[name], t]);
  }
});
afterAll(async () => { await s.close(); });

describe('GET /projects', () => {
  it('lists the projects the caller is authorized on, with permissions', async () => {
    const r = await s.api('GET', '/projects', alice);
    expect(r.status).toBe(200);
    expect(paths(r.body)).toEqual(['a-archived', 'a-internal', 'a-private', 'a-public', 'b-member', 'b-shared', 'g-proj']);
    const member = r.body.find((p: { path: string }) => p.path === 'b-member');
    expect(member.permissions).toEqual({ project_access: { access_level: 20, notification_level: 3 }, group_access: null });
    const grp = r.body.find((p: { path: string }) => p.path === 'g-proj');
    expect(grp.permissions).toEqual({ project_access: null, group_access: { access_level: 30, notification_level: 3 } });
    const shared = r.body.find((p: { path: string }) => p.path === 'b-shared');
    expect(shared.shared_with_groups).toEqual([{ group_id: expect.any(Number), group_name: 'friends', group_access_level: 30 }]);
    expect(r.body.every((p: { runners_token?: string }) => p.runners_token === undefined)).toBe(true);
  });
  it('is newest first by default and honours order_by and sort', async () => {
    const r = await s.api('GET', '/projects', alice);
    const created = r.body.map((p: { id: number }) => p.id);
    expect(created).toEqual([...created].sort((a: number, b: number) => b - a));
    const byName = await s.api('GET', '/projects?order_by=name&sort=asc', alice);
    expect(byName.body.map((p: { name: string }) => p.name)).toEqual(paths(r.body));
    const byPathDesc = await s.api('GET', '/projects?order_by=path', alice);
    expect(byPathDesc.body.map((p: { path: string }) => p.path)).toEqual([...paths(r.body)].reverse());
    const junk = await s.api('GET', '/projects?order_by=drop%20table&sort=sideways', alice);
    expect(junk.status).toBe(200);
    expect(junk.body.map((p: { id: number }) => p.id)).toEqual(created);
    for (const col of ['id', 'updated_at', 'last_activity_at', 'created_at']) {
      expect((await s.api('GET', `/projects?order_by=${col}&sort=asc`, alice)).body[0].path).toBe('a-private');
    }
  });
  it('filters by archived, visibility and search', async () => {
    expect(paths((await s.api('GET', '/projects?archived=true', alice)).body)).toEqual(['a-archived']);
    expect(paths((await s.api('GET', '/projects?archived=false', alice)).body)).not.toContain('a-archived');
    expect((await s.api('GET', '/projects?archived=maybe', alice)).body.length).toBe(7);
    expect(paths((await s.api('GET', '/projects?visibility=internal', alice)).body)).toEqual(['a-internal']);
    expect(paths((await s.api('GET', '/projects?visibility=public', alice)).body)).toEqual(['a-public']);
    expect((await s.api('GET', '/projects?visibility=private', alice)).body.length).toBe(5);
    const bad = await s.api('GET', '/projects?visibility=secret', alice);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: '400 (Bad request) "visibility" does not have a valid value' });
    expect(paths((await s.api('GET', '/projects?search=needle', alice)).body)).toEqual(['a-private']);
    expect(paths((await s.api('GET', '/projects?search=B-', alice)).body)).toEqual(['b-member', 'b-shared']);
    expect((await s.api('GET', '/projects?search=%25', alice)).body).toEqual([]);
  });
  it('answers BasicProjectDetails with simple=true', async () => {
    const r = await s.api('GET', '/projects?simple=true&search=a-public', alice);
    expect(r.body).toEqual([{
      id: ids['a-public'], http_url_to_repo: 'http://gantry.test/alice/a-public.git', web_url: 'http://gantry.test/alice/a-public',
      name: 'a-public', name_with_namespace: 'alice / a-public', path: 'a-public', path_with_namespace: 'alice/a-public',
    }]);
  });
  it('paginates with X-* headers and a Link header', async () => {
    const r = await s.api('GET', '/projects?per_page=3&page=2&order_by=id&sort=asc', alice);
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(3);
    expect(r.headers).toMatchObject({ 'x-total': '7', 'x-total-pages': '3', 'x-per-page': '3', 'x-page': '2', 'x-next-page': '3', 'x-prev-page': '1' });
    const links = Object.fromEntries(String(r.headers.link).split(', ').map((part) => {
      const [, url, rel] = part.match(/^<([^>]+)>; rel="(\w+)"$/)!;
      return [rel, new URL(url!)];
    }));
    expect(Object.keys(links)).toEqual(['prev', 'next', 'first', 'last']);
    expect(links.prev.searchParams.get('page')).toBe('1');
    expect(links.next.searchParams.get('page')).toBe('3');
    expect(links.first.searchParams.get('page')).toBe('1');
    expect(links.last.searchParams.get('page')).toBe('3');
    for (const u of Object.values(links) as URL[]) {
      expect(u.pathname).toBe('/api/v3/projects');
      expect(u.searchParams.get('per_page')).toBe('3');
      expect(u.searchParams.get('order_by')).toBe('id');
      expect(u.searchParams.get('sort')).toBe('asc');
    }
    const last = await s.api('GET', '/projects?per_page=3&page=3', alice);
    expect(last.body.length).toBe(1);
    expect(last.headers['x-next-page']).toBe('');
    expect(String(last.headers.link)).not.toContain('rel="next"');
    const past = await s.api('GET', '/projects?per_page=3&page=9', alice);
    expect(past.body).toEqual([]);
    expect(past.headers['x-total']).toBe('7');
    const empty = await s.api('GET', '/projects', ext);
    expect(empty.body).toEqual([]);
    expect(empty.headers).toMatchObject({ 'x-total': '0', 'x-total-pages': '0', 'x-page': '1' });
    const capped = await s.api('GET', '/projects?per_page=1000', alice);
    expect(capped.headers['x-per-page']).toBe('100');
  });
  it('401 without a token', async () => {
    expect((await s.api('GET', '/projects', null)).status).toBe(401);
  });
});

describe('GET /projects/owned, /starred, /visible, /all, /search/:query', () => {
  it('owned: the projects of the personal namespace only', async () => {
    const r = await s.api('GET', '/projects/owned', alice);
    expect(paths(r.body)).toEqual(['a-archived', 'a-internal', 'a-private', 'a-public']);
    expect(r.body[0].permissions).toBeDefined();
    expect(paths((await s.api('GET', '/projects/owned?visibility=public', alice)).body)).toEqual(['a-public']);
  });
  it('starred: visible starred projects, as Project', async () => {
    const r = await s.api('GET', '/projects/starred', alice);
    expect(paths(r.body)).toEqual(['a-public', 'b-public']);
    expect(r.body[0].permissions).toBeUndefined();
    expect(r.body.every((p: { star_count: number }) => p.star_count === 1)).toBe(true);
  });
  it('visible: everything the caller can see; external users do not see internal projects', async () => {
    const r = await s.api('GET', '/projects/visible', alice);
    expect(paths(r.body)).toEqual(['a-archived', 'a-internal', 'a-private', 'a-public', 'b-internal', 'b-member', 'b-public', 'b-shared', 'g-proj']);
    expect(paths((await s.api('GET', '/projects/visible', ext)).body)).toEqual(['a-public', 'b-public']);
    expect(paths((await s.api('GET', '/projects/visible?visibility=internal', bob)).body)).toEqual(['a-internal', 'b-internal']);
  });
  it('all: administrators only', async () => {
    const r = await s.api('GET', '/projects/all?per_page=100', s.root);
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(10);
    expect(r.headers['x-total']).toBe('10');
    expect(r.body[0].permissions).toBeDefined();
    const denied = await s.api('GET', '/projects/all', alice);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: '403 Forbidden' });
  });
  it('search/:query: visible projects matching the query, honouring order and filters', async () => {
    const r = await s.api('GET', '/projects/search/PUBLIC?order_by=name&sort=asc', ext);
    expect(r.body.map((p: { path: string }) => p.path)).toEqual(['a-public', 'b-public']);
    expect((await s.api('GET', '/projects/search/private', bob)).body.map((p: { path: string }) => p.path)).toEqual(['b-private']);
    expect(paths((await s.api('GET', '/projects/search/b-?visibility=internal', alice)).body)).toEqual(['b-internal']);
    expect((await s.api('GET', '/projects/search/nothing-like-this', alice)).body).toEqual([]);
  });
});
