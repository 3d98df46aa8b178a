import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMember, makeGroup, makeProject, pageHeaders } from '../helpers/group-fixtures.js';

let s: TestServer;
type Role = 'guest' | 'reporter' | 'developer' | 'master';
const LEVEL: Record<Role, number> = { guest: 10, reporter: 20, developer: 30, master: 40 };
let owner: TestUser;
let roles: Record<Role, TestUser>;
let nonmember: TestUser;
let target: TestUser;
const projects: Record<number, number> = {};
const groups: Record<number, number> = {};
const VISIBILITIES = [0, 10, 20] as const;

beforeAll(async () => {
  s = await startTestServer();
  owner = await s.user('owner');
  roles = { guest: await s.user('guest'), reporter: await s.user('reporter'), developer: await s.user('developer'), master: await s.user('master') };
  nonmember = await s.user('nonmember');
  target = await s.user('target', { name: 'Target Person' });
  for (const v of VISIBILITIES) {
    projects[v] = (await makeProject(s, owner, { name: `proj${v}`, visibility_level: v })).id;
    groups[v] = (await makeGroup(s, `grp${v}`, v, owner)).id;
    for (const role of Object.keys(LEVEL) as Role[]) {
      await addMember(s, 'projects', projects[v]!, roles[role], LEVEL[role]);
      await addMember(s, 'groups', groups[v]!, roles[role], LEVEL[role]);
    }
  }
});
afterAll(async () => { await s.close(); });

const MEMBER_KEYS = ['name', 'username', 'id', 'state', 'avatar_url', 'web_url', 'access_level', 'expires_at'];
const events = (projectId: number, action: string) =>
  s.ctx.data.all<{ author_id: number }>(`SELECT author_id FROM events WHERE project_id = ? AND action = ? ORDER BY id`, [projectId, action]);

describe('authorization matrix', () => {
  for (const kind of ['projects', 'groups'] as const) {
    for (const v of VISIBILITIES) {
      const id = () => (kind === 'projects' ? projects[v]! : groups[v]!);
      const base = () => `/${kind}/${id()}/members`;
      const hidden = v === 0;

      it(`${kind} (visibility ${v}): anonymous 401`, async () => {
        for (const [method, path] of [['GET', base()], ['GET', `${base()}/${owner.id}`], ['POST', base()], ['PUT', `${base()}/${roles.guest.id}`], ['DELETE', `${base()}/${roles.guest.id}`]] as const) {
          const r = await s.api(method, path, null, method === 'GET' || method === 'DELETE' ? undefined : { user_id: target.id, access_level: 10 });
          expect(r.status, `${method} ${path}`).toBe(401);
          expect(r.body).toEqual({ message: '401 Unauthorized' });
        }
      });

      it(`${kind} (visibility ${v}): a non-member reads only when the source is not private, never writes`, async () => {
        const list = await s.api('GET', base(), nonmember);
        expect(list.status).toBe(hidden ? 404 : 200);
        if (hidden) expect(list.body).toEqual({ message: kind === 'projects' ? '404 Project Not Found' : '404 Group Not Found' });
        expect((await s.api('GET', `${base()}/${roles.guest.id}`, nonmember)).status).toBe(hidden ? 404 : 200);
        const add = await s.api('POST', base(), nonmember, { user_id: target.id, access_level: 10 });
        expect(add.status).toBe(hidden ? 404 : 403);
        expect((await s.api('PUT', `${base()}/${roles.guest.id}`, nonmember, { access_level: 20 })).status).toBe(hidden ? 404 : 403);
        expect((await s.api('DELETE', `${base()}/${roles.guest.id}`, nonmember)).status).toBe(hidden ? 404 : 403);
      });

      const readers: Role[] = kind === 'projects' ? ['guest', 'reporter', 'developer'] : ['guest', 'reporter', 'developer', 'master'];
      it(`${kind} (visibility ${v}): ${readers.join(', ')} read but get 403 on writes`, async () => {
        for (const role of readers) {
          const u = roles[role];
          const list = await s.api('GET', base(), u);
          expect(list.status, role).toBe(200);
          expect((await s.api('GET', `${base()}/${owner.id}`, u)).status, role).toBe(200);
          const add = await s.api('POST', base(), u, { user_id: target.id, access_level: 10 });
          expect(add.status, role).toBe(403);
          expect(add.body).toEqual({ message: '403 Forbidden' });
          expect((await s.api('POST', base(), u, {})).status, `${role} is refused before the required check`).toBe(403);
          expect((await s.api('PUT', `${base()}/${roles.guest.id}`, u, { access_level: 20 })).status, role).toBe(403);
          const other = role === 'guest' ? roles.reporter : roles.guest;
          expect((await s.api('DELETE', `${base()}/${other.id}`, u)).status, role).toBe(403);
        }
      });

      const writers = kind === 'projects' ? ['master', 'owner', 'admin'] : ['owner', 'admin'];
      it(`${kind} (visibility ${v}): ${writers.join(', ')} add, update and remove members`, async () => {
        for (const who of writers) {
          const u = who === 'owner' ? owner : who === 'admin' ? s.root : roles[who as Role];
          const add = await s.api('POST', base(), u, { user_id: target.id, access_level: 20 });
          expect(add.status, who).toBe(201);
          expect(add.body).toMatchObject({ id: target.id, username: 'target', access_level: 20, expires_at: null });
          const upd = await s.api('PUT', `${base()}/${target.id}`, u, { access_level: 30 });
          expect(upd.status, who).toBe(200);
          expect(upd.body.access_level).toBe(30);
          const del = await s.api('DELETE', `${base()}/${target.id}`, u);
          expect(del.status, who).toBe(200);
          expect(del.body).toMatchObject({ id: target.id, access_level: 30 });
        }
      });
    }
  }
});

