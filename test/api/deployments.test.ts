/**
 * Deployments: a pipeline whose jobs name environments, run to success through the runner API, records one deployment
 * per successful build (environment created, URL expanded, iid per project); /projects/:id/deployments list and show
 * with 8.13's entity; the ways no deployment is recorded; once per build even when success races; authorization.
 */
import { DaemonState } from '../../daemon/context.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';
import { openPostgres } from '../../daemon/db/layer/open.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { buildNamed, pipelinesOf, pushFiles } from '../helpers/ci.js';
import { ci, claim, clearQueue, insertBuild, insertPipeline, registerRunner } from '../helpers/runner-fixtures.js';
import { changeBuildStatus, findBuild, settleBuildWork } from '../../daemon/services/ci/builds.js';
import { recordDeploymentIn } from '../../daemon/services/environments/index.js';

let s: TestServer;
let cast: Cast;
let runner: { id: number; token: string };
let priv: { id: number; path_with_namespace: string };
let pub: { id: number; path_with_namespace: string };
let pushed: string;

const CI_YML = `
stages: [test, deploy]
variables:
  APP: shop
test:
  stage: test
  script: echo test
review:
  stage: deploy
  script: echo review
  environment:
    name: review/$CI_BUILD_REF_NAME
    url: https://$CI_BUILD_REF_NAME.\${APP}.example.com
production:
  stage: deploy
  script: echo production
  environment: production
`;

const deploymentRows = (projectId: number) =>
  s.ctx.data.all<{ iid: number; ref: string; sha: string; deployable_id: number; environment: string }>(
    `SELECT d.iid, d.ref, d.sha, d.deployable_id, e.name AS environment FROM deployments d JOIN environments e ON e.id = d.environment_id
     WHERE d.project_id = ? ORDER BY d.id`, [projectId]);
const environmentRows = (projectId: number) =>
  s.ctx.data.all<{ name: string; external_url: string | null; state: string }>('SELECT name, external_url, state FROM environments WHERE project_id = ? ORDER BY id', [projectId]);

/** Claim the next build as the runner and report it `state` (with the runner token); returns the build id. */
async function runNext(state: 'success' | 'failed'): Promise<number> {
  const b = await claim(s, runner.token);
  const r = await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state, trace: `${b.name} done\n` });
  expect(r.status).toBe(200);
  await settleBuildWork(s.ctx);
  return b.id as number;
}

/** Push a .gitlab-ci.yml to a project and run every build of its pipeline to `state`, in stage order. */
async function runPipeline(projectId: number, yml: string, state: 'success' | 'failed' = 'success', branch = 'master'): Promise<string> {
  await clearQueue(s);
  const sha = await pushFiles(s.ctx, projectId, cast.owner.id, { '.gitlab-ci.yml': yml }, { branch });
  for (;;) {
    const pending = await s.ctx.data.get("SELECT id FROM commit_statuses WHERE project_id = ? AND status = 'pending'", [projectId]);
    if (!pending) break;
    await runNext(state);
  }
  return sha;
}

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'dep');
  priv = await makeProject(s, cast.owner, 'private-deploys', { visibility: 0 });
  pub = await makeProject(s, cast.owner, 'public-deploys', { visibility: 20 });
  await addCastMembers(s.ctx, cast, priv.id);
  await addCastMembers(s.ctx, cast, pub.id);
  runner = await registerRunner(s, { description: 'deployer' });
  pushed = await runPipeline(priv.id, CI_YML);
  await runPipeline(pub.id, CI_YML);
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});
beforeEach(() => clearQueue(s));

