// Pipeline creation from real pushes, stage processing (changeBuildStatus), statuses and the pipelines API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { buildNamed, drive, pipelinesOf, pushFiles, rows, statusByName } from '../helpers/ci.js';
import { createPipelineForPush, processPipeline } from '../../daemon/services/ci/pipelines.js';
import { commitStatusOf } from '../../daemon/services/repository/commits.js';
import { changeBuildStatus, findBuild, onBuildFinished, settleBuildWork } from '../../daemon/services/ci/builds.js';
import { pipelineDuration } from '../../daemon/services/ci/pipelines.js';

let s: TestServer;
let owner: TestUser;
let cast: Cast;

const THREE_STAGES = `
stages: [build, test, deploy]
compile:
  stage: build
  script: make
rspec:
  stage: test
  script: rspec
  coverage: '/Coverage (\\d+)%/'
lint:
  stage: test
  script: lint
  allow_failure: true
ship:
  stage: deploy
  script: ship
  only: [master]
cleanup:
  stage: deploy
  script: cleanup
  when: always
notify_failure:
  stage: deploy
  script: notify
  when: on_failure
release:
  stage: deploy
  script: release
  when: manual
`;

async function newProject(name: string, extra: Record<string, unknown> = {}, visibility = 0) {
  const p = await makeProject(s, owner, name, { visibility, extra });
  return p.id;
}

beforeAll(async () => {
  s = await startTestServer();
  owner = await s.user('ciowner', { projects_limit: 100 });
  cast = await makeCast(s, 'pl');
});
afterAll(async () => s.close());

