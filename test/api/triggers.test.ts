/**
 * Build triggers (GitLab 8.13 lib/api/triggers.rb): /projects/:id/triggers (list, create, show, delete by token;
 * master and up), POST /projects/:id/trigger/builds (the token is the only credential): the pipeline it creates, the
 * trigger request it records, the variables the runner gets, and every error answer, which changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { buildsOf, pipelinesOf, pushFiles } from '../helpers/ci.js';
import { claim, clearQueue, registerRunner } from '../helpers/runner-fixtures.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let cast: Cast;
let priv: { id: number; path_with_namespace: string };
let pub: { id: number; path_with_namespace: string };

const CI_YML = `
build:
  script: make
triggered_only:
  script: deploy
  only: [triggers]
not_triggered:
  script: lint
  except: [triggers]
tags_only:
  script: release
  only: [tags]
`;

const triggers = (p: { id: number }) => `/projects/${p.id}/triggers`;
const run = (p: { id: number } | string) => `/projects/${typeof p === 'string' ? encodeURIComponent(p) : p.id}/trigger/builds`;
const counts = async () => ({
  pipelines: Number((await s.ctx.data.get<{ n: number }>('SELECT COUNT(*) AS n FROM pipelines'))!.n),
  requests: Number((await s.ctx.data.get<{ n: number }>('SELECT COUNT(*) AS n FROM ci_trigger_requests'))!.n),
});
async function newTrigger(p: { id: number }): Promise<string> {
  const r = await s.api('POST', triggers(p), cast.owner);
  expect(r.status).toBe(201);
  return r.body.token as string;
}

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'trg');
  priv = await makeProject(s, cast.owner, 'trigger-private', { visibility: 0 });
  pub = await makeProject(s, cast.owner, 'trigger-public', { visibility: 20 });
  await addCastMembers(s.ctx, cast, priv.id);
  await addCastMembers(s.ctx, cast, pub.id);
  await pushFiles(s.ctx, priv.id, cast.owner.id, { '.gitlab-ci.yml': CI_YML, 'README.md': 'hi' }, { message: 'first [ci skip]', tag: 'v1.0' });
  await pushFiles(s.ctx, pub.id, cast.owner.id, { '.gitlab-ci.yml': CI_YML });
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

describe('/projects/:id/triggers', () => {
  it('creates a trigger with a 30 hex character token and 8.13 Trigger fields', async () => {
    const r = await s.api('POST', triggers(priv), cast.master);
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['created_at', 'deleted_at', 'last_used', 'token', 'updated_at']);
    expect(r.body.token).toMatch(/^[0-9a-f]{30}$/);
    expect(r.body.deleted_at).toBeNull();
    expect(r.body.last_used).toBeNull();
    expect(new Date(r.body.created_at).toISOString()).toBe(r.body.created_at);
    const other = await s.api('POST', triggers(priv), cast.owner);
    expect(other.body.token).not.toBe(r.body.token);
  });

  it('stores the token sealed and hashed, never in plain text', async () => {
    const token = await newTrigger(priv);
    const rows = await s.ctx.data.all<Record<string, unknown>>('SELECT * FROM ci_triggers WHERE project_id = ?', [priv.id]);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(JSON.stringify(row)).not.toContain(token);
  });

  it('lists live triggers oldest first with pagination headers, and shows one by token', async () => {
    const p = await makeProject(s, cast.owner, 'trigger-list');
    const first = (await s.api('POST', triggers(p), cast.owner)).body.token;
    const second = (await s.api('POST', triggers(p), cast.owner)).body.token;
    const list = await s.api('GET', `${triggers(p)}?per_page=1`, cast.owner);
    expect(list.status).toBe(200);
    expect(list.body.map((t: { token: string }) => t.token)).toEqual([first]);
    expect(list.headers['x-total']).toBe('2');
    expect(list.headers['x-next-page']).toBe('2');
    expect((await s.api('GET', `${triggers(p)}?page=2&per_page=1`, cast.owner)).body[0].token).toBe(second);
    const one = await s.api('GET', `${triggers(p)}/${second}`, cast.owner);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ token: second, deleted_at: null, last_used: null });
    // by path too
    expect((await s.api('GET', `/projects/${encodeURIComponent(p.path_with_namespace)}/triggers/${first}`, cast.owner)).body.token).toBe(first);
  });

  it('deletes a trigger: answered with deleted_at set, then gone from list, show, delete and the trigger API', async () => {
    const p = await makeProject(s, cast.owner, 'trigger-delete');
    const token = (await s.api('POST', triggers(p), cast.owner)).body.token;
    const del = await s.api('DELETE', `${triggers(p)}/${token}`, cast.owner);
    expect(del.status).toBe(200);
    expect(del.body.token).toBe(token);
    expect(del.body.deleted_at).toEqual(expect.any(String));
    expect((await s.api('GET', triggers(p), cast.owner)).body).toEqual([]);
    expect((await s.api('GET', triggers(p), cast.owner)).headers['x-total']).toBe('0');
    for (const method of ['GET', 'DELETE'] as const) {
      const r = await s.api(method, `${triggers(p)}/${token}`, cast.owner);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Trigger Not Found' });
    }
  });

  it("answers 404 Trigger Not Found for an unknown token and for another project's token", async () => {
    const mine = await newTrigger(pub);
    for (const path of [`${triggers(priv)}/abcdef012345`, `${triggers(priv)}/${mine}`]) {
      for (const method of ['GET', 'DELETE'] as const) {
        const r = await s.api(method, path, cast.master);
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ message: '404 Trigger Not Found' });
      }
    }
    expect((await s.api('GET', `${triggers(pub)}/${mine}`, cast.master)).status).toBe(200);
  });

  it('answers 404 Project Not Found for a missing project', async () => {
    for (const [method, path] of [['GET', '/projects/999999/triggers'], ['POST', '/projects/999999/triggers'], ['GET', '/projects/999999/triggers/x']] as const) {
      const r = await s.api(method, path, cast.master);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Project Not Found' });
    }
  });

  it('deletes the triggers with their project', async () => {
    const p = await makeProject(s, cast.owner, 'trigger-doomed');
    await s.api('POST', triggers(p), cast.owner);
    expect((await s.api('DELETE', `/projects/${p.id}`, cast.owner)).status).toBeLessThan(300);
    await settleBuildWork(s.ctx);
    const left = await s.ctx.data.get<{ n: number }>('SELECT COUNT(*) AS n FROM ci_triggers WHERE project_id = ?', [p.id]);
    expect(Number(left!.n)).toBe(0);
  });
});

describe('authorization (admin_build: master and up; the developer gets 403 as in 8.13)', () => {
  const allowed = ['owner', 'master', 'admin'] as const;
  const denied = ['developer', 'reporter', 'guest'] as const;

  for (const [label, project] of [['private', () => priv], ['public', () => pub]] as const) {
    it(`on a ${label} project`, async () => {
      const p = project();
      const token = await newTrigger(p);
      const before = (await s.api('GET', triggers(p), cast.master)).headers['x-total'];
      for (const [method, path] of [['GET', triggers(p)], ['POST', triggers(p)], ['GET', `${triggers(p)}/${token}`], ['DELETE', `${triggers(p)}/${token}`]] as const) {
        const anon = await s.api(method, path, null);
        expect(anon.status, `anonymous ${method} ${path}`).toBe(401);
        expect(anon.body).toEqual({ message: '401 Unauthorized' });
        for (const role of denied) {
          const r = await s.api(method, path, cast[role]);
          expect(r.status, `${role} ${method} ${path}`).toBe(403);
          expect(r.body).toEqual({ message: '403 Forbidden' });
        }
        const outsider = await s.api(method, path, cast.nonMember);
        expect(outsider.status, `non-member ${method} ${path}`).toBe(label === 'private' ? 404 : 403);
        const external = await s.api(method, path, cast.external);
        expect(external.status, `external ${method} ${path}`).toBe(label === 'private' ? 404 : 403);
      }
      // nothing was created or deleted by the refused calls
      expect((await s.api('GET', triggers(p), cast.master)).headers['x-total']).toBe(before);
      for (const role of allowed) {
        expect((await s.api('GET', triggers(p), cast[role])).status, `${role} list`).toBe(200);
        expect((await s.api('GET', `${triggers(p)}/${token}`, cast[role])).status, `${role} show`).toBe(200);
        const created = await s.api('POST', triggers(p), cast[role]);
        expect(created.status, `${role} create`).toBe(201);
        expect((await s.api('DELETE', `${triggers(p)}/${created.body.token}`, cast[role])).status, `${role} delete`).toBe(200);
      }
    });
  }
});

describe('POST /projects/:id/trigger/builds', () => {
  it('creates a pipeline without a user from the ref, with the trigger-only jobs, and records the request (JSON variables)', async () => {
    const token = await newTrigger(priv);
    const before = await pipelinesOf(s.ctx, priv.id);
    const r = await s.api('POST', run(priv), null, { token, ref: 'master', variables: { TRIGGER_KEY: 'TRIGGER_VALUE', OTHER: 'two words' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number), variables: { TRIGGER_KEY: 'TRIGGER_VALUE', OTHER: 'two words' },
      created_at: expect.any(String), updated_at: expect.any(String), deleted_at: null,
      pipeline: { id: expect.any(Number), sha: expect.stringMatching(/^[0-9a-f]{40}$/), ref: 'master', status: 'pending' },
    });
    const after = await pipelinesOf(s.ctx, priv.id);
    expect(after.length).toBe(before.length + 1);
    const pipeline = after.at(-1)!;
    expect(r.body.pipeline.id).toBe(pipeline.id);
    // the commit says [ci skip]: a trigger ignores it (8.13 ignore_skip_ci)
    expect(pipeline).toMatchObject({ ref: 'master', tag: false, userId: null, status: 'pending' });
    const names = (await buildsOf(s.ctx, pipeline.id)).map((b) => b.name).sort();
    expect(names).toEqual(['build', 'triggered_only']);
    const row = await s.ctx.data.get<{ pipeline_id: number; variables: string }>('SELECT * FROM ci_trigger_requests WHERE id = ?', [r.body.id]);
    expect(row!.pipeline_id).toBe(pipeline.id);
    expect(row!.variables).not.toContain('TRIGGER_VALUE');

    // the API shows the pipeline and its builds with no user
    const shown = await s.api('GET', `/projects/${priv.id}/pipelines/${pipeline.id}`, cast.master);
    expect(shown.body).toMatchObject({ id: pipeline.id, ref: 'master', tag: false, user: null });
    // last_used is the request's time
    const trigger = await s.api('GET', `${triggers(priv)}/${token}`, cast.master);
    expect(trigger.body.last_used).toBe(r.body.created_at);
  });

  it('takes the token, ref and variables from a form (variables[KEY]=VALUE), and variables may be absent (null)', async () => {
    const token = await newTrigger(priv);
    const form = await s.api('POST', run(priv), null, `token=${token}&ref=master&variables[FORM_KEY]=form%20value`,
      { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(201);
    expect(form.body.variables).toEqual({ FORM_KEY: 'form value' });
    const none = await s.api('POST', run(priv), null, { token, ref: 'master' });
    expect(none.status).toBe(201);
    expect(none.body.variables).toBeNull();
    const empty = await s.api('POST', run(priv), null, { token, ref: 'master', variables: {} });
    expect(empty.status).toBe(201);
    expect(empty.body.variables).toEqual({});
  });

  it('builds a tag (tag: true, tags-only jobs), by project path, with refs/tags/ stripped', async () => {
    const token = await newTrigger(priv);
    const r = await s.api('POST', run(priv.path_with_namespace), null, { token, ref: 'refs/tags/v1.0' });
    expect(r.status).toBe(201);
    const pipeline = (await pipelinesOf(s.ctx, priv.id)).at(-1)!;
    expect(pipeline).toMatchObject({ ref: 'v1.0', tag: true });
    expect((await buildsOf(s.ctx, pipeline.id)).map((b) => b.name).sort()).toEqual(['build', 'tags_only', 'triggered_only']);
  });

  it('needs no user: a private token is neither needed nor enough', async () => {
    const token = await newTrigger(priv);
    expect((await s.api('POST', run(priv), cast.nonMember, { token, ref: 'master' })).status).toBe(201);
    const noToken = await s.api('POST', run(priv), cast.admin, { ref: 'master' });
    expect(noToken.status).toBe(400);
    expect(noToken.body).toEqual({ message: '400 (Bad request) "token" not given' });
    const badToken = await s.api('POST', run(priv), cast.admin, { token: cast.admin.token, ref: 'master' });
    expect(badToken.status).toBe(404);
  });

  it('hands the trigger variables to the runner (public: false, last) with CI_BUILD_TRIGGERED', async () => {
    await clearQueue(s);
    const project = await makeProject(s, cast.owner, 'trigger-runner');
    await pushFiles(s.ctx, project.id, cast.owner.id, { '.gitlab-ci.yml': 'only_by_trigger:\n  script: echo\n  only: [triggers]\n' });
    expect(await pipelinesOf(s.ctx, project.id)).toEqual([]);
    expect((await s.api('POST', `/projects/${project.id}/variables`, cast.owner, { key: 'SECRET', value: 's' })).status).toBe(201);
    const token = await newTrigger(project);
    expect((await s.api('POST', run(project), null, { token, ref: 'master', variables: { SECRET: 'from trigger', DEPLOY_TO: 'staging' } })).status).toBe(201);
    const runner = await registerRunner(s, { description: 'trigger runner' });
    const b = await claim(s, runner.token);
    expect(b.name).toBe('only_by_trigger');
    const vars = b.variables as { key: string; value: string; public: boolean }[];
    expect(vars.find((v) => v.key === 'CI_BUILD_TRIGGERED')).toEqual({ key: 'CI_BUILD_TRIGGERED', value: 'true', public: true });
    expect(vars.slice(-2)).toEqual([
      { key: 'SECRET', value: 'from trigger', public: false },
      { key: 'DEPLOY_TO', value: 'staging', public: false },
    ]);
    // the project's secret variable comes before: the trigger's value wins in the runner
    expect(vars.findIndex((v) => v.key === 'SECRET')).toBeLessThan(vars.length - 2);
    expect(vars.some((v) => v.key === 'GITLAB_USER_ID')).toBe(false);
  });

  it('runs a job whose build of a pushed pipeline carries no trigger variables', async () => {
    await clearQueue(s);
    const project = await makeProject(s, cast.owner, 'trigger-push');
    await pushFiles(s.ctx, project.id, cast.owner.id, { '.gitlab-ci.yml': 'plain:\n  script: echo\n' });
    const runner = await registerRunner(s, { description: 'push runner' });
    const b = await claim(s, runner.token);
    expect((b.variables as { key: string }[]).some((v) => v.key === 'CI_BUILD_TRIGGERED')).toBe(false);
  });

  it('creates a failed pipeline for an invalid .gitlab-ci.yml (201, as 8.13 saves it with its yaml_errors)', async () => {
    const project = await makeProject(s, cast.owner, 'trigger-badyaml');
    await pushFiles(s.ctx, project.id, cast.owner.id, { '.gitlab-ci.yml': 'job: [' });
    const token = await newTrigger(project);
    const before = (await pipelinesOf(s.ctx, project.id)).length;
    const r = await s.api('POST', run(project), null, { token, ref: 'master' });
    expect(r.status).toBe(201);
    const pipelines = await pipelinesOf(s.ctx, project.id);
    expect(pipelines.length).toBe(before + 1);
    expect(pipelines.at(-1)).toMatchObject({ status: 'failed', yamlErrors: expect.any(String) });
  });

  describe('errors (nothing is created)', () => {
    let token: string;
    let other: string;
    let deleted: string;
    beforeAll(async () => {
      token = await newTrigger(priv);
      other = await newTrigger(pub);
      deleted = await newTrigger(priv);
      expect((await s.api('DELETE', `${triggers(priv)}/${deleted}`, cast.master)).status).toBe(200);
    });

    const cases: [string, () => [string, unknown], number, unknown][] = [
      ['a missing token', () => [run(priv), { ref: 'master' }], 400, { message: '400 (Bad request) "token" not given' }],
      ['a blank token', () => [run(priv), { token: '', ref: 'master' }], 400, { message: '400 (Bad request) "token" not given' }],
      ['a missing ref', () => [run(priv), { token }], 400, { message: '400 (Bad request) "ref" not given' }],
      ['a missing token on an unknown project (the project is looked up first)', () => ['/projects/999999/trigger/builds', { ref: 'master' }], 404, { message: '404 Not Found' }],
      ['an unknown token', () => [run(priv), { token: 'abcdef012345', ref: 'master' }], 404, { message: '404 Not Found' }],
      ["another project's token", () => [run(priv), { token: other, ref: 'master' }], 404, { message: '404 Not Found' }],
      ['a deleted trigger', () => [run(priv), { token: deleted, ref: 'master' }], 404, { message: '404 Not Found' }],
      ['an unknown project', () => ['/projects/999999/trigger/builds', { token, ref: 'master' }], 404, { message: '404 Not Found' }],
      ['project id 0', () => ['/projects/0/trigger/builds', { token, ref: 'master' }], 404, { message: '404 Not Found' }],
      ['an unknown project path', () => [run('nobody/nothing'), { token, ref: 'master' }], 404, { message: '404 Not Found' }],
      ['variables that are a string', () => [run(priv), { token, ref: 'master', variables: 'value' }], 400, { message: 'variables needs to be a hash' }],
      ['variables that are an array', () => [run(priv), { token, ref: 'master', variables: ['a'] }], 400, { message: 'variables needs to be a hash' }],
      ['a variable that is an array', () => [run(priv), { token, ref: 'master', variables: { key: ['1', '2'] } }], 400, { message: 'variables needs to be a map of key-valued strings' }],
      ['a variable that is a number', () => [run(priv), { token, ref: 'master', variables: { key: 1 } }], 400, { message: 'variables needs to be a map of key-valued strings' }],
      ['a variable that is a hash', () => [run(priv), { token, ref: 'master', variables: { key: { a: 'b' } } }], 400, { message: 'variables needs to be a map of key-valued strings' }],
      ['an unknown ref', () => [run(priv), { token, ref: 'other-branch' }], 400, { message: 'No builds created' }],
      ['a ref that is not a branch or tag name', () => [run(priv), { token, ref: 'master~1' }], 400, { message: 'No builds created' }],
      ['a ref that is a sha', () => [run(priv), { token, ref: 'HEAD' }], 400, { message: 'No builds created' }],
    ];
    for (const [what, args, status, body] of cases) {
      it(`answers ${status} for ${what}`, async () => {
        const before = await counts();
        const [path, payload] = args();
        const r = await s.api('POST', path, null, payload);
        expect(r.status).toBe(status);
        expect(r.body).toEqual(body);
        expect(await counts()).toEqual(before);
      });
    }

    it('answers 400 No builds created for a ref whose jobs all skip it, a missing .gitlab-ci.yml, and disabled builds', async () => {
      const noJobs = await makeProject(s, cast.owner, 'trigger-nojobs');
      await pushFiles(s.ctx, noJobs.id, cast.owner.id, { '.gitlab-ci.yml': 'x:\n  script: a\n  except: [triggers]\n' });
      const noFile = await makeProject(s, cast.owner, 'trigger-nofile');
      await pushFiles(s.ctx, noFile.id, cast.owner.id, { 'README.md': 'no ci' });
      const off = await makeProject(s, cast.owner, 'trigger-off');
      await pushFiles(s.ctx, off.id, cast.owner.id, { '.gitlab-ci.yml': CI_YML });
      const offToken = await newTrigger(off);
      // with builds off, the trigger routes are refused as 8.13's policy drops admin_build; the token stays
      expect((await s.api('PUT', `/projects/${off.id}`, cast.owner, { builds_enabled: false })).status).toBe(200);
      expect((await s.api('GET', triggers(off), cast.owner)).status).toBe(403);
      const empty = await makeProject(s, cast.owner, 'trigger-empty');
      for (const p of [noJobs, noFile, off, empty]) {
        const t = p === off ? offToken : await newTrigger(p);
        const before = await counts();
        const r = await s.api('POST', run(p), null, { token: t, ref: 'master' });
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ message: 'No builds created' });
        expect(await counts()).toEqual(before);
        if (p !== off) expect((await s.api('GET', `${triggers(p)}/${t}`, cast.owner)).body.last_used).toBeNull();
      }
    });
  });
});

describe('the OpenAPI document', () => {
  it('lists every trigger route', async () => {
    const doc = (await s.app.inject({ method: 'GET', url: '/api/v3/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/api/v3/projects/{id}/triggers'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/v3/projects/{id}/triggers/{token}'] ?? {}).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(doc.paths['/api/v3/projects/{id}/trigger/builds'] ?? {})).toEqual(['post']);
  });
});
