// Long-polling POST /ci/api/v1/builds/register (issue 26 item 3): a request with nothing to do is held until a build
// for its runner is queued (push, retry, play) or its hold ends; wake-ups are hints, the claim decides; a drain answers
// held requests at once; GitLab Runner 1.x (no header) gets the daemon's --runner-long-poll.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { pushFiles } from '../helpers/ci.js';
import { ci, clearQueue, exec, projectRunnersToken, registerRunner, type CiResponse } from '../helpers/runner-fixtures.js';
import { heldBuildRequests } from '../../daemon/services/ci/build-queue.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';
import { holdSeconds } from '../../daemon/ci-api/builds.js';

let s: TestServer;
let owner: TestUser;

/** Wait (at most 10 s) until the daemon `on` holds `n` build requests. */
async function held(n: number, on: TestServer = s): Promise<void> {
  const until = Date.now() + 10_000;
  while (heldBuildRequests(on.ctx) !== n) {
    if (Date.now() > until) throw new Error(`expected ${n} held build requests, have ${heldBuildRequests(on.ctx)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A build request asking to be held `seconds`. */
const ask = (server: TestServer, token: string, seconds: number | string): Promise<CiResponse> =>
  ci(server, 'POST', '/builds/register.json', { token }, { 'x-gantry-long-poll': String(seconds) });

/** A project with a specific runner of its own (so other tests' builds never reach it). */
async function projectWithRunner(name: string, extra: Record<string, unknown> = {}) {
  const project = await makeProject(s, owner, name);
  const runner = await registerRunner(s, { token: await projectRunnersToken(s, project.id), ...extra });
  return { project, runner };
}

const ONE_JOB = 'only:\n  script: echo hi\n';

beforeAll(async () => {
  s = await startTestServer();
  owner = await s.user('lpowner', { projects_limit: 100 });
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});
beforeEach(async () => {
  await held(0);
  await clearQueue(s);
});

describe('held builds/register', () => {
  it('answers 201 as soon as a push queues a build for the held runner', async () => {
    const { project, runner } = await projectWithRunner('lp-push');
    const pending = ask(s, runner.token, 30);
    await held(1);
    await pushFiles(s.ctx, project.id, owner.id, { '.gitlab-ci.yml': ONE_JOB });
    const pushed = Date.now();
    const res = await pending;
    expect(Date.now() - pushed).toBeLessThan(2000); // the hold is 30 s: only a wake-up answers this soon
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'only', status: 'running', project_id: project.id });
    expect(heldBuildRequests(s.ctx)).toBe(0);
  });

  it('answers 204 when the hold ends with nothing queued, and the runner is held no more', async () => {
    const { runner } = await projectWithRunner('lp-timeout');
    const started = Date.now();
    const res = await ask(s, runner.token, 1);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(heldBuildRequests(s.ctx)).toBe(0);
  });

  it('two runners held, one build: exactly one gets it, the other stays held until its hold ends', async () => {
    const { project, runner: first } = await projectWithRunner('lp-two');
    const second = await registerRunner(s, { token: await projectRunnersToken(s, project.id) });
    const a = ask(s, first.token, 30);
    await held(1);
    const b = ask(s, second.token, 3);
    await held(2);
    await pushFiles(s.ctx, project.id, owner.id, { '.gitlab-ci.yml': ONE_JOB });
    const winner = await a; // the oldest held runner is tried first
    expect(winner.status).toBe(201);
    expect(heldBuildRequests(s.ctx)).toBe(1);
    const loser = await b;
    expect(loser.status).toBe(204);
    const rows = await s.ctx.data.all<{ runner_id: number }>("SELECT runner_id FROM commit_statuses WHERE project_id = ? AND type = 'build'", [project.id]);
    expect(rows).toEqual([{ runner_id: first.id }]);
  });

  it('a held runner whose tags do not fit is passed over: the next held runner gets the build', async () => {
    const project = await makeProject(s, owner, 'lp-tags');
    const token = await projectRunnersToken(s, project.id);
    const tagged = await registerRunner(s, { token, tag_list: 'gpu', run_untagged: false });
    const plain = await registerRunner(s, { token });
    const t = ask(s, tagged.token, 2);
    await held(1);
    const p = ask(s, plain.token, 30);
    await held(2);
    await pushFiles(s.ctx, project.id, owner.id, { '.gitlab-ci.yml': ONE_JOB });
    const got = await p;
    expect(got.status).toBe(201);
    expect((await t).status).toBe(204);
  });

  it('a shared runner is woken by any project; another project\'s specific runner is not', async () => {
    const { runner: other } = await projectWithRunner('lp-other');
    const shared = await registerRunner(s, { description: 'shared' });
    const project = await makeProject(s, owner, 'lp-shared');
    const o = ask(s, other.token, 2);
    await held(1);
    const sh = ask(s, shared.token, 30);
    await held(2);
    await pushFiles(s.ctx, project.id, owner.id, { '.gitlab-ci.yml': ONE_JOB });
    expect((await sh).status).toBe(201);
    expect((await o).status).toBe(204);
    await exec(s, 'UPDATE runners SET active = ? WHERE id = ?', [false, shared.id]);
  });

  it('a retry and a manual play wake the held runner', async () => {
    const { project, runner } = await projectWithRunner('lp-retry', {});
    await pushFiles(s.ctx, project.id, owner.id, { '.gitlab-ci.yml': 'first:\n  script: x\nlater:\n  script: y\n  when: manual\n' });
    const built = await ask(s, runner.token, 0);
    expect(built.status).toBe(201);
    const put = await ci(s, 'PUT', `/builds/${built.body.id}.json`, { token: runner.token, state: 'failed' });
    expect(put.status).toBe(200);

    let pending = ask(s, runner.token, 30);
    await held(1);
    const retried = await s.api('POST', `/projects/${project.id}/builds/${built.body.id}/retry`, owner);
    expect(retried.status).toBe(201);
    let res = await pending;
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: retried.body.id, name: 'first' });

    const listed = await s.api('GET', `/projects/${project.id}/builds`, owner);
    const later = (listed.body as { id: number; name: string }[]).find((b) => b.name === 'later')!;
    pending = ask(s, runner.token, 30);
    await held(1);
    expect((await s.api('POST', `/projects/${project.id}/builds/${later.id}/play`, owner)).status).toBe(200);
    res = await pending;
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: later.id, name: 'later' });
  });

  it('a pending build queued before the request is claimed at once, held or not', async () => {
    const { project, runner } = await projectWithRunner('lp-ready');
    await pushFiles(s.ctx, project.id, owner.id, { '.gitlab-ci.yml': ONE_JOB });
    const res = await ask(s, runner.token, 30);
    expect(res.status).toBe(201);
  });

  it('X-Gantry-Long-Poll that is not a number of seconds is a 400 and claims nothing', async () => {
    const { project, runner } = await projectWithRunner('lp-bad');
    await pushFiles(s.ctx, project.id, owner.id, { '.gitlab-ci.yml': ONE_JOB });
    for (const bad of ['soon', '-1', '1.5']) {
      const res = await ask(s, runner.token, bad);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: '400 (Bad request) "X-Gantry-Long-Poll" is invalid' });
    }
    const row = await s.ctx.data.get<{ status: string }>("SELECT status FROM commit_statuses WHERE project_id = ? AND type = 'build'", [project.id]);
    expect(row?.status).toBe('pending');
  });

  it('a bad runner token is a 403 and a paused runner a 404 before any hold', async () => {
    const { runner } = await projectWithRunner('lp-auth');
    expect((await ask(s, 'nope', 30)).status).toBe(403);
    await exec(s, 'UPDATE runners SET active = ? WHERE id = ?', [false, runner.id]);
    expect((await ask(s, runner.token, 30)).status).toBe(404);
    expect(heldBuildRequests(s.ctx)).toBe(0);
  });

  it('the drain answers every held request 204 at once', async () => {
    const other = await startTestServer();
    try {
      const user = await other.user('drainer', { projects_limit: 10 });
      const project = await makeProject(other, user, 'lp-drain');
      const r1 = await registerRunner(other, { token: await projectRunnersToken(other, project.id) });
      const r2 = await registerRunner(other, { description: 'shared' });
      const a = ask(other, r1.token, 50);
      const b = ask(other, r2.token, 50);
      await held(2, other);
      const started = Date.now();
      for (const f of other.app.drain.onDrain) f();
      other.app.drain.draining = true;
      expect((await a).status).toBe(204);
      expect((await b).status).toBe(204);
      expect(Date.now() - started).toBeLessThan(2000);
      // a request arriving during the drain is not held
      expect((await ask(other, r1.token, 50)).status).toBe(204);
      expect(heldBuildRequests(other.ctx)).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe('the hold of runners that do not ask (GitLab Runner 1.x)', () => {
  it('is --runner-long-poll: such a request is held and woken like any other', async () => {
    const other = await startTestServer({ runnerLongPoll: '30' });
    try {
      const user = await other.user('onex', { projects_limit: 10 });
      const project = await makeProject(other, user, 'lp-1x');
      const runner = await registerRunner(other, { token: await projectRunnersToken(other, project.id) });
      const pending = ci(other, 'POST', '/builds/register.json', { token: runner.token, info: { name: 'gitlab-ci-multi-runner', version: '1.11.5' } });
      await held(1, other);
      await pushFiles(other.ctx, project.id, user.id, { '.gitlab-ci.yml': ONE_JOB });
      const res = await pending;
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json');
    } finally {
      await other.close();
    }
  });

  it('holdSeconds: the header wins, capped at 60; without it the setting; garbage is null', () => {
    expect(holdSeconds(undefined, 10)).toBe(10);
    expect(holdSeconds('0', 10)).toBe(0);
    expect(holdSeconds(' 50 ', 10)).toBe(50);
    expect(holdSeconds('3600', 10)).toBe(60);
    expect(holdSeconds('x', 10)).toBeNull();
    expect(holdSeconds('-5', 10)).toBeNull();
  });
});
