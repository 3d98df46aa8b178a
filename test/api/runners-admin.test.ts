/** The write half of the v3 runners API: PUT/DELETE /runners/:id and POST/DELETE /projects/:id/runners(/:runner_id). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, addMemberAsync, LEVELS, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ci, linkRunner, projectRunnersToken, registerRunner, runnerProjectIds, runnerRow } from '../helpers/runner-fixtures.js';

let s: TestServer;
let cast: Cast;
/** The cast's project (private): every role a member. */
let project: { id: number; path_with_namespace: string };
/** A second project where cast.master is master and cast.developer developer. */
let second: { id: number; path_with_namespace: string };
/** A project only the owner belongs to. */
let foreign: { id: number; path_with_namespace: string };

const specific = async (projectId: number, params: Record<string, unknown> = {}) => registerRunner(s, { token: await projectRunnersToken(s, projectId), ...params });
const shared = (params: Record<string, unknown> = {}) => registerRunner(s, params);
const link = (runnerId: number, projectId: number) => linkRunner(s, runnerId, projectId);
const projectsOf = (runnerId: number) => runnerProjectIds(s, runnerId);
const row = (id: number) => runnerRow(s, id);
const RUNNER_KEYS = ['active', 'description', 'id', 'is_shared', 'name'];

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'ra');
  project = await makeProject(s, cast.owner, 'runner-admin');
  second = await makeProject(s, cast.owner, 'runner-second');
  foreign = await makeProject(s, cast.owner, 'runner-foreign');
  await addCastMembers(s.ctx, cast, project.id);
  await addMemberAsync(s.ctx, { type: 'Project', id: second.id }, cast.master.id, LEVELS.master);
  await addMemberAsync(s.ctx, { type: 'Project', id: second.id }, cast.developer.id, LEVELS.developer);
});
afterAll(async () => {
  await s.close();
});

