/**
 * What the runner agent does while the daemon it talks to is gone (issue 22: "a running build survives the death of the
 * daemon it talked to"): trace PATCHes that fail (a balancer's 502) are sent again from the same offset, and an
 * artifacts upload that fails on the way is retried with a doubling, bounded delay; 403 and 413 are still final.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildJob, retryDelay, UPLOAD_ATTEMPTS } from '../../runner-agent/executor.js';
import { createLogger } from '../../runner-agent/log.js';
import { CiClient } from '../../runner-agent/network.js';
import type { RunnerEntry } from '../../runner-agent/config.js';
import type { BuildPayload } from '../../runner-agent/types.js';
import { commitFiles, gitOk, workTree } from '../helpers/git.js';
import { startFakeServer, type FakeBuild, type FakeServer } from './fake-server.js';

let fake: FakeServer;
let client: CiClient;
let repoUrl: string;
let sha: string;
let runner: RunnerEntry;
let buildsDir: string;
let nextId = 500;
const dirs: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  fake = await startFakeServer();
  client = new CiClient(fake.url);
  const work = await workTree();
  dirs.push(work);
  sha = await commitFiles(work, { 'README.md': '# retry\n' }, 'first');
  const bare = tmp('gantry-runner-retry-bare-');
  await gitOk(bare, ['clone', '-q', '--bare', work, 'repo.git']);
  repoUrl = `file://${join(bare, 'repo.git')}`;
  fake.runnerTokens.add('runner-token-retry-000000000000');
  runner = { id: 7, description: 'retry runner', url: fake.url, token: 'runner-token-retry-000000000000', tags: [], run_untagged: true, locked: false, registered_at: '' };
  buildsDir = tmp('gantry-runner-retry-builds-');
});

afterAll(async () => {
  await client?.close();
  await fake?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A build the fake has handed out (running), run by a BuildJob with short retry delays. */
async function runJob(extra: Partial<BuildPayload>): Promise<{ outcome: string; build: FakeBuild }> {
  const id = nextId++;
  const b = fake.enqueue({
    id, token: `build-token-${id}`, repo_url: repoUrl, sha, ref: 'master', commands: 'echo hello', name: `job${id}`, stage: 'test',
    project_id: 9, before_sha: '0'.repeat(40), allow_git_fetch: true, timeout: 60, variables: [], options: {}, depends_on_builds: [], ...extra,
  });
  b.status = 'running';
  const job = new BuildJob({
    client, runner, build: b.payload, buildsDir, log: createLogger('error', () => undefined),
    timing: { intervalMs: 100, chunkBytes: 64 * 1024, keepAliveMs: 200 }, finalRetryMs: 50, transferRetryMs: 20,
  });
  const outcome = await job.run();
  return { outcome, build: await fake.waitFinished(id) };
}

const artifactPosts = (build: FakeBuild) => fake.requests.filter((r) => r.method === 'POST' && r.path.startsWith(`/ci/api/v1/builds/${build.payload.id}/artifacts`)).length;

describe('retries while the daemon is gone', () => {
  it('retryDelay doubles from the first delay and stops growing at 8 times it', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => retryDelay(n))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
    expect(retryDelay(2, 20)).toBe(40);
    expect(retryDelay(0, 20)).toBe(20);
  });

  it('an artifacts upload answered 502 three times is sent again until it is stored, and the build succeeds', async () => {
    let failures = 3;
    fake.artifactsHook = (_b, method) => (method === 'POST' && failures-- > 0 ? 502 : null);
    try {
      const { outcome, build } = await runJob({ commands: 'echo kept > kept.txt', options: { artifacts: { paths: ['kept.txt'] } } });
      expect(outcome).toBe('success');
      expect(build.status).toBe('success');
      expect(artifactPosts(build)).toBe(4);
      expect(build.artifacts?.data.length).toBeGreaterThan(0);
      expect(build.finalTrace).toContain('Uploading artifacts to coordinator... ok');
      expect(build.finalTrace!.match(/WARNING: Uploading artifacts to coordinator\.\.\. 502 injected/g)).toHaveLength(3);
    } finally {
      fake.artifactsHook = null;
    }
  });

  it('an upload that keeps failing is given up after UPLOAD_ATTEMPTS tries and fails the build', async () => {
    fake.artifactsHook = (_b, method) => (method === 'POST' ? 502 : null);
    try {
      const { outcome, build } = await runJob({ commands: 'echo kept > kept.txt', options: { artifacts: { paths: ['kept.txt'] } } });
      expect(outcome).toBe('failed');
      expect(build.status).toBe('failed');
      expect(artifactPosts(build)).toBe(UPLOAD_ATTEMPTS);
      expect(build.artifacts).toBeNull();
      expect(build.finalTrace).toContain('ERROR: Uploading artifacts to coordinator... failed');
    } finally {
      fake.artifactsHook = null;
    }
  });

  it('a 403 is final: one try', async () => {
    fake.artifactsHook = (_b, method) => (method === 'POST' ? 403 : null);
    try {
      const { outcome, build } = await runJob({ commands: 'echo kept > kept.txt', options: { artifacts: { paths: ['kept.txt'] } } });
      expect(outcome).toBe('failed');
      expect(artifactPosts(build)).toBe(1);
    } finally {
      fake.artifactsHook = null;
    }
  });

  it('trace PATCHes answered 502 for a while are sent again from the same offset: the server ends with the whole trace', async () => {
    let failing = true;
    fake.patchHook = (_b, _start, body) => (failing && body.length > 0 ? { status: 502 } : null);
    setTimeout(() => { failing = false; }, 700).unref();
    try {
      const { outcome, build } = await runJob({ commands: 'echo first line\nsleep 1.2\necho second line' });
      expect(outcome).toBe('success');
      expect(build.patchStatuses).toContain(502);
      expect(build.patchStatuses.at(-1)).toBe(202);
      // every accepted PATCH started where the server's trace ended: the assembled trace is the final one
      expect(build.traceBeforeFinal).toBe(build.finalTrace);
      expect(build.finalTrace).toContain('first line');
      expect(build.finalTrace).toContain('second line');
    } finally {
      fake.patchHook = null;
    }
  });
});
