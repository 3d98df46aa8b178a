import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMember, makeGroup, makeProject, pageHeaders, type TestGroup } from '../helpers/group-fixtures.js';
import { registerStorage } from '../../daemon/services/repository/storage.js';
import { lookupProjectAsync } from '../../daemon/services/projects/projects.js';
import { canProjectAsync, projectAccessLevelAsync } from '../../daemon/policy/permissions.js';
import { toUser } from '../../daemon/db/rows.js';
import { createGroup } from '../../daemon/services/users/groups.js';
import { findUser } from '../../daemon/services/users/users.js';
import type { UserRow } from '../../daemon/db/schema.js';

let s: TestServer;
let alice: TestUser; // can create groups
let bob: TestUser; // can_create_group false
let carol: TestUser;
let ext: TestUser; // external
const moves: { id: number; from: string; to: string }[] = [];
const removed: number[] = [];
/** Projects whose storage move fails (a transfer must then put the row back). */
const failMoves = new Set<number>();

beforeAll(async () => {
  s = await startTestServer();
  registerStorage({
    moved: async (_ctx, project, from, to) => {
      if (failMoves.has(project.id)) throw new Error('storage move failed');
      moves.push({ id: project.id, from, to });
    },
    removed: async (_ctx, id) => { removed.push(id); },
  });
  alice = await s.user('alice');
  bob = await s.user('bob', { can_create_group: false });
  carol = await s.user('carol');
  ext = await s.user('extuser', { external: true });
});
afterAll(async () => { await s.close(); });

const userRow = async (u: TestUser): Promise<UserRow> => toUser((await s.ctx.data.get<Record<string, unknown>>('SELECT * FROM users WHERE id = ?', [u.id]))!);
const lookupProject = async (idOrPath: string | number) => (await lookupProjectAsync(s.ctx, idOrPath))!;

describe('POST /groups', () => {
  it('creates a group (201 Group) and makes the creator its owner', async () => {
    const r = await s.api('POST', '/groups', alice, { name: 'Alpha Team', path: 'alpha', description: 'the A team', visibility_level: 10 });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number), name: 'Alpha Team', path: 'alpha', description: 'the A team', visibility_level: 10, lfs_enabled: true,
      avatar_url: null, web_url: 'http://gantry.test/groups/alpha', request_access_enabled: true,
    });
    const m = await s.api('GET', `/groups/${r.body.id}/members/${alice.id}`, alice);
    expect(m.status).toBe(200);
    expect(m.body.access_level).toBe(50);
  });

  it('accepts form bodies and defaults visibility to the default_group_visibility setting', async () => {
    const r = await s.api('POST', '/groups', alice, 'name=formgroup&path=formgroup', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(201);
    expect(r.body.visibility_level).toBe(0);
    expect(r.body.description).toBe('');
  });

  it('400 when name or path is missing', async () => {
    expect((await s.api('POST', '/groups', alice, { path: 'nameless' })).body).toEqual({ message: '400 (Bad request) "name" not given' });
    const r = await s.api('POST', '/groups', alice, { name: 'pathless' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: '400 (Bad request) "path" not given' });
  });

  it('400 validation hash when the path is taken by a group or a user, or invalid', async () => {
    const taken = await s.api('POST', '/groups', carol, { name: 'other', path: 'ALPHA' });
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ message: { path: ['has already been taken'] } });
    const user = await s.api('POST', '/groups', carol, { name: 'bobs', path: 'bob' });
    expect(user.status).toBe(400);
    expect(user.body.message.path).toEqual(['has already been taken']);
    const bad = await s.api('POST', '/groups', carol, { name: 'bad', path: '-bad/path' });
    expect(bad.status).toBe(400);
    expect(bad.body.message.path[0]).toMatch(/can contain only/);
    const reserved = await s.api('POST', '/groups', carol, { name: 'reserved', path: 'admin' });
    expect(reserved.body).toEqual({ message: { path: ['admin is a reserved name'] } });
    const name = await s.api('POST', '/groups', carol, { name: 'Alpha Team', path: 'alpha2' });
    expect(name.body).toEqual({ message: { name: ['has already been taken'] } });
  });

  it('400 for an unknown or restricted visibility level (admins bypass the restriction)', async () => {
    const bad = await s.api('POST', '/groups', alice, { name: 'v5', path: 'v5', visibility_level: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: { visibility_level: ['is not included in the list'] } });
    const junk = await s.api('POST', '/groups', alice, { name: 'vx', path: 'vx', visibility_level: 'x' });
    expect(junk.status).toBe(400);
    await s.api('PUT', '/application/settings', s.root, { restricted_visibility_levels: [20] });
    try {
      const r = await s.api('POST', '/groups', alice, { name: 'pub', path: 'pub', visibility_level: 20 });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: { visibility_level: ['Public has been restricted by your GitLab administrator'] } });
      const admin = await s.api('POST', '/groups', s.root, { name: 'adminpub', path: 'adminpub', visibility_level: 20 });
      expect(admin.status).toBe(201);
    } finally {
      await s.api('PUT', '/application/settings', s.root, { restricted_visibility_levels: '' });
    }
  });

  it('two creates of one path at once: one 201, the other the validation answer (never a 500)', async () => {
    const both = await Promise.all([1, 2].map((i) => s.api('POST', '/groups', alice, { name: `twin ${i}`, path: 'twins' })));
    expect(both.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(both.find((r) => r.status === 400)!.body).toEqual({ message: { path: ['has already been taken'] } });
  });

  it('401 anonymous, 403 without can_create_group (before the required-attribute check)', async () => {
    expect((await s.api('POST', '/groups', null, { name: 'anon', path: 'anon' })).status).toBe(401);
    const r = await s.api('POST', '/groups', bob, { name: 'bobgroup', path: 'bobgroup' });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ message: '403 Forbidden' });
    expect((await s.api('POST', '/groups', bob, {})).status).toBe(403);
  });
});

