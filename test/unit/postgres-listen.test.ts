/**
 * LISTEN/NOTIFY on the PostgreSQL executor (daemon/db/layer/postgres.ts `listen`/`notify`): what wakes the workers of
 * other daemons (hook deliveries today; live traces later). Runs when GANTRY_TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresDatabase } from '../../daemon/db/layer/postgres.js';
import { sqliteDatabase } from '../../daemon/db/layer/sqlite.js';
import type { Database } from '../../daemon/db/layer/types.js';
import { waitUntil, sleep } from '../helpers/hook-receiver.js';
import { countOverlappingQueries } from '../helpers/postgres.js';
import BetterSqlite3 from 'better-sqlite3';

const PG_URL = process.env.GANTRY_TEST_DATABASE_URL;

describe('on SQLite', () => {
  it('has no listen/notify (one process owns the file: workers are woken in process)', () => {
    const conn = new BetterSqlite3(':memory:');
    try {
      const db = sqliteDatabase(conn);
      expect(db.listen).toBeUndefined();
      expect(db.notify).toBeUndefined();
    } finally {
      conn.close();
    }
  });
});

describe.runIf(PG_URL)('on PostgreSQL', () => {
  let a: Database & { pool: import('pg').Pool };
  let b: Database & { pool: import('pg').Pool };
  let n = 0;
  const channel = () => `gantry_test_${process.pid}_${++n}`;

  beforeAll(async () => {
    [a, b] = await Promise.all([postgresDatabase(PG_URL!, { max: 2 }), postgresDatabase(PG_URL!, { max: 2 })]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it("delivers another database handle's notify, with its payload, to every listener of the channel only", async () => {
    const ch = channel();
    const got: (string | null)[] = [];
    const also: (string | null)[] = [];
    const elsewhere: (string | null)[] = [];
    const stop = await a.listen!(ch, (p) => got.push(p));
    const stopAlso = await a.listen!(ch, (p) => also.push(p));
    const stopElsewhere = await a.listen!(channel(), (p) => elsewhere.push(p));
    await b.notify!(ch, 'hello');
    await b.notify!(ch);
    await waitUntil(() => got.length === 2 && also.length === 2, 'two notifications');
    expect(got).toEqual(['hello', '']);
    expect(also).toEqual(['hello', '']);
    expect(elsewhere).toEqual([]);
    await stop();
    await b.notify!(ch, 'after one stopped');
    await waitUntil(() => also.length === 3, 'the third');
    await sleep(50);
    expect(got).toHaveLength(2);
    await Promise.all([stopAlso(), stopElsewhere()]);
  });

  it('sends a notify made inside a transaction at its commit, and never for a rollback', async () => {
    const ch = channel();
    const got: (string | null)[] = [];
    const stop = await a.listen!(ch, (p) => got.push(p));
    try {
      let seenBeforeCommit = -1;
      await b.transaction(async (tx) => {
        await tx.get('SELECT pg_notify(?, ?)', [ch, 'committed']);
        // a round trip inside the transaction: the notification has not gone out yet
        await tx.get('SELECT pg_sleep(0.05)');
        seenBeforeCommit = got.length;
      });
      expect(seenBeforeCommit).toBe(0);
      await expect(b.transaction(async (tx) => {
        await tx.get('SELECT pg_notify(?, ?)', [ch, 'rolled back']);
        throw new Error('boom');
      })).rejects.toThrow('boom');
      await waitUntil(() => got.length >= 1, 'the committed notification');
      await b.notify!(ch, 'marker');
      await waitUntil(() => got.includes('marker'), 'the marker');
      expect(got).toEqual(['committed', 'marker']);
    } finally {
      await stop();
    }
  });

  it('listens again after its connection is lost, and tells the listeners (null) that they may have missed some', async () => {
    const ch = channel();
    const got: (string | null)[] = [];
    const stop = await a.listen!(ch, (p) => got.push(p));
    try {
      // the server ends the listening connection (a restart, a failover, an administrator)
      const killed = await b.get<{ n: number }>(
        `SELECT COUNT(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE query = ? AND pid <> pg_backend_pid()`,
        [`LISTEN "${ch}"`],
      );
      expect(killed?.n).toBe(1);
      await waitUntil(() => got.includes(null), 'the reconnection', 10_000);
      await b.notify!(ch, 'again');
      await waitUntil(() => got.includes('again'), 'a notification after the reconnection');
    } finally {
      await stop();
    }
  });

  it('sends the LISTEN and UNLISTEN of channels taken up and dropped at once one at a time on its connection', async () => {
    const c = await postgresDatabase(PG_URL!, { max: 1 });
    const overlapping = await countOverlappingQueries();
    try {
      const chs = Array.from({ length: 5 }, () => channel());
      const got = new Map<string, (string | null)[]>(chs.map((ch) => [ch, []]));
      const stops = await Promise.all(chs.map((ch) => c.listen!(ch, (p) => got.get(ch)!.push(p))));
      await Promise.all(chs.map((ch) => b.notify!(ch, `to ${ch}`)));
      await waitUntil(() => chs.every((ch) => got.get(ch)!.length === 1), 'a notification on every channel');
      for (const ch of chs) expect(got.get(ch)).toEqual([`to ${ch}`]);
      await Promise.all(stops.map((stop) => stop()));
      await b.notify!(chs[0]!, 'after');
      await sleep(100);
      expect(got.get(chs[0]!)).toEqual([`to ${chs[0]}`]);
      expect(overlapping.count()).toBe(0);
    } finally {
      overlapping.restore();
      await c.close();
    }
  });

  it('stops listening when the database is closed', async () => {
    const c = await postgresDatabase(PG_URL!, { max: 1 });
    const ch = channel();
    const got: (string | null)[] = [];
    await c.listen!(ch, (p) => got.push(p));
    await c.close();
    await b.notify!(ch, 'nobody');
    await sleep(100);
    expect(got).toEqual([]);
    await expect(c.listen!(ch, () => undefined)).rejects.toThrow('closed');
  });
});

describe.runIf(!!process.env.GANTRY_TEST_DATABASE_URL)('connections that break while checked out', () => {
  it('an advisory lock holder whose connection is terminated while it waits does not kill the process', async () => {
    const { createTestDatabase } = await import('../helpers/postgres.js');
    const { postgresDatabase } = await import('../../daemon/db/layer/postgres.js');
    const tdb = await createTestDatabase(process.env.GANTRY_TEST_DATABASE_URL!, { migrated: false });
    const data = await postgresDatabase(tdb.url);
    const other = await postgresDatabase(tdb.url);
    try {
      const uncaught: unknown[] = [];
      const onUncaught = (e: unknown) => uncaught.push(e);
      process.on('uncaughtException', onUncaught);
      try {
        const held = data.withAdvisoryLock!(4242, async () => {
          // the holder's connection is the one holding the lock: end it from another session, then wait a little
          await other.run('SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = ? AND objid = ?', ['advisory', 4242]);
          await new Promise((r) => setTimeout(r, 300));
          return 'done';
        });
        expect(await held).toBe('done');
        expect(uncaught).toEqual([]);
        // the pool goes on with a fresh connection
        expect(await data.get<{ ok: number }>('SELECT 1 AS ok')).toEqual({ ok: 1 });
      } finally {
        process.off('uncaughtException', onUncaught);
      }
    } finally {
      await data.close();
      await other.close();
      await tdb.drop();
    }
  });
});