describe('a pipeline with environment jobs run to success', () => {
  it('records one deployment per environment job, creating the environments with the expanded name and URL', async () => {
    const pipeline = (await pipelinesOf(s.ctx, priv.id))[0]!;
    expect(pipeline.status).toBe('success');
    const review = await buildNamed(s.ctx, pipeline.id, 'review');
    const production = await buildNamed(s.ctx, pipeline.id, 'production');
    const rows = await deploymentRows(priv.id);
    expect(rows.map((r) => r.environment).sort()).toEqual(['production', 'review/master']);
    expect(rows.map((r) => r.iid).sort()).toEqual([1, 2]);
    for (const r of rows) expect(r).toMatchObject({ ref: 'master', sha: pushed });
    expect(rows.map((r) => r.deployable_id).sort()).toEqual([review.id, production.id].sort());
    expect(await environmentRows(priv.id)).toEqual(expect.arrayContaining([
      { name: 'review/master', external_url: 'https://master.shop.example.com', state: 'available' },
      { name: 'production', external_url: null, state: 'available' },
    ]));
    // the test job names no environment
    expect((await environmentRows(priv.id)).length).toBe(2);
  });

  it('lists (oldest first, paginated) and shows deployments with the Deployment entity', async () => {
    const list = await s.api('GET', `/projects/${priv.id}/deployments`, cast.reporter);
    expect(list.status).toBe(200);
    expect(list.headers['x-total']).toBe('2');
    expect(list.body.map((d: { iid: number }) => d.iid)).toEqual([1, 2]);
    const d = list.body[0];
    expect(Object.keys(d).sort()).toEqual(['created_at', 'deployable', 'environment', 'id', 'iid', 'ref', 'sha', 'user']);
    expect(d).toMatchObject({ ref: 'master', sha: pushed, user: { id: cast.owner.id, username: cast.owner.username } });
    expect(Object.keys(d.environment).sort()).toEqual(['external_url', 'id', 'name']);
    expect(d.deployable).toMatchObject({ id: d.deployable.id, status: 'success', stage: 'deploy', ref: 'master' });
    expect(['review', 'production']).toContain(d.deployable.name);
    expect(d.deployable.commit.id).toBe(pushed);
    expect(d.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const page = await s.api('GET', `/projects/${priv.id}/deployments?per_page=1&page=2`, cast.reporter);
    expect(page.body.map((x: { iid: number }) => x.iid)).toEqual([2]);
    expect(page.headers['x-total-pages']).toBe('2');

    const one = await s.api('GET', `/projects/${priv.id}/deployments/${d.id}`, cast.reporter);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(d);
  });

  it('counts iids per project: the public project has its own 1 and 2', async () => {
    expect((await deploymentRows(pub.id)).map((r) => r.iid).sort()).toEqual([1, 2]);
  });

  it('answers 404 Not found for an unknown deployment or one of another project, 400 for a non-numeric id', async () => {
    const theirs = (await s.api('GET', `/projects/${pub.id}/deployments`, cast.master)).body[0].id as number;
    for (const id of [999999, theirs, 99999999999]) {
      const r = await s.api('GET', `/projects/${priv.id}/deployments/${id}`, cast.master);
      expect(r.status, String(id)).toBe(404);
      expect(r.body).toEqual({ message: '404 Not found' });
    }
    expect((await s.api('GET', `/projects/${priv.id}/deployments/abc`, cast.master)).status).toBe(400);
    expect((await s.api('GET', '/projects/999999/deployments', cast.master)).body).toEqual({ message: '404 Project Not Found' });
  });
});

describe('when no deployment is recorded', () => {
  it('a failed environment build records none', async () => {
    const p = await makeProject(s, cast.owner, 'failing-deploys');
    await runPipeline(p.id, 'deploy:\n  script: exit 1\n  environment: production\n', 'failed');
    expect((await pipelinesOf(s.ctx, p.id))[0]!.status).toBe('failed');
    expect(await deploymentRows(p.id)).toEqual([]);
    expect(await environmentRows(p.id)).toEqual([]);
  });

  it('a job with action: stop stops the environment instead; a later start deploys again', async () => {
    const p = await makeProject(s, cast.owner, 'stopping-deploys');
    await runPipeline(p.id, 'deploy:\n  script: x\n  environment: staging\n');
    expect(await environmentRows(p.id)).toEqual([{ name: 'staging', external_url: null, state: 'available' }]);
    await runPipeline(p.id, 'stop:\n  script: x\n  environment: {name: staging, action: stop}\n');
    expect(await environmentRows(p.id)).toEqual([{ name: 'staging', external_url: null, state: 'stopped' }]);
    expect((await deploymentRows(p.id)).map((r) => r.iid)).toEqual([1]);
    await runPipeline(p.id, 'deploy:\n  script: y\n  environment: staging\n');
    expect(await environmentRows(p.id)).toEqual([{ name: 'staging', external_url: null, state: 'available' }]);
    expect((await deploymentRows(p.id)).map((r) => r.iid)).toEqual([1, 2]);
  });

  it('a name that expands to an invalid one, or a URL that is not one, records none (8.13: the save fails)', async () => {
    const p = await makeProject(s, cast.owner, 'bad-expansions');
    await runPipeline(p.id, 'variables: {WHERE: "a|b"}\ndeploy:\n  script: x\n  environment: $WHERE\n');
    expect(await environmentRows(p.id)).toEqual([]);
    await runPipeline(p.id, 'deploy:\n  script: x\n  environment: {name: $NOTHING, url: "https://x.example.com"}\n');
    expect(await environmentRows(p.id)).toEqual([]);
    await runPipeline(p.id, 'deploy:\n  script: x\n  environment: {name: qa, url: "https://$NOTHING"}\n');
    expect(await environmentRows(p.id)).toEqual([{ name: 'qa', external_url: null, state: 'available' }]);
    expect(await deploymentRows(p.id)).toEqual([]);
  });

  it('never uses the build token in a name', async () => {
    const p = await makeProject(s, cast.owner, 'token-names');
    await runPipeline(p.id, 'deploy:\n  script: x\n  environment: review/${CI_BUILD_TOKEN}x\n');
    expect(await environmentRows(p.id)).toEqual([{ name: 'review/x', external_url: null, state: 'available' }]);
  });
});

describe('once per build', () => {
  it('a success reported twice records one deployment (the second report is 404: the build is no longer running)', async () => {
    const p = await makeProject(s, cast.owner, 'twice-deploys');
    await clearQueue(s);
    await pushFiles(s.ctx, p.id, cast.owner.id, { '.gitlab-ci.yml': 'deploy:\n  script: x\n  environment: production\n' });
    const b = await claim(s, runner.token);
    const first = ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success' });
    const second = ci(s, 'PUT', `/builds/${b.id}.json`, { token: b.token, state: 'success' });
    const statuses = [(await first).status, (await second).status];
    expect(statuses).toContain(200);
    await settleBuildWork(s.ctx);
    expect((await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success' })).status).toBe(404);
    expect((await deploymentRows(p.id)).map((r) => r.deployable_id)).toEqual([b.id]);
  });

  it('racing success moves (two daemons) and a repeated record give one deployment', async () => {
    const p = await makeProject(s, cast.owner, 'race-deploys');
    const pipeline = await insertPipeline(s, p.id, { userId: cast.owner.id });
    const id = await insertBuild(s, p.id, pipeline, { name: 'deploy', status: 'running', options: { environment: { name: 'production' } } });
    await s.ctx.data.run("UPDATE commit_statuses SET environment = 'production' WHERE id = ?", [id]);
    const moved = await Promise.all([changeBuildStatus(s.ctx, id, 'success'), changeBuildStatus(s.ctx, id, 'success')]);
    expect(moved.filter((m) => m !== null)).toHaveLength(1);
    await settleBuildWork(s.ctx);
    const build = (await findBuild(s.ctx, id))!;
    const again = await s.ctx.data.transaction((tx) => recordDeploymentIn(s.ctx, tx, build));
    const rows = await deploymentRows(p.id);
    expect(rows).toHaveLength(1);
    expect(again?.id).toBeDefined();
    expect(rows[0]).toMatchObject({ iid: 1, deployable_id: id, environment: 'production' });
  });

  it('two builds of a project succeeding at once get iids 1 and 2', async () => {
    const p = await makeProject(s, cast.owner, 'parallel-deploys');
    const pipeline = await insertPipeline(s, p.id);
    const ids: number[] = [];
    for (const name of ['a', 'b']) {
      const id = await insertBuild(s, p.id, pipeline, { name, status: 'running', options: { environment: { name: `env-${name}` } } });
      await s.ctx.data.run('UPDATE commit_statuses SET environment = ? WHERE id = ?', [`env-${name}`, id]);
      ids.push(id);
    }
    await Promise.all(ids.map((id) => changeBuildStatus(s.ctx, id, 'success')));
    await settleBuildWork(s.ctx);
    expect((await deploymentRows(p.id)).map((r) => r.iid).sort()).toEqual([1, 2]);
  });
});

describe.skipIf(!onPostgres)('two daemons on one PostgreSQL database', () => {
  it('success moves racing through both record one deployment per build, one environment per name and distinct iids', async () => {
    const second = await openPostgres(s.ctx.config.databaseUrl!);
    try {
      const ctx2 = { ...s.ctx, data: second.data, state: new DaemonState() };
      const p = await makeProject(s, cast.owner, 'two-daemon-deploys');
      const pipeline = await insertPipeline(s, p.id);
      const ids: number[] = [];
      for (let i = 0; i < 12; i++) {
        const env = i % 2 ? 'production' : `review/${i % 4}`;
        const id = await insertBuild(s, p.id, pipeline, { name: `job${i}`, status: 'running', options: { environment: { name: env } } });
        await s.ctx.data.run('UPDATE commit_statuses SET environment = ? WHERE id = ?', [env, id]);
        ids.push(id);
      }
      // every build's success is reported to both daemons at once
      const moved = await Promise.all(ids.flatMap((id) => [changeBuildStatus(s.ctx, id, 'success'), changeBuildStatus(ctx2, id, 'success')]));
      expect(moved.filter((m) => m !== null)).toHaveLength(ids.length);
      await settleBuildWork(s.ctx, ctx2);
      const rows = await deploymentRows(p.id);
      expect(rows.map((r) => r.deployable_id).sort((a, b) => a - b)).toEqual(ids);
      expect(rows.map((r) => r.iid).sort((a, b) => a - b)).toEqual(ids.map((_, i) => i + 1));
      expect((await environmentRows(p.id)).map((e) => e.name).sort()).toEqual(['production', 'review/0', 'review/2']);
    } finally {
      await second.close();
    }
  });
});

describe('deleting', () => {
  it("an environment deletes its deployments; a deleted build leaves the deployment's deployable null", async () => {
    const p = await makeProject(s, cast.owner, 'delete-deploys');
    await runPipeline(p.id, 'a:\n  script: x\n  environment: one\nb:\n  script: x\n  environment: two\n');
    const envs = (await s.api('GET', `/projects/${p.id}/environments`, cast.owner)).body as { id: number; name: string }[];
    const one = envs.find((e) => e.name === 'one')!;
    expect((await s.api('DELETE', `/projects/${p.id}/environments/${one.id}`, cast.owner)).status).toBe(200);
    expect((await deploymentRows(p.id)).map((r) => r.environment)).toEqual(['two']);
    await s.ctx.data.run("DELETE FROM commit_statuses WHERE project_id = ? AND name = 'b'", [p.id]);
    const list = await s.api('GET', `/projects/${p.id}/deployments`, cast.owner);
    expect(list.body).toHaveLength(1);
    expect(list.body[0].deployable).toBeNull();
    expect(list.body[0].environment.name).toBe('two');
  });
});

describe('authorization (8.13: read_deployment, reporter and up)', () => {
  const levels = { guest: 10, reporter: 20, developer: 30, master: 40, owner: 50, admin: 100 } as const;
  for (const [label, project] of [['private', () => priv], ['public', () => pub]] as const) {
    it(`on a ${label} project`, async () => {
      const p = project();
      const id = (await deploymentRows(p.id)).length && ((await s.api('GET', `/projects/${p.id}/deployments`, cast.owner)).body[0].id as number);
      for (const path of [`/projects/${p.id}/deployments`, `/projects/${p.id}/deployments/${id}`]) {
        expect((await s.api('GET', path, null)).status).toBe(401);
        for (const [role, level] of Object.entries(levels) as [keyof typeof levels, number][]) {
          const r = await s.api('GET', path, cast[role]);
          expect(r.status, `${role} ${path}`).toBe(level >= 20 ? 200 : 403);
          if (level < 20) expect(r.body).toEqual({ message: '403 Forbidden' });
        }
        for (const outsider of [cast.nonMember, cast.external]) expect((await s.api('GET', path, outsider)).status).toBe(label === 'private' ? 404 : 403);
      }
    });
  }
});
