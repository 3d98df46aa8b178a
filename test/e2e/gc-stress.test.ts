/**
 * GC stress: the real daemon with a full garbage collection every millisecond while it serves a burst of
 * writes and reads, then SIGTERM. The SQLite driver must never abort the process while native statements
 * are finalized (better-sqlite3 12 on Node 24.19+ died here with `Assertion failed: (env) != nullptr`).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { api, cleanupTmp, killAll, ROOT, startGantryd, tmp } from './helpers.js';

const PASSWORD = 'gc-stress-root-password';
const GC_LOOP = join(ROOT, 'test', 'e2e', 'fixtures', 'gc-loop.mjs');

afterAll(() => {
  killAll();
  cleanupTmp();
});

/** Mixed writes and reads for about `ms` milliseconds and at least `min` rounds (however loaded the machine), 4 in flight. */
async function burst(url: string, token: string, ms: number, min: number, tag: string): Promise<number> {
  const until = Date.now() + ms;
  let n = 0;
  const worker = async (w: number) => {
    while (Date.now() < until || n < min) {
      const i = n++;
      const created = await api(url, 'POST', '/projects', token, { name: `gc-${tag}-${w}-${i}`, description: 'x'.repeat(i % 50) });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      expect((await api(url, 'PUT', `/projects/${id}`, token, { description: `updated ${i}` })).status).toBe(200);
      expect((await api(url, 'GET', `/projects/${id}`, token)).status).toBe(200);
      expect((await api(url, 'GET', '/projects?per_page=20', token)).status).toBe(200);
      expect((await api(url, 'POST', `/projects/${id}/star`, token)).status).toBe(201);
      expect((await api(url, 'GET', `/projects/${id}/events`, token)).status).toBe(200);
      if (i % 3 === 0) expect((await api(url, 'DELETE', `/projects/${id}`, token)).status).toBe(200);
    }
  };
  await Promise.all([0, 1, 2, 3].map(worker));
  return n;
}

// The SQLite pass only: better-sqlite3's native statements are what is finalized; a PostgreSQL daemon has none (and under
// a collection every millisecond, one between each await of its queries, a project takes it ~10 s to create).
describe.skipIf(TEST_DATABASE_URL)('gantryd under a garbage collection loop', () => {
  it('serves a burst of writes and reads, stays up while idle, and ends by exit 0 on SIGTERM (twice)', async () => {
    const dataDir = tmp();
    for (let round = 0; round < 2; round++) {
      const daemon = await startGantryd(['--port', '0', '--data-dir', dataDir, '--root-password', PASSWORD], undefined, 30_000, [
        '--expose-gc',
        '--import',
        GC_LOOP,
      ]);
      const session = await api(daemon.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
      expect(session.status).toBe(201);
      const done = await burst(daemon.url, session.body.private_token as string, 2_000, 8, `r${round}`);
      expect(done).toBeGreaterThanOrEqual(8);
      // statements made during the burst are finalized now, with the daemon idle
      await new Promise((r) => setTimeout(r, 1_000));
      expect(daemon.proc.exitCode).toBeNull();
      const exit = await daemon.stop('SIGTERM');
      expect(exit, `stderr: ${daemon.stderr()}`).toEqual({ code: 0, signal: null });
      expect(daemon.stderr()).not.toMatch(/Assertion failed/);
    }
  }, 60_000);
});
