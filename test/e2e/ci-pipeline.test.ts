/**
 * CI end to end with real processes: gantryd on a free port, `git push` of a repository with a .gitlab-ci.yml,
 * the gantry-runner agent (register + run) executing the builds with the shell executor, and the gantry CLI
 * (pipeline watch/retry, build artifacts/trace/play/cancel). Needs `npm run build`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { api, cleanEnv, cleanupTmp, killAll, ROOT, runCli, startGantryd, tmp, type Daemon, type RunResult } from './helpers.js';

const PASSWORD = 'ci-e2e-root-password';
const RUNNERS_TOKEN = 'ci-e2e-registration-token-0123456789';
const RUNNER_BIN = join(ROOT, 'bin', 'gantry-runner.js');
let pg: Awaited<ReturnType<typeof createTestDatabase>> | null = null;

let daemon: Daemon;
let token: string;
let cliConfig: string;
let runnerConfigDir: string;
let runner: { proc: ChildProcess; log(): string; exited: Promise<number | null> };
const work: string[] = [];

/** Run the CLI against the daemon as root. */
const cli = (...args: string[]): Promise<RunResult> => runCli(args, { configDir: cliConfig, env: { GANTRY_URL: daemon.url, GANTRY_TOKEN: token } });

/** Run gantry-runner to completion. */
function runnerCmd(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const p = spawn(process.execPath, [RUNNER_BIN, ...args], { env: cleanEnv({ GANTRY_CONFIG_DIR: runnerConfigDir }), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    p.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    p.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    p.on('close', (code) => done({ code, output }));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `fn` until it returns a value (not undefined/false), or fail after timeoutMs. */
async function eventually<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false && v !== null) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}\nrunner log:\n${runner?.log().slice(-3000)}`);
    await sleep(250);
  }
}

interface Project { id: number; path_with_namespace: string }
interface Pipeline { id: number; status: string; sha: string; ref: string }
interface Build { id: number; name: string; stage: string; status: string; pipeline: { id: number }; artifacts_file?: { filename: string; size: number } }

/** Create a project, push a repository with these files (the CI config among them) to master; returns project and sha. */
async function pushProject(name: string, files: Record<string, string>): Promise<{ project: Project; sha: string; dir: string }> {
  const r = await api(daemon.url, 'POST', '/projects', token, { name });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const project = r.body as Project;
  const dir = await workTree();
  work.push(dir);
  const sha = await commitFiles(dir, files, 'add CI');
  await gitOk(dir, ['push', '-q', repoUrl(daemon.url, project.path_with_namespace, { username: 'root', password: PASSWORD }), 'HEAD:master']);
  return { project, sha, dir };
}

/** The pipeline of a sha, once it exists. */
function pipelineOf(project: Project, sha: string): Promise<Pipeline> {
  return eventually(`a pipeline for ${sha.slice(0, 8)}`, async () => {
    const r = await api(daemon.url, 'GET', `/projects/${project.id}/pipelines`, token);
    return (r.body as Pipeline[]).find((p) => p.sha === sha);
  }, 10_000);
}

/** Builds of a pipeline, latest per name. */
async function buildsOf(project: Project, pipeline: Pipeline): Promise<Record<string, Build>> {
  const r = await api(daemon.url, 'GET', `/projects/${project.id}/repository/commits/${pipeline.sha}/builds?per_page=100`, token);
  const out: Record<string, Build> = {};
  for (const b of (r.body as Build[]).filter((x) => x.pipeline.id === pipeline.id).sort((a, c) => a.id - c.id)) out[b.name] = b;
  return out;
}

const buildStatus = async (project: Project, id: number) => (await api(daemon.url, 'GET', `/projects/${project.id}/builds/${id}`, token)).body.status as string;

beforeAll(async () => {
  const dataDir = tmp('gantry-ci-e2e-data-');
  cliConfig = tmp('gantry-ci-e2e-cli-');
  runnerConfigDir = tmp('gantry-ci-e2e-runner-');
  // the PostgreSQL pass: the daemon runs on a fresh database of that server (it migrates it)
  pg = TEST_DATABASE_URL ? await createTestDatabase(TEST_DATABASE_URL) : null;
  daemon = await startGantryd(['--port', '0', '--data-dir', dataDir, '--root-password', PASSWORD, '--runners-token', RUNNERS_TOKEN, ...(pg ? ['--database-url', pg.url] : [])]);
  const session = await api(daemon.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
  expect(session.status).toBe(201);
  token = session.body.private_token;

  const reg = await runnerCmd(['register', '--url', daemon.url, '--registration-token', RUNNERS_TOKEN, '--description', 'e2e-runner']);
  expect(reg.code, reg.output).toBe(0);
  const buildsDir = tmp('gantry-ci-e2e-builds-');
  const proc = spawn(process.execPath, [RUNNER_BIN, 'run', '--concurrent', '2', '--builds-dir', buildsDir, '--log-level', 'debug'], {
    env: cleanEnv({ GANTRY_CONFIG_DIR: runnerConfigDir }), stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout.on('data', (d: Buffer) => { log += d.toString(); });
  proc.stderr.on('data', (d: Buffer) => { log += d.toString(); });
  runner = { proc, log: () => log, exited: new Promise((r) => proc.on('close', (code) => r(code))) };
});

afterAll(async () => {
  if (runner && runner.proc.exitCode === null) {
    runner.proc.kill('SIGKILL');
    await runner.exited;
  }
  if (daemon) await daemon.stop();
  killAll();
  await pg?.drop();
  cleanupTmp();
  for (const d of work) rmSync(d, { recursive: true, force: true });
});

describe('registration', () => {
  it('the runner registered as a shared runner, with its config file private', async () => {
    const file = join(runnerConfigDir, 'runner.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const config = JSON.parse(readFileSync(file, 'utf8'));
    expect(config.runners).toHaveLength(1);
    expect(config.runners[0]).toMatchObject({ description: 'e2e-runner', url: daemon.url });
    const listed = await cli('runner', 'list', '--instance', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: config.runners[0].id, description: 'e2e-runner', is_shared: true, active: true })]);
    const table = await cli('runner', 'list'); // root is an administrator: every runner
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/e2e-runner\s+yes\s+yes/);
    const own = await cli('runner', 'list', '--own', '--json'); // a shared runner belongs to no project of root's
    expect(JSON.parse(own.stdout)).toEqual([]);
  });
});

describe('a deploy job', () => {
  it('records its deployment to the environment it names, with the URL expanded; `gantry deployment list` shows it', async () => {
    const { project, sha } = await pushProject('deploys', {
      '.gitlab-ci.yml': [
        'deploy:',
        '  script:',
        '    - echo "deploying $CI_BUILD_REF_NAME"',
        '  environment:',
        '    name: review/$CI_BUILD_REF_NAME',
        '    url: https://$CI_BUILD_REF_NAME.example.com',
        '',
      ].join('\n'),
    });
    const pipeline = await pipelineOf(project, sha);
    await eventually('the pipeline to succeed', async () => {
      const r = await api(daemon.url, 'GET', `/projects/${project.id}/pipelines/${pipeline.id}`, token);
      return r.body.status === 'success' || undefined;
    });
    const build = (await buildsOf(project, pipeline)).deploy!;
    const deployments = await api(daemon.url, 'GET', `/projects/${project.id}/deployments`, token);
    expect(deployments.status).toBe(200);
    expect(deployments.body).toHaveLength(1);
    expect(deployments.body[0]).toMatchObject({ iid: 1, ref: 'master', sha, environment: { name: 'review/master', external_url: 'https://master.example.com' } });
    expect(deployments.body[0].deployable).toMatchObject({ id: build.id, name: 'deploy', status: 'success' });
    const listed = await cli('deployment', 'list', project.path_with_namespace);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^1\s+review\/master\s+master\s/m);
  });
});

describe('a two-stage pipeline with artifacts', () => {
  it('stage 1 saves a file as an artifact, stage 2 reads it; artifacts and traces through the API and the CLI', async () => {
    const { project, sha, dir: clone } = await pushProject('two-stage', {
      '.gitlab-ci.yml': [
        'stages: [build, test]',
        'make:',
        '  stage: build',
        '  script:',
        '    - mkdir -p out',
        '    - echo "artifact of build $CI_BUILD_ID" > out/result.txt',
        '  artifacts:',
        '    name: result',
        '    paths: [out/]',
        'check:',
        '  stage: test',
        '  dependencies: [make]',
        '  script:',
        '    - cat out/result.txt',
        '    - grep "artifact of build" out/result.txt',
        '',
      ].join('\n'),
      'README.md': '# two stages\n',
    });
    const pipeline = await pipelineOf(project, sha);
    const watch = await cli('pipeline', 'watch', project.path_with_namespace, String(pipeline.id));
    expect(watch.code, `${watch.stdout}\n${watch.stderr}\n${runner.log().slice(-3000)}`).toBe(0);
    expect(watch.stdout).toMatch(/build: make #\d+ success/);
    expect(watch.stdout).toMatch(/test: check #\d+ success/);
    expect(watch.stdout).toContain(`pipeline #${pipeline.id} success`);

    const builds = await buildsOf(project, pipeline);
    expect(builds.make.status).toBe('success');
    expect(builds.check.status).toBe('success');
    expect(builds.make.artifacts_file).toMatchObject({ filename: 'result.tar.gz' });

    // the archive through the consumer API: a tar.gz holding out/result.txt
    const res = await fetch(`${daemon.url}/api/v3/projects/${project.id}/builds/${builds.make.id}/artifacts`, { headers: { 'private-token': token } });
    expect(res.status).toBe(200);
    const tar = gunzipSync(Buffer.from(await res.arrayBuffer()));
    expect(tar.toString('latin1')).toContain('out/result.txt');
    expect(tar.toString('latin1')).toContain(`artifact of build ${builds.make.id}`);

    // ... and through the CLI, to a file
    const dir = tmp('gantry-ci-e2e-dl-');
    const out = join(dir, 'art.tar.gz');
    const dl = await cli('build', 'artifacts', project.path_with_namespace, String(builds.make.id), '-o', out);
    expect(dl.code, dl.stderr).toBe(0);
    expect(dl.stderr).toContain(`Saved ${out}`);
    mkdirSync(join(dir, 'x'));
    execFileSync('tar', ['xzf', out, '-C', join(dir, 'x')]);
    expect(readFileSync(join(dir, 'x', 'out', 'result.txt'), 'utf8')).toBe(`artifact of build ${builds.make.id}\n`);
    const again = await cli('build', 'artifacts', project.path_with_namespace, String(builds.make.id), '-o', out);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('--force');
    const byRef = await cli('build', 'artifacts', project.path_with_namespace, '--ref', 'master', '--job', 'make', '-o', join(dir, 'ref.tar.gz'));
    expect(byRef.code, byRef.stderr).toBe(0);
    expect(readFileSync(join(dir, 'ref.tar.gz'))).toEqual(readFileSync(out));
    // inside a clone of the project, the one word is the build id (as for `build show 42`)
    await gitOk(clone, ['remote', 'add', 'origin', `${daemon.url}/${project.path_with_namespace}.git`]);
    const inClone = await runCli(['build', 'artifacts', String(builds.make.id), '-o', join(dir, 'clone.tar.gz')],
      { configDir: cliConfig, env: { GANTRY_URL: daemon.url, GANTRY_TOKEN: token }, cwd: clone });
    expect(inClone.code, inClone.stderr).toBe(0);
    expect(readFileSync(join(dir, 'clone.tar.gz'))).toEqual(readFileSync(out));

    // the trace of stage 2 shows the downloaded artifact being read
    const trace = await cli('build', 'trace', project.path_with_namespace, String(builds.check.id));
    expect(trace.code, trace.stderr).toBe(0);
    expect(trace.stdout).toContain(`Downloading artifacts for make (${builds.make.id})...`);
    expect(trace.stdout).toContain('$ cat out/result.txt');
    expect(trace.stdout).toContain(`artifact of build ${builds.make.id}`);
    expect(trace.stdout).toContain('Build succeeded');

    const show = await cli('pipeline', 'show', project.path_with_namespace, String(pipeline.id));
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/status:\s+success/);
    expect(show.stdout).toMatch(/build\s+\d+\s+make\s+success/);
    expect(show.stdout).toMatch(/test\s+\d+\s+check\s+success/);
    const list = await cli('build', 'list', project.path_with_namespace, '--pipeline', String(pipeline.id), '--json');
    expect(JSON.parse(list.stdout).map((b: Build) => b.name).sort()).toEqual(['check', 'make']);
  }, 60_000);
});

