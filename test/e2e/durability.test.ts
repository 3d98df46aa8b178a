/**
 * Crash durability: every write gantryd acknowledged (2xx) before a SIGKILL is there after a restart, on the test pass's
 * engine: the SQLite file in the data dir (then sound by PRAGMA integrity_check), or a PostgreSQL database.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { api, cleanupTmp, killAll, startGantryd, tmp } from './helpers.js';
import { databaseUrlOf, dataDirArgs, dropDatabases } from './database.js';

const PASSWORD = 'durability-root-pw';
const TOTAL = 300;
const IN_FLIGHT = 16;
const KILL_AFTER = 140;

afterAll(async () => {
  killAll();
  await dropDatabases();
  cleanupTmp();
});

interface Ack {
  kind: 'projects' | 'groups';
  id: number;
  name: string;
}

it('keeps every acknowledged write through a SIGKILL in the middle of a burst', async () => {
  const dataDir = tmp();
  const daemon = await startGantryd(['--port', '0', ...(await dataDirArgs(dataDir)), '--root-password', PASSWORD]);
  const token: string = (await api(daemon.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;

  const acked: Ack[] = [];
  const wrong: string[] = [];
  let failed = 0;
  let next = 0;
  let killed = false;
  let killedAt = 0;
  const worker = async () => {
    while (next < TOTAL && !killed) {
      const i = next++;
      const kind = i % 2 === 0 ? 'projects' : 'groups';
      const name = `durable-${kind}-${i}`;
      try {
        const res = await api(daemon.url, 'POST', `/${kind}`, token, kind === 'projects' ? { name } : { name, path: name });
        if (res.status >= 200 && res.status < 300) {
          if (res.body?.name !== name) wrong.push(`${kind} ${name}: ${JSON.stringify(res.body)}`);
          acked.push({ kind, id: res.body.id, name });
        } else {
          failed++;
        }
      } catch {
        failed++; // connection reset or refused: the daemon is gone; this write was never acknowledged
      }
      if (!killed && acked.length >= KILL_AFTER) {
        killed = true;
        killedAt = next;
        daemon.proc.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const exit = await daemon.exited;
  expect(wrong).toEqual([]);
  expect(exit.signal).toBe('SIGKILL');
  // the kill landed in the middle of the burst: writes were in flight and some never got an answer
  expect(killedAt).toBeLessThan(TOTAL);
  expect(acked.length).toBeGreaterThanOrEqual(KILL_AFTER);

  const again = await startGantryd(['--port', '0', ...(await dataDirArgs(dataDir))]);
  try {
    const missing: Ack[] = [];
    for (const ack of acked) {
      const res = await api(again.url, 'GET', `/${ack.kind}/${ack.id}`, token);
      if (res.status !== 200 || res.body.name !== ack.name) missing.push(ack);
    }
    expect(missing).toEqual([]);
    // nothing half-written either: every project that exists has its namespace and a readable record
    const projects = await api(again.url, 'GET', '/projects/all?per_page=100&page=1', token);
    expect(projects.status).toBe(200);
    expect(Number(projects.headers.get('x-total'))).toBeGreaterThanOrEqual(acked.filter((a) => a.kind === 'projects').length);
  } finally {
    expect((await again.stop()).code).toBe(0);
  }
  // PostgreSQL enforces foreign keys and checks its pages itself; the SQLite file is checked here
  if (await databaseUrlOf(dataDir)) return;
  const db = new Database(join(dataDir, 'gantry.db'), { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('foreign_key_check')).toEqual([]);
  } finally {
    db.close();
  }
});
