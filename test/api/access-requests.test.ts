/**
 * Access requests (GitLab 8.13 lib/api/access_requests.rb) for projects and groups: request, list, approve with a
 * level, deny or withdraw; request_access_enabled (default on, settable), who may request and who may review, a
 * request that gives no access and is not a member, and approvals racing each other and a withdrawal.
 */
import { DaemonState } from '../../daemon/context.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { openPostgres } from '../../daemon/db/layer/open.js';
import { toProject } from '../../daemon/db/rows.js';
import { approveAccessRequest, removeAccessRequest } from '../../daemon/services/projects/access-requests.js';
import { findUser } from '../../daemon/services/users/users.js';
import { addCastMembers, addMemberAsync, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { makeGroup } from '../helpers/group-fixtures.js';

let s: TestServer;
let cast: Cast;
let pub: { id: number };
let priv: { id: number };
let group: { id: number };

const counts = async () => ({
  requests: Number((await s.ctx.data.get<{ n: number }>('SELECT COUNT(*) AS n FROM access_requests'))!.n),
  members: Number((await s.ctx.data.get<{ n: number }>('SELECT COUNT(*) AS n FROM members'))!.n),
});

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'acr');
  pub = await makeProject(s, cast.owner, 'acr-public', { visibility: 20 });
  priv = await makeProject(s, cast.owner, 'acr-private', { visibility: 0 });
  await addCastMembers(s.ctx, cast, pub.id);
  await addCastMembers(s.ctx, cast, priv.id);
  group = await makeGroup(s, 'acr-group', 20);
  await addMemberAsync(s.ctx, { type: 'Namespace', id: group.id }, cast.owner.id, 50);
  await addMemberAsync(s.ctx, { type: 'Namespace', id: group.id }, cast.master.id, 40);
  await addMemberAsync(s.ctx, { type: 'Namespace', id: group.id }, cast.developer.id, 30);
});
afterAll(async () => {
  await s.close();
});

describe('request_access_enabled', () => {
  it('is on by default for new projects and groups (8.13) and can be turned off and on', async () => {
    expect((await s.api('GET', `/projects/${pub.id}`, cast.owner)).body.request_access_enabled).toBe(true);
    expect((await s.api('GET', `/groups/${group.id}`, cast.owner)).body.request_access_enabled).toBe(true);
    const off = await makeProject(s, cast.owner, 'acr-off', { visibility: 20, extra: { request_access_enabled: false } });
    expect((await s.api('GET', `/projects/${off.id}`, cast.owner)).body.request_access_enabled).toBe(false);
    const u = await s.user('acroff');
    const before = await counts();
    expect((await s.api('POST', `/projects/${off.id}/access_requests`, u)).status).toBe(403);
    expect(await counts()).toEqual(before);
    expect((await s.api('PUT', `/projects/${off.id}`, cast.owner, { request_access_enabled: true })).body.request_access_enabled).toBe(true);
    expect((await s.api('POST', `/projects/${off.id}/access_requests`, u)).status).toBe(201);
    const g = await makeGroup(s, 'acr-group-off', 20);
    expect((await s.api('PUT', `/groups/${g.id}`, s.root, { request_access_enabled: false })).body.request_access_enabled).toBe(false);
    expect((await s.api('POST', `/groups/${g.id}/access_requests`, u)).status).toBe(403);
  });
});

