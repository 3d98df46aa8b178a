import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerStorage } from '../../daemon/services/repository/storage.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { commitTo, repositoryOf } from '../helpers/repository.js';
import { addMemberAsync as addMember, makeGroupAsync as makeGroup, makeProject } from '../helpers/fixtures.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
const forked: [number, number][] = [];

beforeAll(async () => {
  s = await startTestServer();
  registerStorage({
    forked: async (_ctx, source, fork) => {
      if (fork.path === 'fork-fails') throw new Error('copy failed');
      forked.push([source.id, fork.id]);
    },
  });
  [alice, bob, carol] = await Promise.all([s.user('alice', { projects_limit: 50 }), s.user('bob', { projects_limit: 50 }), s.user('carol')]);
});
afterAll(async () => { await s.close(); });

describe('POST /projects/fork/:id', () => {
  it('forks into the caller\'s namespace, copying name, path, description and visibility', async () => {
    const src = await makeProject(s, alice, 'upstream', { visibility: 10, extra: { description: 'the source', wiki_enabled: false } });
    const r = await s.api('POST', `/projects/fork/${src.id}`, bob);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'upstream', path: 'upstream', path_with_namespace: 'bob/upstream', description: 'the source', visibility_level: 10,
      wiki_enabled: false, creator_id: bob.id,
    });
    expect(r.body.forked_from_project).toEqual({
      id: src.id, http_url_to_repo: 'http://gantry.test/alice/upstream.git', web_url: 'http://gantry.test/alice/upstream',
      name: 'upstream', name_with_namespace: 'alice / upstream', path: 'upstream', path_with_namespace: 'alice/upstream',
    });
    expect(typeof r.body.runners_token).toBe('string');
    expect(forked).toContainEqual([src.id, r.body.id]);
    expect((await s.api('GET', `/projects/${src.id}`, alice)).body.forks_count).toBe(1);
    // The forker owns the fork (member 40 + namespace owner).
    expect((await s.api('GET', `/projects/${r.body.id}`, bob)).body.permissions.project_access.access_level).toBe(40);
    // Same path again in the same namespace: 409 with the validation hash.
    const again = await s.api('POST', `/projects/fork/${src.id}`, bob);
    expect(again.status).toBe(409);
    expect(again.body.message.path).toEqual(['has already been taken']);
  });
  it('forks into a namespace given by id or path, 404 when absent or not allowed', async () => {
    const src = await makeProject(s, alice, 'lib', { visibility: 20 });
    const g = await makeGroup(s.ctx, 'forkers', { owner: bob, visibility: 10 });
    const byPath = await s.api('POST', `/projects/fork/${src.id}`, bob, { namespace: 'forkers' });
    expect(byPath.status).toBe(201);
    expect(byPath.body.path_with_namespace).toBe('forkers/lib');
    // A fork into a group is capped at the group's visibility.
    expect(byPath.body.visibility_level).toBe(10);
    expect((await s.api('DELETE', `/projects/${byPath.body.id}`, bob)).status).toBe(200);
    expect((await s.api('POST', `/projects/fork/${src.id}`, bob, { namespace: String(g) })).status).toBe(201);
    for (const ns of ['nowhere', '99999', 'alice']) {
      const r = await s.api('POST', `/projects/fork/${src.id}`, bob, { namespace: ns });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Target Namespace Not Found' });
    }
    expect((await s.api('POST', `/projects/fork/${src.id}`, carol, { namespace: 'forkers' })).status).toBe(404);
  });
  it('needs fork_project: 404 hidden, 403 for a guest of a private project', async () => {
    const src = await makeProject(s, alice, 'closed');
    expect((await s.api('POST', `/projects/fork/${src.id}`, bob)).body).toEqual({ message: '404 Project Not Found' });
    await addMember(s.ctx, { type: 'Project', id: src.id }, bob.id, 10);
    expect((await s.api('POST', `/projects/fork/${src.id}`, bob)).status).toBe(403);
    await addMember(s.ctx, { type: 'Project', id: src.id }, bob.id, 20);
    expect((await s.api('POST', `/projects/fork/${src.id}`, bob)).status).toBe(201);
    expect((await s.api('POST', `/projects/fork/${src.id}`, null)).status).toBe(401);
  });
  it('removes the fork record again when storage fails', async () => {
    const src = await makeProject(s, alice, 'fork-fails', { visibility: 20 });
    const r = await s.api('POST', `/projects/fork/${src.id}`, bob);
    expect(r.status).toBe(500);
    expect((await s.api('GET', '/projects/bob%2Ffork-fails', bob)).status).toBe(404);
    expect((await s.api('GET', `/projects/${src.id}`, alice)).body.forks_count).toBe(0);
  });
  it('DELETE /projects/:id/fork removes the link (owner only; 304 when not a fork)', async () => {
    const src = await makeProject(s, alice, 'linked', { visibility: 20 });
    const fork = (await s.api('POST', `/projects/fork/${src.id}`, bob)).body;
    await addMember(s.ctx, { type: 'Project', id: fork.id }, carol.id, 40);
    expect((await s.api('DELETE', `/projects/${fork.id}/fork`, carol)).status).toBe(403);
    const r = await s.api('DELETE', `/projects/${fork.id}/fork`, bob);
    expect(r.status).toBe(200);
    expect(r.body.forked_from_project).toBeUndefined();
    expect((await s.api('DELETE', `/projects/${fork.id}/fork`, bob)).status).toBe(304);
  });
});

