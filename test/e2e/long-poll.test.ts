/**
 * Long-polling builds/register with the built gantryd (issue 26 item 3): a held request is answered 201 as soon as a
 * git push queues a build, and SIGTERM answers held requests 204 at once and exits promptly (one daemon on the test
 * pass's engine); on PostgreSQL, a runner held on daemon A gets the build pushed through daemon B (pg_notify).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { commitFiles, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { api, cleanEnv, cleanupTmp, killAll, startGantryd, tmp, type Daemon } from './helpers.js';
import { dataDirArgs, dropDatabases, startDaemonPair } from './database.js';

const PASSWORD = 'long-poll-root-password';
const RUNNERS_TOKEN = 'long-poll-registration-token-0123456';
const CI = 'job:\n  script: echo hi\n';

afterAll(async () => {
  killAll();
  await dropDatabases();
  cleanupTmp();
});

/** POST builds/register asking to be held `seconds`: status, body and when the answer came. */
async function held(url: string, token: string, seconds: number) {
  const res = await fetch(`${url}/ci/api/v1/builds/register.json`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-gantry-long-poll': String(seconds) }, body: JSON.stringify({ token }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, at: Date.now() };
}

/** Wait until `d` holds `n` build requests (GET /-/metrics as root: gantry_runner_held_requests). */
async function holding(d: Daemon, root: string, n: number): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    const text = await fetch(`${d.url}/-/metrics`, { headers: { 'private-token': root } }).then((r) => r.text());
    if (new RegExp(`^gantry_runner_held_requests ${n}$`, 'm').test(text)) return;
    if (Date.now() > until) throw new Error(`${d.url} does not hold ${n} build requests:\n${text.split('\n').filter((l) => l.includes('held')).join('\n')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function signIn(d: Daemon): Promise<string> {
  const session = await api(d.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
  expect(session.status).toBe(201);
  return session.body.private_token as string;
}

async function sharedRunner(d: Daemon): Promise<string> {
  const r = await fetch(`${d.url}/ci/api/v1/runners/register.json`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: RUNNERS_TOKEN, description: 'held' }),
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { token: string }).token;
}

/** Create a project through `d` and push a .gitlab-ci.yml through `via`; resolves once the push is done. */
async function pushProject(d: Daemon, via: Daemon, root: string, name: string): Promise<number> {
  const p = await api(d.url, 'POST', '/projects', root, { name });
  expect(p.status, JSON.stringify(p.body)).toBe(201);
  const dir = await workTree();
  await commitFiles(dir, { '.gitlab-ci.yml': CI }, 'add CI');
  await gitOk(dir, ['push', '-q', repoUrl(via.url, p.body.path_with_namespace, { username: 'root', password: PASSWORD }), 'HEAD:master']);
  return p.body.id as number;
}

describe('long-polling builds/register (one gantryd)', () => {
  it('a push answers the held request at once; SIGTERM answers held requests 204 and exits promptly', async () => {
    const d = await startGantryd(['--port', '0', ...(await dataDirArgs(tmp('gantry-lp-'))), '--root-password', PASSWORD, '--runners-token', RUNNERS_TOKEN, '--ssh-port', 'off'], cleanEnv());
    try {
      const root = await signIn(d);
      const token = await sharedRunner(d);
      const waiting = held(d.url, token, 30);
      await holding(d, root, 1);
      await pushProject(d, d, root, 'long-poll-push');
      const pushed = Date.now();
      const got = await waiting;
      expect(got.status).toBe(201);
      expect(got.body).toMatchObject({ name: 'job', status: 'running' });
      expect(got.at - pushed).toBeLessThan(2000); // held for up to 30 s: only the wake-up answers this soon

      const again = [held(d.url, token, 50), held(d.url, token, 50)];
      await holding(d, root, 2);
      const stopped = Date.now();
      const exit = d.stop('SIGTERM');
      for (const r of await Promise.all(again)) expect(r.status).toBe(204);
      expect(await exit).toEqual({ code: 0, signal: null });
      expect(Date.now() - stopped).toBeLessThan(10_000); // the holds were 50 s
    } finally {
      d.proc.kill('SIGKILL');
    }
  }, 90_000);
});

describe.skipIf(!TEST_DATABASE_URL)('long-polling across two gantryd on PostgreSQL', () => {
  it('a runner held on A gets the build pushed through B', async () => {
    const pair = await startDaemonPair(TEST_DATABASE_URL!, PASSWORD, ['--runners-token', RUNNERS_TOKEN], 'gantry-lp-two-');
    try {
      const root = await signIn(pair.a);
      const token = await sharedRunner(pair.a);
      const waiting = held(pair.a.url, token, 30);
      await holding(pair.a, root, 1);
      const projectId = await pushProject(pair.b, pair.b, root, 'long-poll-two');
      const pushed = Date.now();
      const got = await waiting;
      expect(got.status).toBe(201);
      expect(got.body).toMatchObject({ name: 'job', project_id: projectId });
      expect(got.at - pushed).toBeLessThan(2000);
    } finally {
      expect(await pair.stop()).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
    }
  }, 120_000);
});