describe('a failing build', () => {
  it('fails the pipeline; `gantry pipeline retry` runs it again and it passes', async () => {
    const flagDir = tmp('gantry-ci-e2e-flag-');
    const flag = join(flagDir, 'fail-now');
    writeFileSync(flag, 'x');
    const { project, sha } = await pushProject('flaky', {
      '.gitlab-ci.yml': `flaky:\n  script:\n    - echo "checking ${flag}"\n    - test ! -e '${flag}'\n    - echo passed\n`,
    });
    const pipeline = await pipelineOf(project, sha);
    const watch = await cli('pipeline', 'watch', project.path_with_namespace, String(pipeline.id));
    expect(watch.code).toBe(1);
    expect(watch.stderr).toContain(`pipeline #${pipeline.id} failed`);
    const first = (await buildsOf(project, pipeline)).flaky;
    expect(first.status).toBe('failed');
    const failedTrace = await cli('build', 'trace', project.path_with_namespace, String(first.id));
    expect(failedTrace.stdout).toContain('ERROR: Build failed: exit status 1');

    rmSync(flag);
    const retry = await cli('pipeline', 'retry', project.path_with_namespace, String(pipeline.id));
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stderr).toContain(`Retried pipeline #${pipeline.id}`);
    const rewatch = await cli('pipeline', 'watch', project.path_with_namespace, String(pipeline.id));
    expect(rewatch.code, `${rewatch.stdout}\n${rewatch.stderr}`).toBe(0);
    const second = (await buildsOf(project, pipeline)).flaky;
    expect(second.id).toBeGreaterThan(first.id);
    expect(second.status).toBe('success');
    expect((await api(daemon.url, 'GET', `/projects/${project.id}/pipelines/${pipeline.id}`, token)).body.status).toBe('success');
  }, 60_000);
});

