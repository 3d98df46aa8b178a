import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerStorage } from '../../daemon/services/repository/storage.js';
import { lookupProjectAsync, updateProject } from '../../daemon/services/projects/projects.js';
import { findUser } from '../../daemon/services/users/users.js';
import { updateSettings } from '../../daemon/services/instance/settings.js';
import { now } from '../../daemon/context.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeGroupAsync, makeProject } from '../helpers/fixtures.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
const moved: [string, string][] = [];
const createdIds: number[] = [];

beforeAll(async () => {
  s = await startTestServer();
  registerStorage({
    created: async (_ctx, p) => {
      createdIds.push(p.id);
      if (p.name === 'explode') throw new Error('disk full');
    },
    moved: async (_ctx, _p, from, to) => {
      if (to.endsWith('/cannot-move')) throw new Error('rename failed');
      moved.push([from, to]);
    },
  });
  [alice, bob, carol] = await Promise.all([s.user('alice', { projects_limit: 50 }), s.user('bob'), s.user('carol', { projects_limit: 1 })]);
});
afterAll(async () => { await s.close(); });

const PROJECT_KEYS = [
  'id', 'description', 'default_branch', 'tag_list', 'public', 'archived', 'visibility_level', 'ssh_url_to_repo', 'http_url_to_repo',
  'web_url', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'issues_enabled', 'merge_requests_enabled', 'wiki_enabled',
  'builds_enabled', 'snippets_enabled', 'container_registry_enabled', 'created_at', 'last_activity_at', 'shared_runners_enabled',
  'creator_id', 'namespace', 'avatar_url', 'star_count', 'forks_count', 'open_issues_count', 'public_builds', 'shared_with_groups',
];

