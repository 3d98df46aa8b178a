/**
 * CI across two gantryd processes on one PostgreSQL database (issue 22, items 2 and 7): a push through A creates a
 * pipeline seen through B; real gantry-runner agents registered on A and on B share its builds (both daemons hand
 * builds out at once), each build run once;
 * a trace written through A is followed live over WebSocket (/-/live) through B; a merge set to merge when the
 * pipeline succeeds through B is merged when the pipeline finishes through A; a build canceled through B stops on the
 * runner that talks to A.
 * Runs when GANTRY_TEST_DATABASE_URL is set (npm test's PostgreSQL pass); needs the build (npm test builds first).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { commitFiles, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { api, eventually, startRunner, tmp, type Daemon, type RunnerProcess } from './helpers.js';
import { startDaemonPair, type DaemonPair } from './database.js';

const PASSWORD = 'two-daemons-ci-root-password';
const RUNNERS_TOKEN = 'two-daemons-ci-registration-token-0123';

interface Pipeline { id: number; status: string; sha: string }
interface Build { id: number; name: string; status: string; pipeline: { id: number }; runner: { id: number; description: string } | null }

describe.skipIf(!TEST_DATABASE_URL)('CI across two gantryd processes', () => {
  let pair: DaemonPair | undefined;
  let a: Daemon;
  let b: Daemon;
  let root: string;
  let onA: RunnerProcess;
  let onB: RunnerProcess;
  const work: string[] = [];
  const context = () => `runner on A:\n${onA?.log().slice(-2500)}\nrunner on B:\n${onB?.log().slice(-2500)}\nA: ${a?.stderr().slice(-2000)}\nB: ${b?.stderr().slice(-2000)}`;

  beforeAll(async () => {
    pair = await startDaemonPair(TEST_DATABASE_URL!, PASSWORD, ['--runners-token', RUNNERS_TOKEN]);
    ({ a, b } = pair);
    const session = await api(a.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
    expect(session.status).toBe(201);
    root = session.body.private_token;
    // The runner on A also takes builds tagged via-a (which the one on B, without tags, never takes).
    [onA, onB] = await Promise.all([
      startRunner(a.url, RUNNERS_TOKEN, { description: 'runner-on-a', tags: ['via-a'], runUntagged: true, concurrent: 2 }),
      startRunner(b.url, RUNNERS_TOKEN, { description: 'runner-on-b', concurrent: 2 }),
    ]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([onA?.stop('SIGKILL'), onB?.stop('SIGKILL')]);
    for (const d of work) rmSync(d, { recursive: true, force: true });
    if (pair) expect(await pair.stop()).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
  }, 60_000);

  /** Create a project through A and push these files to `branch` through A; the project and the pushed sha. */
  async function pushThroughA(name: string, files: Record<string, string>, branch = 'master'): Promise<{ id: number; path: string; sha: string; dir: string }> {
    const p = await api(a.url, 'POST', '/projects', root, { name });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    const dir = await workTree();
    work.push(dir);
    const sha = await commitFiles(dir, files, 'add CI');
    await gitOk(dir, ['push', '-q', repoUrl(a.url, p.body.path_with_namespace, { username: 'root', password: PASSWORD }), `HEAD:${branch}`]);
    return { id: p.body.id, path: p.body.path_with_namespace, sha, dir };
  }

  const pipelineThroughB = (projectId: number, sha: string) => eventually(`a pipeline for ${sha.slice(0, 8)} through B`, async () => {
    const r = await api(b.url, 'GET', `/projects/${projectId}/pipelines`, root);
    return (r.body as Pipeline[]).find((p) => p.sha === sha);
  }, 15_000, context);

  const finished = (d: Daemon, projectId: number, pipelineId: number) => eventually(`pipeline ${pipelineId} to finish`, async () => {
    const r = await api(d.url, 'GET', `/projects/${projectId}/pipelines/${pipelineId}`, root);
    return ['success', 'failed', 'canceled'].includes(r.body.status) ? (r.body as Pipeline) : null;
  }, 60_000, context);

  /** A build's trace as stored, read through `d`. */
  const traceOf = (d: Daemon, projectId: number, buildId: number) =>
    fetch(`${d.url}/api/v3/projects/${projectId}/builds/${buildId}/trace`, { headers: { 'private-token': root } }).then((r) => r.text());

  /** The one build of a pipeline once it runs (read through B) and `ready` holds for it. */
  const runningBuild = (projectId: number, pipeline: Pipeline, ready: (x: Build) => Promise<boolean>) => eventually('the build running', async () => {
    const [x] = await buildsOf(b, projectId, pipeline);
    return x?.status === 'running' && (await ready(x)) ? x : null;
  }, 30_000, context);

  /** A script line that waits (at most 60 s) until the test writes `marker`, and fails if it never does. */
  const waitFor = (marker: string) => `for i in $(seq 1 300); do [ -f ${marker} ] && break; sleep 0.2; done; [ -f ${marker} ]`;

  /** The builds of a pipeline (8.13 lists them per commit), oldest first. */
  const buildsOf = async (d: Daemon, projectId: number, pipeline: Pipeline): Promise<Build[]> =>
    ((await api(d.url, 'GET', `/projects/${projectId}/repository/commits/${pipeline.sha}/builds?per_page=100`, root)).body as Build[])
      .filter((x) => x.pipeline.id === pipeline.id).sort((x, y) => x.id - y.id);

  it('runners registered through A and through B are listed by both', async () => {
    for (const d of [a, b]) {
      const r = await api(d.url, 'GET', '/runners/all', root);
      expect(r.status).toBe(200);
      expect(r.body.map((x: { id: number }) => x.id).sort()).toEqual([onA.id, onB.id].sort());
    }
  });

  it('a push through A makes a pipeline seen through B; its builds are shared by the runners of A and B, each run once', async () => {
    // four builds that wait for a marker: four running at once takes both runners (two builds each at the most), so
    // both daemons hand builds out
    const marker = join(tmp('gantry-two-ci-marker-'), 'go-on');
    const jobs = Array.from({ length: 4 }, (_, i) => `job${i}:\n  script:\n    - echo "running $CI_BUILD_NAME"\n    - ${waitFor(marker)}\n`).join('');
    const p = await pushThroughA('ci-shared', { '.gitlab-ci.yml': jobs, 'README.md': '# shared\n' });
    const pipeline = await pipelineThroughB(p.id, p.sha);
    const running = await eventually('four builds running at once', async () => {
      const builds = await buildsOf(b, p.id, pipeline);
      return builds.length === 4 && builds.every((x) => x.status === 'running') ? builds : null;
    }, 30_000, context);
    const on = (runner: RunnerProcess) => running.filter((x) => x.runner?.id === runner.id).length;
    expect([on(onA), on(onB)]).toEqual([2, 2]);
    writeFileSync(marker, 'go\n');
    expect((await finished(b, p.id, pipeline.id)).status).toBe('success');
    const builds = await buildsOf(a, p.id, pipeline);
    expect(builds).toHaveLength(4);
    const started = (log: string) => [...log.matchAll(/build started build=(\d+) /g)].map((m) => Number(m[1]));
    const byA = started(onA.log()).filter((id) => builds.some((x) => x.id === id));
    const byB = started(onB.log()).filter((id) => builds.some((x) => x.id === id));
    // every build ran exactly once, on one runner, and the server names that runner
    expect([...byA, ...byB].sort((x, y) => x - y), context()).toEqual(builds.map((x) => x.id).sort((x, y) => x - y));
    for (const build of builds) {
      expect(build.status).toBe('success');
      expect(build.runner?.id).toBe(byA.includes(build.id) ? onA.id : onB.id);
      const trace = await traceOf(a, p.id, build.id);
      expect(trace).toContain(`\nrunning ${build.name}\n`);
      expect(trace.match(/Running with gantry-runner/g)).toHaveLength(1);
    }
  }, 90_000);

  it('a trace written through A is followed live over WebSocket through B, to its end', async () => {
    const ci = 'slow:\n  tags: [via-a]\n  script:\n    - echo first-marker\n    - sleep 3\n    - echo second-marker\n';
    const p = await pushThroughA('ci-live', { '.gitlab-ci.yml': ci });
    const pipeline = await pipelineThroughB(p.id, p.sha);
    const build = await runningBuild(p.id, pipeline, async () => true);
    expect(build.runner?.id).toBe(onA.id); // its trace goes through A
    const ws = new WebSocket(`${b.url.replace(/^http/, 'ws')}/-/live/builds/${build.id}/trace?private_token=${root}`);
    const bytes: Buffer[] = [];
    const messages: Array<Record<string, unknown>> = [];
    let closed: number | null = null;
    ws.on('message', (data: Buffer, binary: boolean) => (binary ? bytes.push(data) : messages.push(JSON.parse(data.toString()))));
    ws.on('close', (code) => { closed = code; });
    const text = () => Buffer.concat(bytes).toString();
    // the first marker arrives while the build still runs (before the second one exists)
    await eventually('the first marker over the socket', async () => text().includes('first-marker'), 15_000, context);
    expect(text()).not.toContain('second-marker');
    expect(messages[0]).toMatchObject({ type: 'status', build_id: build.id, status: 'running' });
    await eventually('the end of the build over the socket', async () => closed !== null, 30_000, context);
    expect(closed).toBe(1000);
    expect(messages.at(-1)).toEqual({ type: 'finished', build_id: build.id, status: 'success' });
    expect(text()).toContain('second-marker');
    const stored = await traceOf(b, p.id, build.id);
    expect(text()).toBe(stored);
  }, 60_000);

  it('merge when the pipeline succeeds, set through B: the pipeline finishing through A merges it', async () => {
    // the builds (of master and of the feature) wait for a marker: the pipeline is unfinished while the merge is set
    const marker = join(tmp('gantry-two-ci-marker-'), 'go-on');
    const ci = `wait:\n  tags: [via-a]\n  script:\n    - ${waitFor(marker)}\n    - echo checked\n`;
    const p = await pushThroughA('ci-mwps', { '.gitlab-ci.yml': ci, 'README.md': '# base\n' });
    const sha = await commitFiles(p.dir, { 'feature.txt': 'feature\n' }, 'feature');
    await gitOk(p.dir, ['push', '-q', repoUrl(a.url, p.path, { username: 'root', password: PASSWORD }), 'HEAD:feature']);
    const mr = await api(a.url, 'POST', `/projects/${p.id}/merge_requests`, root, { source_branch: 'feature', target_branch: 'master', title: 'Feature' });
    expect(mr.status, JSON.stringify(mr.body)).toBe(201);
    const pipeline = await pipelineThroughB(p.id, sha);
    const set = await api(b.url, 'PUT', `/projects/${p.id}/merge_requests/${mr.body.id}/merge`, root, { merge_when_build_succeeds: true });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ state: 'opened', merge_when_build_succeeds: true });
    writeFileSync(marker, 'go\n');
    expect((await finished(a, p.id, pipeline.id)).status).toBe('success');
    const merged = await eventually('the merge', async () => {
      const r = await api(a.url, 'GET', `/projects/${p.id}/merge_requests/${mr.body.id}`, root);
      return r.body.state === 'merged' ? r.body : null;
    }, 30_000, context);
    expect(merged.merge_when_build_succeeds).toBe(false);
    const master = await api(b.url, 'GET', `/projects/${p.id}/repository/branches/master`, root);
    expect(master.body.commit.parent_ids).toContain(sha);
  }, 90_000);

  it('a build canceled through B stops on the runner that talks to A', async () => {
    const ci = 'long:\n  tags: [via-a]\n  script:\n    - echo started-long\n    - sleep 60\n    - echo never-printed\n';
    const p = await pushThroughA('ci-cancel', { '.gitlab-ci.yml': ci });
    const pipeline = await pipelineThroughB(p.id, p.sha);
    const build = await runningBuild(p.id, pipeline, async (x) => (await traceOf(b, p.id, x.id)).includes('started-long'));
    const cancel = await api(b.url, 'POST', `/projects/${p.id}/builds/${build.id}/cancel`, root);
    expect(cancel.status).toBe(201);
    expect(cancel.body.status).toBe('canceled');
    // the runner on A hears it on its next trace PATCH and kills the script (well before its 60 s sleep ends)
    await eventually('the runner to abort the build', async () => new RegExp(`aborting build build=${build.id} `).test(onA.log()), 20_000, context);
    await eventually('the build to finish on the runner', async () => new RegExp(`build finished build=${build.id} `).test(onA.log()), 20_000, context);
    const after = await api(a.url, 'GET', `/projects/${p.id}/builds/${build.id}`, root);
    expect(after.body.status).toBe('canceled');
    const trace = await traceOf(a, p.id, build.id);
    expect(trace).toContain('started-long');
    expect(trace).not.toContain('never-printed');
  }, 60_000);
});