describe('GET /groups and /groups/:id', () => {
  let priv: TestGroup;
  let internal: TestGroup;
  let pub: TestGroup;
  beforeAll(async () => {
    priv = await makeGroup(s, 'list-private', 0);
    internal = await makeGroup(s, 'list-internal', 10);
    pub = await makeGroup(s, 'list-public', 20);
    await addMember(s, 'groups', priv.id, carol, 10);
  });

  it('non-admins list only the groups they are a member of; admins all', async () => {
    const r = await s.api('GET', '/groups', carol);
    expect(r.status).toBe(200);
    expect(r.body.map((g: { path: string }) => g.path)).toEqual(['list-private']);
    expect(r.body[0]).toEqual({
      id: priv.id, name: 'list-private', path: 'list-private', description: '', visibility_level: 0, lfs_enabled: true, avatar_url: null,
      web_url: 'http://gantry.test/groups/list-private', request_access_enabled: true,
    });
    const admin = await s.api('GET', '/groups?per_page=100', s.root);
    const paths = admin.body.map((g: { path: string }) => g.path);
    expect(paths).toEqual(expect.arrayContaining(['alpha', 'list-private', 'list-internal', 'list-public']));
    expect((await s.api('GET', '/groups', null)).status).toBe(401);
  });

  it('all_available lists every group the caller can read', async () => {
    const r = await s.api('GET', '/groups?all_available=true&per_page=100', bob);
    const paths = r.body.map((g: { path: string }) => g.path);
    expect(paths).toContain('list-internal');
    expect(paths).toContain('list-public');
    expect(paths).not.toContain('list-private');
    const c = await s.api('GET', '/groups?all_available=1&per_page=100', carol);
    expect(c.body.map((g: { path: string }) => g.path)).toContain('list-private');
    const e = await s.api('GET', '/groups?all_available=true&per_page=100', ext);
    const extPaths = e.body.map((g: { path: string }) => g.path);
    expect(extPaths).toContain('list-public');
    expect(extPaths).not.toContain('list-internal');
  });

  it('search matches name or path; pagination headers are set', async () => {
    const r = await s.api('GET', '/groups?search=list-&per_page=2', s.root);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(2);
    const h = pageHeaders(r.headers);
    expect(h).toMatchObject({ total: '3', totalPages: '2', perPage: '2', page: '1', next: '2', prev: '' });
    expect(h.link).toContain('rel="next"');
    expect(h.link).toContain('rel="last"');
    const p2 = await s.api('GET', '/groups?search=list-&per_page=2&page=2', s.root);
    expect(p2.body).toHaveLength(1);
    expect(p2.headers['x-prev-page']).toBe('1');
    const byName = await s.api('GET', '/groups?search=Alpha%20Te', s.root);
    expect(byName.body.map((g: { path: string }) => g.path)).toEqual(['alpha']);
    const none = await s.api('GET', '/groups?search=nothing-matches', s.root);
    expect(none.body).toEqual([]);
    expect(none.headers['x-total']).toBe('0');
  });

  it('GET /groups/:id by id or path; 404 when hidden or absent', async () => {
    const byId = await s.api('GET', `/groups/${pub.id}`, bob);
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ id: pub.id, path: 'list-public', projects: [], shared_projects: [] });
    const byPath = await s.api('GET', '/groups/list-internal', bob);
    expect(byPath.body.id).toBe(internal.id);
    expect((await s.api('GET', '/groups/LIST-INTERNAL', bob)).body.id).toBe(internal.id);
    for (const id of [String(priv.id), 'list-private', '999999', 'no-such-group']) {
      const r = await s.api('GET', `/groups/${id}`, bob);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Group Not Found' });
    }
    expect((await s.api('GET', `/groups/${internal.id}`, ext)).status).toBe(404);
    expect((await s.api('GET', `/groups/${priv.id}`, carol)).status).toBe(200);
    expect((await s.api('GET', `/groups/${priv.id}`, s.root)).status).toBe(200);
    expect((await s.api('GET', `/groups/${priv.id}`, null)).status).toBe(401);
  });
});

