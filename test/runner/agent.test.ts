/**
 * The runner agent's build loop and shell executor against a recording fake of /ci/api/v1: checkout, script,
 * after_script, incremental trace (Content-Range, 416 resync, 404 fallback), artifacts up and down, cancel, timeout.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../runner-agent/log.js';
import { Backoff, RunnerLoop } from '../../runner-agent/runner.js';
import type { RunnerEntry } from '../../runner-agent/config.js';
import type { BuildPayload } from '../../runner-agent/types.js';
import { commitFiles, gitOk, workTree } from '../helpers/git.js';
import { startFakeServer, type FakeServer } from './fake-server.js';

let fake: FakeServer;
let repoUrl: string;
let sha: string;
let runner: RunnerEntry;
let nextId = 1;
const dirs: string[] = [];
const tmp = (prefix = 'gantry-runner-test-') => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
let buildsDir: string;

beforeAll(async () => {
  fake = await startFakeServer();
  const work = await workTree();
  dirs.push(work);
  sha = await commitFiles(work, { 'README.md': '# hello\n', 'src/app.sh': 'echo app\n' }, 'first');
  const bare = tmp('gantry-runner-bare-');
  await gitOk(bare, ['clone', '-q', '--bare', work, 'repo.git']);
  repoUrl = `file://${join(bare, 'repo.git')}`;
  fake.runnerTokens.add('runner-token-0000000000000000000');
  runner = { id: 42, description: 'test runner', url: fake.url, token: 'runner-token-0000000000000000000', tags: [], run_untagged: true, locked: false, registered_at: '' };
  buildsDir = tmp('gantry-runner-builds-');
});

afterAll(async () => {
  await fake?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const payload = (extra: Partial<BuildPayload> = {}): BuildPayload => {
  const id = nextId++;
  return {
    id, token: `build-token-${id}`, repo_url: repoUrl, sha, ref: 'master', commands: 'echo hello', name: `job${id}`, stage: 'test',
    project_id: 5, before_sha: '0'.repeat(40), allow_git_fetch: true, timeout: 60, variables: [], options: {}, depends_on_builds: [], ...extra,
  };
};

const quiet = createLogger('error', () => undefined);
const fast = { intervalMs: 150, chunkBytes: 64 * 1024, keepAliveMs: 300 };

/** Run the loop until `count` builds were taken and finished. */
async function runBuilds(count: number, concurrent = 1): Promise<RunnerLoop> {
  const loop = new RunnerLoop({ runners: [runner], concurrent, buildsDir, log: quiet, maxBuilds: count, backoff: new Backoff(20, 100), timing: fast });
  await loop.run();
  return loop;
}

