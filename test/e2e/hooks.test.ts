/**
 * Hook deliveries end to end with the built gantryd: a real git push queues a delivery while the receiver is down,
 * the daemon stops (SIGTERM) or crashes (SIGKILL), the receiver comes up, the daemon starts again on the same data
 * dir and delivers exactly once.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cleanEnv, cleanupTmp, killAll, startGantryd, tmp, type Daemon } from './helpers.js';
import { commitFiles, git, gitOk, repoUrl } from '../helpers/git.js';
import { sleep, startReceiver, waitUntil, type HookReceiver } from '../helpers/hook-receiver.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';

const PASSWORD = 'hooks-root-password';
const BASE_MS = 100;
const env = cleanEnv({ GANTRY_HOOK_RETRY_BASE_MS: String(BASE_MS) });

let dataDir: string;
let daemon: Daemon;
let recv: HookReceiver;
let token: string;
let work: string;
let hookId: number;

interface Row { status: string; attempts: number; last_status_code: number | null; last_error: string | null }
/**
 * The deliveries as the database has them (read-only, beside the running daemon: WAL allows it; in the PostgreSQL
 * pass, a client of the daemon's database).
 */
async function rows(): Promise<Row[]> {
  if (pg) {
    const { default: PG } = await import('pg');
    const client = new PG.Client({ connectionString: pg.url });
    await client.connect();
    try {
      return (await client.query<Row>('SELECT status, attempts, last_status_code, last_error FROM hook_deliveries WHERE hook_id = $1 ORDER BY id', [hookId])).rows;
    } finally {
      await client.end();
    }
  }
  const db = new Database(join(dataDir, 'gantry.db'), { readonly: true });
  try {
    return db.prepare('SELECT status, attempts, last_status_code, last_error FROM hook_deliveries WHERE hook_id = ? ORDER BY id').all(hookId) as Row[];
  } finally {
    db.close();
  }
}
// the PostgreSQL pass: the daemon (every start of it) runs on one fresh database of that server
let pg: Awaited<ReturnType<typeof createTestDatabase>> | null = null;
const start = () => startGantryd(['--port', '0', '--data-dir', dataDir, '--root-password', PASSWORD, ...(pg ? ['--database-url', pg.url] : [])], env);

async function pushCommit(name: string): Promise<string> {
  const sha = await commitFiles(work, { [`${name}.txt`]: `${name}\n` }, name);
  const r = await git(work, ['push', repoUrl(daemon.url, 'root/e2e-hooks', { username: 'root', password: token }), 'master']);
  expect(r.code, r.stderr).toBe(0);
  return sha;
}

beforeAll(async () => {
  dataDir = tmp();
  pg = TEST_DATABASE_URL ? await createTestDatabase(TEST_DATABASE_URL) : null;
  recv = await startReceiver({ listen: false }); // a port that nobody listens on, for now
  daemon = await start();
  token = (await api(daemon.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
  const project = await api(daemon.url, 'POST', '/projects', token, { name: 'e2e-hooks' });
  expect(project.status).toBe(201);
  const hook = await api(daemon.url, 'POST', `/projects/${project.body.id}/hooks`, token, { url: `${recv.url}/e2e`, token: 'e2e-secret' });
  expect(hook.status).toBe(201);
  hookId = hook.body.id;
  work = tmp('gantry-e2e-work-');
  await gitOk(work, ['init', '-q', '.']);
});

afterAll(async () => {
  killAll();
  await pg?.drop();
  await recv?.stop();
  cleanupTmp();
});

describe('hook deliveries across restarts', () => {
  it('delivers a push queued while the receiver was down after a SIGTERM and a restart, exactly once', async () => {
    const sha = await pushCommit('first');
    await waitUntil(async () => (await rows())[0]?.last_error != null, 'a failed attempt');
    expect((await rows())[0]).toMatchObject({ status: 'pending', last_status_code: null });
    expect((await rows())[0].last_error).toMatch(/ECONNREFUSED/);
    expect((await daemon.stop('SIGTERM')).code).toBe(0);

    await recv.start();
    daemon = await start();
    await waitUntil(async () => (await rows())[0]?.status === 'delivered', 'the delivery after the restart', 15_000);
    expect(recv.to('/e2e')).toHaveLength(1);
    const [req] = recv.to('/e2e');
    expect(req.headers['x-gitlab-event']).toBe('Push Hook');
    expect(req.headers['x-gitlab-token']).toBe('e2e-secret');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.json()).toMatchObject({ object_kind: 'push', ref: 'refs/heads/master', after: sha, user_name: 'Administrator', total_commits_count: 1 });
    expect(req.json().project.path_with_namespace).toBe('root/e2e-hooks');
    // a few backoff periods later, nothing was sent again
    await sleep(BASE_MS * 6);
    expect(recv.to('/e2e')).toHaveLength(1);
  });

  it('delivers a push queued before a SIGKILL once the daemon is back', async () => {
    await recv.stop();
    const sha = await pushCommit('second');
    await waitUntil(async () => { const r = await rows(); return r.length === 2 && r[1].last_error != null; }, 'a failed attempt');
    await daemon.stop('SIGKILL');

    await recv.start();
    daemon = await start();
    await waitUntil(async () => (await rows())[1]?.status === 'delivered', 'the delivery after the crash', 30_000);
    await sleep(BASE_MS * 6);
    const got = recv.to('/e2e').map((r) => r.json().after);
    expect(got).toEqual([expect.any(String), sha]);
    expect((await rows()).map((r) => r.status)).toEqual(['delivered', 'delivered']);
    expect((await daemon.stop('SIGTERM')).code).toBe(0);
  });
});
