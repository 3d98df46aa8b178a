/**
 * The real GitLab Runner 1.11.5 (`gitlab-runner-v1`, built as docs/reference/real-gitlab-runner.md says) against the
 * built gantryd with its default long-polling of builds/register: the runner sends no X-Gantry-Long-Poll header, so
 * it is held --runner-long-poll seconds (10) while nothing is pending, well within its HTTP client (no response
 * timeout in 1.11.5's network/client.go). It runs a three-stage pipeline whose last stages use the first stage's
 * artifacts, picks a pushed build up at once, and stops a build canceled while it runs, then takes the next.
 * Opt-in: skipped (with the reason) when gitlab-runner-v1 is not on PATH; CI cannot build it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { api, cleanEnv, cleanupTmp, eventually, killAll, startGantryd, tmp, type Daemon } from './helpers.js';
import { dataDirArgs, dropDatabases } from './database.js';

const PASSWORD = 'runner-v1-root-password';
const RUNNERS_TOKEN = 'runner-v1-registration-token-0123456';
const HAVE_RUNNER = spawnSync('gitlab-runner-v1', ['--version'], { stdio: 'ignore' }).status === 0;
if (!HAVE_RUNNER) process.stderr.write('gitlab-runner-v1 is not on PATH: the tests against the real GitLab Runner 1.11.5 are skipped (docs/reference/real-gitlab-runner.md builds it)\n');

interface Build { id: number; name: string; stage: string; status: string; pipeline: { id: number }; artifacts_file?: { filename: string } | null }

describe.skipIf(!HAVE_RUNNER)('GitLab Runner 1.11.5 against long-polling builds/register', () => {
  let daemon: Daemon;
  let root: string;
  let runner: ChildProcess | undefined;
  let log = '';
  const context = () => `runner log:\n${log.slice(-4000)}\ngantryd:\n${daemon?.stderr().slice(-2000)}`;

  beforeAll(async () => {
    daemon = await startGantryd(['--port', '0', ...(await dataDirArgs(tmp('gantry-v1-'))), '--root-password', PASSWORD, '--runners-token', RUNNERS_TOKEN, '--ssh-port', 'off'], cleanEnv());
    const session = await api(daemon.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
    root = session.body.private_token;
    const dir = tmp('gantry-v1-runner-');
    const config = join(dir, 'config.toml');
    const reg = spawnSync('gitlab-runner-v1', ['register', '--non-interactive', '--config', config, '--url', `${daemon.url}/ci`, '--registration-token', RUNNERS_TOKEN,
      '--executor', 'shell', '--name', 'real-v1'], { encoding: 'utf8' });
    expect(reg.status, reg.stderr).toBe(0);
    runner = spawn('gitlab-runner-v1', ['--debug', 'run', '--config', config, '--working-directory', dir], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    runner.stdout!.setEncoding('utf8').on('data', (d: string) => { log += d; });
    runner.stderr!.setEncoding('utf8').on('data', (d: string) => { log += d; });
    // It is held at once (nothing pending): the held-requests gauge says so.
    await eventually('the runner to be held', async () => {
      const text = await fetch(`${daemon.url}/-/metrics`, { headers: { 'private-token': root } }).then((r) => r.text());
      return /^gantry_runner_held_requests 1$/m.test(text);
    }, 20_000, context);
  }, 60_000);

  afterAll(async () => {
    runner?.kill('SIGKILL');
    if (daemon) expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    killAll();
    await dropDatabases();
    cleanupTmp();
  }, 60_000);

  async function push(name: string, ci: string): Promise<{ id: number; pushedAt: number }> {
    const p = await api(daemon.url, 'POST', '/projects', root, { name });
    expect(p.status).toBe(201);
    const dir = await workTree();
    await commitFiles(dir, { '.gitlab-ci.yml': ci, 'input.txt': 'from the repository\n' }, 'add CI');
    await gitOk(dir, ['push', '-q', repoUrl(daemon.url, p.body.path_with_namespace, { username: 'root', password: PASSWORD }), 'HEAD:master']);
    return { id: p.body.id, pushedAt: Date.now() };
  }

  const builds = async (projectId: number) => (await api(daemon.url, 'GET', `/projects/${projectId}/builds`, root)).body as Build[];
  const trace = (projectId: number, id: number) =>
    fetch(`${daemon.url}/api/v3/projects/${projectId}/builds/${id}/trace`, { headers: { 'private-token': root } }).then((r) => r.text());

  it('runs a three-stage pipeline with artifacts, the first build taken at once after the push', async () => {
    const { id, pushedAt } = await push('v1-three', [
      'stages: [build, test, deploy]',
      'make:', '  stage: build', '  script:', '    - mkdir -p out', '    - cp input.txt out/made.txt', '    - echo made >> out/made.txt',
      '  artifacts:', '    paths: [out/]',
      'check:', '  stage: test', '  script:', '    - cat out/made.txt', '    - grep -q made out/made.txt',
      'ship:', '  stage: deploy', '  script:', '    - test -f out/made.txt && echo shipped',
    ].join('\n') + '\n');
    const first = await eventually('make to run', async () => (await builds(id)).find((b) => b.name === 'make' && b.status !== 'pending' && b.status !== 'created'), 20_000, context);
    // Held while nothing was pending, the runner gets the build as it is queued (it polls every 3 s otherwise).
    expect(Date.now() - pushedAt).toBeLessThan(2500);
    expect(first).toBeDefined();
    const done = await eventually('the pipeline to finish', async () => {
      const all = await builds(id);
      return all.length === 3 && all.every((b) => ['success', 'failed', 'canceled'].includes(b.status)) ? all : null;
    }, 90_000, context);
    const by = Object.fromEntries(done.map((b) => [b.name, b]));
    expect(Object.fromEntries(done.map((b) => [b.name, b.status])), context()).toEqual({ make: 'success', check: 'success', ship: 'success' });
    expect(by.make!.artifacts_file).toMatchObject({ filename: 'artifacts.zip' });
    expect(await trace(id, by.check!.id)).toContain('from the repository');
    expect(await trace(id, by.ship!.id)).toContain('shipped');
  }, 120_000);

  it('stops a build canceled while it runs, then takes the next one', async () => {
    const { id } = await push('v1-cancel', 'slow:\n  script:\n    - echo started\n    - sleep 120\n');
    const running = await eventually('slow to run with a trace', async () => {
      const b = (await builds(id)).find((x) => x.name === 'slow' && x.status === 'running');
      return b && (await trace(id, b.id)).includes('started') ? b : null;
    }, 40_000, context);
    const cancel = await api(daemon.url, 'POST', `/projects/${id}/builds/${running.id}/cancel`, root);
    expect(cancel.body.status).toBe('canceled');
    const next = await push('v1-after-cancel', 'quick:\n  script: echo quick\n');
    const quick = await eventually('the next build to succeed', async () => (await builds(next.id)).find((b) => b.name === 'quick' && b.status === 'success'), 60_000, context);
    expect(quick).toBeDefined();
    expect((await builds(id))[0]!.status).toBe('canceled');
  }, 120_000);
});