describe('POST /projects', () => {
  it('creates a private project in the caller\'s namespace with a path generated from the name', async () => {
    const r = await s.api('POST', '/projects', alice, { name: 'Hello World', description: 'first' });
    expect(r.status).toBe(201);
    for (const k of PROJECT_KEYS) expect(r.body).toHaveProperty(k);
    expect(r.body).toMatchObject({
      name: 'Hello World', path: 'hello-world', path_with_namespace: 'alice/hello-world', name_with_namespace: 'alice / Hello World',
      description: 'first', visibility_level: 0, public: false, archived: false, default_branch: 'master', creator_id: alice.id,
      web_url: 'http://gantry.test/alice/hello-world', http_url_to_repo: 'http://gantry.test/alice/hello-world.git',
      ssh_url_to_repo: 'git@gantry.test:alice/hello-world.git', star_count: 0, forks_count: 0, open_issues_count: 0,
    });
    expect(r.body.owner).toMatchObject({ id: alice.id, username: 'alice' });
    expect(r.body.namespace).toMatchObject({ path: 'alice', kind: 'user', owner_id: alice.id });
    expect(typeof r.body.runners_token).toBe('string');
    expect(typeof r.body.created_at).toBe('string');
    expect(r.body.permissions).toBeUndefined();
  });

  it('honours the flags, public=true and visibility_level, and form bodies', async () => {
    const r = await s.api('POST', '/projects', alice, {
      name: 'flags', issues_enabled: false, merge_requests_enabled: false, builds_enabled: false, wiki_enabled: false,
      snippets_enabled: true, container_registry_enabled: true, shared_runners_enabled: false, public_builds: false, public: true,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      issues_enabled: false, merge_requests_enabled: false, builds_enabled: false, wiki_enabled: false, snippets_enabled: true,
      container_registry_enabled: true, shared_runners_enabled: false, public_builds: false, visibility_level: 20, public: true,
    });
    expect(r.body.open_issues_count).toBeUndefined();
    const form = await s.api('POST', '/projects', alice, 'name=form%20one&visibility_level=10&wiki_enabled=0&path=custom', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(201);
    expect(form.body).toMatchObject({ path: 'custom', visibility_level: 10, wiki_enabled: false });
  });

  it('creates in a group namespace the caller may create in, and refuses others', async () => {
    const g = await makeGroupAsync(s.ctx, 'acme', { owner: alice });
    const r = await s.api('POST', '/projects', alice, { name: 'tool', namespace_id: g });
    expect(r.status).toBe(201);
    expect(r.body.path_with_namespace).toBe('acme/tool');
    expect(r.body.owner).toBeUndefined();
    const denied = await s.api('POST', '/projects', bob, { name: 'tool2', namespace_id: g });
    expect(denied.status).toBe(400);
    expect(denied.body).toEqual({ message: { namespace: ['is not valid'] } });
    const alicesNamespace = (await s.api('GET', '/projects/owned', alice)).body[0].namespace.id;
    const other = await s.api('POST', '/projects', bob, { name: 'x', namespace_id: alicesNamespace });
    expect(other.status).toBe(400);
    expect((await s.api('POST', '/projects', bob, { name: 'x', namespace_id: 99999 })).body).toEqual({ message: { namespace: ['is not valid'] } });
  });

  it('400 for a missing name, an invalid name or path, and a taken path', async () => {
    expect((await s.api('POST', '/projects', alice, {})).body).toEqual({ message: '400 (Bad request) "name" not given' });
    expect((await s.api('POST', '/projects', alice)).body).toEqual({ message: '400 (Bad request) "name" not given' });
    expect((await s.api('POST', '/projects', alice, { name: '' })).status).toBe(400);
    const badName = await s.api('POST', '/projects', alice, { name: '-bad*name' });
    expect(badName.status).toBe(400);
    expect(badName.body.message.name).toBeDefined();
    const badPath = await s.api('POST', '/projects', alice, { name: 'ok', path: 'bad path!' });
    expect(badPath.status).toBe(400);
    expect(badPath.body.message.path).toBeDefined();
    const taken = await s.api('POST', '/projects', alice, { name: 'Hello World' });
    expect(taken.status).toBe(400);
    expect(taken.body.message.path).toEqual(['has already been taken']);
    const badVis = await s.api('POST', '/projects', alice, { name: 'vis', visibility_level: 5 });
    expect(badVis.body).toEqual({ message: { visibility_level: ['is not included in the list'] } });
    const notInt = await s.api('POST', '/projects', alice, { name: 'vis', visibility_level: 'high' });
    expect(notInt.status).toBe(400);
    expect(notInt.body.message).toBe('400 (Bad request) "visibility_level" is invalid');
  });

  it('two creates of one path at once: one 201, one 400 (the path is taken), on either engine', async () => {
    const [a, b] = await Promise.all([
      s.api('POST', '/projects', alice, { name: 'Twin' }), s.api('POST', '/projects', alice, { name: 'Twin' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 400]);
    expect((a.status === 400 ? a : b).body.message.path).toEqual(['has already been taken']);
  });

  it('creates at once cannot pass the projects limit together, on either engine', async () => {
    const dave = await s.user('dave', { projects_limit: 2 });
    const results = await Promise.all([1, 2, 3, 4].map((i) => s.api('POST', '/projects', dave, { name: `rush ${i}` })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 403, 403]);
    expect((await s.api('GET', '/projects/owned', dave)).body).toHaveLength(2);
  });

  it('a null or blank optional field counts as not given', async () => {
    const r = await s.api('POST', '/projects', alice, { name: 'nulls', issues_enabled: null, description: '', path: '' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ issues_enabled: true, description: null, path: 'nulls' });
  });

  it('403 over the projects limit; 400 for a restricted visibility (non-admins only)', async () => {
    expect((await s.api('POST', '/projects', carol, { name: 'one' })).status).toBe(201);
    const over = await s.api('POST', '/projects', carol, { name: 'two' });
    expect(over.status).toBe(403);
    expect(over.body.message).toMatch(/^403 Forbidden - Your project limit is 1 projects/);
    await updateSettings(s.ctx, { restricted_visibility_levels: [20] });
    try {
      const r = await s.api('POST', '/projects', bob, { name: 'pub', visibility_level: 20 });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: { visibility_level: ['Public has been restricted by your GitLab administrator'] } });
      expect((await s.api('POST', '/projects', s.root, { name: 'pub', visibility_level: 20 })).status).toBe(201);
    } finally {
      await updateSettings(s.ctx, { restricted_visibility_levels: [] });
    }
  });

  it('leaves no project behind when storage creation fails', async () => {
    const before = createdIds.length;
    const r = await s.api('POST', '/projects', alice, { name: 'explode' });
    expect(r.status).toBe(500);
    expect(createdIds.length).toBe(before + 1);
    const id = createdIds.at(-1)!;
    expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM projects WHERE id = ?', [id])).toEqual({ n: 0 });
    expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM members WHERE source_type = ? AND source_id = ?', ['Project', id])).toEqual({ n: 0 });
    expect((await s.api('GET', '/projects/alice%2Fexplode', alice)).status).toBe(404);
  });
});

describe('POST /projects/user/:user_id', () => {
  it('lets an admin create a project owned by another user', async () => {
    const r = await s.api('POST', `/projects/user/${bob.id}`, s.root, { name: 'Given', description: 'gift', visibility_level: 10 });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ path_with_namespace: 'bob/given', description: 'gift', visibility_level: 10, creator_id: s.root.id });
    expect(r.body.owner.id).toBe(bob.id);
    const owned = await s.api('GET', '/projects/owned', bob);
    expect(owned.body.map((p: { path: string }) => p.path)).toContain('given');
  });
  it('403 for non-admins (before params), 404 for an unknown user, 400 without a name', async () => {
    expect((await s.api('POST', `/projects/user/${bob.id}`, alice, {})).status).toBe(403);
    expect((await s.api('POST', `/projects/user/${bob.id}`, alice, { name: 'x' })).body).toEqual({ message: '403 Forbidden' });
    expect((await s.api('POST', '/projects/user/9999', s.root, { name: 'x' })).body).toEqual({ message: '404 User Not Found' });
    expect((await s.api('POST', `/projects/user/${bob.id}`, s.root, {})).body).toEqual({ message: '400 (Bad request) "name" not given' });
  });
});

