/**
 * gantry-runner with several configured runners long-polls too (runner-agent/runner.ts): each runner holds a build
 * request of its own while there is a build slot for each, so a build queued for the second runner is picked up at
 * once while the first is held; with fewer slots than runners they take the slot in turn and never exceed it. Against
 * a real daemon (in process, listening on a port) and its build queue.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldBuildRequests } from '../../daemon/services/ci/build-queue.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';
import type { RunnerEntry } from '../../runner-agent/config.js';
import { createLogger } from '../../runner-agent/log.js';
import { Backoff, RunnerLoop } from '../../runner-agent/runner.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { pushFiles } from '../helpers/ci.js';
import { makeProject } from '../helpers/fixtures.js';
import { sleep, waitUntil } from '../helpers/hook-receiver.js';
import { projectRunnersToken, registerRunner } from '../helpers/runner-fixtures.js';
import { startFakeServer } from './fake-server.js';

let s: TestServer;
let owner: TestUser;
let url: string;
const dirs: string[] = [];
const quiet = createLogger('error', () => undefined);
const fast = { intervalMs: 150, chunkBytes: 64 * 1024, keepAliveMs: 300 };

beforeAll(async () => {
  s = await startTestServer();
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const address = s.app.server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  s.ctx.externalUrl = () => url; // the builds' repo_url: the runner clones from this server
  owner = await s.user('lprunner', { projects_limit: 100 });
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A project with a specific runner of its own, as the runner's config entry. */
async function projectWithRunner(name: string): Promise<{ projectId: number; entry: RunnerEntry }> {
  const project = await makeProject(s, owner, name);
  const r = await registerRunner(s, { token: await projectRunnersToken(s, project.id), description: name });
  return { projectId: project.id, entry: { id: r.id, description: name, url, token: r.token, tags: [], run_untagged: true, locked: false, registered_at: '' } };
}

/** The project's build: its runner and status (null before the push made it). */
async function buildOf(projectId: number): Promise<{ runner_id: number | null; status: string } | null> {
  return (await s.ctx.data.get<{ runner_id: number | null; status: string }>(
    "SELECT runner_id, status FROM commit_statuses WHERE project_id = ? AND type = 'build'", [projectId],
  )) ?? null;
}

function loopOf(runners: RunnerEntry[], concurrent: number, longPollSeconds: number): RunnerLoop {
  const buildsDir = mkdtempSync(join(tmpdir(), 'gantry-runner-lp-'));
  dirs.push(buildsDir);
  // an idle backoff far longer than the test: a build picked up in time was picked up by a held request
  return new RunnerLoop({ runners, concurrent, buildsDir, log: quiet, backoff: new Backoff(60_000, 60_000), timing: fast, longPollSeconds });
}

describe('several runners', () => {
  it('each holds its own request; a build queued for the second is picked up while the first stays held', async () => {
    const first = await projectWithRunner('lp-first');
    const second = await projectWithRunner('lp-second');
    const loop = loopOf([first.entry, second.entry], 2, 30);
    const running = loop.run();
    try {
      await waitUntil(() => heldBuildRequests(s.ctx) === 2, 'both runners held');
      await pushFiles(s.ctx, second.projectId, owner.id, { '.gitlab-ci.yml': 'only:\n  script: echo hi\n' });
      await waitUntil(async () => (await buildOf(second.projectId))?.runner_id === second.entry.id, 'the second runner took the build');
      // the first runner's request is still held (30 s), untouched by the second's build
      expect(heldBuildRequests(s.ctx)).toBe(1);
      await waitUntil(async () => ['success', 'failed'].includes((await buildOf(second.projectId))!.status), 'the build finished');
      expect((await buildOf(second.projectId))!.status).toBe('success');
      // the build's slot is free again: both runners are held
      await waitUntil(() => loop.active === 0 && heldBuildRequests(s.ctx) === 2, 'both held again after the build');
    } finally {
      loop.stop();
      await running;
    }
    // the stop abandoned the held requests: the daemon lets them go as it sees their connections close
    await waitUntil(() => heldBuildRequests(s.ctx) === 0, 'no request held after the stop');
  });

  it('with one build slot for two runners, they hold it in turn: never two requests at once, and either gets its build', async () => {
    const first = await projectWithRunner('lp-turn-first');
    const second = await projectWithRunner('lp-turn-second');
    await waitUntil(() => heldBuildRequests(s.ctx) === 0, 'no request held from before');
    const loop = loopOf([first.entry, second.entry], 1, 30);
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, heldBuildRequests(s.ctx))), 2);
    const running = loop.run();
    try {
      await waitUntil(() => heldBuildRequests(s.ctx) === 1, 'one runner held');
      // the second runner's build: picked up in its turn (holds are short while the runners share the slot)
      await pushFiles(s.ctx, second.projectId, owner.id, { '.gitlab-ci.yml': 'only:\n  script: echo hi\n' });
      await waitUntil(async () => (await buildOf(second.projectId))?.runner_id === second.entry.id, 'the second runner took its build', 20_000);
      // the slot is the build's now: nobody asks until it has finished
      await waitUntil(async () => (await buildOf(second.projectId))!.status === 'success', 'the build finished', 20_000);
      await pushFiles(s.ctx, first.projectId, owner.id, { '.gitlab-ci.yml': 'only:\n  script: echo hi\n' });
      await waitUntil(async () => (await buildOf(first.projectId))?.runner_id === first.entry.id, 'the first runner took its build', 20_000);
      await waitUntil(async () => (await buildOf(first.projectId))!.status === 'success', 'the first build finished', 20_000);
    } finally {
      clearInterval(sampler);
      loop.stop();
      await running;
    }
    expect(most).toBe(1);
  }, 60_000);

  it('against a server that answers at once, each runner keeps its own idle backoff (the others\' requests do not wake it)', async () => {
    const fake = await startFakeServer();
    try {
      const entries: RunnerEntry[] = ['a', 'b'].map((name, i) => {
        const token = `runner-token-${name}`.padEnd(30, '0');
        fake.runnerTokens.add(token);
        return { id: 100 + i, description: name, url: fake.url, token, tags: [], run_untagged: true, locked: false, registered_at: '' };
      });
      const buildsDir = mkdtempSync(join(tmpdir(), 'gantry-runner-lp-'));
      dirs.push(buildsDir);
      const loop = new RunnerLoop({ runners: entries, concurrent: 1, buildsDir, log: quiet, backoff: new Backoff(200, 200), timing: fast, longPollSeconds: 0 });
      const running = loop.run();
      await sleep(1000);
      loop.stop();
      await running;
      const asked = fake.requests.filter((r) => r.path === '/ci/api/v1/builds/register.json');
      // about 5 asks per runner in a second at one per 200 ms; a loop woken by the other runner's answers asks hundreds
      expect(new Set(asked.map((r) => JSON.parse(r.body.toString()).token)).size).toBe(2);
      expect(asked.length).toBeLessThanOrEqual(16);
    } finally {
      await fake.close();
    }
  });
});
