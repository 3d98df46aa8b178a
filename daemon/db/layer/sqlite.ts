/**
 * The data layer on SQLite: the daemon's own better-sqlite3 connection, statements prepared
 * once per text, writes and transactions behind a FIFO lock. The work underneath is the same synchronous call as
 * before; the asynchronous shape adds one resolved promise per statement.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { dbStatementsOf, sqliteTransactionSeconds } from '../../metrics.js';
import type { Database, Dialect, LocalWakeUps, Queries, Row, RunResult } from './types.js';

/** A FIFO async lock: a transaction's awaits never interleave with another write. */
export class AsyncLock {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(() => undefined, () => undefined);
    return result;
  }
}

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  inIds: '(SELECT value FROM json_each(?))',
  ids: (list) => JSON.stringify([...new Set(list)]),
  idList: (alias) => `json_each(?) AS ${alias}`,
  nocaseEq: (column) => `${column} = ? COLLATE NOCASE`,
  ilike: 'LIKE',
  today: "date('now')",
  least: (a, b) => `MIN(${a}, ${b})`,
  greatest: (a, b) => `MAX(${a}, ${b})`,
};

/** Booleans bound as 1/0 (better-sqlite3 refuses JS booleans); other values as they are. */
const bind = (args: readonly unknown[]): readonly unknown[] => {
  // (most statements bind no boolean: those keep their array, no copy per statement)
  for (let i = 0; i < args.length; i++) {
    if (typeof args[i] === 'boolean') return args.map((v) => (v === true ? 1 : v === false ? 0 : v));
  }
  return args;
};

/** Thrown when a transaction awaited something other than the database (it has been rolled back). */
export class TransactionAwaitError extends Error {
  constructor() {
    super('a database transaction awaited something other than the database; it was rolled back');
  }
}

/** A prepared statement and whether it may write (not read-only: INSERT, UPDATE, DELETE, DDL). */
interface Prepared {
  statement: BetterSqlite3.Statement;
  writes: boolean;
}