describe('a successful build', () => {
  it('checks out the sha, runs the commands with echo, uploads artifacts, streams and finishes the trace', async () => {
    const b = fake.enqueue(payload({
      commands: 'cat README.md\nmkdir -p out && echo "built $CI_BUILD_ID on $CI_BUILD_REF_NAME" > out/result.txt\necho "var=$MY_VAR"\nsleep 0.5\necho done',
      variables: [{ key: 'MY_VAR', value: 'my value', public: true }],
      options: { artifacts: { paths: ['out/'], name: 'result', expire_in: '1 week' }, after_script: ['echo after $CI_BUILD_ID'] },
    }));
    await runBuilds(1);
    const done = await fake.waitFinished(b.payload.id);
    expect(done.status).toBe('success');
    expect(done.states[0]).toBe('running');
    expect(done.states.at(-1)).toBe('success');
    const trace = done.finalTrace!;
    expect(trace).toContain('Running with gantry-runner');
    expect(trace).toContain(`Checking out ${sha.slice(0, 8)} as master...`);
    expect(trace).toContain('\x1b[32;1m$ cat README.md\x1b[0;m\n# hello\n');
    expect(trace).toContain('var=my value');
    expect(trace).toContain(`after ${b.payload.id}`);
    expect(trace).toContain('out/: found 1 matching file\n'); // the files under the directory, counted
    expect(trace).toContain('Uploading artifacts to coordinator... ok');
    expect(trace).toContain('Build succeeded');
    expect(done.traceBeforeFinal).toBe(trace);
    // incremental trace: contiguous ranges, the assembled trace is the final one
    expect(done.patches.length).toBeGreaterThan(0);
    let offset = 0;
    for (const range of done.patches) {
      const [start, end] = range.split('-').map(Number);
      expect(start).toBe(offset);
      expect(end).toBeGreaterThanOrEqual(start);
      offset = end;
    }
    // artifacts: a tar.gz named after artifacts:name, expire_in as query parameter
    expect(done.artifacts!.filename).toBe('result.tar.gz');
    expect(done.artifacts!.expireIn).toBe('1 week');
    const upload = fake.requests.find((r) => r.method === 'POST' && r.path.startsWith(`/ci/api/v1/builds/${b.payload.id}/artifacts`))!;
    expect(upload.path).toBe(`/ci/api/v1/builds/${b.payload.id}/artifacts?expire_in=1+week`);
    expect(upload.headers['build-token']).toBe(b.payload.token);
    const x = tmp();
    const tgz = join(x, 'a.tar.gz');
    writeFileSync(tgz, done.artifacts!.data);
    execFileSync('tar', ['xzf', tgz, '-C', x]);
    expect(readFileSync(join(x, 'out', 'result.txt'), 'utf8')).toBe(`built ${b.payload.id} on master\n`);
    // the build dir: <builds>/<runner id>/<project>; the tmp dir is gone
    const dir = join(buildsDir, '42', 'project-5');
    expect(readFileSync(join(dir, 'out', 'result.txt'), 'utf8')).toContain('built');
    expect(existsSync(`${dir}.tmp`)).toBe(false);
    // every request carried the runner's identity
    const reg = fake.requests.find((r) => r.path === '/ci/api/v1/builds/register.json')!;
    expect(String(reg.headers['user-agent'])).toMatch(/^gantry-runner /);
    expect(JSON.parse(reg.body.toString())).toMatchObject({ token: runner.token, info: { name: 'gantry-runner', executor: 'shell' } });
  });

  it('downloads the artifacts of its dependencies with their tokens, then fetches into the existing checkout', async () => {
    const first = [...fake.builds.values()].find((b) => b.artifacts)!;
    const b = fake.enqueue(payload({
      commands: 'cat out/result.txt\ntest ! -e untracked-leftover',
      options: { dependencies: [first.payload.name!] },
      depends_on_builds: [
        { id: first.payload.id, token: first.payload.token, name: first.payload.name!, stage: 'build', artifacts_file: { filename: 'result.tar.gz', size: first.artifacts!.data.length } },
        { id: 999, token: 'nope', name: 'other', artifacts_file: { filename: 'x.tar.gz', size: 1 } },
      ],
    }));
    writeFileSync(join(buildsDir, '42', 'project-5', 'untracked-leftover'), 'x');
    await runBuilds(1);
    const done = await fake.waitFinished(b.payload.id);
    expect(done.finalTrace).toContain(`Downloading artifacts for ${first.payload.name} (${first.payload.id})...`);
    expect(done.finalTrace).not.toContain('(999)');
    expect(done.finalTrace).toContain('Fetching changes...');
    expect(done.finalTrace).toContain(`built ${first.payload.id} on master`);
    expect(done.status).toBe('success');
    const get = fake.requests.find((r) => r.method === 'GET' && r.path === `/ci/api/v1/builds/${first.payload.id}/artifacts`)!;
    expect(get.headers['build-token']).toBe(first.payload.token);
  });
});

describe('failures', () => {
  it('a failing command fails the build; after_script still runs; on_failure artifacts are uploaded', async () => {
    const b = fake.enqueue(payload({
      commands: 'echo start > log.txt\nexit 7\necho never',
      options: { after_script: ['echo cleaning up'], artifacts: { paths: ['log.txt'], when: 'on_failure' } },
    }));
    await runBuilds(1);
    const done = await fake.waitFinished(b.payload.id);
    expect(done.status).toBe('failed');
    expect(done.finalTrace).toContain('cleaning up');
    expect(done.finalTrace).toContain('ERROR: Build failed: exit status 7');
    expect(done.finalTrace).not.toMatch(/^never$/m);
    expect(done.artifacts!.filename).toBe('artifacts.tar.gz');
  });

  it('a missing commit fails at checkout', async () => {
    const b = fake.enqueue(payload({ sha: 'f'.repeat(40) }));
    await runBuilds(1);
    const done = await fake.waitFinished(b.payload.id);
    expect(done.status).toBe('failed');
    expect(done.finalTrace).toContain('ERROR: Build failed: getting the sources');
  });

  it('the build timeout kills the script', async () => {
    const b = fake.enqueue(payload({ commands: 'echo sleeping\nsleep 30', timeout: 1 }));
    const started = Date.now();
    await runBuilds(1);
    const done = await fake.waitFinished(b.payload.id);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(done.status).toBe('failed');
    expect(done.finalTrace).toContain('execution took longer than 1 seconds');
  });
});