describe('star', () => {
  it('POST stars (201, 304 when already starred); DELETE unstars (200, 304 when not starred)', async () => {
    const p = await makeProject(s, alice, 'starry', { visibility: 20 });
    const r = await s.api('POST', `/projects/${p.id}/star`, bob);
    expect(r.status).toBe(201);
    expect(r.body.star_count).toBe(1);
    const again = await s.api('POST', `/projects/${p.id}/star`, bob);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const un = await s.api('DELETE', `/projects/${p.id}/star`, bob);
    expect(un.status).toBe(200);
    expect(un.body.star_count).toBe(0);
    expect((await s.api('DELETE', `/projects/${p.id}/star`, bob)).status).toBe(304);
  });
  it('404 for hidden projects', async () => {
    const p = await makeProject(s, alice, 'hidden-star');
    expect((await s.api('POST', `/projects/${p.id}/star`, bob)).status).toBe(404);
  });
});

describe('archive / unarchive', () => {
  it('owner archives and unarchives, idempotently, with 201', async () => {
    const p = await makeProject(s, alice, 'dusty');
    for (const [action, archived] of [['archive', true], ['archive', true], ['unarchive', false], ['unarchive', false]] as const) {
      const r = await s.api('POST', `/projects/${p.id}/${action}`, alice);
      expect(r.status).toBe(201);
      expect(r.body.archived).toBe(archived);
    }
  });
  it('403 for members below owner, 404 when hidden, admin allowed', async () => {
    const p = await makeProject(s, alice, 'guarded');
    expect((await s.api('POST', `/projects/${p.id}/archive`, bob)).body).toEqual({ message: '404 Project Not Found' });
    await addMember(s.ctx, { type: 'Project', id: p.id }, bob.id, 40);
    expect((await s.api('POST', `/projects/${p.id}/archive`, bob)).body).toEqual({ message: '403 Forbidden' });
    expect((await s.api('POST', `/projects/${p.id}/archive`, s.root)).status).toBe(201);
  });
});

