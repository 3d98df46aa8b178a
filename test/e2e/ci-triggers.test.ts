/**
 * Build triggers end to end with real processes: gantryd on a free port, `git push` of a repository whose only job
 * runs for triggers, a trigger started over plain HTTP with no user credentials and another with `gantry trigger run`,
 * and the real gantry-runner (shell executor) running the builds: the trigger variables are in the job's trace.
 * Needs `npm run build`.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { api, cleanupTmp, eventually as eventuallyOr, killAll, runCli, startGantryd, startRunner, tmp, type Daemon, type RunnerProcess } from './helpers.js';

const PASSWORD = 'trigger-e2e-root-password';
const RUNNERS_TOKEN = 'trigger-e2e-registration-token-0123456789';
const CI_YML = [
  'deploy:',
  '  script:',
  '    - echo "deploying to $DEPLOY_TO ($CI_BUILD_TRIGGERED) note=$NOTE"',
  '  only: [triggers]',
  '',
].join('\n');

let pg: Awaited<ReturnType<typeof createTestDatabase>> | null = null;
let daemon: Daemon;
let token: string;
let cliConfig: string;
let runner: RunnerProcess;
let project: { id: number; path_with_namespace: string };
let work: string;

const eventually = <T>(what: string, fn: () => Promise<T | undefined | false | null>) =>
  eventuallyOr(what, fn, 30_000, () => `runner log:\n${runner?.log().slice(-3000)}`);

/** The finished build of a pipeline and its trace. */
async function finishedBuild(pipelineId: number): Promise<{ id: number; status: string; trace: string }> {
  const build = await eventually(`the build of pipeline ${pipelineId} to finish`, async () => {
    const r = await api(daemon.url, 'GET', `/projects/${project.id}/pipelines/${pipelineId}`, token);
    if (!['success', 'failed', 'canceled'].includes((r.body as { status: string }).status)) return undefined;
    const builds = await api(daemon.url, 'GET', `/projects/${project.id}/builds?per_page=100`, token);
    return (builds.body as { id: number; status: string; pipeline: { id: number } }[]).find((b) => b.pipeline.id === pipelineId);
  });
  const trace = await fetch(`${daemon.url}/api/v3/projects/${project.id}/builds/${build.id}/trace`, { headers: { 'private-token': token } });
  return { id: build.id, status: build.status, trace: await trace.text() };
}

beforeAll(async () => {
  const dataDir = tmp('gantry-trigger-e2e-data-');
  cliConfig = tmp('gantry-trigger-e2e-cli-');
  pg = TEST_DATABASE_URL ? await createTestDatabase(TEST_DATABASE_URL) : null;
  daemon = await startGantryd(['--port', '0', '--data-dir', dataDir, '--root-password', PASSWORD, '--runners-token', RUNNERS_TOKEN, ...(pg ? ['--database-url', pg.url] : [])]);
  token = (await api(daemon.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;

  const r = await api(daemon.url, 'POST', '/projects', token, { name: 'triggered' });
  expect(r.status).toBe(201);
  project = r.body;
  work = await workTree();
  await commitFiles(work, { '.gitlab-ci.yml': CI_YML }, 'add CI');
  await gitOk(work, ['push', '-q', repoUrl(daemon.url, project.path_with_namespace, { username: 'root', password: PASSWORD }), 'HEAD:master']);

  runner = await startRunner(daemon.url, RUNNERS_TOKEN, { description: 'trigger-e2e' });
}, 60_000);

afterAll(async () => {
  if (runner && runner.proc.exitCode === null) {
    runner.proc.kill('SIGKILL');
    await runner.exited;
  }
  if (daemon) await daemon.stop();
  killAll();
  await pg?.drop();
  cleanupTmp();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('triggered pipelines run by gantry-runner', () => {
  it('a push makes no pipeline; a trigger over plain HTTP (form, no user) does, and its job sees the variables', async () => {
    expect((await api(daemon.url, 'GET', `/projects/${project.id}/pipelines`, token)).body).toEqual([]);
    const trigger = await api(daemon.url, 'POST', `/projects/${project.id}/triggers`, token);
    expect(trigger.status).toBe(201);
    const res = await fetch(`${daemon.url}/api/v3/projects/${project.id}/trigger/builds`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: trigger.body.token, ref: 'master', 'variables[DEPLOY_TO]': 'staging', 'variables[NOTE]': 'from cron' }).toString(),
    });
    expect(res.status).toBe(201);
    const request = (await res.json()) as { variables: Record<string, string>; pipeline: { id: number } };
    expect(request.variables).toEqual({ DEPLOY_TO: 'staging', NOTE: 'from cron' });
    const build = await finishedBuild(request.pipeline.id);
    expect(build.status, build.trace).toBe('success');
    expect(build.trace).toContain('deploying to staging (true) note=from cron');
  }, 60_000);

  it('gantry trigger run starts one with --var, and gantry pipeline watch follows it to success', async () => {
    const env = { GANTRY_URL: daemon.url, GANTRY_TOKEN: token };
    const run = await runCli(['trigger', 'run', project.path_with_namespace, '--ref', 'master', '--var', 'DEPLOY_TO=production', '--var', 'NOTE=by hand'],
      { configDir: cliConfig, env });
    expect(run.code, run.stderr).toBe(0);
    const pipelineId = Number(/^Pipeline #(\d+)/.exec(run.stdout)![1]);
    expect(run.stderr).toContain(`gantry pipeline watch ${project.path_with_namespace} ${pipelineId}`);
    const watch = await runCli(['pipeline', 'watch', project.path_with_namespace, String(pipelineId), '--timeout', '60'], { configDir: cliConfig, env, timeoutMs: 70_000 });
    expect(watch.code, `${watch.stdout}${watch.stderr}\n${runner.log().slice(-2000)}`).toBe(0);
    const build = await finishedBuild(pipelineId);
    expect(build.trace).toContain('deploying to production (true) note=by hand');
  }, 90_000);
});