describe('GET /groups/:id with a numeric path', () => {
  it('a path that looks like an id wins over the id (path first, then id)', async () => {
    const a = await makeGroup(s, 'numeric-target', 20);
    const b = await makeGroup(s, String(a.id), 20);
    expect((await s.api('GET', `/groups/${a.id}`, s.root)).body.id).toBe(b.id);
    expect((await s.api('GET', `/groups/${b.id}`, s.root)).body.id).toBe(b.id); // by id: no group has that path
    expect((await s.api('GET', '/groups/numeric-target', s.root)).body.id).toBe(a.id);
    expect((await s.api('GET', '/groups/99999999999', s.root)).status).toBe(404);
    await s.api('DELETE', `/groups/${b.id}`, s.root);
    await s.api('DELETE', `/groups/${a.id}`, s.root);
  });
});

describe('group projects', () => {
  let g: TestGroup;
  let dev: TestUser;
  let outsider: TestUser;
  let privProj: number;
  let pubProj: number;
  beforeAll(async () => {
    dev = await s.user('gp-dev');
    outsider = await s.user('gp-outsider');
    g = await makeGroup(s, 'gp', 20);
    await addMember(s, 'groups', g.id, dev, 30);
    privProj = (await makeProject(s, s.root, { name: 'zeta', namespace_id: g.id, visibility_level: 0, builds_enabled: false })).id;
    await makeProject(s, s.root, { name: 'beta', namespace_id: g.id, visibility_level: 10, description: 'findme' });
    pubProj = (await makeProject(s, s.root, { name: 'alpha', namespace_id: g.id, visibility_level: 20 })).id;
  });

  it('GroupDetail lists the projects the caller can see', async () => {
    const member = await s.api('GET', `/groups/${g.id}`, dev);
    expect(member.body.projects.map((p: { name: string }) => p.name)).toEqual(['zeta', 'beta', 'alpha']);
    const p = member.body.projects[0];
    expect(p).toMatchObject({ id: privProj, path_with_namespace: 'gp/zeta', visibility_level: 0, namespace: { id: g.id, path: 'gp', kind: 'group' } });
    expect(p.owner).toBeUndefined();
    const other = await s.api('GET', `/groups/${g.id}`, outsider);
    expect(other.body.projects.map((x: { name: string }) => x.name)).toEqual(['beta', 'alpha']);
    const e = await s.api('GET', `/groups/${g.id}`, ext);
    expect(e.body.projects.map((x: { name: string }) => x.name)).toEqual(['alpha']);
  });

  it('GET /groups/:id/projects filters, orders and paginates', async () => {
    const all = await s.api('GET', `/groups/${g.id}/projects`, dev);
    expect(all.status).toBe(200);
    expect(all.body.map((p: { name: string }) => p.name)).toEqual(['alpha', 'beta', 'zeta']); // created_at desc
    expect(all.headers['x-total']).toBe('3');
    const asc = await s.api('GET', `/groups/${g.id}/projects?order_by=name&sort=asc`, dev);
    expect(asc.body.map((p: { name: string }) => p.name)).toEqual(['alpha', 'beta', 'zeta']);
    const desc = await s.api('GET', `/groups/${g.id}/projects?order_by=name`, dev);
    expect(desc.body.map((p: { name: string }) => p.name)).toEqual(['zeta', 'beta', 'alpha']);
    const vis = await s.api('GET', `/groups/${g.id}/projects?visibility=private`, dev);
    expect(vis.body.map((p: { name: string }) => p.name)).toEqual(['zeta']);
    const search = await s.api('GET', `/groups/${g.id}/projects?search=findme`, dev);
    expect(search.body.map((p: { name: string }) => p.name)).toEqual(['beta']);
    const byId = await s.api('GET', `/groups/${g.id}/projects?order_by=id&sort=asc`, dev);
    expect(byId.body.map((p: { name: string }) => p.name)).toEqual(['zeta', 'beta', 'alpha']);
    const ci = await s.api('GET', `/groups/${g.id}/projects?ci_enabled_first=true&order_by=id&sort=asc`, dev);
    expect(ci.body.map((p: { name: string }) => p.name)).toEqual(['beta', 'alpha', 'zeta']);
    const page = await s.api('GET', `/groups/${g.id}/projects?per_page=1&page=2&order_by=id&sort=asc`, dev);
    expect(page.body.map((p: { name: string }) => p.name)).toEqual(['beta']);
    expect(pageHeaders(page.headers)).toMatchObject({ total: '3', totalPages: '3', page: '2', next: '3', prev: '1' });
    const outsiderList = await s.api('GET', `/groups/${g.id}/projects`, outsider);
    expect(outsiderList.body.map((p: { name: string }) => p.name)).toEqual(['alpha', 'beta']);
  });

  it('archived filter and invalid visibility', async () => {
    // archiving is not a route of this file's resources: set the flag directly
    await s.ctx.data.run('UPDATE projects SET archived = ? WHERE id = ?', [true, pubProj]);
    try {
      const archived = await s.api('GET', `/groups/${g.id}/projects?archived=true`, dev);
      expect(archived.body.map((p: { name: string }) => p.name)).toEqual(['alpha']);
      const active = await s.api('GET', `/groups/${g.id}/projects?archived=false`, dev);
      expect(active.body.map((p: { name: string }) => p.name)).toEqual(['beta', 'zeta']);
    } finally {
      await s.ctx.data.run('UPDATE projects SET archived = ? WHERE id = ?', [false, pubProj]);
    }
    const bad = await s.api('GET', `/groups/${g.id}/projects?visibility=secret`, dev);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: '400 (Bad request) "visibility" does not have a valid value' });
    // names of Object.prototype members are no visibility either (were 500; found by the fuzzer)
    for (const name of ['toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      const proto = await s.api('GET', `/groups/${g.id}/projects?visibility=${name}`, dev);
      expect([name, proto.status, proto.body]).toEqual([name, 400, { message: '400 (Bad request) "visibility" does not have a valid value' }]);
    }
    expect((await s.api('GET', '/groups/nope/projects', dev)).status).toBe(404);
  });

  it('group members inherit access to the group projects', async () => {
    const project = await lookupProject(privProj);
    const devRow = await userRow(dev);
    expect(await projectAccessLevelAsync(s.ctx, devRow, project)).toBe(30);
    expect(await canProjectAsync(s.ctx, devRow, 'read_project', project)).toBe(true);
    expect(await canProjectAsync(s.ctx, devRow, 'push_code', project)).toBe(true);
    expect(await canProjectAsync(s.ctx, devRow, 'admin_project', project)).toBe(false);
    expect(await canProjectAsync(s.ctx, await userRow(outsider), 'read_project', project)).toBe(false);
  });

  it('a group developer sees a private group project and is 403 on master-only actions', async () => {
    const read = await s.api('GET', `/projects/${privProj}/members`, dev);
    expect(read.status).toBe(200);
    const write = await s.api('POST', `/projects/${privProj}/members`, dev, { user_id: outsider.id, access_level: 10 });
    expect(write.status).toBe(403);
    expect((await s.api('GET', `/projects/${privProj}/members`, outsider)).status).toBe(404);
    expect((await s.api('GET', `/projects/${encodeURIComponent('gp/zeta')}/members`, dev)).status).toBe(200);
  });

  it('projects shared with a group: members get min(their level, group_access) and see them in shared_projects', async () => {
    const share = await makeGroup(s, 'sharers', 0);
    const master = await s.user('share-master');
    await addMember(s, 'groups', share.id, master, 40);
    const target = await makeProject(s, carol, { name: 'shared-thing', visibility_level: 0 });
    const before = await s.api('GET', `/groups/${share.id}`, master);
    expect(before.body.shared_projects).toEqual([]);
    expect((await s.api('GET', `/projects/${target.id}/members`, master)).status).toBe(404);
    // sharing a project with a group is not a route of the slice: the link row directly
    const t = new Date().toISOString();
    await s.ctx.data.run(
      `INSERT INTO project_group_links (project_id, group_id, group_access, created_at, updated_at) VALUES (?, ?, 20, ?, ?)`,
      [target.id, share.id, t, t],
    );
    const masterRow = await userRow(master);
    const targetRow = await lookupProject(target.id);
    expect(await projectAccessLevelAsync(s.ctx, masterRow, targetRow)).toBe(20);
    expect(await canProjectAsync(s.ctx, masterRow, 'download_code', targetRow)).toBe(true);
    expect(await canProjectAsync(s.ctx, masterRow, 'push_code', targetRow)).toBe(false);
    const after = await s.api('GET', `/groups/${share.id}`, master);
    expect(after.body.shared_projects.map((p: { id: number }) => p.id)).toEqual([target.id]);
    expect(after.body.shared_projects[0].shared_with_groups).toEqual([{ group_id: share.id, group_name: 'sharers', group_access_level: 20 }]);
    expect((await s.api('GET', `/projects/${target.id}/members`, master)).status).toBe(200);
    const write = await s.api('POST', `/projects/${target.id}/members`, master, { user_id: outsider.id, access_level: 10 });
    expect(write.status).toBe(403);
    // a reader who is not in the sharing group still does not see it
    expect((await s.api('GET', `/groups/${share.id}`, s.root)).body.shared_projects).toHaveLength(1);
  });
});