describe('share', () => {
  it('shares with a group (201 ProjectGroupLink), refuses twice (409), and unshares (204)', async () => {
    const p = await makeProject(s, alice, 'shareable');
    const g = await makeGroup(s.ctx, 'sharers', { visibility: 10 });
    const r = await s.api('POST', `/projects/${p.id}/share`, alice, { group_id: g, group_access: 30, expires_at: '2099-01-31' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(Number), project_id: p.id, group_id: g, group_access: 30, expires_at: '2099-01-31' });
    expect((await s.api('GET', `/projects/${p.id}`, alice)).body.shared_with_groups).toEqual([{ group_id: g, group_name: 'sharers', group_access_level: 30 }]);
    const twice = await s.api('POST', `/projects/${p.id}/share`, alice, { group_id: g, group_access: 20 });
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({ message: 'Group already shared with this group' });
    const del = await s.api('DELETE', `/projects/${p.id}/share/${g}`, alice);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await s.api('DELETE', `/projects/${p.id}/share/${g}`, alice)).body).toEqual({ message: '404 Group Link Not Found' });
  });
  it('validates: required params, group existence and visibility, access level, the share lock, own group', async () => {
    const p = await makeProject(s, alice, 'picky');
    const g = await makeGroup(s.ctx, 'visible-g', { visibility: 10 });
    const hidden = await makeGroup(s.ctx, 'hidden-g');
    expect((await s.api('POST', `/projects/${p.id}/share`, alice, { group_access: 30 })).body).toEqual({ message: '400 (Bad request) "group_id" not given' });
    expect((await s.api('POST', `/projects/${p.id}/share`, alice, { group_id: g })).body).toEqual({ message: '400 (Bad request) "group_access" not given' });
    expect((await s.api('POST', `/projects/${p.id}/share`, alice, { group_id: 9999, group_access: 30 })).body).toEqual({ message: '404 Group Not Found' });
    expect((await s.api('POST', `/projects/${p.id}/share`, alice, { group_id: hidden, group_access: 30 })).body).toEqual({ message: '404 Group Not Found' });
    for (const level of [0, 5, 50, 60]) {
      const r = await s.api('POST', `/projects/${p.id}/share`, alice, { group_id: g, group_access: level });
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ message: 'Group access is not included in the list' });
    }
    expect((await s.api('POST', `/projects/${p.id}/share`, alice, { group_id: g, group_access: 30, expires_at: 'soon' })).status).toBe(400);
    const locked = await makeGroup(s.ctx, 'locked', { owner: alice, shareWithGroupLock: true });
    const inLocked = await makeProject(s, alice, 'in-locked', { namespaceId: locked });
    const lockedShare = await s.api('POST', `/projects/${inLocked.id}/share`, alice, { group_id: g, group_access: 30 });
    expect(lockedShare.status).toBe(400);
    expect(lockedShare.body).toEqual({ message: 'The project sharing with group is disabled' });
    const home = await makeGroup(s.ctx, 'home', { owner: alice });
    const inHome = await makeProject(s, alice, 'in-home', { namespaceId: home });
    expect((await s.api('POST', `/projects/${inHome.id}/share`, alice, { group_id: home, group_access: 30 })).status).toBe(409);
  });
  it('needs admin_project: 403 for developers (before params), 404 when hidden', async () => {
    const p = await makeProject(s, alice, 'share-perm');
    const g = await makeGroup(s.ctx, 'perm-g', { visibility: 20 });
    expect((await s.api('POST', `/projects/${p.id}/share`, bob, {})).status).toBe(404);
    await addMember(s.ctx, { type: 'Project', id: p.id }, bob.id, 30);
    expect((await s.api('POST', `/projects/${p.id}/share`, bob, {})).status).toBe(403);
    expect((await s.api('DELETE', `/projects/${p.id}/share/${g}`, bob)).status).toBe(403);
    await addMember(s.ctx, { type: 'Project', id: p.id }, bob.id, 40);
    expect((await s.api('POST', `/projects/${p.id}/share`, bob, { group_id: g, group_access: 40 })).status).toBe(201);
  });
});

describe('POST /projects/:id/fork/:forked_from_id', () => {
  it('links a project to its source (administrators only: 201, 409 once linked, 404 for an absent source)', async () => {
    const src = await makeProject(s, alice, 'link-source', { visibility: 20 });
    const other = await makeProject(s, bob, 'link-target', { visibility: 20 });
    expect((await s.api('POST', `/projects/${other.id}/fork/${src.id}`, bob)).body).toEqual({ message: '403 Forbidden' });
    expect((await s.api('POST', `/projects/${other.id}/fork/${src.id}`, null)).status).toBe(401);
    expect((await s.api('POST', `/projects/${other.id}/fork/999999`, s.root)).body).toEqual({ message: '404 Project Not Found' });
    const r = await s.api('POST', `/projects/${other.id}/fork/${encodeURIComponent(src.path_with_namespace)}`, s.root);
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: other.id, forked_to_project_id: other.id, forked_from_project_id: src.id, created_at: expect.any(String), updated_at: expect.any(String),
    });
    expect((await s.api('GET', `/projects/${other.id}`, bob)).body.forked_from_project.id).toBe(src.id);
    expect((await s.api('GET', `/projects/${src.id}`, alice)).body.forks_count).toBe(1);
    const again = await s.api('POST', `/projects/${other.id}/fork/${src.id}`, s.root);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: '409 Project already forked' });
  });
});

