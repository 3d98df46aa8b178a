/**
 * CI views of the CLI: stages, durations and status lines (pure), the non-TTY watch, the ink view through the facade,
 * and `gantry build trace --follow` over the live WebSocket against a real daemon with an OAuth access token.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedBuildLines, elapsed, formatBytes, formatSeconds, latestBuilds, pipelineLines, stagesOf, stageStatus, type Build, type Pipeline } from '../../cli/views/ci-format.js';
import { PipelineView, type PipelineViewProps } from '../../cli/views/pipeline-view.js';
import { watchPipeline } from '../../cli/views/pipeline-watch.js';
import { startLiveView } from '../../cli/views/render.js';
import { liveTraceUrl } from '../../cli/views/trace-stream.js';
import { dispositionFilename } from '../../cli/commands/builds.js';
import { finishedHint } from '../../cli/commands/pipelines.js';
import { ciHints, manualJobNames } from '../../cli/views/ci-hints.js';
import { fakeIO, ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

const pipeline = (extra: Partial<Pipeline> = {}): Pipeline => ({
  id: 12, status: 'running', ref: 'master', sha: '1a2b3c4d5e6f7a8b9c0d', tag: false, yaml_errors: null, user: null,
  created_at: at(0), started_at: at(0), finished_at: null, duration: null, ...extra,
});

const build = (id: number, name: string, stage: string, status: string, extra: Partial<Build> = {}): Build => ({
  id, name, stage, status, ref: 'master', tag: false, coverage: null, created_at: at(0), started_at: null, finished_at: null,
  user: null, commit: null, runner: null, pipeline: { id: 12, sha: 'x', ref: 'master', status: 'running' }, ...extra,
});

describe('formatting', () => {
  it('formats durations and sizes', () => {
    expect(formatSeconds(5)).toBe('5s');
    expect(formatSeconds(65)).toBe('1m 05s');
    expect(formatSeconds(3725)).toBe('1h 02m');
    expect(elapsed(at(0), at(90))).toBe('1m 30s');
    expect(elapsed(at(0), null, T0 + 7000)).toBe('7s');
    expect(elapsed(null, null)).toBe('');
    expect(formatBytes(100)).toBe('100 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5.0 MiB');
  });

  it('keeps the latest build per name and orders stages by their first build', () => {
    const builds = [
      build(5, 'test', 'test', 'failed'),
      build(4, 'compile', 'build', 'success'),
      build(9, 'test', 'test', 'running'),
      build(6, 'deploy', 'deploy', 'created'),
    ];
    expect(latestBuilds(builds).map((b) => b.id)).toEqual([4, 6, 9]);
    expect(stagesOf(latestBuilds(builds), builds).map((s) => [s.name, s.status, s.builds.map((b) => b.id)])).toEqual([
      ['build', 'success', [4]], ['test', 'running', [9]], ['deploy', 'created', [6]],
    ]);
    expect(stageStatus(['success', 'skipped'])).toBe('success');
    expect(stageStatus(['failed', 'success'])).toBe('failed');
    expect(stageStatus(['pending', 'success'])).toBe('running');
    expect(stageStatus(['skipped'])).toBe('skipped');
  });

  it('renders plain pipeline lines and per-change lines', () => {
    const builds = [build(4, 'compile', 'build', 'success', { started_at: at(0), finished_at: at(3) }), build(5, 'test', 'test', 'running', { started_at: at(3) })];
    expect(pipelineLines(pipeline(), builds, T0 + 10_000)).toEqual([
      'pipeline #12 running  master @ 1a2b3c4d  (10s)',
      '  build (success)',
      '    success   compile  #4  3s',
      '  test (running)',
      '    running   test     #5  7s',
    ]);
    const before = new Map([[4, 'success'], [5, 'pending']]);
    expect(changedBuildLines(before, builds)).toEqual(['test: test #5 running']);
  });

  it('reads download file names and builds the live trace URL', () => {
    expect(dispositionFilename('attachment; filename="result.tar.gz"')).toBe('result.tar.gz');
    expect(dispositionFilename(`attachment; filename="a_b"; filename*=UTF-8''a%20b.tar.gz`)).toBe('a b.tar.gz');
    expect(dispositionFilename('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(dispositionFilename('attachment; filename=".."')).toBeNull();
    expect(dispositionFilename(undefined)).toBeNull();
    expect(liveTraceUrl('http://127.0.0.1:3080', 7)).toBe('ws://127.0.0.1:3080/-/live/builds/7/trace');
    expect(liveTraceUrl('https://h/gantry/', 7)).toBe('wss://h/gantry/-/live/builds/7/trace');
  });
});

describe('CI hints', () => {
  it('finds the manual jobs of a config, and not hidden or skipped ones', async () => {
    const yml = 'stages: [a]\n.tpl: &t\n  when: manual\nbuild:\n  script: [x]\nship:\n  <<: *t\n  script: [y]\nlater:\n  when: on_failure\n  script: [z]\n';
    expect([...await manualJobNames(yml)]).toEqual(['ship']);
    expect([...await manualJobNames(': not yaml: [')]).toEqual([]);
  });

  it('says how to start a manual build, and asks about runners for a build pending over 30 s', () => {
    const now = T0 + 45_000;
    expect(ciHints('root/app', [build(3, 'ship', 'deploy', 'manual')], now)).toEqual(['ship #3 is a manual job: start it with `gantry build play root/app 3`']);
    expect(ciHints('root/app', [build(4, 'test', 'test', 'pending', { created_at: at(20) })], now)).toEqual([]);
    const stuck = ciHints('root/app', [build(4, 'test', 'test', 'pending'), build(5, 'lint', 'test', 'pending')], now);
    expect(stuck).toHaveLength(1);
    expect(stuck[0]).toMatch(/^test #4, lint #5 have waited over 30 s for a runner: .*gantry runner list/);
  });
});

describe('pipeline watch', () => {
  it('after a failed pipeline, names the failed build to read (never a placeholder)', () => {
    const builds = [build(4, 'compile', 'build', 'success'), build(7, 'rspec', 'test', 'failed'), build(8, 'lint', 'test', 'failed')];
    expect(finishedHint('root/app', 12, builds)).toBe('see the log of rspec: gantry build trace root/app 7 (1 more failed: lint #8)');
    expect(finishedHint('root/app', 12, [build(4, 'compile', 'build', 'canceled')])).toBe('see its builds: gantry build list root/app --pipeline 12');
  });

  it('off a terminal, prints one line per change until the pipeline finishes', async () => {
    const snapshots = [
      { pipeline: pipeline({ status: 'pending' }), builds: [build(4, 'compile', 'build', 'pending')] },
      { pipeline: pipeline({ status: 'running' }), builds: [build(4, 'compile', 'build', 'running')] },
      { pipeline: pipeline({ status: 'running' }), builds: [build(4, 'compile', 'build', 'running')] },
      { pipeline: pipeline({ status: 'success', duration: 4, finished_at: at(4) }), builds: [build(4, 'compile', 'build', 'success', { started_at: at(0), finished_at: at(4) })] },
    ];
    let i = 0;
    const io = fakeIO({});
    const last = await watchPipeline(io, async () => snapshots[Math.min(i++, snapshots.length - 1)], { intervalMs: 1, live: false });
    expect(last.pipeline.status).toBe('success');
    const lines = io.stdout.trim().split('\n').map((l) => l.replace(/^\d\d:\d\d:\d\d /, ''));
    expect(lines).toEqual([
      'build: compile #4 pending',
      'pipeline #12 pending',
      'build: compile #4 running',
      'pipeline #12 running',
      'build: compile #4 success (4s)',
      'pipeline #12 success  master @ 1a2b3c4d  (4s)',
    ]);
  });

  it('on a terminal, draws the stages with ink through the render facade', async () => {
    const out = new PassThrough();
    let screen = '';
    out.on('data', (d: Buffer) => { screen += d.toString(); });
    const stream = Object.assign(out, { columns: 100, rows: 30, isTTY: true }) as unknown as NodeJS.WriteStream;
    const props: PipelineViewProps = {
      pipeline: pipeline(), now: T0 + 5000, note: null,
      builds: [build(4, 'compile', 'build', 'success', { started_at: at(0), finished_at: at(2) }), build(5, 'rspec', 'test', 'running', { started_at: at(2) })],
    };
    const view = startLiveView(PipelineView, props, stream);
    view.update({ ...props, pipeline: pipeline({ status: 'success', duration: 9, finished_at: at(9) }), builds: props.builds.map((b) => ({ ...b, status: 'success' })) });
    await view.stop();
    // eslint-disable-next-line no-control-regex
    const plain = screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(plain).toContain('Pipeline #12');
    expect(plain).toContain('build');
    expect(plain).toContain('compile');
    expect(plain).toContain('rspec');
    expect(plain).toContain('success');
  });
});

describe('build trace --follow with an OAuth token', () => {
  let f: CliFixture;
  let rootToken: string;
  /** A JSON call to the daemon (/api/v3 unless the path is under /ci/ or /oauth/). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function call(method: string, path: string, body?: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const res = await fetch(`${f.url}${/^\/(ci|oauth)\//.test(path) ? '' : '/api/v3'}${path}`, {
      method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }
  beforeAll(async () => {
    f = await startCliFixture();
    rootToken = (await call('POST', '/session', { login: 'root', password: ROOT_PASSWORD })).body.private_token;
  });
  afterAll(async () => {
    await f?.close();
  });

  it('streams the trace over the live WebSocket with GANTRY_TOKEN set to an OAuth access token, and exits 0 on success', async () => {
    const asRoot = { 'private-token': rootToken };
    const project = (await call('POST', '/projects', { name: 'traced' }, asRoot)).body;
    const file = await call('POST', `/projects/${project.id}/repository/files`, {
      file_path: '.gitlab-ci.yml', branch_name: 'master', content: 'job:\n  script: echo hi\n', commit_message: 'Add CI',
    }, asRoot);
    expect(file.status).toBe(201);
    const runnersToken = (await call('GET', `/projects/${project.id}`, undefined, asRoot)).body.runners_token;
    const reg = await call('POST', '/ci/api/v1/runners/register', { token: runnersToken });
    expect(reg.status).toBe(201);
    let build: { id: number; token: string } | null = null;
    for (let i = 0; i < 50 && !build; i++) {
      const r = await call('POST', '/ci/api/v1/builds/register', { token: reg.body.token });
      if (r.status === 201) build = r.body;
      else await new Promise((res) => setTimeout(res, 100));
    }
    expect(build).not.toBeNull();
    const part = await fetch(`${f.url}/ci/api/v1/builds/${build!.id}/trace.txt`, {
      method: 'PATCH', headers: { 'content-type': 'text/plain', 'build-token': build!.token, 'content-range': '0-12' }, body: 'first part\n',
    });
    expect(part.status).toBe(202);

    const oauth = await call('POST', '/oauth/token', { grant_type: 'password', username: 'root', password: ROOT_PASSWORD, client_id: 'gantry-cli' });
    expect(oauth.body.access_token).toMatch(/^[0-9a-f]{64}$/); // the CLI sends a 64-hex GANTRY_TOKEN as a Bearer token
    const following = f.cli(['build', 'trace', project.path_with_namespace, String(build!.id), '--follow'], {
      env: { GANTRY_URL: f.url, GANTRY_TOKEN: oauth.body.access_token },
    });
    // finish the build once the follower is connected (it then sees the rest and the final status live)
    await new Promise((res) => setTimeout(res, 500));
    const put = await call('PUT', `/ci/api/v1/builds/${build!.id}`, { token: reg.body.token, state: 'success', trace: 'first part\nsecond part\n' });
    expect(put.status).toBe(200);
    const r = await following;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('first part\nsecond part\n');
    expect(r.stderr).toContain(`Build #${build!.id} success.`);
    expect(r.stderr).not.toContain('polling'); // the live endpoint answered: no fallback
  }, 30_000);
});