describe('project members', () => {
  let pid: number;
  beforeAll(() => { pid = projects[10]!; });

  it('lists direct members (Member entities) with search and pagination', async () => {
    const r = await s.api('GET', `/projects/${pid}/members`, roles.guest);
    expect(r.status).toBe(200);
    expect(r.body.map((m: { username: string }) => m.username)).toEqual(['owner', 'guest', 'reporter', 'developer', 'master']);
    const first = r.body[0];
    expect(Object.keys(first).sort()).toEqual([...MEMBER_KEYS].sort());
    expect(first).toMatchObject({ id: owner.id, username: 'owner', name: 'owner', state: 'active', access_level: 40, expires_at: null });
    expect(typeof first.web_url).toBe('string');
    expect(r.headers['x-total']).toBe('5');
    const q = await s.api('GET', `/projects/${pid}/members?query=DEVEL`, roles.guest);
    expect(q.body.map((m: { username: string }) => m.username)).toEqual(['developer']);
    const byEmail = await s.api('GET', `/projects/${pid}/members?query=master%40example`, roles.guest);
    expect(byEmail.body.map((m: { username: string }) => m.username)).toEqual(['master']);
    const page = await s.api('GET', `/projects/${pid}/members?per_page=2&page=2`, roles.guest);
    expect(page.body.map((m: { username: string }) => m.username)).toEqual(['reporter', 'developer']);
    expect(pageHeaders(page.headers)).toMatchObject({ total: '5', totalPages: '3', perPage: '2', page: '2', next: '3', prev: '1' });
    expect(page.headers.link).toContain('rel="prev"');
    const path = await s.api('GET', `/projects/${encodeURIComponent('owner/proj10')}/members`, roles.guest);
    expect(path.body).toHaveLength(5);
  });

  it('GET /:user_id returns a Member or 404 Not found', async () => {
    const r = await s.api('GET', `/projects/${pid}/members/${roles.developer.id}`, roles.guest);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: roles.developer.id, access_level: 30 });
    const missing = await s.api('GET', `/projects/${pid}/members/${nonmember.id}`, roles.guest);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Not found' });
    expect((await s.api('GET', `/projects/999999/members`, roles.guest)).body).toEqual({ message: '404 Project Not Found' });
  });

  it('POST adds a member (201), records a joined event, and validates its input', async () => {
    const missing = await s.api('POST', `/projects/${pid}/members`, owner, { access_level: 30 });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: '400 (Bad request) "user_id" not given' });
    expect((await s.api('POST', `/projects/${pid}/members`, owner, { user_id: target.id })).body).toEqual({ message: '400 (Bad request) "access_level" not given' });
    const unknown = await s.api('POST', `/projects/${pid}/members`, owner, { user_id: 999999, access_level: 30 });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 User Not Found' });
    for (const level of [50, 5, 0]) {
      const bad = await s.api('POST', `/projects/${pid}/members`, owner, { user_id: target.id, access_level: level });
      expect(bad.status, String(level)).toBe(422);
      expect(bad.body).toEqual({ message: 'Access level is not known' });
    }
    const badDate = await s.api('POST', `/projects/${pid}/members`, owner, { user_id: target.id, access_level: 30, expires_at: '2030-02-31' });
    expect(badDate.status).toBe(400);
    expect(Object.keys(badDate.body.message)).toEqual(['expires_at']);

    const r = await s.api('POST', `/projects/${pid}/members`, owner, 'user_id=' + target.id + '&access_level=30&expires_at=2099-12-31', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id: target.id, username: 'target', name: 'Target Person', access_level: 30, expires_at: '2099-12-31' });
    expect((await events(pid, 'joined')).map((e) => e.author_id)).toContain(target.id);

    const again = await s.api('POST', `/projects/${pid}/members`, owner, { user_id: target.id, access_level: 10 });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: target.id, access_level: 30, expires_at: '2099-12-31' });
  });

  it('PUT changes the level and expiry; 404 for non-members; 422 for bad levels', async () => {
    const r = await s.api('PUT', `/projects/${pid}/members/${target.id}`, roles.master, { access_level: 40, expires_at: null });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: target.id, access_level: 40, expires_at: null });
    expect((await s.api('PUT', `/projects/${pid}/members/${target.id}`, roles.master, { expires_at: '2099-01-01' })).body)
      .toEqual({ message: '400 (Bad request) "access_level" not given' });
    expect((await s.api('PUT', `/projects/${pid}/members/${target.id}`, roles.master, { access_level: 50 })).status).toBe(422);
    const missing = await s.api('PUT', `/projects/${pid}/members/${nonmember.id}`, roles.master, { access_level: 20 });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Not found' });
    expect((await s.api('PUT', `/projects/${pid}/members/abc`, roles.master, { access_level: 20 })).status).toBe(400);
  });

  it('DELETE: the namespace owner stays, non-members give Access revoked, members may leave', async () => {
    const ownerGone = await s.api('DELETE', `/projects/${pid}/members/${owner.id}`, s.root);
    expect(ownerGone.status).toBe(403);
    expect(ownerGone.body).toEqual({ message: '403 Forbidden' });
    expect((await s.api('DELETE', `/projects/${pid}/members/${owner.id}`, owner)).status).toBe(403);
    const absent = await s.api('DELETE', `/projects/${pid}/members/${nonmember.id}`, roles.master);
    expect(absent.status).toBe(200);
    expect(absent.body).toEqual({ message: 'Access revoked', id: nonmember.id });
    const removed = await s.api('DELETE', `/projects/${pid}/members/${target.id}`, roles.master);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: target.id, username: 'target', access_level: 40 });
    expect(Object.keys(removed.body).sort()).toEqual([...MEMBER_KEYS].sort());
    expect((await events(pid, 'left')).map((e) => e.author_id)).toContain(target.id);
    expect((await s.api('GET', `/projects/${pid}/members/${target.id}`, owner)).status).toBe(404);

    // a developer may remove themself, and then loses access to a private project
    const priv = projects[0]!;
    const self = await s.api('DELETE', `/projects/${priv}/members/${roles.developer.id}`, roles.developer);
    expect(self.status).toBe(200);
    expect(self.body.id).toBe(roles.developer.id);
    expect((await s.api('GET', `/projects/${priv}/members`, roles.developer)).status).toBe(404);
    await addMember(s, 'projects', priv, roles.developer, 30);
  });

  it('group projects: a master of the project (not the group) manages its members', async () => {
    const g = await makeGroup(s, 'pm-group', 0);
    const p = await makeProject(s, s.root, { name: 'inner', namespace_id: g.id });
    await addMember(s, 'projects', p.id, roles.master, 40);
    const add = await s.api('POST', `/projects/${p.id}/members`, roles.master, { user_id: roles.guest.id, access_level: 10 });
    expect(add.status).toBe(201);
    // group members are not direct project members
    await addMember(s, 'groups', g.id, roles.reporter, 20);
    const list = await s.api('GET', `/projects/${p.id}/members`, roles.reporter);
    expect(list.status).toBe(200);
    expect(list.body.map((m: { username: string }) => m.username)).toEqual(['master', 'guest']);
  });
});