describe('the trace protocol', () => {
  it('a 202 with Build-Status canceled kills the job within seconds', async () => {
    const b = fake.enqueue(payload({ commands: 'echo going to sleep\nsleep 60\necho woke' }));
    fake.patchHook = (build) => {
      if (build.trace.toString().includes('going to sleep')) build.status = 'canceled';
      return null;
    };
    const started = Date.now();
    await runBuilds(1);
    fake.patchHook = null;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(b.status).toBe('canceled');
    // the final PUT met a build that is no longer running: 404, and the runner stopped trying
    const puts = fake.requests.filter((r) => r.method === 'PUT' && r.path === `/ci/api/v1/builds/${b.payload.id}.json`);
    expect(JSON.parse(puts.at(-1)!.body.toString())).toMatchObject({ state: 'failed' });
    expect(b.trace.toString()).not.toContain('woke');
  });

  it('resyncs after a lost acknowledgement (416 with Range) and ends with the same trace on both sides', async () => {
    const b = fake.enqueue(payload({ commands: 'for i in 1 2 3 4 5 6; do echo line $i; sleep 0.3; done' }));
    let failedOnce = false;
    fake.patchHook = (build, start, body) => {
      if (!failedOnce && body.length > 0 && start > 0) {
        failedOnce = true;
        return { status: 500, store: true }; // stored, but the runner thinks it was not
      }
      return null;
    };
    await runBuilds(1);
    fake.patchHook = null;
    const done = await fake.waitFinished(b.payload.id);
    expect(failedOnce).toBe(true);
    expect(done.status).toBe('success');
    // 500 (stored anyway) -> the next PATCH starts too early -> 416 with Range -> resent from the server's length -> 202
    const i = done.patchStatuses.indexOf(500);
    expect(done.patchStatuses.slice(i, i + 3)).toEqual([500, 416, 202]);
    const [, endOf500] = done.patches[i].split('-').map(Number);
    expect(Number(done.patches[i + 2].split('-')[0])).toBe(endOf500);
    // what the server assembled from PATCHes is exactly the runner's final trace
    expect(done.traceBeforeFinal).toBe(done.finalTrace);
    expect(done.finalTrace).toContain('line 6');
  });

  it('falls back to full-trace PUTs when PATCH answers 404', async () => {
    fake.noIncremental = true;
    const b = fake.enqueue(payload({ commands: 'echo a\nsleep 1\necho b' }));
    await runBuilds(1);
    fake.noIncremental = false;
    const done = await fake.waitFinished(b.payload.id);
    expect(done.status).toBe('success');
    const puts = fake.requests.filter((r) => r.method === 'PUT' && r.path === `/ci/api/v1/builds/${b.payload.id}.json`).map((r) => JSON.parse(r.body.toString()));
    expect(puts.some((p) => p.state === 'running' && typeof p.trace === 'string' && p.trace.includes('$ echo a'))).toBe(true);
  });
});

describe('concurrency', () => {
  it('runs two builds of the same project at once in separate dirs', async () => {
    const a = fake.enqueue(payload({ commands: 'sleep 1\npwd' }));
    const b = fake.enqueue(payload({ commands: 'sleep 1\npwd' }));
    const started = Date.now();
    await runBuilds(2, 2);
    const [da, db] = [await fake.waitFinished(a.payload.id), await fake.waitFinished(b.payload.id)];
    expect(Date.now() - started).toBeLessThan(5000);
    expect(da.status).toBe('success');
    expect(db.status).toBe('success');
    const pwd = (t: string) => /\$ pwd\x1b\[0;m\n(.*)\n/.exec(t)![1];
    expect(pwd(da.finalTrace!)).not.toBe(pwd(db.finalTrace!));
  });
});