describe('PUT /runners/:id', () => {
  it('lets a master of the runner\'s project update every field; answers RunnerDetails', async () => {
    const r = await specific(project.id, { description: 'before' });
    const res = await s.api('PUT', `/runners/${r.id}`, cast.master, {
      description: 'after', active: false, tag_list: 'docker, linux,,docker', run_untagged: false, locked: true,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: r.id, description: 'after', active: false, is_shared: false, name: null, tag_list: ['docker', 'linux'], run_untagged: false,
      locked: true, version: null, revision: null, platform: null, architecture: null, contacted_at: null,
    });
    expect(res.body.projects).toEqual([expect.objectContaining({ id: project.id, path_with_namespace: project.path_with_namespace })]);
    expect(await row(r.id)).toMatchObject({ description: 'after', active: 0, run_untagged: 0, locked: 1, tag_list: '["docker","linux"]' });
  });

  it('takes tag_list as an array and form bodies; only given fields change; blank values count as not given', async () => {
    const r = await specific(project.id, { description: 'keep', tag_list: 'a' });
    const arr = await s.api('PUT', `/runners/${r.id}`, cast.master, { tag_list: ['x', 'y'] });
    expect(arr.status).toBe(200);
    expect(arr.body).toMatchObject({ description: 'keep', tag_list: ['x', 'y'], active: true, run_untagged: true, locked: false });
    const form = await s.api('PUT', `/runners/${r.id}`, cast.master, 'active=0&description=', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(200);
    expect(form.body).toMatchObject({ description: 'keep', active: false, tag_list: ['x', 'y'] });
    const empty = await s.api('PUT', `/runners/${r.id}`, cast.master, {});
    expect(empty.status).toBe(200);
    expect(empty.body.description).toBe('keep');
  });

  it('refuses a runner without tags that may not run untagged builds: 400 validation hash, nothing changes', async () => {
    const r = await specific(project.id);
    const res = await s.api('PUT', `/runners/${r.id}`, cast.master, { run_untagged: false, description: 'nope' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { tags_list: ['can not be empty when runner is not allowed to pick untagged jobs'] } });
    expect(await row(r.id)).toMatchObject({ run_untagged: 1, description: null });
    const bad = await s.api('PUT', `/runners/${r.id}`, cast.master, { active: 'maybe' });
    expect(bad.status).toBe(400);
  });

  it('authorization: anonymous 401, outsiders and developers 403, masters and admins 200; 404 and 400 for bad ids', async () => {
    const r = await specific(project.id);
    expect((await s.api('PUT', `/runners/${r.id}`, null, { description: 'x' })).status).toBe(401);
    for (const u of [cast.nonMember, cast.external, cast.guest, cast.reporter, cast.developer]) {
      const res = await s.api('PUT', `/runners/${r.id}`, u, { description: 'x' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: '403 Forbidden - No access granted' });
    }
    // authorization comes before params: an outsider learns nothing from a bad body
    expect((await s.api('PUT', `/runners/${r.id}`, cast.nonMember, { active: 'maybe' })).status).toBe(403);
    expect((await s.api('PUT', `/runners/${r.id}`, cast.owner, { description: 'owner' })).status).toBe(200);
    expect((await s.api('PUT', `/runners/${r.id}`, s.root, { description: 'admin' })).body.description).toBe('admin');
    const missing = await s.api('PUT', '/runners/999999', s.root, { description: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Runner Not Found' });
    expect((await s.api('PUT', '/runners/abc', s.root, { description: 'x' })).status).toBe(400);
  });

  it('a master of one of several projects may update it (8.12 ci_authorized_runners)', async () => {
    const r = await specific(foreign.id);
    await link(r.id, project.id);
    expect((await s.api('PUT', `/runners/${r.id}`, cast.master, { description: 'shared use' })).status).toBe(200);
  });

  it('shared runners: admins only (403 "Runner is shared" for everyone else)', async () => {
    const r = await shared();
    const res = await s.api('PUT', `/runners/${r.id}`, cast.master, { description: 'x' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: '403 Forbidden - Runner is shared' });
    const ok = await s.api('PUT', `/runners/${r.id}`, s.root, { description: 'by admin', active: false });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ is_shared: true, description: 'by admin', active: false });
  });
});

describe('DELETE /runners/:id', () => {
  it('lets a master of its only project remove it: 200 Runner, the row and links go, its token gets 403', async () => {
    const r = await specific(project.id, { description: 'doomed' });
    expect((await ci(s, 'POST', '/builds/register', { token: r.token })).status).not.toBe(403);
    const res = await s.api('DELETE', `/runners/${r.id}`, cast.master);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(RUNNER_KEYS);
    expect(res.body).toEqual({ id: r.id, description: 'doomed', active: true, is_shared: false, name: null });
    expect(await row(r.id)).toBeUndefined();
    expect(await projectsOf(r.id)).toEqual([]);
    expect((await ci(s, 'POST', '/builds/register', { token: r.token })).status).toBe(403);
    expect((await ci(s, 'POST', '/builds/register.json', { token: r.token })).status).toBe(403);
    expect((await s.api('GET', `/runners/${r.id}`, s.root)).status).toBe(404);
    expect((await s.api('DELETE', `/runners/${r.id}`, s.root)).status).toBe(404);
  });

  it('authorization: anonymous 401, outsiders and developers 403, admins 200; 404 for unknown ids', async () => {
    const r = await specific(project.id);
    expect((await s.api('DELETE', `/runners/${r.id}`, null)).status).toBe(401);
    for (const u of [cast.nonMember, cast.guest, cast.reporter, cast.developer]) {
      const res = await s.api('DELETE', `/runners/${r.id}`, u);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: '403 Forbidden - No access granted' });
    }
    expect(await row(r.id)).toBeDefined();
    expect((await s.api('DELETE', `/runners/${r.id}`, s.root)).status).toBe(200);
    expect(await row(r.id)).toBeUndefined();
    expect((await s.api('DELETE', '/runners/999999', s.root)).body).toEqual({ message: '404 Runner Not Found' });
  });

  it('a runner of several projects: 403 for masters, admins may remove it', async () => {
    const r = await specific(project.id);
    await link(r.id, second.id);
    const res = await s.api('DELETE', `/runners/${r.id}`, cast.master);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: '403 Forbidden - Runner associated with more than one project' });
    expect((await s.api('DELETE', `/runners/${r.id}`, s.root)).status).toBe(200);
  });

  it('shared runners: only admins', async () => {
    const r = await shared();
    const res = await s.api('DELETE', `/runners/${r.id}`, cast.master);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: '403 Forbidden - Runner is shared' });
    const ok = await s.api('DELETE', `/runners/${r.id}`, s.root);
    expect(ok.status).toBe(200);
    expect(ok.body.is_shared).toBe(true);
    expect((await ci(s, 'POST', '/builds/register', { token: r.token })).status).toBe(403);
  });
});

