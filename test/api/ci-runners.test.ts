/** Runner registration and removal (/ci/api/v1/runners/*), transport conventions, and the /api/v3 runner read routes. */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ci, exec, flags01, projectRunnersToken, registerRunner, registrationToken } from '../helpers/runner-fixtures.js';

let s: TestServer;
let cast: Cast;
let project: { id: number; path_with_namespace: string };
let otherProject: { id: number };

const sha256 = (t: string) => createHash('sha256').update(t).digest('hex');
const runnerRow = async (id: number) => flags01((await s.ctx.data.get(`SELECT * FROM runners WHERE id = ?`, [id])) as Record<string, unknown> | undefined);

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'rn');
  project = await makeProject(s, cast.owner, 'runner-project');
  otherProject = await makeProject(s, cast.owner, 'other-project');
  await addCastMembers(s.ctx, cast, project.id);
});
afterAll(async () => {
  await s.close();
});

describe('POST /ci/api/v1/runners/register', () => {
  it('registers a shared runner with the instance token: 201 {id, token}, exact application/json, token stored hashed', async () => {
    const r = await ci(s, 'POST', '/runners/register.json', {
      token: await registrationToken(s), description: 'shared one', tag_list: 'docker, linux,,docker',
      info: { name: 'gitlab-ci-multi-runner', version: '1.11.5', revision: 'cbfcb5c8', platform: 'linux', architecture: 'amd64', executor: 'shell' },
    });
    expect(r.status).toBe(201);
    expect(r.headers['content-type']).toBe('application/json');
    expect(Object.keys(r.body).sort()).toEqual(['id', 'token']);
    expect(typeof r.body.id).toBe('number');
    expect(r.body.token).toMatch(/^[0-9a-f]{30}$/);
    const row = (await runnerRow(r.body.id))!;
    expect(row.token_hash).toBe(sha256(r.body.token));
    expect(row.is_shared).toBe(1);
    expect(row.description).toBe('shared one');
    expect(JSON.parse(row.tag_list as string)).toEqual(['docker', 'linux']);
    expect(row).toMatchObject({ name: 'gitlab-ci-multi-runner', version: '1.11.5', revision: 'cbfcb5c8', platform: 'linux', architecture: 'amd64', run_untagged: 1, locked: 0 });
  });

  it('registers without the .json suffix and reads form bodies', async () => {
    const res = await s.app.inject({
      method: 'POST', url: '/ci/api/v1/runners/register', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${encodeURIComponent(await registrationToken(s))}&tag_list=ruby&run_untagged=false&locked=true`,
    });
    expect(res.statusCode).toBe(201);
    const row = (await runnerRow(JSON.parse(res.body).id))!;
    expect(row).toMatchObject({ run_untagged: 0, locked: 1, is_shared: 1 });
  });

  it("registers a specific runner with a project's runners token", async () => {
    const r = await ci(s, 'POST', '/runners/register.json', { token: await projectRunnersToken(s, project.id), description: 'mine' });
    expect(r.status).toBe(201);
    expect((await runnerRow(r.body.id))!.is_shared).toBe(0);
    const links = (await s.ctx.data.all(`SELECT project_id FROM runner_projects WHERE runner_id = ?`, [r.body.id]));
    expect(links).toEqual([{ project_id: project.id }]);
  });

  it('answers 403 for a bad token and 400 without one, creating nothing', async () => {
    const before = ((await s.ctx.data.get(`SELECT COUNT(*) AS n FROM runners`)) as { n: number }).n;
    const bad = await ci(s, 'POST', '/runners/register.json', { token: 'not-a-token' });
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual({ message: '403 Forbidden' });
    expect(bad.headers['content-type']).toBe('application/json');
    const missing = await ci(s, 'POST', '/runners/register.json', {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: '400 (Bad request) "token" not given' });
    expect(((await s.ctx.data.get(`SELECT COUNT(*) AS n FROM runners`)) as { n: number }).n).toBe(before);
  });

  it('refuses a runner without tags that may not run untagged builds (404, as 8.13)', async () => {
    const r = await ci(s, 'POST', '/runners/register.json', { token: await registrationToken(s), run_untagged: false });
    expect(r.status).toBe(404);
  });
});

describe('DELETE /ci/api/v1/runners/delete', () => {
  it('removes the runner (200, JSON body sent on DELETE), then 403 for the same token', async () => {
    const runner = await registerRunner(s, { token: await projectRunnersToken(s, project.id) });
    const r = await ci(s, 'DELETE', '/runners/delete', { token: runner.token });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body).toMatchObject({ id: runner.id, is_shared: false, active: true });
    expect(await runnerRow(runner.id)).toBeUndefined();
    expect((await s.ctx.data.all(`SELECT * FROM runner_projects WHERE runner_id = ?`, [runner.id]))).toEqual([]);
    const again = await ci(s, 'DELETE', '/runners/delete', { token: runner.token });
    expect(again.status).toBe(403);
  });

  it('answers 400 without a token', async () => {
    const r = await ci(s, 'DELETE', '/runners/delete', {});
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: '400 (Bad request) "token" not given' });
  });
});

describe('transport', () => {
  it('answers unknown routes under /ci/api/v1 with a JSON 404', async () => {
    for (const [method, path] of [['GET', '/nope'], ['GET', '/builds/register'], ['POST', '/runners/verify.json']] as const) {
      const r = await ci(s, method, path);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Not Found' });
      expect(r.headers['content-type']).toBe('application/json');
    }
  });

  it('documents every runner route in the OpenAPI document', async () => {
    const r = await s.api('GET', '/openapi.json', null);
    expect(r.status).toBe(200);
    for (const [path, method] of [
      ['/ci/api/v1/runners/register', 'post'], ['/ci/api/v1/runners/delete', 'delete'], ['/ci/api/v1/builds/register', 'post'],
      ['/ci/api/v1/builds/{id}', 'put'], ['/ci/api/v1/builds/{id}/trace.txt', 'patch'], ['/ci/api/v1/builds/{id}/artifacts', 'post'],
      ['/ci/api/v1/builds/{id}/artifacts', 'get'], ['/ci/api/v1/builds/{id}/artifacts', 'delete'], ['/api/v3/runners', 'get'],
      ['/api/v3/runners/all', 'get'], ['/api/v3/runners/{id}', 'get'], ['/api/v3/projects/{id}/runners', 'get'],
    ]) {
      expect(r.body.paths[path!]?.[method!], `${method} ${path}`).toBeDefined();
    }
  });

  it('does not use the /api/v3 user authentication (a private token is not a runner token)', async () => {
    const r = await ci(s, 'POST', '/builds/register.json', { token: s.root.token });
    expect(r.status).toBe(403);
  });
});

describe('/api/v3 runner routes', () => {
  let shared: { id: number; token: string };
  let specific: { id: number; token: string };
  let paused: { id: number; token: string };
  let foreign: { id: number; token: string };

  beforeAll(async () => {
    await exec(s, `DELETE FROM runners`);
    shared = await registerRunner(s, { description: 'shared', tag_list: 'a,b' });
    specific = await registerRunner(s, { token: await projectRunnersToken(s, project.id), description: 'specific', info: { version: '1.0.0' } });
    paused = await registerRunner(s, { token: await projectRunnersToken(s, project.id), description: 'paused' });
    foreign = await registerRunner(s, { token: await projectRunnersToken(s, otherProject.id), description: 'foreign' });
    await exec(s, `UPDATE runners SET active = FALSE WHERE id = ?`, [paused.id]);
    await exec(s, `UPDATE runners SET contacted_at = ? WHERE id = ?`, [new Date().toISOString(), specific.id]);
  });

  const ids = (body: { id: number }[]) => body.map((r) => r.id);

  it('GET /runners lists the specific runners of projects the caller masters, with scopes and pagination headers', async () => {
    const r = await s.api('GET', '/runners', cast.master);
    expect(r.status).toBe(200);
    expect(ids(r.body)).toEqual([specific.id, paused.id]);
    expect(r.body[0]).toEqual({ id: specific.id, description: 'specific', active: true, is_shared: false, name: null });
    expect(r.headers['x-total']).toBe('2');
    expect(r.headers['x-page']).toBe('1');
    expect(r.headers.link).toContain('rel="first"');
    expect(ids((await s.api('GET', '/runners?scope=paused', cast.master)).body)).toEqual([paused.id]);
    expect(ids((await s.api('GET', '/runners?scope=active', cast.master)).body)).toEqual([specific.id]);
    expect(ids((await s.api('GET', '/runners?scope=online', cast.master)).body)).toEqual([specific.id]);
    const page2 = await s.api('GET', '/runners?per_page=1&page=2', cast.master);
    expect(ids(page2.body)).toEqual([paused.id]);
    expect(page2.headers['x-total-pages']).toBe('2');
    const bad = await s.api('GET', '/runners?scope=shared', cast.master);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Scope contains invalid value' });
  });

  it('GET /runners: developers and below, outsiders see none; anonymous 401', async () => {
    for (const u of [cast.developer, cast.reporter, cast.guest, cast.nonMember] as TestUser[]) {
      const r = await s.api('GET', '/runners', u);
      expect(r.status).toBe(200);
      expect(r.body).toEqual([]);
    }
    expect(ids((await s.api('GET', '/runners', cast.owner)).body)).toEqual([specific.id, paused.id, foreign.id]);
    expect((await s.api('GET', '/runners', null)).status).toBe(401);
  });

  it('GET /runners/all is for admins, with scopes', async () => {
    const r = await s.api('GET', '/runners/all', s.root);
    expect(r.status).toBe(200);
    expect(ids(r.body)).toEqual([shared.id, specific.id, paused.id, foreign.id]);
    expect(ids((await s.api('GET', '/runners/all?scope=shared', s.root)).body)).toEqual([shared.id]);
    expect(ids((await s.api('GET', '/runners/all?scope=specific', s.root)).body)).toEqual([specific.id, paused.id, foreign.id]);
    expect((await s.api('GET', '/runners/all?scope=bogus', s.root)).status).toBe(400);
    expect((await s.api('GET', '/runners/all', cast.master)).status).toBe(403);
    expect((await s.api('GET', '/runners/all', null)).status).toBe(401);
  });

  it('GET /runners/:id shows RunnerDetails: shared runners to anyone, specific ones to admins and masters', async () => {
    const r = await s.api('GET', `/runners/${specific.id}`, cast.master);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: specific.id, description: 'specific', active: true, is_shared: false, tag_list: [], run_untagged: true, locked: false,
      version: '1.0.0', platform: null,
    });
    expect(typeof r.body.contacted_at).toBe('string');
    expect(r.body.projects).toEqual([expect.objectContaining({ id: project.id, path_with_namespace: project.path_with_namespace })]);
    expect(r.body.token).toBeUndefined();
    const sh = await s.api('GET', `/runners/${shared.id}`, cast.nonMember);
    expect(sh.status).toBe(200);
    expect(sh.body).toMatchObject({ is_shared: true, tag_list: ['a', 'b'], projects: [] });
    expect((await s.api('GET', `/runners/${foreign.id}`, s.root)).body.projects).toEqual([expect.objectContaining({ id: otherProject.id })]);
    for (const u of [cast.developer, cast.guest, cast.nonMember]) {
      const denied = await s.api('GET', `/runners/${specific.id}`, u);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ message: '403 Forbidden - No access granted' });
    }
    expect((await s.api('GET', '/runners/999999', s.root)).body).toEqual({ message: '404 Runner Not Found' });
    expect((await s.api('GET', `/runners/${shared.id}`, null)).status).toBe(401);
  });

  it('GET /projects/:id/runners lists specific and shared runners for masters; 403 below, 404 hidden', async () => {
    const r = await s.api('GET', `/projects/${project.id}/runners`, cast.master);
    expect(r.status).toBe(200);
    expect(ids(r.body)).toEqual([shared.id, specific.id, paused.id]);
    expect(r.headers['x-total']).toBe('3');
    expect(ids((await s.api('GET', `/projects/${project.id}/runners?scope=shared`, s.root)).body)).toEqual([shared.id]);
    expect(ids((await s.api('GET', `/projects/${project.id}/runners?scope=paused`, cast.owner)).body)).toEqual([paused.id]);
    expect((await s.api('GET', `/projects/${project.id}/runners`, cast.developer)).status).toBe(403);
    expect((await s.api('GET', `/projects/${project.id}/runners`, cast.nonMember)).status).toBe(404);
    expect((await s.api('GET', `/projects/${project.id}/runners`, null)).status).toBe(401);
  });
});