describe('writes at the same moment (one daemon or several: the answers one after the other would give)', () => {
  it('two stars at once: 201 then 304; two unstars: 200 then 304', async () => {
    const p = await makeProject(s, alice, 'star-race', { visibility: 20 });
    for (let i = 0; i < 3; i++) {
      const stars = await Promise.all([0, 1].map(() => s.api('POST', `/projects/${p.id}/star`, bob)));
      expect(stars.map((r) => r.status).sort()).toEqual([201, 304]);
      expect((await s.api('GET', `/projects/${p.id}`, bob)).body.star_count).toBe(1);
      const unstars = await Promise.all([0, 1].map(() => s.api('DELETE', `/projects/${p.id}/star`, bob)));
      expect(unstars.map((r) => r.status).sort()).toEqual([200, 304]);
    }
  });
  it('two shares with one group at once: 201 and 409, one link', async () => {
    const p = await makeProject(s, alice, 'share-race');
    const g = await makeGroup(s.ctx, 'race-sharers', { visibility: 20 });
    for (let i = 0; i < 3; i++) {
      const shares = await Promise.all([30, 20].map((level) => s.api('POST', `/projects/${p.id}/share`, alice, { group_id: g, group_access: level })));
      expect(shares.map((r) => r.status).sort()).toEqual([201, 409]);
      expect((await s.api('GET', `/projects/${p.id}`, alice)).body.shared_with_groups).toHaveLength(1);
      const unshares = await Promise.all([0, 1].map(() => s.api('DELETE', `/projects/${p.id}/share/${g}`, alice)));
      expect(unshares.map((r) => r.status).sort()).toEqual([204, 404]);
    }
  });
  it('two fork links at once: 201 and 409; two removals at once: 200 and 304', async () => {
    const src = await makeProject(s, alice, 'race-link-src', { visibility: 20 });
    const other = await makeProject(s, alice, 'race-link-dst', { visibility: 20 });
    for (let i = 0; i < 3; i++) {
      const links = await Promise.all([0, 1].map(() => s.api('POST', `/projects/${other.id}/fork/${src.id}`, s.root)));
      expect(links.map((r) => r.status).sort()).toEqual([201, 409]);
      const unlinks = await Promise.all([0, 1].map(() => s.api('DELETE', `/projects/${other.id}/fork`, alice)));
      expect(unlinks.map((r) => r.status).sort()).toEqual([200, 304]);
    }
  });
  it('archive, star, share and fork link of a project deleted at the same moment: done or 404, never a 500', async () => {
    const g = await makeGroup(s.ctx, 'race-deleted-sharers', { visibility: 20 });
    const other = await makeProject(s, alice, 'race-deleted-other', { visibility: 20 });
    for (let i = 0; i < 4; i++) {
      const p = await makeProject(s, alice, `archive-race-${i}`, { visibility: 20 });
      const [archive, star, share, link, del] = await Promise.all([
        s.api('POST', `/projects/${p.id}/archive`, alice), s.api('POST', `/projects/${p.id}/star`, bob),
        s.api('POST', `/projects/${p.id}/share`, alice, { group_id: g, group_access: 30 }), s.api('POST', `/projects/${p.id}/fork/${other.id}`, s.root),
        s.api('DELETE', `/projects/${p.id}`, alice),
      ]);
      expect([201, 404], archive.text).toContain(archive.status);
      expect([201, 404], star.text).toContain(star.status);
      expect([201, 404], share.text).toContain(share.status);
      expect([201, 404], link.text).toContain(link.status);
      expect(del.status).toBe(200);
    }
  });
  it('a fork of a project deleted at the same moment: 201 with the whole repository, or 404 leaving nothing behind', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 12; i++) {
      const src = await makeProject(s, alice, `doomed-${i}`, { visibility: 20 });
      const sha = await commitTo(s.ctx, src.id, 'master', { 'README.md': `source ${i}\n` });
      // the delete starts a little later each round (0 to 330 ms: a fork takes 30-500 ms here), so that it meets the
      // fork at each of its steps: before its row, during the copy, after it
      const [fork, del] = await Promise.all([
        s.api('POST', `/projects/fork/${src.id}`, bob),
        new Promise((resolve) => setTimeout(resolve, i * 30)).then(() => s.api('DELETE', `/projects/${src.id}`, alice)),
      ]);
      answers.push(fork.status);
      expect(del.status).toBe(200);
      if (fork.status === 201) {
        // a fork that answered 201 has the source's commit (never an empty copy of a repository removed meanwhile)
        const repo = await repositoryOf(s.ctx, fork.body.id);
        expect(await repo.resolveBranch('master')).toBe(sha);
        expect((await s.api('DELETE', `/projects/${fork.body.id}`, bob)).status).toBe(200);
      } else {
        expect(fork.status).toBe(404);
        expect(fork.body).toEqual({ message: '404 Project Not Found' });
        expect((await s.api('GET', `/projects/${encodeURIComponent(`bob/doomed-${i}`)}`, bob)).status).toBe(404);
      }
    }
    // no project row of either and no repository or temporary directory without its project
    const ids = new Set((await s.ctx.data.all<{ id: number }>('SELECT id FROM projects')).map((r) => r.id));
    const rows = await s.ctx.data.all<{ path: string }>(`SELECT path FROM projects WHERE path LIKE 'doomed-%'`);
    expect(rows).toEqual([]);
    const orphans = readdirSync(s.ctx.paths.repositories).filter((name) => !/^\d+\.git$/.test(name) || !ids.has(Number(name.slice(0, -4))));
    expect(orphans).toEqual([]);
    expect(answers.every((a) => a === 201 || a === 404)).toBe(true);
    if (process.env.FORK_RACE_LOG) console.error(`fork answers: ${answers.join(' ')}`);
  }, 60_000);
});