describe('a manual build', () => {
  it('waits as skipped until `gantry build play`, then runs; `build trace --follow` streams it and exits 0', async () => {
    const { project, sha } = await pushProject('manual', {
      '.gitlab-ci.yml': [
        'stages: [build, deploy]',
        'compile:',
        '  stage: build',
        '  script: [echo compiled]',
        'ship:',
        '  stage: deploy',
        '  when: manual',
        '  script:',
        '    - echo "shipping $CI_BUILD_NAME"',
        '    - sleep 2',
        '    - echo shipped',
        '',
      ].join('\n'),
    });
    const pipeline = await pipelineOf(project, sha);
    const watch = await cli('pipeline', 'watch', project.path_with_namespace, String(pipeline.id));
    expect(watch.code, `${watch.stdout}\n${watch.stderr}`).toBe(0);
    let builds = await buildsOf(project, pipeline);
    expect(builds.compile.status).toBe('success');
    expect(builds.ship.status).toBe('skipped');
    await sleep(1500); // still waiting: no runner takes a manual build by itself
    expect(await buildStatus(project, builds.ship.id)).toBe('skipped');
    // the CLI tells a manual build from a skipped one (8.x has no manual status) and says how to start it
    const hint = `ship #${builds.ship.id} is a manual job: start it with \`gantry build play ${project.path_with_namespace} ${builds.ship.id}\``;
    expect(watch.stderr, watch.stdout).toContain(hint);
    expect(watch.stdout).toMatch(new RegExp(`manual\\s+ship\\s+#${builds.ship.id}`));
    const show = await cli('pipeline', 'show', project.path_with_namespace, String(pipeline.id));
    expect(show.stdout).toMatch(new RegExp(`deploy\\s+${builds.ship.id}\\s+ship\\s+manual`));
    expect(show.stderr).toContain(hint);

    const play = await cli('build', 'play', project.path_with_namespace, String(builds.ship.id));
    expect(play.code, play.stderr).toBe(0);
    expect(play.stderr).toContain('Started manual build');
    const follow = await cli('build', 'trace', project.path_with_namespace, String(builds.ship.id), '--follow');
    expect(follow.code, `${follow.stdout}\n${follow.stderr}`).toBe(0);
    expect(follow.stdout).toContain('$ echo "shipping $CI_BUILD_NAME"');
    expect(follow.stdout).toContain('shipping ship');
    expect(follow.stdout).toContain('shipped');
    expect(follow.stderr).toContain(`Build #${builds.ship.id} success`);
    builds = await buildsOf(project, pipeline);
    expect(builds.ship.status).toBe('success');
  }, 60_000);
});