for (const kind of ['projects', 'groups'] as const) {
  describe(`/${kind}/:id/access_requests`, () => {
    const src = () => (kind === 'projects' ? pub.id : group.id);
    const base = () => `/${kind}/${src()}/access_requests`;
    // who reviews: project masters and owners; group owners
    const reviewer = () => (kind === 'projects' ? cast.master : cast.owner);

    it('lets a stranger request access, answering AccessRequester (201), and keeps the request out of the members', async () => {
      const u = await s.user(`acr${kind}a`);
      const r = await s.api('POST', base(), u);
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ id: u.id, username: u.username, name: expect.any(String), state: 'active', web_url: expect.stringContaining(u.username) });
      expect(Date.parse(r.body.requested_at)).not.toBeNaN();
      const members = await s.api('GET', `/${kind}/${src()}/members`, cast.owner);
      expect(members.body.map((m: { id: number }) => m.id)).not.toContain(u.id);
      expect((await s.api('GET', `/${kind}/${src()}/members/${u.id}`, cast.owner)).status).toBe(404);
      // a second request: 400 with the validation hash, nothing changes
      const before = await counts();
      const again = await s.api('POST', base(), u);
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ message: { user_id: ['already exists in source'] } });
      expect(await counts()).toEqual(before);
      // listed for the reviewer
      const list = await s.api('GET', base(), reviewer());
      expect(list.status).toBe(200);
      expect(list.body.find((x: { id: number }) => x.id === u.id)).toMatchObject({ username: u.username, requested_at: r.body.requested_at });
    });

    it('refuses members (403) and answers 401 to anonymous callers', async () => {
      for (const m of [cast.developer, cast.master, cast.owner]) expect((await s.api('POST', base(), m)).status).toBe(403);
      expect((await s.api('POST', base(), null)).status).toBe(401);
      expect((await s.api('GET', base(), null)).status).toBe(401);
    });

    it('lists requests only to those who manage members (403 to others)', async () => {
      const allowed = kind === 'projects' ? [cast.master, cast.owner, cast.admin] : [cast.owner, cast.admin];
      const denied = kind === 'projects' ? [cast.nonMember, cast.guest, cast.reporter, cast.developer] : [cast.nonMember, cast.developer, cast.master];
      for (const u of allowed) expect((await s.api('GET', base(), u)).status).toBe(200);
      for (const u of denied) expect((await s.api('GET', base(), u)).status).toBe(403);
    });

    it('approves with a level: the user becomes a member (201, Member) and gains access; defaults to developer', async () => {
      const a = await s.user(`acr${kind}b`);
      const b = await s.user(`acr${kind}c`);
      expect((await s.api('POST', base(), a)).status).toBe(201);
      expect((await s.api('POST', base(), b)).status).toBe(201);
      // not a reviewer: 403, nothing changes
      const before = await counts();
      const denied = kind === 'projects' ? cast.developer : cast.master;
      expect((await s.api('PUT', `${base()}/${a.id}/approve`, denied, { access_level: 40 })).status).toBe(403);
      expect(await counts()).toEqual(before);
      // a level the source does not have: 422, nothing changes
      const bad = await s.api('PUT', `${base()}/${a.id}/approve`, reviewer(), { access_level: kind === 'projects' ? 50 : 35 });
      expect(bad.status).toBe(422);
      expect(await counts()).toEqual(before);
      const ok = await s.api('PUT', `${base()}/${a.id}/approve`, reviewer(), { access_level: 20 });
      expect(ok.status).toBe(201);
      expect(ok.body).toMatchObject({ id: a.id, username: a.username, access_level: 20, expires_at: null });
      expect((await s.api('GET', `/${kind}/${src()}/members/${a.id}`, cast.owner)).body.access_level).toBe(20);
      expect((await s.api('GET', base(), reviewer())).body.map((x: { id: number }) => x.id)).not.toContain(a.id);
      const dflt = await s.api('PUT', `${base()}/${b.id}/approve`, cast.admin);
      expect(dflt.status).toBe(201);
      expect(dflt.body.access_level).toBe(30);
      // approved already: no request left
      expect((await s.api('PUT', `${base()}/${a.id}/approve`, reviewer())).status).toBe(404);
      // a member can now not request again
      expect((await s.api('POST', base(), a)).status).toBe(403);
    });

    it('answers 404 for a user who has no request (a member included, an id beyond int4)', async () => {
      for (const id of [cast.developer.id, 999999, 2147483648]) {
        expect((await s.api('PUT', `${base()}/${id}/approve`, reviewer())).status).toBe(404);
        expect((await s.api('DELETE', `${base()}/${id}`, reviewer())).status).toBe(404);
      }
      expect((await s.api('PUT', `${base()}/abc/approve`, reviewer())).status).toBe(400);
    });

    it('lets the reviewer deny and the requester withdraw; nobody else (403)', async () => {
      const a = await s.user(`acr${kind}d`);
      const b = await s.user(`acr${kind}e`);
      expect((await s.api('POST', base(), a)).status).toBe(201);
      expect((await s.api('POST', base(), b)).status).toBe(201);
      expect((await s.api('DELETE', `${base()}/${a.id}`, b)).status).toBe(403);
      expect((await s.api('DELETE', `${base()}/${a.id}`, cast.developer)).status).toBe(403);
      const denied = await s.api('DELETE', `${base()}/${a.id}`, reviewer());
      expect(denied.status).toBe(200);
      expect(denied.body).toMatchObject({ id: a.id, username: a.username });
      const withdrawn = await s.api('DELETE', `${base()}/${b.id}`, b);
      expect(withdrawn.status).toBe(200);
      const left = (await s.api('GET', base(), reviewer())).body.map((x: { id: number }) => x.id);
      expect(left).not.toContain(a.id);
      expect(left).not.toContain(b.id);
      expect((await s.api('GET', `/${kind}/${src()}/members/${a.id}`, cast.owner)).status).toBe(404);
    });

    it('gives one member and a 404 when two approvals, or an approval and a withdrawal, race', async () => {
      const a = await s.user(`acr${kind}f`);
      expect((await s.api('POST', base(), a)).status).toBe(201);
      const both = await Promise.all([
        s.api('PUT', `${base()}/${a.id}/approve`, reviewer(), { access_level: 10 }),
        s.api('PUT', `${base()}/${a.id}/approve`, cast.admin, { access_level: 20 }),
      ]);
      expect(both.map((r) => r.status).sort()).toEqual([201, 404]);
      const n = await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM members WHERE user_id = ?`, [a.id]);
      expect(Number(n!.n)).toBe(1);
      const b = await s.user(`acr${kind}g`);
      expect((await s.api('POST', base(), b)).status).toBe(201);
      const race = await Promise.all([s.api('PUT', `${base()}/${b.id}/approve`, reviewer()), s.api('DELETE', `${base()}/${b.id}`, b)]);
      expect(race.map((r) => r.status).filter((x) => x === 404)).toHaveLength(1);
      const m = await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM members WHERE user_id = ?`, [b.id]);
      expect(Number(m!.n)).toBe(race[0]!.status === 201 ? 1 : 0);
    });
  });
}