describe('POST /projects/:id/runners', () => {
  it('enables a runner of the caller\'s for another project they master: 201 Runner, then 409', async () => {
    const r = await specific(project.id, { description: 'roaming' });
    const res = await s.api('POST', `/projects/${second.id}/runners`, cast.master, { runner_id: r.id });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: r.id, description: 'roaming', active: true, is_shared: false, name: null });
    expect(await projectsOf(r.id)).toEqual([project.id, second.id]);
    const listed = await s.api('GET', `/projects/${second.id}/runners`, cast.master);
    expect(listed.body.map((x: { id: number }) => x.id)).toContain(r.id);
    const again = await s.api('POST', `/projects/${second.id}/runners`, cast.master, { runner_id: r.id });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: 'Runner was already enabled for this project' });
    const form = await s.api('POST', `/projects/${encodeURIComponent(second.path_with_namespace)}/runners`, cast.master, `runner_id=${r.id}`,
      { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(409);
  });

  it('authorization on the target project: anonymous 401, outsider 404, developer 403 (before params)', async () => {
    const r = await specific(project.id);
    expect((await s.api('POST', `/projects/${second.id}/runners`, null, { runner_id: r.id })).status).toBe(401);
    const outsider = await s.api('POST', `/projects/${second.id}/runners`, cast.nonMember, { runner_id: r.id });
    expect(outsider.status).toBe(404);
    expect(outsider.body).toEqual({ message: '404 Project Not Found' });
    expect((await s.api('POST', `/projects/${second.id}/runners`, cast.developer, { runner_id: r.id })).status).toBe(403);
    expect((await s.api('POST', `/projects/${second.id}/runners`, cast.developer, {})).status).toBe(403);
    expect(await projectsOf(r.id)).toEqual([project.id]);
  });

  it('needs access to the runner: 403 "No access granted" for a runner of a project the caller does not master; admins may', async () => {
    const r = await specific(foreign.id);
    const res = await s.api('POST', `/projects/${second.id}/runners`, cast.master, { runner_id: r.id });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: '403 Forbidden - No access granted' });
    expect(await projectsOf(r.id)).toEqual([foreign.id]);
    expect((await s.api('POST', `/projects/${second.id}/runners`, s.root, { runner_id: r.id })).status).toBe(201);
    expect(await projectsOf(r.id)).toEqual([second.id, foreign.id].sort((a, b) => a - b));
  });

  it('shared and locked runners cannot be enabled, not even by admins', async () => {
    const sh = await shared();
    const a = await s.api('POST', `/projects/${second.id}/runners`, s.root, { runner_id: sh.id });
    expect(a.status).toBe(403);
    expect(a.body).toEqual({ message: '403 Forbidden - Runner is shared' });
    const locked = await specific(project.id, { locked: true });
    for (const u of [cast.master, s.root]) {
      const b = await s.api('POST', `/projects/${second.id}/runners`, u, { runner_id: locked.id });
      expect(b.status).toBe(403);
      expect(b.body).toEqual({ message: '403 Forbidden - Runner is locked' });
    }
    expect(await projectsOf(locked.id)).toEqual([project.id]);
  });

  it('400 without runner_id, 404 for an unknown runner', async () => {
    const missing = await s.api('POST', `/projects/${second.id}/runners`, cast.master, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: '400 (Bad request) "runner_id" not given' });
    const unknown = await s.api('POST', `/projects/${second.id}/runners`, cast.master, { runner_id: 999999 });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Runner Not Found' });
    expect((await s.api('POST', `/projects/${second.id}/runners`, cast.master, { runner_id: 'abc' })).status).toBe(400);
  });
});

describe('DELETE /projects/:id/runners/:runner_id', () => {
  it('disables a runner for one of its projects: 200 Runner; then 404; its last project 403', async () => {
    const r = await specific(project.id, { description: 'two homes' });
    await link(r.id, second.id);
    const res = await s.api('DELETE', `/projects/${second.id}/runners/${r.id}`, cast.master);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: r.id, description: 'two homes', active: true, is_shared: false, name: null });
    expect(await projectsOf(r.id)).toEqual([project.id]);
    const again = await s.api('DELETE', `/projects/${second.id}/runners/${r.id}`, cast.master);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Runner Not Found' });
    const last = await s.api('DELETE', `/projects/${project.id}/runners/${r.id}`, cast.master);
    expect(last.status).toBe(403);
    expect(last.body).toEqual({ message: '403 Forbidden - Only one project associated with the runner. Please remove the runner instead' });
    expect((await s.api('DELETE', `/projects/${project.id}/runners/${r.id}`, s.root)).status).toBe(403);
    expect(await projectsOf(r.id)).toEqual([project.id]);
  });

  it('authorization: anonymous 401, outsider 404, developer 403, admin 200; unknown or shared runners 404', async () => {
    const r = await specific(project.id);
    await link(r.id, second.id);
    expect((await s.api('DELETE', `/projects/${second.id}/runners/${r.id}`, null)).status).toBe(401);
    expect((await s.api('DELETE', `/projects/${second.id}/runners/${r.id}`, cast.nonMember)).status).toBe(404);
    expect((await s.api('DELETE', `/projects/${second.id}/runners/${r.id}`, cast.developer)).status).toBe(403);
    expect(await projectsOf(r.id)).toEqual([project.id, second.id]);
    expect((await s.api('DELETE', `/projects/${second.id}/runners/${r.id}`, s.root)).status).toBe(200);
    expect((await s.api('DELETE', `/projects/${second.id}/runners/999999`, cast.master)).status).toBe(404);
    const sh = await shared();
    expect((await s.api('DELETE', `/projects/${second.id}/runners/${sh.id}`, cast.master)).status).toBe(404);
    expect((await s.api('DELETE', `/projects/${second.id}/runners/abc`, cast.master)).status).toBe(400);
  });
});