describe('canceling a running build', () => {
  it('the runner kills the job within a few seconds and the build ends canceled', async () => {
    const pidDir = tmp('gantry-ci-e2e-pid-');
    const pidFile = join(pidDir, 'sleep.pid');
    const { project, sha } = await pushProject('sleepy', {
      '.gitlab-ci.yml': `sleepy:\n  script:\n    - echo "going to sleep"\n    - sleep 60 & echo $! > '${pidFile}'; wait\n    - echo "woke up"\n`,
    });
    const pipeline = await pipelineOf(project, sha);
    const build = await eventually('the build to run', async () => {
      const b = (await buildsOf(project, pipeline)).sleepy;
      return b && b.status === 'running' && existsSync(pidFile) ? b : undefined;
    });
    // the trace streams while the job runs (the server refuses trace parts once the build is canceled)
    await eventually('the running trace', async () => {
      const r = await fetch(`${daemon.url}/api/v3/projects/${project.id}/builds/${build.id}/trace`, { headers: { 'private-token': token } });
      return r.status === 200 && (await r.text()).includes('going to sleep');
    }, 10_000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).not.toThrow();

    const canceledAt = Date.now();
    const cancel = await api(daemon.url, 'POST', `/projects/${project.id}/builds/${build.id}/cancel`, token);
    expect([200, 201]).toContain(cancel.status);
    expect(cancel.body.status).toBe('canceled');
    await eventually('the job to be killed', async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 10_000);
    expect(Date.now() - canceledAt).toBeLessThan(8_000);
    expect(await buildStatus(project, build.id)).toBe('canceled');
    const pipe = await api(daemon.url, 'GET', `/projects/${project.id}/pipelines/${pipeline.id}`, token);
    expect(pipe.body.status).toBe('canceled');
    const trace = await cli('build', 'trace', project.path_with_namespace, String(build.id));
    expect(trace.stdout).toContain('going to sleep');
    expect(trace.stdout).not.toContain('woke up');
    expect(runner.log()).toContain('aborting build');
  }, 60_000);
});

describe('stopping the runner', () => {
  it('exits 0 on SIGTERM when idle', async () => {
    runner.proc.kill('SIGTERM');
    const code = await Promise.race([runner.exited, sleep(10_000).then(() => 'timeout')]);
    expect(code).toBe(0);
    expect(runner.log()).toContain('SIGTERM received');
  });
});
