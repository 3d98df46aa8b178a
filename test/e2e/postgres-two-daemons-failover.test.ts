/**
 * A running build survives the death of the daemon it talked to (issue 22, item 4): a real gantry-runner registered
 * through nginx (deploy/nginx.conf, as operators copy it) in front of two gantryd on one PostgreSQL database takes a
 * build; the daemon that handed it out is SIGKILLed while the script runs; the runner's next requests land on the other
 * daemon and the build ends there: trace complete (each line once), artifacts stored, status success, pipeline success.
 * A runner talking straight to one daemon (no balancer) rides out that daemon's SIGKILL and restart: its failed trace
 * PATCHes and artifacts upload are sent again until the daemon is back, and the build ends whole.
 * Runs when GANTRY_TEST_DATABASE_URL is set and nginx is installed (.ci/run installs it); needs the build.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { api, cleanEnv, eventually, startGantryd, startRunner, tmp, type Daemon, type RunnerProcess } from './helpers.js';
import { startDaemonPair, type DaemonPair } from './database.js';
import { freePort, NGINX, startNginx, type Nginx } from './nginx.js';

const PASSWORD = 'two-daemons-failover-root-password';
const RUNNERS_TOKEN = 'two-daemons-failover-registration-token';

describe.skipIf(!TEST_DATABASE_URL || !NGINX)('a running build when the daemon it talks to dies', () => {
  let pair: DaemonPair | undefined;
  let nginx: Nginx | undefined;
  let runner: RunnerProcess | undefined;
  let root: string;
  /** The daemon left running by the first test, and daemons this file started again (stopped at the end). */
  let survivor: Daemon | undefined;
  const restarted: Daemon[] = [];
  const work: string[] = [];
  const hostPort = (d: Daemon) => new URL(d.url).host;
  const context = () => `runner:\n${runner?.log().slice(-4000)}\n${nginx?.log()}\naccess log:\n${nginx?.accessLog().slice(-4000)}\n`
    + `A: ${pair?.a.stderr().slice(-2000)}\nB: ${pair?.b.stderr().slice(-2000)}`;

  beforeAll(async () => {
    const http = await freePort();
    // URLs the daemons hand out (the build's repo_url among them) name the balancer
    pair = await startDaemonPair(TEST_DATABASE_URL!, PASSWORD, ['--runners-token', RUNNERS_TOKEN, '--external-url', `http://127.0.0.1:${http}`]);
    nginx = await startNginx({
      a: hostPort(pair.a), b: hostPort(pair.b), aSsh: `127.0.0.1:${await freePort()}`, bSsh: `127.0.0.1:${await freePort()}`, http,
    });
    const session = await api(nginx.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
    expect(session.status).toBe(201);
    root = session.body.private_token;
    runner = await startRunner(nginx.url, RUNNERS_TOKEN, { description: 'runner-behind-nginx' });
  }, 90_000);

  afterAll(async () => {
    await runner?.stop('SIGKILL');
    for (const d of restarted) expect(await d.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    nginx?.stop();
    for (const d of work) rmSync(d, { recursive: true, force: true });
    if (pair) {
      const [ea, eb] = await pair.stop();
      // the ones killed ended by SIGKILL; any other drains and exits 0
      for (const e of [ea, eb]) if (e.signal !== 'SIGKILL') expect(e).toEqual({ code: 0, signal: null });
    }
  }, 60_000);

  it('the runner goes on through the other daemon: trace complete, artifacts stored, build and pipeline success', async () => {
    const marker = join(tmp('gantry-failover-marker-'), 'go-on');
    const ci = [
      'survive:',
      '  script:',
      '    - echo before-the-kill',
      // waits (at most 60 s) for the test to say the daemon is dead
      `    - for i in $(seq 1 300); do [ -f ${marker} ] && break; sleep 0.2; done; [ -f ${marker} ]`,
      '    - echo after-the-kill',
      '    - mkdir -p out && echo "made after the kill" > out/result.txt',
      '  artifacts:',
      '    paths: [out/]',
      '',
    ].join('\n');
    const p = await api(nginx!.url, 'POST', '/projects', root, { name: 'failover' });
    expect(p.status).toBe(201);
    const dir = await workTree();
    work.push(dir);
    const sha = await commitFiles(dir, { '.gitlab-ci.yml': ci }, 'add CI');
    await gitOk(dir, ['push', '-q', repoUrl(nginx!.url, p.body.path_with_namespace, { username: 'root', password: PASSWORD }), 'HEAD:master']);

    // the build runs and its first line reached the server
    const trace = (base: string, id: number) => fetch(`${base}/api/v3/projects/${p.body.id}/builds/${id}/trace`, { headers: { 'private-token': root } }).then((r) => r.text());
    const build = await eventually('the build running with its first line stored', async () => {
      const r = await api(nginx!.url, 'GET', `/projects/${p.body.id}/repository/commits/${sha}/builds`, root);
      const x = Array.isArray(r.body) ? r.body[0] : undefined;
      return x?.status === 'running' && (await trace(nginx!.url, x.id)).includes('before-the-kill') ? x as { id: number; pipeline: { id: number } } : null;
    }, 30_000, context);

    // the daemon that handed the build out, from nginx's access log (which daemon answered the 201)
    const claim = /"POST \/ci\/api\/v1\/builds\/register\.json HTTP\/1\.1" 201 .*upstream=(\S+) upstream_status=(\S+)/.exec(nginx!.accessLog());
    expect(claim, context()).not.toBeNull();
    const upstream = claim![1].split(',').map((s) => s.trim()).at(-1)!;
    const [dead, alive] = upstream === hostPort(pair!.a) ? [pair!.a, pair!.b] : [pair!.b, pair!.a];
    survivor = alive;
    expect(hostPort(dead)).toBe(upstream);
    const beforeKill = nginx!.accessLog().length;
    expect(await dead.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    writeFileSync(marker, 'go\n');

    const done = await eventually('the build to finish through the survivor', async () => {
      const r = await api(alive.url, 'GET', `/projects/${p.body.id}/builds/${build.id}`, root);
      return ['success', 'failed', 'canceled'].includes(r.body.status) ? r.body : null;
    }, 60_000, context);
    expect(done.status, context()).toBe('success');
    const text = await trace(alive.url, build.id);
    // each output line once (a PATCH resent after the kill never doubles what the dead daemon had stored)
    for (const line of ['\nbefore-the-kill\n', '\nafter-the-kill\n', '\nUploading artifacts to coordinator... ok', 'Build succeeded']) {
      expect(text.split(line).length - 1, `${JSON.stringify(line)} once in:\n${text}`).toBe(1);
    }
    const pipeline = await eventually('the pipeline to finish', async () => {
      const r = await api(alive.url, 'GET', `/projects/${p.body.id}/pipelines/${build.pipeline.id}`, root);
      return r.body.status === 'running' ? null : r.body;
    }, 30_000, context);
    expect(pipeline.status).toBe('success');
    const res = await fetch(`${alive.url}/api/v3/projects/${p.body.id}/builds/${build.id}/artifacts`, { headers: { 'private-token': root } });
    expect(res.status).toBe(200);
    expect(gunzipSync(Buffer.from(await res.arrayBuffer())).toString('latin1')).toContain('made after the kill');

    // after the kill, the runner's trace, artifacts and final update were all answered by the survivor
    const after = nginx!.accessLog().slice(beforeKill);
    const answered = new RegExp(`upstream=(\\S+, )?${hostPort(alive)} upstream_status=(\\S+, )?2\\d\\d$`);
    const ok = (re: RegExp) => after.split('\n').filter((l) => re.test(l) && answered.test(l.trim()));
    expect(ok(new RegExp(`"PATCH /ci/api/v1/builds/${build.id}/trace\\.txt `)).length, after).toBeGreaterThan(0);
    expect(ok(new RegExp(`"POST /ci/api/v1/builds/${build.id}/artifacts`)).length, after).toBe(1);
    expect(ok(new RegExp(`"PUT /ci/api/v1/builds/${build.id}\\.json `)).length, after).toBeGreaterThan(0);
    expect(existsSync(marker)).toBe(true);
  }, 120_000);

  it('a runner talking to one daemon straight (no balancer) rides out its restart: failed trace and artifacts requests are sent again', async () => {
    const d = survivor!;
    const direct = await startRunner(d.url, RUNNERS_TOKEN, { description: 'runner-straight', tags: ['straight'] });
    try {
      const marker = join(tmp('gantry-restart-marker-'), 'go-on');
      const ci = [
        'restart:',
        '  tags: [straight]',
        '  script:',
        '    - echo before-the-restart',
        `    - for i in $(seq 1 300); do [ -f ${marker} ] && break; sleep 0.2; done; [ -f ${marker} ]`,
        '    - echo after-the-restart',
        '    - mkdir -p out && echo "made while the daemon was down" > out/result.txt',
        '  artifacts:',
        '    paths: [out/]',
        '',
      ].join('\n');
      const p = await api(d.url, 'POST', '/projects', root, { name: 'restart' });
      expect(p.status).toBe(201);
      const dir = await workTree();
      work.push(dir);
      const sha = await commitFiles(dir, { '.gitlab-ci.yml': ci }, 'add CI');
      await gitOk(dir, ['push', '-q', repoUrl(d.url, p.body.path_with_namespace, { username: 'root', password: PASSWORD }), 'HEAD:master']);
      const trace = (base: string, id: number) => fetch(`${base}/api/v3/projects/${p.body.id}/builds/${id}/trace`, { headers: { 'private-token': root } }).then((r) => r.text());
      const build = await eventually('the build running with its first line stored', async () => {
        const r = await api(d.url, 'GET', `/projects/${p.body.id}/repository/commits/${sha}/builds`, root);
        const x = Array.isArray(r.body) ? r.body[0] : undefined;
        return x?.status === 'running' && (await trace(d.url, x.id)).includes('before-the-restart') ? x as { id: number } : null;
      }, 30_000, () => `${context()}\nrunner-straight:\n${direct.log().slice(-3000)}`);

      // the daemon dies; the script goes on; the upload finds nobody (refused) and is retried
      expect(await d.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
      writeFileSync(marker, 'go\n');
      await eventually('a failed upload in the runner log', async () => new RegExp(`artifacts upload failed; retrying build=${build.id} attempt=1 `).test(direct.log()), 30_000,
        () => direct.log().slice(-3000));
      // the daemon comes back on its port (the same database and data dir)
      const port = new URL(d.url).port;
      const again = await startGantryd(['--port', port, '--data-dir', pair!.dataDir, '--root-password', PASSWORD, '--database-url', pair!.databaseUrl,
        '--ssh-port', 'off', '--runners-token', RUNNERS_TOKEN, '--external-url', nginx!.url], cleanEnv(), 60_000);
      restarted.push(again);

      const done = await eventually('the build to finish through the restarted daemon', async () => {
        const r = await api(again.url, 'GET', `/projects/${p.body.id}/builds/${build.id}`, root);
        return ['success', 'failed', 'canceled'].includes(r.body.status) ? r.body : null;
      }, 60_000, () => direct.log().slice(-3000));
      expect(done.status, direct.log().slice(-3000)).toBe('success');
      const text = await trace(again.url, build.id);
      for (const line of ['\nbefore-the-restart\n', '\nafter-the-restart\n', '\nUploading artifacts to coordinator... ok', 'Build succeeded']) {
        expect(text.split(line).length - 1, `${JSON.stringify(line)} once in:\n${text}`).toBe(1);
      }
      expect(text).toMatch(/WARNING: Uploading artifacts to coordinator\.\.\. cannot reach /);
      const res = await fetch(`${again.url}/api/v3/projects/${p.body.id}/builds/${build.id}/artifacts`, { headers: { 'private-token': root } });
      expect(res.status).toBe(200);
      expect(gunzipSync(Buffer.from(await res.arrayBuffer())).toString('latin1')).toContain('made while the daemon was down');
    } finally {
      await direct.stop('SIGKILL');
    }
  }, 150_000);
});