export function sqliteDatabase(conn: BetterSqlite3.Database): Database {
  const cache = new Map<string, Prepared>();
  const counted = dbStatementsOf('sqlite');
  // Statements that may write, run so far; and whether a transaction of this layer is open (both in JS, so the caches'
  // version check on every request reads no native state: SqliteConnectionState).
  let writes = 0;
  let open = false;
  // Every statement this layer runs goes through here once (BEGIN, COMMIT and ROLLBACK included).
  const prepared = (text: string) => {
    counted.value += 1;
    let p = cache.get(text);
    if (!p) {
      const statement = conn.prepare(text);
      p = { statement, writes: !statement.readonly };
      if (cache.size > 2000) cache.clear();
      cache.set(text, p);
    }
    // (counted before it runs: a version read after this statement is never one read before it)
    if (p.writes) writes += 1;
    return p.statement;
  };
  const runNow = (text: string, args: readonly unknown[]): RunResult => {
    const s = prepared(text);
    if (s.reader) {
      // INSERT ... RETURNING id
      const row = s.get(...bind(args)) as Row | undefined;
      return { changes: row ? 1 : 0, lastId: row && typeof row.id === 'number' ? row.id : undefined };
    }
    const r = s.run(...bind(args));
    return { changes: r.changes, lastId: Number(r.lastInsertRowid) };
  };
  const localWakeUps: LocalWakeUps = new Map();
  const direct: Queries = {
    dialect: sqliteDialect,
    localWakeUps,
    all: async <T>(text: string, args: readonly unknown[] = []) => prepared(text).all(...bind(args)) as T[],
    get: async <T>(text: string, args: readonly unknown[] = []) => prepared(text).get(...bind(args)) as T | undefined,
    run: async (text: string, args: readonly unknown[] = []) => runNow(text, args),
  };
  const lock = new AsyncLock();
  // (statements of their own: pluck() changes the statement, so not the shared cache's)
  const counters: { changes?: BetterSqlite3.Statement; version?: BetterSqlite3.Statement } = {};

  /**
   * BEGIN IMMEDIATE ... COMMIT, started on a fresh turn of the event loop (setImmediate), when no other request's
   * continuation is queued. Every `tx` call settles at once, so the transaction runs as one chain of microtasks that
   * nothing else enters, and no other write on the same connection can land
   * inside it. A transaction still open at the next turn awaited something else: it is rolled back and refused.
   */
  const transaction = <T>(fn: (tx: Queries) => Promise<T>, begin = 'BEGIN IMMEDIATE', freshTurn = true): Promise<T> =>
    lock.run(
      () =>
        new Promise<T>((resolve, reject) =>
          (freshTurn ? setImmediate : (start: () => void) => start())(() => {
            if (conn.inTransaction) {
              // No transaction can be open across turns; this is a bug if it happens.
              reject(new Error('the SQLite connection is already in a transaction'));
              return;
            }
            let done = false;
            const ended = () => Promise.reject(new Error('this transaction has ended'));
            const tx: Queries = {
              dialect: sqliteDialect,
              localWakeUps,
              all: (text, args) => (done ? ended() : direct.all(text, args)),
              get: (text, args) => (done ? ended() : direct.get(text, args)),
              run: (text, args) => (done ? ended() : direct.run(text, args)),
            };
            // Timed into gantry_sqlite_transaction_duration_seconds, BEGIN to COMMIT or ROLLBACK.
            const started = performance.now();
            // (`open` follows the connection again at every end: a failed COMMIT leaves the transaction open)
            const observe = () => {
              open = conn.inTransaction;
              sqliteTransactionSeconds.observe((performance.now() - started) / 1000);
            };
            try {
              prepared(begin).run();
              open = true;
            } catch (e) {
              // The database was closed meanwhile (a request or worker still running at shutdown): refused, never thrown
              // from this timer, where nothing could catch it.
              reject(e);
              return;
            }
            setImmediate(() => {
              if (done) return;
              if (conn.inTransaction) {
                done = true;
                prepared('ROLLBACK').run();
                reject(new TransactionAwaitError());
              }
              // (also when SQLite itself rolled back on an error the transaction's code has not seen yet)
              open = conn.inTransaction;
            });
            new Promise<T>((r) => r(fn(tx)))
              .then(
                (out) => {
                  if (done) return;
                  done = true;
                  try {
                    prepared('COMMIT').run();
                  } finally {
                    observe();
                  }
                  resolve(out);
                },
                (e) => {
                  if (done) return;
                  done = true;
                  if (conn.inTransaction) prepared('ROLLBACK').run();
                  observe();
                  reject(e);
                },
              )
              .catch((e) => {
                if (conn.inTransaction) prepared('ROLLBACK').run(); // a failed COMMIT
                open = conn.inTransaction;
                reject(e);
              });
          }),
        ),
    );

  return {
    ...direct,
    // A lone write outside a transaction still takes the lock: a transaction in progress holds the writer.
    run: (text, args = []) => lock.run(() => runNow(text, args)),
    transaction: (fn) => transaction(fn),
    // One connection: statements outside a transaction already see one state per synchronous stretch; DEFERRED keeps
    // the COUNT and the page of a list on one snapshot even when other writers commit in between. It reads only, so it
    // starts at once under the lock (no fresh turn): other requests' reads in between see what it sees, and their
    // writes wait for the lock.
    snapshot: (fn) => transaction(fn, 'BEGIN DEFERRED', false),
    close: async () => undefined, // the connection belongs to openDataLayer and is closed with it
    sqlite: {
      inTransaction: () => open,
      isOpen: () => conn.open,
      writes: () => writes,
      totalChanges: () => (counters.changes ??= conn.prepare('SELECT total_changes()').pluck()).get() as number,
      dataVersion: () => (counters.version ??= conn.prepare('PRAGMA data_version').pluck()).get() as number,
    },
  };
}