describe('PUT /groups/:id', () => {
  let g: TestGroup;
  let users5: Record<'guest' | 'reporter' | 'developer' | 'master' | 'owner' | 'nonmember', TestUser>;
  beforeAll(async () => {
    g = await makeGroup(s, 'editme', 10);
    users5 = {
      guest: await s.user('ed-guest'), reporter: await s.user('ed-reporter'), developer: await s.user('ed-developer'),
      master: await s.user('ed-master'), owner: await s.user('ed-owner'), nonmember: await s.user('ed-nonmember'),
    };
    for (const [role, level] of [['guest', 10], ['reporter', 20], ['developer', 30], ['master', 40], ['owner', 50]] as const) {
      await addMember(s, 'groups', g.id, users5[role], level);
    }
  });

  it('owners and admins update (200 GroupDetail); other members and non-members 403; anonymous 401', async () => {
    for (const role of ['guest', 'reporter', 'developer', 'master', 'nonmember'] as const) {
      const r = await s.api('PUT', `/groups/${g.id}`, users5[role], { description: 'nope' });
      expect(r.status, role).toBe(403);
    }
    expect((await s.api('PUT', `/groups/${g.id}`, null, { description: 'x' })).status).toBe(401);
    const r = await s.api('PUT', `/groups/${g.id}`, users5.owner, { description: 'by owner', name: 'Edit Me' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: g.id, name: 'Edit Me', path: 'editme', description: 'by owner', visibility_level: 10, projects: [], shared_projects: [] });
    const admin = await s.api('PUT', '/groups/editme', s.root, { lfs_enabled: false, request_access_enabled: true });
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ lfs_enabled: false, request_access_enabled: true });
  });

  it('404 for a private group the caller cannot see', async () => {
    const hidden = await makeGroup(s, 'hidden-edit', 0);
    const r = await s.api('PUT', `/groups/${hidden.id}`, users5.nonmember, { description: 'x' });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 Group Not Found' });
  });

  it('validates: path taken, invalid visibility, visibility below its projects', async () => {
    const taken = await s.api('PUT', `/groups/${g.id}`, users5.owner, { path: 'alpha' });
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ message: { path: ['has already been taken'] } });
    const blank = await s.api('PUT', `/groups/${g.id}`, users5.owner, { name: '' });
    expect(blank.body).toEqual({ message: { name: ["can't be blank"] } });
    await makeProject(s, s.root, { name: 'internal-one', namespace_id: g.id, visibility_level: 10 });
    const lower = await s.api('PUT', `/groups/${g.id}`, users5.owner, { visibility_level: 0 });
    expect(lower.status).toBe(400);
    expect(lower.body).toEqual({ message: { visibility_level: ['private is not allowed since there are projects with higher visibility.'] } });
    const same = await s.api('PUT', `/groups/${g.id}`, users5.owner, { path: 'EditMe' });
    expect(same.status).toBe(200);
    expect(same.body.path).toBe('EditMe');
  });

  it('renaming the path moves the storage of every project after the rename', async () => {
    const rg = await makeGroup(s, 'renamer', 0);
    const p1 = await makeProject(s, s.root, { name: 'one', namespace_id: rg.id });
    const p2 = await makeProject(s, s.root, { name: 'two', namespace_id: rg.id });
    moves.length = 0;
    const r = await s.api('PUT', `/groups/${rg.id}`, s.root, { path: 'renamed' });
    expect(r.status).toBe(200);
    expect(r.body.web_url).toBe('http://gantry.test/groups/renamed');
    expect(r.body.projects.map((p: { path_with_namespace: string }) => p.path_with_namespace)).toEqual(['renamed/one', 'renamed/two']);
    expect(moves).toEqual([
      { id: p1.id, from: 'renamer/one', to: 'renamed/one' },
      { id: p2.id, from: 'renamer/two', to: 'renamed/two' },
    ]);
    moves.length = 0;
    await s.api('PUT', `/groups/${rg.id}`, s.root, { description: 'no move' });
    expect(moves).toEqual([]);
  });
});

