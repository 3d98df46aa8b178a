/**
 * The proposed asynchronous data layer (docs/design/postgres.md, "Data-layer shape"), as a prototype: one small
 * interface, `all / get / run / transaction`, over SQL text with `?` placeholders, implemented for SQLite
 * (better-sqlite3: one writer connection behind an async lock, a separate reader connection, prepared statements
 * cached per text) and for PostgreSQL (pg: a pool, `?` rewritten to `$n` once per text, named prepared statements).
 * Not wired into the daemon.
 */
import Database from 'better-sqlite3';
import pg from 'pg';

/** A FIFO async lock: the SQLite writer's, so a transaction's awaits never interleave with another write. */
export class AsyncLock {
  #tail = Promise.resolve();
  /** Run `fn` when every earlier holder is done; returns its result. */
  run(fn) {
    const result = this.#tail.then(fn);
    this.#tail = result.then(() => undefined, () => undefined);
    return result;
  }
}

/** Booleans bound as 1/0 (better-sqlite3 refuses JS booleans); other values as they are. */
const sqliteValue = (v) => (v === true ? 1 : v === false ? 0 : v);

/** A better-sqlite3 connection set up as the daemon's (daemon/db/connection.ts): WAL, full sync, foreign keys, busy timeout. */
export function openSqliteConnection(file) {
  const c = new Database(file);
  c.pragma('journal_mode = WAL');
  c.pragma('synchronous = FULL');
  c.pragma('foreign_keys = ON');
  c.pragma('busy_timeout = 5000');
  return c;
}

/** The SQLite side: reads on the reader connection, writes and transactions on the writer behind the lock. */
export function openSqliteLayer(file) {
  const writer = openSqliteConnection(file);
  const reader = openSqliteConnection(file);
  const lock = new AsyncLock();
  const caches = new WeakMap();
  const prepared = (conn, text) => {
    let byText = caches.get(conn);
    if (!byText) caches.set(conn, (byText = new Map()));
    let s = byText.get(text);
    if (!s) byText.set(text, (s = conn.prepare(text)));
    return s;
  };
  const on = (conn) => ({
    dialect: 'sqlite',
    all: async (text, args = []) => prepared(conn, text).all(...args.map(sqliteValue)),
    get: async (text, args = []) => prepared(conn, text).get(...args.map(sqliteValue)),
    run: async (text, args = []) => {
      const r = prepared(conn, text).run(...args.map(sqliteValue));
      return { changes: r.changes, lastId: Number(r.lastInsertRowid) };
    },
  });
  const read = on(reader);
  const write = on(writer);
  return {
    ...read,
    dialect: 'sqlite',
    // A lone write outside a transaction still takes the lock: a transaction in progress holds the writer.
    run: (text, args) => lock.run(() => write.run(text, args)),
    /**
     * BEGIN IMMEDIATE ... COMMIT on the writer; `fn(tx)` may await the database only, never git or the network.
     * The transaction starts from a fresh turn of the event loop (setImmediate), when no other request's promise
     * continuation is queued; since every `tx` call settles at once, the whole transaction then runs as one chain of
     * microtasks that nothing else can enter, and a synchronous write of not yet ported code can never land inside
     * it. A transaction still open when the next turn comes has awaited something else: that is refused (rolled back).
     */
    transaction: (fn) =>
      lock.run(() => new Promise((resolve, reject) => setImmediate(() => {
        let done = false;
        // calls after the end (a late continuation of a refused transaction) throw instead of autocommitting
        const guard = (m) => (text, args) => {
          if (done) return Promise.reject(new Error('this transaction has ended'));
          return write[m](text, args);
        };
        const tx = { dialect: 'sqlite', all: guard('all'), get: guard('get'), run: guard('run') };
        setImmediate(() => {
          if (!done && writer.inTransaction) {
            done = true;
            prepared(writer, 'ROLLBACK').run();
            reject(new Error('a SQLite transaction awaited something other than the database'));
          }
        });
        prepared(writer, 'BEGIN IMMEDIATE').run();
        new Promise((r) => r(fn(tx))).then(
          (out) => {
            if (done) return; // refused above
            done = true;
            prepared(writer, 'COMMIT').run();
            resolve(out);
          },
          (e) => {
            if (done) return;
            done = true;
            if (writer.inTransaction) prepared(writer, 'ROLLBACK').run();
            reject(e);
          },
        ).catch((e) => {
          if (writer.inTransaction) prepared(writer, 'ROLLBACK').run(); // a failed COMMIT
          reject(e);
        });
      }))),
    close: async () => {
      writer.close();
      reader.close();
    },
    /** The synchronous writer connection (the baseline variant and the loaders use it). */
    raw: writer,
  };
}

/** `?` placeholders to `$1..$n` (texts come from code; a `?` inside a string literal is not supported). */
const pgText = new Map();
function toPg(text) {
  let t = pgText.get(text);
  if (t === undefined) {
    let n = 0;
    t = { text: text.replace(/\?/g, () => `$${++n}`), name: `g${pgText.size}` };
    pgText.set(text, t);
  }
  return t;
}

// count(*) is int8 and arrives as a string by default: ids and counts fit in a JS number here.
pg.types.setTypeParser(20, (s) => Number(s));
// timestamptz as the API's ISO 8601 UTC with milliseconds; date as its YYYY-MM-DD text (as SQLite keeps them).
pg.types.setTypeParser(1184, (s) => new Date(s).toISOString());
pg.types.setTypeParser(1082, (s) => s);

/** The PostgreSQL side: a pool; each text becomes a named prepared statement on each connection that runs it. */
export function openPostgresLayer(config) {
  const pool = new pg.Pool(config);
  const on = (client) => ({
    dialect: 'postgres',
    all: async (text, args = []) => {
      const t = toPg(text);
      return (await client.query({ name: t.name, text: t.text, values: args })).rows;
    },
    get: async (text, args = []) => {
      const t = toPg(text);
      return (await client.query({ name: t.name, text: t.text, values: args })).rows[0];
    },
    run: async (text, args = []) => {
      const t = toPg(text);
      const r = await client.query({ name: t.name, text: t.text, values: args });
      return { changes: r.rowCount, lastId: r.rows[0]?.id };
    },
  });
  return {
    ...on(pool),
    dialect: 'postgres',
    transaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn(on(client));
        await client.query('COMMIT');
        return out;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
    pool,
  };
}
