/**
 * Build and pipeline hooks through a real HTTP receiver: a build_events hook gets a "Build Hook" per build status
 * change (pending -> running -> success, retries, cancel), a pipeline_events hook a "Pipeline Hook" per pipeline
 * status change with the commit message and author, a hook without those switches gets neither, and the payloads
 * carry GitLab 8.13's fields. Commit statuses posted by external CI move the pipeline (Pipeline Hook) but fire no
 * Build Hook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { buildNamed, drive, pipelinesOf, pushFiles, rows } from '../helpers/ci.js';
import { startReceiver, waitUntil, type HookReceiver, type Received } from '../helpers/hook-receiver.js';
import { startHookDeliveryWorker, type HookDeliveryWorker } from '../../daemon/services/hooks/deliveries.js';
import { retryBuild } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let alice: TestUser;
let recv: HookReceiver;
let worker: HookDeliveryWorker;

const ONE_JOB = `
compile:
  stage: build
  script: make
`;

interface Setup {
  projectId: number;
  path: string;
}

async function projectWithHooks(name: string): Promise<Setup> {
  const p = await makeProject(s, alice, name);
  const hook = async (path: string, flags: Record<string, boolean>) => {
    const r = await s.api('POST', `/projects/${p.id}/hooks`, alice, { url: `${recv.url}/${name}${path}`, ...flags });
    expect(r.status).toBe(201);
  };
  await hook('/builds', { push_events: false, build_events: true });
  await hook('/pipelines', { push_events: false, pipeline_events: true });
  await hook('/none', { push_events: true, issues_events: true, note_events: true });
  return { projectId: p.id, path: `/${name}` };
}

/** Wait until every delivery queued so far is settled (delivered or failed). */
async function settled(): Promise<void> {
  const end = Date.now() + 10_000;
  while (Number((await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM hook_deliveries WHERE status = 'pending'`))!.n) !== 0) {
    if (Date.now() > end) throw new Error('timed out waiting for hook deliveries settled');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const json = (rs: Received[]) => rs.map((r) => r.json());

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { projects_limit: 100 });
  recv = await startReceiver();
  // One at a time, so the receiver sees the deliveries in the order they were queued.
  worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: 40, maxAttempts: 3, concurrency: 1, pollMs: 200, log: () => undefined });
});

afterAll(async () => {
  worker?.stop();
  await recv?.stop();
  await s?.close();
});

// Hooks are made through the hooks room's routes and delivered by its worker, on either engine; the outbox rows of two
// daemons are checked in ci-two-daemons.test.ts.
describe('build and pipeline hooks', () => {
  it('a build_events hook gets a Build Hook per status change: pending, running, success', async () => {
    const { projectId, path } = await projectWithHooks('bh');
    const sha = await pushFiles(s.ctx, projectId, alice.id, { '.gitlab-ci.yml': ONE_JOB }, { message: 'Add CI\n\nwith a body' });
    const pipeline = (await pipelinesOf(s.ctx, projectId))[0]!;
    await drive(s.ctx, pipeline.id, 'compile', 'run', 'success');
    await settled();

    const got = recv.to(`${path}/builds`);
    expect(got.map((r) => r.headers['x-gitlab-event'])).toEqual(['Build Hook', 'Build Hook', 'Build Hook']);
    expect(got.every((r) => r.headers['content-type'] === 'application/json')).toBe(true);
    const payloads = json(got);
    expect(payloads.map((p) => p.build_status)).toEqual(['pending', 'running', 'success']);
    const build = await buildNamed(s.ctx, pipeline.id, 'compile');
    const done = payloads[2];
    expect(done).toMatchObject({
      object_kind: 'build', ref: 'master', tag: false, sha, build_id: build.id, build_name: 'compile', build_stage: 'build',
      build_status: 'success', build_allow_failure: false, project_id: projectId, project_name: 'alice / bh',
      user: { id: alice.id, name: expect.any(String), email: expect.any(String) },
      commit: { id: pipeline.id, sha, message: 'Add CI\n\nwith a body\n', author_name: 'Ci Tester', author_email: 'ci@example.com' },
      repository: { name: 'bh', description: null, visibility_level: 0 },
    });
    expect(done.before_sha).toMatch(/^0{40}$/);
    expect(done.build_started_at).toBe(build.startedAt);
    expect(done.build_finished_at).toBe(build.finishedAt);
    expect(typeof done.build_duration).toBe('number');
    expect(done.repository.homepage).toMatch(/\/alice\/bh$/);
    expect(done.repository.git_http_url).toMatch(/\/alice\/bh\.git$/);
    expect(done.repository.git_ssh_url).toMatch(/:alice\/bh\.git$/);
    expect(done.repository.url).toBe(done.repository.git_ssh_url);
    expect(typeof done.commit.status).toBe('string');
    expect(payloads[0].build_started_at).toBeNull();
    expect(payloads[0].build_duration).toBeNull();
    expect(payloads[1].build_started_at).not.toBeNull();
    expect(payloads[1].build_finished_at).toBeNull();

    // The pipeline hook: created -> pending -> running -> success, commit message and author filled.
    const pipes = recv.to(`${path}/pipelines`);
    expect(pipes.map((r) => r.headers['x-gitlab-event'])).toEqual(['Pipeline Hook', 'Pipeline Hook', 'Pipeline Hook']);
    const pp = json(pipes);
    expect(pp.map((p) => p.object_attributes.status)).toEqual(['pending', 'running', 'success']);
    const last = pp[2];
    const finished = (await pipelinesOf(s.ctx, projectId))[0]!;
    expect(last).toMatchObject({
      object_kind: 'pipeline',
      object_attributes: {
        id: pipeline.id, ref: 'master', tag: false, sha, status: 'success', stages: ['build'], created_at: finished.createdAt,
        finished_at: finished.finishedAt, duration: finished.duration,
      },
      user: { name: expect.any(String), username: 'alice' },
      project: { name: 'bh', description: null, namespace: 'alice', visibility_level: 0, path_with_namespace: 'alice/bh', default_branch: 'master' },
      commit: { id: sha, message: 'Add CI\n\nwith a body\n', author: { name: 'Ci Tester', email: 'ci@example.com' } },
    });
    expect(last.object_attributes.before_sha).toMatch(/^0{40}$/);
    expect(last.commit.url).toMatch(new RegExp(`/alice/bh/commit/${sha}$`));
    expect(typeof last.commit.timestamp).toBe('string');
    expect(last.project.web_url).toMatch(/\/alice\/bh$/);
    expect(last.builds).toHaveLength(1);
    expect(last.builds[0]).toMatchObject({
      id: build.id, stage: 'build', name: 'compile', status: 'success', created_at: build.createdAt, started_at: build.startedAt,
      finished_at: build.finishedAt, when: 'on_success', manual: false, user: { username: 'alice' }, runner: null,
      artifacts_file: { filename: null, size: null },
    });

    // The hook without build/pipeline switches got the push only.
    const none = recv.to(`${path}/none`);
    expect(none.map((r) => r.headers['x-gitlab-event'])).toEqual(['Push Hook']);
  });

  it('a retry fires a Build Hook for the new build and Pipeline Hooks as the pipeline becomes active again', async () => {
    const { projectId, path } = await projectWithHooks('retry');
    await pushFiles(s.ctx, projectId, alice.id, { '.gitlab-ci.yml': ONE_JOB });
    const pipeline = (await pipelinesOf(s.ctx, projectId))[0]!;
    await drive(s.ctx, pipeline.id, 'compile', 'run', 'drop');
    await settled();
    const before = recv.to(`${path}/builds`).length;
    const pipesBefore = recv.to(`${path}/pipelines`).length;
    const { user } = await rows(s.ctx, projectId, alice.id);
    const retried = (await retryBuild(s.ctx, await buildNamed(s.ctx, pipeline.id, 'compile'), user))!;
    await drive(s.ctx, pipeline.id, 'compile', 'cancel');
    await settled();
    const builds = json(recv.to(`${path}/builds`).slice(before));
    expect(builds.map((p) => [p.build_id, p.build_status])).toEqual([[retried.id, 'pending'], [retried.id, 'canceled']]);
    const pipes = json(recv.to(`${path}/pipelines`).slice(pipesBefore));
    expect(pipes).toHaveLength(2);
    expect(['pending', 'running']).toContain(pipes[0].object_attributes.status);
    expect(pipes[1].object_attributes.status).toBe('canceled');
    // Both builds (the retried one too) are listed.
    expect(pipes[1].builds.map((b: { status: string }) => b.status)).toEqual(['failed', 'canceled']);
    expect(recv.to(`${path}/none`).every((r) => r.headers['x-gitlab-event'] === 'Push Hook')).toBe(true);
  });

  it('a commit status from external CI moves the pipeline (Pipeline Hook with the commit) but fires no Build Hook', async () => {
    const { projectId, path } = await projectWithHooks('ext');
    // No .gitlab-ci.yml: the push creates no pipeline.
    const sha = await pushFiles(s.ctx, projectId, alice.id, { 'README.md': 'hello' }, { message: 'External CI' });
    expect(await pipelinesOf(s.ctx, projectId)).toHaveLength(0);
    const r = await s.api('POST', `/projects/${projectId}/statuses/${sha}`, alice, { state: 'running', name: 'jenkins' });
    expect(r.status).toBe(201);
    const r2 = await s.api('POST', `/projects/${projectId}/statuses/${sha}`, alice, { state: 'success', name: 'jenkins' });
    expect(r2.status).toBe(201);
    await settled();
    expect(recv.to(`${path}/builds`)).toHaveLength(0);
    const pipes = json(recv.to(`${path}/pipelines`));
    expect(pipes.map((p) => p.object_attributes.status)).toEqual(['running', 'success']);
    expect(pipes[1].commit).toMatchObject({ id: sha, message: 'External CI\n', author: { name: 'Ci Tester', email: 'ci@example.com' } });
    expect(pipes[1].object_attributes.stages).toEqual(['external']);
    expect(pipes[1].builds).toEqual([]);
    const p = (await pipelinesOf(s.ctx, projectId))[0]!;
    expect([p.commitMessage, p.commitAuthorName, p.commitAuthorEmail]).toEqual(['External CI\n', 'Ci Tester', 'ci@example.com']);
  });

  it('a project without build or pipeline hooks queues nothing for its builds', async () => {
    const p = await makeProject(s, alice, 'quiet');
    const hook = await s.api('POST', `/projects/${p.id}/hooks`, alice, { url: `${recv.url}/quiet`, push_events: false });
    expect(hook.status).toBe(201);
    await pushFiles(s.ctx, p.id, alice.id, { '.gitlab-ci.yml': ONE_JOB });
    const pipeline = (await pipelinesOf(s.ctx, p.id))[0]!;
    await drive(s.ctx, pipeline.id, 'compile', 'run', 'success');
    const n = (await s.ctx.data.get('SELECT COUNT(*) AS n FROM hook_deliveries WHERE hook_id = ?', [hook.body.id])) as { n: number };
    expect(n.n).toBe(0);
    expect(pipeline.commitMessage).toBe('ci commit\n');
  });
});
