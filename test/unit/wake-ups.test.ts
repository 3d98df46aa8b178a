/**
 * The wake-up helper (daemon/db/layer/wake-ups.ts) that the held runners, the hook delivery workers and the live trace
 * followers listen with: wakeAtCommit in a transaction reaches listenForWakeUps' callback after the commit, on
 * SQLite in this process, on PostgreSQL (GANTRY_TEST_DATABASE_URL) from another database handle, as another daemon's.
 */
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresDatabase } from '../../daemon/db/layer/postgres.js';
import { sqliteDatabase } from '../../daemon/db/layer/sqlite.js';
import type { Database } from '../../daemon/db/layer/types.js';
import { listenForWakeUps, wakeAtCommit } from '../../daemon/db/layer/wake-ups.js';
import { sleep, waitUntil } from '../helpers/hook-receiver.js';

const PG_URL = process.env.GANTRY_TEST_DATABASE_URL;
let n = 0;
const channel = () => `gantry_wake_test_${process.pid}_${++n}`;

describe('on SQLite', () => {
  let conn: BetterSqlite3.Database;
  let db: Database;
  beforeAll(() => {
    conn = new BetterSqlite3(':memory:');
    db = sqliteDatabase(conn);
  });
  afterAll(() => conn.close());

  it('wakes the listeners of the channel after the transaction, with its payload; stop() ends one listener only', async () => {
    const ch = channel();
    const got: (string | null)[] = [];
    const also: (string | null)[] = [];
    const elsewhere: (string | null)[] = [];
    const one = listenForWakeUps(db, ch, (p) => got.push(p));
    const two = listenForWakeUps(db, ch, (p) => also.push(p));
    const other = listenForWakeUps(db, channel(), (p) => elsewhere.push(p));
    let seenInside = -1;
    await db.transaction(async (tx) => {
      await wakeAtCommit(tx, ch, '7:1,2');
      await tx.get('SELECT 1');
      seenInside = got.length;
    });
    expect(seenInside).toBe(0);
    await waitUntil(() => got.length === 1 && also.length === 1, 'the wake-up');
    expect(got).toEqual(['7:1,2']);
    expect(also).toEqual(['7:1,2']);
    await one.stop();
    await db.transaction((tx) => wakeAtCommit(tx, ch));
    await waitUntil(() => also.length === 2, 'the second wake-up');
    await sleep(20);
    expect(got).toEqual(['7:1,2']);
    expect(also).toEqual(['7:1,2', '']);
    expect(elsewhere).toEqual([]);
    await Promise.all([two.stop(), other.stop()]);
  });

  it('a listener that throws does not keep the others from their wake-up', async () => {
    const ch = channel();
    const got: (string | null)[] = [];
    const bad = listenForWakeUps(db, ch, () => {
      throw new Error('listener bug');
    });
    const good = listenForWakeUps(db, ch, (p) => got.push(p));
    await db.transaction((tx) => wakeAtCommit(tx, ch, 'x'));
    await waitUntil(() => got.length === 1, 'the wake-up');
    await Promise.all([bad.stop(), good.stop()]);
  });
});

describe.runIf(PG_URL)('on PostgreSQL', () => {
  let a: Database;
  let b: Database;
  beforeAll(async () => {
    [a, b] = await Promise.all([postgresDatabase(PG_URL!, { max: 2 }), postgresDatabase(PG_URL!, { max: 2 })]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it("wakes another database handle's listeners at the commit, never for a rollback", async () => {
    const ch = channel();
    const got: (string | null)[] = [];
    const listener = listenForWakeUps(a, ch, (p) => got.push(p));
    try {
      // listening has begun once a first wake-up arrives: send markers until one does
      await waitUntil(async () => {
        await b.transaction((tx) => wakeAtCommit(tx, ch, 'marker'));
        await sleep(20);
        return got.length > 0;
      }, 'listening');
      got.length = 0;
      await expect(b.transaction(async (tx) => {
        await wakeAtCommit(tx, ch, 'rolled back');
        throw new Error('boom');
      })).rejects.toThrow('boom');
      let seenInside = -1;
      await b.transaction(async (tx) => {
        await wakeAtCommit(tx, ch, 'committed');
        await tx.get('SELECT pg_sleep(0.05)');
        seenInside = got.filter((p) => p === 'committed').length;
      });
      expect(seenInside).toBe(0);
      await waitUntil(() => got.includes('committed'), 'the committed wake-up');
      expect(got.filter((p) => p !== 'marker')).toEqual(['committed']);
    } finally {
      await listener.stop();
    }
  });

  it('stop() right away, before LISTEN is done, leaves nothing listening', async () => {
    const ch = channel();
    const got: (string | null)[] = [];
    await listenForWakeUps(a, ch, (p) => got.push(p)).stop();
    await b.transaction((tx) => wakeAtCommit(tx, ch, 'after stop'));
    await sleep(100);
    expect(got).toEqual([]);
  });

  it('tells onError when it cannot listen (a closed database), and stop() still resolves', async () => {
    const c = await postgresDatabase(PG_URL!, { max: 1 });
    await c.close();
    const errors: unknown[] = [];
    const listener = listenForWakeUps(c, channel(), () => undefined, (e) => errors.push(e));
    await waitUntil(() => errors.length === 1, 'the error');
    expect(String(errors[0])).toMatch(/closed/);
    await listener.stop();
  });
});