describe('group members', () => {
  let gid: number;
  beforeAll(() => { gid = groups[10]!; });

  it('lists members with the owner first; search and pagination', async () => {
    const r = await s.api('GET', `/groups/${gid}/members`, nonmember);
    expect(r.status).toBe(200);
    expect(r.body.map((m: { username: string; access_level: number }) => [m.username, m.access_level])).toEqual([
      ['owner', 50], ['guest', 10], ['reporter', 20], ['developer', 30], ['master', 40],
    ]);
    expect(Object.keys(r.body[0]).sort()).toEqual([...MEMBER_KEYS].sort());
    const q = await s.api('GET', `/groups/grp10/members?query=port&per_page=1`, nonmember);
    expect(q.body.map((m: { username: string }) => m.username)).toEqual(['reporter']);
    expect(pageHeaders(q.headers)).toMatchObject({ total: '1', totalPages: '1', page: '1', next: '', prev: '' });
    expect((await s.api('GET', `/groups/${gid}/members/${nonmember.id}`, owner)).body).toEqual({ message: '404 Not found' });
  });

  it('POST: owner level allowed, 409 when already a member, 422 for unknown levels, 404 for unknown users', async () => {
    const r = await s.api('POST', `/groups/${gid}/members`, owner, { user_id: target.id, access_level: 50 });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id: target.id, access_level: 50 });
    const dup = await s.api('POST', `/groups/${gid}/members`, owner, { user_id: target.id, access_level: 10 });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ message: 'Member already exists' });
    expect((await s.api('POST', `/groups/${gid}/members`, owner, { user_id: nonmember.id, access_level: 60 })).body).toEqual({ message: 'Access level is not known' });
    expect((await s.api('POST', `/groups/${gid}/members`, owner, { user_id: 999999, access_level: 10 })).body).toEqual({ message: '404 User Not Found' });
    expect((await s.api('POST', `/groups/${gid}/members`, owner, { access_level: 10 })).body).toEqual({ message: '400 (Bad request) "user_id" not given' });
    // the new owner can administer the group
    expect((await s.api('PUT', `/groups/${gid}`, target, { description: 'co-owned' })).status).toBe(200);
  });

  it('two adds of one user at once: a group answers 201 and 409, a project 201 twice with one membership (never a 500)', async () => {
    const g = await makeGroup(s, 'racing', 0);
    const group = await Promise.all([1, 2].map(() => s.api('POST', `/groups/${g.id}/members`, s.root, { user_id: target.id, access_level: 20 })));
    expect(group.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(group.find((r) => r.status === 409)!.body).toEqual({ message: 'Member already exists' });
    const p = await makeProject(s, owner, { name: 'racing-project' });
    const project = await Promise.all([1, 2].map(() => s.api('POST', `/projects/${p.id}/members`, owner, { user_id: target.id, access_level: 20 })));
    expect(project.map((r) => r.status)).toEqual([201, 201]);
    for (const r of project) expect(r.body).toMatchObject({ id: target.id, access_level: 20 });
    const list = await s.api('GET', `/projects/${p.id}/members`, owner);
    expect(list.body.filter((m: { id: number }) => m.id === target.id)).toHaveLength(1);
  });

  it('DELETE: non-members 404, the last owner cannot leave, a second owner makes it possible', async () => {
    const g = await makeGroup(s, 'solo', 0, owner);
    const absent = await s.api('DELETE', `/groups/${g.id}/members/${nonmember.id}`, owner);
    expect(absent.status).toBe(404);
    expect(absent.body).toEqual({ message: `404 Member: user_id:${nonmember.id} Not Found` });
    for (const who of [owner, s.root]) {
      const last = await s.api('DELETE', `/groups/${g.id}/members/${owner.id}`, who);
      expect(last.status).toBe(403);
      expect(last.body).toEqual({ message: '403 Forbidden' });
    }
    const demote = await s.api('PUT', `/groups/${g.id}/members/${owner.id}`, owner, { access_level: 40 });
    expect(demote.status).toBe(403);
    await addMember(s, 'groups', g.id, target, 50);
    const leave = await s.api('DELETE', `/groups/${g.id}/members/${owner.id}`, owner);
    expect(leave.status).toBe(200);
    expect(leave.body).toMatchObject({ id: owner.id, access_level: 50 });
    expect((await s.api('GET', `/groups/${g.id}`, owner)).status).toBe(404);
  });

  it('a member may remove themself; group members lose inherited project access', async () => {
    const g = await makeGroup(s, 'leavers', 0);
    const p = await makeProject(s, s.root, { name: 'inherit', namespace_id: g.id });
    await addMember(s, 'groups', g.id, roles.developer, 30);
    expect((await s.api('GET', `/projects/${p.id}/members`, roles.developer)).status).toBe(200);
    const other = await s.api('DELETE', `/groups/${g.id}/members/${s.root.id}`, roles.developer);
    expect(other.status).toBe(403);
    const self = await s.api('DELETE', `/groups/${g.id}/members/${roles.developer.id}`, roles.developer);
    expect(self.status).toBe(200);
    expect((await s.api('GET', `/projects/${p.id}/members`, roles.developer)).status).toBe(404);
    expect((await s.api('GET', `/groups/${g.id}/members`, roles.developer)).status).toBe(404);
  });

  it('an expired membership gives no access', async () => {
    const g = await makeGroup(s, 'expiring', 0);
    const r = await s.api('POST', `/groups/${g.id}/members`, s.root, { user_id: roles.guest.id, access_level: 30, expires_at: '2000-01-01' });
    expect(r.status).toBe(201);
    expect(r.body.expires_at).toBe('2000-01-01');
    expect((await s.api('GET', `/groups/${g.id}`, roles.guest)).status).toBe(404);
    const renew = await s.api('PUT', `/groups/${g.id}/members/${roles.guest.id}`, s.root, { access_level: 30, expires_at: '2999-01-01' });
    expect(renew.body.expires_at).toBe('2999-01-01');
    expect((await s.api('GET', `/groups/${g.id}`, roles.guest)).status).toBe(200);
  });
});