describe('pipeline creation on push', () => {
  it('creates a pipeline with the matching builds, first stage pending', async () => {
    const pid = await newProject('stages');
    const sha = await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': THREE_STAGES, 'README.md': 'hi' });
    const [p] = await pipelinesOf(s.ctx, pid);
    expect(p).toMatchObject({ ref: 'master', sha, tag: false, status: 'pending', yamlErrors: null, userId: owner.id });
    expect(p!.committedAt).toBeTruthy();
    expect(await statusByName(s.ctx, p!.id)).toEqual({
      compile: 'pending', rspec: 'created', lint: 'created', ship: 'created', cleanup: 'created', notify_failure: 'created', release: 'created',
    });
    const compile = await buildNamed(s.ctx, p!.id, 'compile');
    expect(compile).toMatchObject({ stage: 'build', stageIdx: 0, commands: 'make', ref: 'master', when: 'on_success' });
    expect(compile.queuedAt).toBeTruthy();
    expect(await commitStatusOf(s.ctx, pid, sha)).toBe('pending');
    expect(await commitStatusOf(s.ctx, pid, 'f'.repeat(40))).toBeNull();
  });

  it('advances stage by stage; on_failure skipped, always runs, manual waits as skipped; allow_failure counts as success', async () => {
    const pid = await newProject('advance');
    await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': THREE_STAGES });
    const p = (await pipelinesOf(s.ctx, pid))[0]!;
    await drive(s.ctx, p.id, 'compile', 'run');
    const running = (await pipelinesOf(s.ctx, pid))[0]!;
    expect(running.status).toBe('running');
    expect(running.startedAt).toBeTruthy();
    await drive(s.ctx, p.id, 'compile', 'success');
    expect(await statusByName(s.ctx, p.id)).toMatchObject({ compile: 'success', rspec: 'pending', lint: 'pending', ship: 'created' });
    await drive(s.ctx, p.id, 'rspec', 'run', 'success');
    // lint still pending: the deploy stage waits
    expect((await statusByName(s.ctx, p.id)).ship).toBe('created');
    await drive(s.ctx, p.id, 'lint', 'run', 'drop');
    expect(await statusByName(s.ctx, p.id)).toMatchObject({
      lint: 'failed', ship: 'pending', cleanup: 'pending', notify_failure: 'skipped', release: 'skipped',
    });
    await drive(s.ctx, p.id, 'ship', 'run', 'success');
    await drive(s.ctx, p.id, 'cleanup', 'run', 'success');
    const done = (await pipelinesOf(s.ctx, pid))[0]!;
    expect(done.status).toBe('success');
    expect(done.finishedAt).toBeTruthy();
    expect(typeof done.duration).toBe('number');
  });

  it('a failure runs on_failure and always jobs and fails the pipeline', async () => {
    const pid = await newProject('failing');
    await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': THREE_STAGES });
    const p = (await pipelinesOf(s.ctx, pid))[0]!;
    await drive(s.ctx, p.id, 'compile', 'run', 'success');
    await drive(s.ctx, p.id, 'rspec', 'run', 'drop');
    await drive(s.ctx, p.id, 'lint', 'run', 'success');
    expect(await statusByName(s.ctx, p.id)).toMatchObject({ ship: 'skipped', cleanup: 'pending', notify_failure: 'pending', release: 'skipped' });
    await drive(s.ctx, p.id, 'cleanup', 'run', 'success');
    await drive(s.ctx, p.id, 'notify_failure', 'run', 'success');
    expect((await pipelinesOf(s.ctx, pid))[0]!.status).toBe('failed');
  });

  it('only/except select the jobs by ref; tags get tag pipelines', async () => {
    const pid = await newProject('refs');
    const yml = `
a:
  script: a
  only: [branches]
b:
  script: b
  only: [tags]
c:
  script: c
  except: [/^feature/]
d:
  script: d
  only: [master]
`;
    await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': yml }, { tag: 'v1.0' });
    const [branchPipe, tagPipe] = await pipelinesOf(s.ctx, pid);
    expect(Object.keys(await statusByName(s.ctx, branchPipe!.id)).sort()).toEqual(['a', 'c', 'd']);
    expect(tagPipe).toMatchObject({ ref: 'v1.0', tag: true });
    expect(Object.keys(await statusByName(s.ctx, tagPipe!.id)).sort()).toEqual(['b', 'c']);
    await pushFiles(s.ctx, pid, owner.id, { 'x.txt': 'x' }, { branch: 'feature-x', from: 'master' });
    expect(Object.keys(await statusByName(s.ctx, (await pipelinesOf(s.ctx, pid))[2]!.id)).sort()).toEqual(['a']);
  });

  it('a branch where no job matches gets no pipeline', async () => {
    const pid = await newProject('nomatch');
    await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': 'only_master:\n  script: x\n  only: [master]\n' }, { branch: 'other' });
    expect(await pipelinesOf(s.ctx, pid)).toEqual([]);
  });

  it('an invalid .gitlab-ci.yml gives a failed pipeline with yaml_errors and no builds', async () => {
    const pid = await newProject('invalid');
    await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': 'rspec:\n  script: x\n  when: sometimes\n' });
    const [p] = await pipelinesOf(s.ctx, pid);
    expect(p).toMatchObject({ status: 'failed', yamlErrors: 'jobs:rspec when should be on_success, on_failure, always or manual' });
    expect(p!.finishedAt).toBeTruthy();
    expect(await statusByName(s.ctx, p!.id)).toEqual({});
    await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': ': : :\n\t- [' });
    expect((await pipelinesOf(s.ctx, pid))[1]).toMatchObject({ status: 'failed' });
    expect((await pipelinesOf(s.ctx, pid))[1]!.yamlErrors).toBeTruthy();
  });

  it('no file, [ci skip], builds disabled and deletions', async () => {
    const pid = await newProject('nofile');
    await pushFiles(s.ctx, pid, owner.id, { 'README.md': 'x' });
    expect(await pipelinesOf(s.ctx, pid)).toEqual([]);
    await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': 'a:\n  script: x\n' }, { message: 'wip [CI SKIP]' });
    expect((await pipelinesOf(s.ctx, pid)).map((p) => p.status)).toEqual(['skipped']);

    const disabled = await newProject('disabled', { builds_enabled: false });
    await pushFiles(s.ctx, disabled, owner.id, { '.gitlab-ci.yml': 'a:\n  script: x\n' });
    expect(await pipelinesOf(s.ctx, disabled)).toEqual([]);

    const { project, user } = await rows(s.ctx, pid, owner.id);
    const none = await createPipelineForPush(s.ctx, project, user, { ref: 'refs/heads/master', tag: false, before: 'a'.repeat(40), after: '0'.repeat(40) });
    expect(none).toBeNull();
    const unknown = await createPipelineForPush(s.ctx, project, user, { ref: 'master', tag: false, before: null, after: 'b'.repeat(40) });
    expect(unknown).toBeNull();
  });

  it('a push whose repository read fails does not fail the push', async () => {
    const pid = await newProject('broken');
    // The listener logs and swallows errors: processPush resolves.
    const { project, user } = await rows(s.ctx, pid, owner.id);
    const { processPush } = await import('../../daemon/services/repository/push.js');
    const logged: unknown[] = [];
    await processPush(s.ctx, project, user, [], { log: (e) => logged.push(e) });
    expect(logged).toEqual([]);
  });
});

describe('build state changes', () => {
  it('changeBuildStatus ignores impossible moves and sets timestamps; listeners hear finished builds; coverage is read', async () => {
    const pid = await newProject('events');
    await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': THREE_STAGES });
    const p = (await pipelinesOf(s.ctx, pid))[0]!;
    const compile = await buildNamed(s.ctx, p.id, 'compile');
    expect(await changeBuildStatus(s.ctx, compile.id, 'success')).not.toBeNull();
    expect(await changeBuildStatus(s.ctx, compile.id, 'run')).toBeNull();
    expect(await changeBuildStatus(s.ctx, 999999, 'run')).toBeNull();
    const heard: number[] = [];
    const off = onBuildFinished((ctx, b) => {
      if (ctx === s.ctx) heard.push(b.id);
    });
    const rspec = await buildNamed(s.ctx, p.id, 'rspec');
    const running = (await changeBuildStatus(s.ctx, rspec.id, 'run', { runnerId: undefined }))!;
    expect(running.startedAt).toBeTruthy();
    const { replaceTrace } = await import('../../daemon/services/ci/traces.js');
    await replaceTrace(s.ctx, rspec, 'running tests\nCoverage 87%\n');
    const done = (await changeBuildStatus(s.ctx, rspec.id, 'success'))!;
    expect(done.finishedAt).toBeTruthy();
    await settleBuildWork(s.ctx);
    off();
    expect(heard).toEqual([rspec.id]);
    expect((await findBuild(s.ctx, rspec.id))!.coverage).toBe(87);
    expect(await processPipeline(s.ctx, 999999)).toBeNull();
  });

  it('pipeline duration is the union of the build running periods', () => {
    const t = (sec: number) => new Date(Date.UTC(2020, 0, 1, 0, 0, sec)).toISOString();
    expect(pipelineDuration([])).toBeNull();
    expect(pipelineDuration([{ startedAt: t(0), finishedAt: t(10) }, { startedAt: t(5), finishedAt: t(20) }, { startedAt: t(30), finishedAt: t(35) }])).toBe(25);
    expect(pipelineDuration([{ startedAt: null, finishedAt: null }])).toBeNull();
  });
});

describe('pipelines API', () => {
  let pid: number;
  let first: number;
  beforeAll(async () => {
    pid = await newProject('papi', {}, 0);
    await addCastMembers(s.ctx, cast, pid);
    await pushFiles(s.ctx, pid, owner.id, { '.gitlab-ci.yml': 'a:\n  script: x\nb:\n  script: y\n' });
    await pushFiles(s.ctx, pid, owner.id, { 'f.txt': '1' });
    await pushFiles(s.ctx, pid, owner.id, { 'f.txt': '2' }, { branch: 'dev', tag: 'v1', from: 'master' });
    first = (await pipelinesOf(s.ctx, pid))[0]!.id;
  });

  it('lists newest first with pagination headers', async () => {
    const r = await s.api('GET', `/projects/${pid}/pipelines?per_page=2`, owner);
    expect(r.status).toBe(200);
    expect(r.headers['x-total']).toBe('4');
    expect(r.headers['x-total-pages']).toBe('2');
    expect(r.headers['x-next-page']).toBe('2');
    expect(r.headers.link).toContain('rel="next"');
    const ids = r.body.map((p: { id: number }) => p.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    const p = r.body[0];
    expect(p).toMatchObject({ status: 'pending', tag: expect.any(Boolean), yaml_errors: null, duration: null, started_at: null, finished_at: null });
    expect(Object.keys(p).sort()).toEqual(['before_sha', 'committed_at', 'created_at', 'duration', 'finished_at', 'id', 'ref', 'sha', 'started_at', 'status', 'tag', 'updated_at', 'user', 'yaml_errors'].sort());
    expect(p.user).toMatchObject({ id: owner.id, username: 'ciowner' });
  });

  it('filters by scope and rejects unknown scopes', async () => {
    const branches = await s.api('GET', `/projects/${pid}/pipelines?scope=branches`, owner);
    expect(branches.body.map((p: { ref: string }) => p.ref).sort()).toEqual(['dev', 'master']);
    const tagsScope = await s.api('GET', `/projects/${pid}/pipelines?scope=tags`, owner);
    expect(tagsScope.body.map((p: { ref: string }) => p.ref)).toEqual(['v1']);
    const pending = await s.api('GET', `/projects/${pid}/pipelines?scope=pending`, owner);
    expect(pending.body.length).toBe(4);
    expect((await s.api('GET', `/projects/${pid}/pipelines?scope=running`, owner)).body).toEqual([]);
    expect((await s.api('GET', `/projects/${pid}/pipelines?scope=finished`, owner)).body).toEqual([]);
    const bad = await s.api('GET', `/projects/${pid}/pipelines?scope=bogus`, owner);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: '400 (Bad request) "scope" does not have a valid value' });
  });

  it('gets one pipeline; 404 for unknown and for another project\'s', async () => {
    const r = await s.api('GET', `/projects/${pid}/pipelines/${first}`, owner);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(first);
    expect((await s.api('GET', `/projects/${pid}/pipelines/999999`, owner)).body).toEqual({ message: '404 Not found' });
    const other = await newProject('papi-other');
    expect((await s.api('GET', `/projects/${other}/pipelines/${first}`, owner)).status).toBe(404);
  });

  it('cancel (200) cancels pending/running builds and skips created ones; retry (201) retries failed and canceled builds, pending at once', async () => {
    const c = await s.api('POST', `/projects/${pid}/pipelines/${first}/cancel`, cast.developer);
    expect(c.status).toBe(200);
    expect(c.body.status).toBe('canceled');
    expect(await statusByName(s.ctx, first)).toEqual({ a: 'canceled', b: 'canceled' });
    // canceled builds are retried too (8.x failed_or_canceled); the answer already reads pending
    const r0 = await s.api('POST', `/projects/${pid}/pipelines/${first}/retry`, cast.developer);
    expect(r0.status).toBe(201);
    expect(r0.body.status).toBe('pending');
    expect(r0.body.finished_at).toBeNull();
    expect(await statusByName(s.ctx, first)).toEqual({ a: 'pending', b: 'pending' });
    expect((await s.api('GET', `/projects/${pid}/pipelines/${first}`, cast.developer)).body.status).toBe('pending');
    const second = (await pipelinesOf(s.ctx, pid))[1]!.id;
    await drive(s.ctx, second, 'a', 'run', 'drop');
    await drive(s.ctx, second, 'b', 'run', 'success');
    expect((await pipelinesOf(s.ctx, pid))[1]!.status).toBe('failed');
    const r = await s.api('POST', `/projects/${pid}/pipelines/${second}/retry`, cast.developer);
    expect(r.status).toBe(201);
    // a pending retry beside a finished build composes to running (8.x composite status), never the old `failed`
    expect(r.body.status).toBe('running');
    expect(await statusByName(s.ctx, second)).toEqual({ a: 'pending', b: 'success' });
    expect((await pipelinesOf(s.ctx, pid))[1]!.finishedAt).toBeNull();
  });

  it('authorization: reads need read_pipeline, retry/cancel update_pipeline', async () => {
    const path = `/projects/${pid}/pipelines`;
    expect((await s.api('GET', path, null)).status).toBe(401);
    expect((await s.api('GET', path, cast.nonMember)).status).toBe(404);
    expect((await s.api('GET', path, cast.guest)).status).toBe(403);
    for (const u of [cast.reporter, cast.developer, cast.master, cast.admin]) expect((await s.api('GET', path, u)).status).toBe(200);
    for (const u of [cast.guest, cast.reporter]) {
      expect((await s.api('POST', `${path}/${first}/cancel`, u)).status).toBe(403);
      expect((await s.api('POST', `${path}/${first}/retry`, u)).status).toBe(403);
    }
    for (const u of [cast.master, cast.admin]) expect((await s.api('POST', `${path}/${first}/cancel`, u)).status).toBe(200);
    // Visible projects: any logged-in user reads pipelines (public, and internal for non-external users).
    const pub = await newProject('papi-public', { public_builds: false }, 20);
    const internal = await newProject('papi-internal', {}, 10);
    expect((await s.api('GET', `/projects/${pub}/pipelines`, cast.nonMember)).status).toBe(200);
    expect((await s.api('GET', `/projects/${pub}/pipelines`, cast.external)).status).toBe(200);
    expect((await s.api('GET', `/projects/${internal}/pipelines`, cast.nonMember)).status).toBe(200);
    expect((await s.api('GET', `/projects/${internal}/pipelines`, cast.external)).status).toBe(404);
    expect((await s.api('POST', `/projects/${pub}/pipelines/1/cancel`, cast.nonMember)).status).toBe(403);
    // Builds disabled: pipelines are gone even for the owner and admins.
    const off = await newProject('papi-off', { builds_enabled: false });
    expect((await s.api('GET', `/projects/${off}/pipelines`, owner)).status).toBe(403);
    expect((await s.api('GET', `/projects/${off}/pipelines`, cast.admin)).status).toBe(403);
  });
});

describe('OpenAPI', () => {
  it('documents the CI routes', async () => {
    const r = await s.api('GET', '/openapi.json', owner);
    expect(r.status).toBe(200);
    for (const path of ['/api/v3/projects/{id}/builds', '/api/v3/projects/{id}/pipelines/{pipeline_id}/retry', '/api/v3/projects/{id}/statuses/{sha}']) {
      expect(Object.keys(r.body.paths)).toContain(path);
    }
  });
});