describe('who may see a source to request access', () => {
  it('hides private projects (404) and gives requesters no access to them', async () => {
    const u: TestUser = await s.user('acrpriv');
    expect((await s.api('POST', `/projects/${priv.id}/access_requests`, u)).status).toBe(404);
    expect((await s.api('GET', `/projects/${priv.id}/access_requests`, u)).status).toBe(404);
    // an internal project: an external user may not request (8.13: not visible to them as a non-member)
    const internal = await makeProject(s, cast.owner, 'acr-internal', { visibility: 10 });
    expect((await s.api('POST', `/projects/${internal.id}/access_requests`, cast.external)).status).toBe(404);
    const r = await s.api('POST', `/projects/${internal.id}/access_requests`, u);
    expect(r.status).toBe(201);
    // a pending requester reads the internal project as any signed-in user, but is no member: no builds, no members admin
    expect((await s.api('POST', `/projects/${internal.id}/members`, u, { user_id: u.id, access_level: 40 })).status).toBe(403);
  });

  it('refuses admins on projects (they own every project) and requests for a user added as a member meanwhile', async () => {
    expect((await s.api('POST', `/projects/${pub.id}/access_requests`, cast.admin)).status).toBe(403);
    const u = await s.user('acrmeanwhile');
    expect((await s.api('POST', `/projects/${pub.id}/access_requests`, u)).status).toBe(201);
    const add = await s.api('POST', `/projects/${pub.id}/members`, cast.master, { user_id: u.id, access_level: 10 });
    expect(add.status).toBe(201);
    // adding the member took the request away
    expect((await s.api('GET', `/projects/${pub.id}/access_requests`, cast.master)).body.map((x: { id: number }) => x.id)).not.toContain(u.id);
  });

  it('drops the requests of a deleted project', async () => {
    const p = await makeProject(s, cast.owner, 'acr-gone', { visibility: 20 });
    const u = await s.user('acrgone');
    expect((await s.api('POST', `/projects/${p.id}/access_requests`, u)).status).toBe(201);
    expect((await s.api('DELETE', `/projects/${p.id}`, cast.owner)).status).toBeLessThan(300);
    const n = await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM access_requests WHERE source_type = 'Project' AND source_id = ?`, [p.id]);
    expect(Number(n!.n)).toBe(0);
  });
});

describe.skipIf(!onPostgres)('two daemons on one PostgreSQL database', () => {
  it('approvals and withdrawals racing through both give one member or a 404, never an error', async () => {
    const second = await openPostgres(s.ctx.config.databaseUrl!);
    try {
      const ctx2 = { ...s.ctx, data: second.data, state: new DaemonState() };
      const project = toProject((await s.ctx.data.get<Record<string, unknown>>('SELECT * FROM projects WHERE id = ?', [pub.id]))!);
      const source = { kind: 'project' as const, project };
      const master = await findUser(s.ctx, cast.master.id);
      const admin = await findUser(s.ctx, cast.admin.id);
      for (let i = 0; i < 6; i++) {
        const u = await s.user(`acrtwo${i}`);
        expect((await s.api('POST', `/projects/${pub.id}/access_requests`, u)).status).toBe(201);
        const requester = await findUser(s.ctx, u.id);
        const outcomes = await Promise.allSettled(i % 2
          ? [approveAccessRequest(s.ctx, master, source, u.id, 20), approveAccessRequest(ctx2, admin, source, u.id, 30)]
          : [approveAccessRequest(s.ctx, master, source, u.id), removeAccessRequest(ctx2, requester, source, u.id)]);
        const failures = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        for (const f of failures) expect((f.reason as { statusCode?: number }).statusCode).toBe(404);
        expect(failures.length).toBeLessThanOrEqual(1);
        const n = Number((await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM members WHERE user_id = ?`, [u.id]))!.n);
        const left = Number((await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM access_requests WHERE user_id = ?`, [u.id]))!.n);
        expect(left).toBe(0);
        // two approvals: always one member; approval against withdrawal: a member exactly when the approval won
        expect(n).toBe(i % 2 ? 1 : outcomes[0]!.status === 'fulfilled' ? 1 : 0);
      }
    } finally {
      await second.close();
    }
  });
});