describe('GET /projects/:id', () => {
  it('finds by numeric id, by URL-encoded path (any case) and with a .json suffix', async () => {
    const p = await makeProject(s, alice, 'lookup');
    const byId = await s.api('GET', `/projects/${p.id}`, alice);
    expect(byId.status).toBe(200);
    expect(byId.body.id).toBe(p.id);
    expect(byId.body.permissions).toEqual({ project_access: { access_level: 40, notification_level: 3 }, group_access: null });
    expect(typeof byId.body.runners_token).toBe('string');
    const byPath = await s.app.inject({ method: 'GET', url: '/api/v3/projects/alice%2Flookup', headers: { 'private-token': alice.token } });
    expect(byPath.statusCode).toBe(200);
    expect(byPath.json().id).toBe(p.id);
    const upper = await s.app.inject({ method: 'GET', url: '/api/v3/projects/ALICE%2FLookup', headers: { 'private-token': alice.token } });
    expect(upper.json().id).toBe(p.id);
    expect((await s.api('GET', `/projects/alice%2Flookup.json`, alice)).body.id).toBe(p.id);
  });
  it('404 Project Not Found for absent or hidden projects', async () => {
    const p = await makeProject(s, alice, 'secret');
    for (const path of ['/projects/99999', '/projects/nobody%2Fnothing', `/projects/${p.id}`, '/projects/alice%2Fsecret']) {
      const r = await s.api('GET', path, bob);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Project Not Found' });
    }
    expect((await s.api('GET', `/projects/${p.id}`, null)).status).toBe(401);
  });
  it('reaches private projects through a group namespace and a group share, at their levels', async () => {
    const g = await makeGroupAsync(s.ctx, 'reach-group', { owner: alice });
    const inGroup = await makeProject(s, alice, 'in group', { namespaceId: g });
    const shared = await makeProject(s, alice, 'shared out');
    const friends = await makeGroupAsync(s.ctx, 'reach-friends', { owner: alice });
    const t = now();
    await s.ctx.data.run('INSERT INTO project_group_links (project_id, group_id, group_access, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      [shared.id, friends, 30, t, t]);
    for (const id of [inGroup.id, shared.id]) expect((await s.api('GET', `/projects/${id}`, bob)).status).toBe(404);
    await addMemberAsync(s.ctx, { type: 'Namespace', id: g }, bob.id, 40);
    await addMemberAsync(s.ctx, { type: 'Namespace', id: friends }, bob.id, 40);
    const viaGroup = await s.api('GET', '/projects/reach-group%2Fin-group', bob);
    expect(viaGroup.status).toBe(200);
    expect(viaGroup.body.permissions).toEqual({ project_access: null, group_access: { access_level: 40, notification_level: 3 } });
    expect(typeof viaGroup.body.runners_token).toBe('string');
    // the share caps the group member's 40 at the link's 30: reads, but no runners token and no settings
    const viaShare = await s.api('GET', `/projects/${shared.id}`, bob);
    expect(viaShare.status).toBe(200);
    expect(viaShare.body.runners_token).toBeUndefined();
    expect((await s.api('PUT', `/projects/${shared.id}`, bob, { description: 'x' })).status).toBe(403);
    expect((await s.api('PUT', `/projects/${inGroup.id}`, bob, { description: 'x' })).status).toBe(200);
  });
  it('ids beyond the integer columns are absent, not errors, on either engine', async () => {
    for (const id of ['2147483648', '99999999999999999999', '0']) {
      expect((await s.api('GET', `/projects/${id}`, alice)).body).toEqual({ message: '404 Project Not Found' });
    }
    expect((await s.api('POST', '/projects', alice, { name: 'far', namespace_id: 2147483648 })).body).toEqual({ message: { namespace: ['is not valid'] } });
    expect((await s.api('POST', '/projects/user/2147483648', s.root, { name: 'far' })).body).toEqual({ message: '404 User Not Found' });
  });
  it('shows runners_token only to those who can admin the project', async () => {
    const p = await makeProject(s, alice, 'tokens', { visibility: 20 });
    const r = await s.api('GET', `/projects/${p.id}`, bob);
    expect(r.status).toBe(200);
    expect(r.body.runners_token).toBeUndefined();
    expect(r.body.permissions).toEqual({ project_access: null, group_access: null });
  });
});

describe('PUT /projects/:id', () => {
  it('updates settings and returns the project with access and runners token', async () => {
    const p = await makeProject(s, alice, 'editable');
    const r = await s.api('PUT', `/projects/${p.id}`, alice, {
      description: 'new', default_branch: 'develop', issues_enabled: false, public_builds: false, visibility_level: 10,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ description: 'new', default_branch: 'develop', issues_enabled: false, public_builds: false, visibility_level: 10 });
    expect(r.body.permissions.project_access.access_level).toBe(40);
    expect(typeof r.body.runners_token).toBe('string');
    expect((await s.api('PUT', `/projects/${p.id}`, alice, { public: true })).body.visibility_level).toBe(20);
  });
  it('renames and moves the path, telling storage; 400 on invalid or taken values', async () => {
    const p = await makeProject(s, alice, 'old name');
    await makeProject(s, alice, 'occupied');
    const r = await s.api('PUT', `/projects/${p.id}`, alice, { name: 'New Name', path: 'new-path' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'New Name', path: 'new-path', path_with_namespace: 'alice/new-path' });
    expect(moved).toContainEqual(['alice/old-name', 'alice/new-path']);
    const taken = await s.api('PUT', `/projects/${p.id}`, alice, { path: 'occupied' });
    expect(taken.status).toBe(400);
    expect(taken.body.message.path).toEqual(['has already been taken']);
    expect((await s.api('PUT', `/projects/${p.id}`, alice, { path: 'bad path' })).body.message.path).toBeDefined();
    expect((await s.api('PUT', `/projects/${p.id}`, alice, { default_branch: 'bad..ref' })).body).toEqual({ message: { default_branch: ['is invalid'] } });
    expect((await s.api('PUT', `/projects/${p.id}`, alice, { visibility_level: 7 })).status).toBe(400);
    // A failed storage move leaves the row as it was.
    const failed = await s.api('PUT', `/projects/${p.id}`, alice, { path: 'cannot-move' });
    expect(failed.status).toBe(500);
    expect((await s.api('GET', `/projects/${p.id}`, alice)).body.path).toBe('new-path');
  });
  it('a project deleted by another request between the lookup and the write: 404, not a 500', async () => {
    const p = await makeProject(s, alice, 'vanishing');
    const actor = await findUser(s.ctx, alice.id);
    const stale = (await lookupProjectAsync(s.ctx, p.id))!;
    expect((await s.api('DELETE', `/projects/${p.id}`, alice)).status).toBe(200);
    await expect(updateProject(s.ctx, actor, stale, { description: 'late' })).rejects.toMatchObject({ statusCode: 404 });
    await expect(updateProject(s.ctx, actor, stale, { path: 'late-path' })).rejects.toMatchObject({ statusCode: 404 });
  });
  it('masters may edit settings but not rename or change visibility', async () => {
    const p = await makeProject(s, alice, 'team');
    await addMemberAsync(s.ctx, { type: 'Project', id: p.id }, bob.id, 40);
    expect((await s.api('PUT', `/projects/${p.id}`, bob, { description: 'by master' })).status).toBe(200);
    expect((await s.api('PUT', `/projects/${p.id}`, bob, { name: 'team' })).status).toBe(200);
    expect((await s.api('PUT', `/projects/${p.id}`, bob, { name: 'renamed' })).body).toEqual({ message: '403 Forbidden' });
    expect((await s.api('PUT', `/projects/${p.id}`, bob, { visibility_level: 20 })).status).toBe(403);
    expect((await s.api('PUT', `/projects/${p.id}`, bob, { public: true })).status).toBe(403);
    await addMemberAsync(s.ctx, { type: 'Project', id: p.id }, bob.id, 30);
    expect((await s.api('PUT', `/projects/${p.id}`, bob, { description: 'dev' })).status).toBe(403);
  });
});

describe('DELETE /projects/:id', () => {
  it('removes the project, its rows and its uploads directory; answers true', async () => {
    const p = await makeProject(s, alice, 'doomed');
    // starred directly (POST /projects/:id/star is not on the data layer yet)
    await s.ctx.data.run('INSERT INTO stars (user_id, project_id, created_at) VALUES (?, ?, ?)', [alice.id, p.id, now()]);
    const dir = join(s.ctx.paths.uploads, String(p.id));
    mkdirSync(dir, { recursive: true });
    const r = await s.api('DELETE', `/projects/${p.id}`, alice);
    expect(r.status).toBe(200);
    expect(r.body).toBe(true);
    expect(existsSync(dir)).toBe(false);
    expect((await s.api('GET', `/projects/${p.id}`, alice)).status).toBe(404);
    expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM stars WHERE project_id = ?', [p.id])).toEqual({ n: 0 });
    expect((await s.api('DELETE', `/projects/${p.id}`, alice)).status).toBe(404);
  });
});

describe('OpenAPI', () => {
  it('documents the project routes', async () => {
    const r = await s.api('GET', '/openapi.json', null);
    expect(r.status).toBe(200);
    for (const path of ['/api/v3/projects', '/api/v3/projects/{id}', '/api/v3/projects/fork/{id}', '/api/v3/projects/{id}/hooks/{hook_id}',
      '/api/v3/projects/{id}/events', '/api/v3/projects/{id}/uploads', '/api/v3/projects/{id}/share']) {
      expect(r.body.paths[path], path).toBeDefined();
    }
  });
});