describe('DELETE /groups/:id', () => {
  it('owner deletes the group with its members and projects; returns the Group', async () => {
    const owner = await s.user('del-owner');
    const master = await s.user('del-master');
    const g = await makeGroup(s, 'doomed', 0, owner);
    await addMember(s, 'groups', g.id, master, 40);
    const p = await makeProject(s, s.root, { name: 'gone', namespace_id: g.id });
    expect((await s.api('DELETE', `/groups/${g.id}`, master)).status).toBe(403);
    expect((await s.api('DELETE', `/groups/${g.id}`, bob)).status).toBe(404);
    expect((await s.api('DELETE', `/groups/${g.id}`, null)).status).toBe(401);
    removed.length = 0;
    const r = await s.api('DELETE', `/groups/${g.id}`, owner);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: g.id, path: 'doomed', web_url: 'http://gantry.test/groups/doomed' });
    expect(await lookupProjectAsync(s.ctx, p.id)).toBeNull();
    expect(removed).toEqual([p.id]);
    const left = await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM members WHERE source_type = 'Namespace' AND source_id = ?`, [g.id]);
    expect(left!.n).toBe(0);
    expect((await s.api('GET', `/groups/${g.id}`, s.root)).status).toBe(404);
    expect((await s.api('DELETE', `/groups/${g.id}`, s.root)).status).toBe(404);
    // the path is free again
    expect((await s.api('POST', '/groups', owner, { name: 'doomed', path: 'doomed' })).status).toBe(201);
  });

  it('admins delete any group', async () => {
    const g = await makeGroup(s, 'admin-doomed', 20, alice);
    const r = await s.api('DELETE', '/groups/admin-doomed', s.root);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(g.id);
  });
});

describe('POST /groups/:id/projects/:project_id (transfer)', () => {
  it('admin transfers a project into the group (201 GroupDetail) and its storage moves', async () => {
    const g = await makeGroup(s, 'dest', 10);
    const p = await makeProject(s, carol, { name: 'movable', visibility_level: 10 });
    expect((await s.api('POST', `/groups/${g.id}/projects/${p.id}`, carol)).status).toBe(403);
    expect((await s.api('POST', `/groups/${g.id}/projects/${p.id}`, null)).status).toBe(401);
    moves.length = 0;
    const r = await s.api('POST', `/groups/${g.id}/projects/${p.id}`, s.root);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id: g.id, path: 'dest' });
    expect(r.body.projects.map((x: { path_with_namespace: string }) => x.path_with_namespace)).toEqual(['dest/movable']);
    expect(moves).toEqual([{ id: p.id, from: 'carol/movable', to: 'dest/movable' }]);
    expect((await lookupProjectAsync(s.ctx, 'dest/movable'))?.id).toBe(p.id);
    // the previous owner keeps the project through their membership (master)
    expect(await projectAccessLevelAsync(s.ctx, await userRow(carol), await lookupProject(p.id))).toBe(40);

    const again = await s.api('POST', `/groups/dest/projects/${p.id}`, s.root);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ message: { namespace: ['Project is already in this namespace.'] } });
    const clash = await makeProject(s, carol, { name: 'movable' });
    const c = await s.api('POST', `/groups/${g.id}/projects/${clash.id}`, s.root);
    expect(c.status).toBe(400);
    expect(c.body).toEqual({ message: { namespace: ['Project with same path in target namespace already exists'] } });
    const pub = await makeProject(s, carol, { name: 'too-public', visibility_level: 20 });
    const v = await s.api('POST', `/groups/${g.id}/projects/${pub.id}`, s.root);
    expect(v.status).toBe(400);
    expect(v.body).toEqual({ message: { visibility_level: ['public is not allowed in a internal group.'] } });
    expect((await s.api('POST', `/groups/999999/projects/${pub.id}`, s.root)).body).toEqual({ message: '404 Group Not Found' });
    expect((await s.api('POST', `/groups/${g.id}/projects/999999`, s.root)).body).toEqual({ message: '404 Project Not Found' });
  });
});

describe('transfer whose storage move fails', () => {
  it('answers 500 and leaves the project in its namespace', async () => {
    const g = await makeGroup(s, 'dest-broken', 20);
    const p = await makeProject(s, carol, { name: 'unmovable', visibility_level: 10 });
    failMoves.add(p.id);
    try {
      const r = await s.api('POST', `/groups/${g.id}/projects/${p.id}`, s.root);
      expect(r.status).toBe(500);
    } finally {
      failMoves.delete(p.id);
    }
    const after = await s.api('GET', `/projects/${p.id}`, s.root);
    expect(after.body.path_with_namespace).toBe('carol/unmovable');
    expect((await s.api('GET', `/groups/${g.id}`, s.root)).body.projects).toEqual([]);
  });
});

describe('group routes authorization matrix', () => {
  const ROLES = [['guest', 10], ['reporter', 20], ['developer', 30], ['master', 40]] as const;
  let members: Record<string, TestUser>;
  let owner: TestUser;
  let nonmember: TestUser;
  beforeAll(async () => {
    owner = await s.user('mx-owner');
    nonmember = await s.user('mx-nonmember');
    members = {};
    for (const [role] of ROLES) members[role] = await s.user(`mx-${role}`);
  });

  for (const v of [0, 10, 20]) {
    it(`visibility ${v}: read for members (and non-members unless private); update and delete for owner and admin only`, async () => {
      const g = await makeGroup(s, `mx-${v}`, v, owner);
      await makeProject(s, s.root, { name: 'inside', namespace_id: g.id, visibility_level: v });
      for (const [role, level] of ROLES) await addMember(s, 'groups', g.id, members[role]!, level);
      const hidden = v === 0;

      for (const path of [`/groups/${g.id}`, `/groups/${g.id}/projects`]) {
        expect((await s.api('GET', path, null)).status).toBe(401);
        expect((await s.api('GET', path, nonmember)).status, `${path} non-member`).toBe(hidden ? 404 : 200);
        for (const [role] of ROLES) expect((await s.api('GET', path, members[role]!)).status, `${path} ${role}`).toBe(200);
        expect((await s.api('GET', path, owner)).status).toBe(200);
        expect((await s.api('GET', path, s.root)).status).toBe(200);
      }
      const seen = await s.api('GET', `/groups/${g.id}/projects`, members.guest!);
      expect(seen.body.map((p: { name: string }) => p.name)).toEqual(['inside']);

      expect((await s.api('PUT', `/groups/${g.id}`, null, { description: 'x' })).status).toBe(401);
      expect((await s.api('PUT', `/groups/${g.id}`, nonmember, { description: 'x' })).status).toBe(hidden ? 404 : 403);
      expect((await s.api('DELETE', `/groups/${g.id}`, nonmember)).status).toBe(hidden ? 404 : 403);
      for (const [role] of ROLES) {
        expect((await s.api('PUT', `/groups/${g.id}`, members[role]!, { description: 'x' })).status, role).toBe(403);
        expect((await s.api('DELETE', `/groups/${g.id}`, members[role]!)).status, role).toBe(403);
      }
      expect((await s.api('PUT', `/groups/${g.id}`, owner, { description: 'owner' })).status).toBe(200);
      expect((await s.api('PUT', `/groups/${g.id}`, s.root, { description: 'admin' })).status).toBe(200);
      const del = await s.api('DELETE', `/groups/${g.id}`, v === 20 ? s.root : owner);
      expect(del.status).toBe(200);
      expect(del.body.id).toBe(g.id);
    });
  }
});

describe('an acting user deleted by another request during a group create', () => {
  it('answers 401 and leaves no group behind, not a 500', async () => {
    const gone = await s.user('group-vanishing');
    const stale = (await findUser(s.ctx, gone.id))!;
    expect((await s.api('DELETE', `/users/${gone.id}`, s.root)).status).toBe(200);
    await expect(createGroup(s.ctx, stale, { name: 'Late', path: 'late-group' })).rejects.toMatchObject({ statusCode: 401 });
    expect(await s.ctx.data.get('SELECT 1 AS x FROM namespaces WHERE path = ?', ['late-group'])).toBeUndefined();
  });
});
