/**
 * The data layer on PostgreSQL (docs/design/postgres.md, "Data-layer shape"): a `pg.Pool`; each SQL text is rewritten
 * once from `?` to `$n` and runs as a named prepared statement (parsed and planned once per pooled connection).
 * Rows come back shaped as SQLite's: int8 and numeric as numbers, timestamptz as the API's ISO 8601 text with
 * milliseconds, date as `YYYY-MM-DD` text (booleans stay true/false: row mappers use `!!`).
 *
 * `pg` is loaded with a dynamic import when a PostgreSQL database is opened, never by a SQLite daemon (start-up time
 * and RSS are measured); this module itself only imports pg's types.
 */
import type { Client, Pool, PoolConfig, QueryConfig, QueryResult } from 'pg';
import { dbStatementsOf } from '../../metrics.js';
import type { Database, Dialect, Queries, Row, RunResult } from './types.js';

export const postgresDialect: Dialect = {
  name: 'postgres',
  inIds: '(SELECT unnest(?::int[]))',
  ids: (list) => [...new Set(list)],
  idList: (alias) => `unnest(?::int[]) AS ${alias}(value)`,
  nocaseEq: (column) => `lower(${column}) = lower(?)`,
  ilike: 'ILIKE',
  // Date columns are `date` on PostgreSQL (docs/design/postgres.md, "Migrations from one source"): today's UTC date as a
  // `date` compares with them, and reads back as 'YYYY-MM-DD' text (the type parser below), as SQLite's date('now').
  today: "(now() AT TIME ZONE 'UTC')::date",
  least: (a, b) => `LEAST(${a}, ${b})`,
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
};

interface PgText {
  name: string;
  text: string;
}

const texts = new Map<string, PgText>();
let named = 0;

/**
 * A statement text with `?` placeholders as PostgreSQL's `$1..$n`, with a statement name, once per text. A `?` inside
 * a quoted string ('...'), a quoted identifier ("...") or a comment is left alone.
 */
export function toPostgres(text: string): PgText {
  let t = texts.get(text);
  if (t === undefined) {
    let n = 0;
    let out = '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === "'" || c === '"') {
        const end = text.indexOf(c, i + 1);
        const stop = end < 0 ? text.length : end + 1;
        out += text.slice(i, stop);
        i = stop - 1;
      } else if (c === '-' && text[i + 1] === '-') {
        const end = text.indexOf('\n', i);
        const stop = end < 0 ? text.length : end;
        out += text.slice(i, stop);
        i = stop - 1;
      } else if (c === '/' && text[i + 1] === '*') {
        const end = text.indexOf('*/', i + 2);
        const stop = end < 0 ? text.length : end + 2;
        out += text.slice(i, stop);
        i = stop - 1;
      } else if (c === '?') {
        out += `$${++n}`;
      } else {
        out += c;
      }
    }
    // Statement texts come from code, so the map stays small; a runaway caller building texts would only grow it.
    if (texts.size > 5000) texts.clear();
    t = { name: `g${++named}`, text: out };
    texts.set(text, t);
  }
  return t;
}

/** Where a URL points, without its user or password: `host:port/database`, for messages. */
export function describePostgresUrl(url: string): string {
  try {
    const u = new URL(url);
    const host = u.hostname || (u.searchParams.get('host') ?? 'localhost');
    return `${host}:${u.port || '5432'}`;
  } catch {
    return 'the configured address';
  }
}

type PgModule = typeof import('pg');

let loaded: Promise<PgModule> | undefined;
const loadPg = (): Promise<PgModule> =>
  (loaded ??= import('pg').then((m) => ((m as unknown as { default?: PgModule }).default ?? m) as PgModule));

/** The type parsers of this layer, on a types object of the pool (pg's global parsers stay as they are). */
function typeParsers(pg: PgModule): NonNullable<PoolConfig['types']> {
  const iso = (s: string) => new Date(s).toISOString();
  const parsers: Record<number, (s: string) => unknown> = {
    20: Number, // int8: COUNT(*), SUM(), bigint ids
    1700: Number, // numeric: SUM() of int8, AVG()
    1184: iso, // timestamptz
    1114: (s: string) => iso(`${s.replace(' ', 'T')}Z`), // timestamp (without time zone) read as UTC
    1082: (s: string) => s, // date: 'YYYY-MM-DD' text, as SQLite keeps it
  };
  return {
    getTypeParser: ((oid: number, format?: string) =>
      format !== 'binary' && parsers[oid] ? parsers[oid] : pg.types.getTypeParser(oid, format as 'text')) as never,
  };
}

/**
 * One statement at a time on one connection, in call order. pg 8 queues a query sent while another runs on the same
 * client and warns that pg 9 will refuse it ("client is already executing a query"); a transaction's statements made
 * side by side (`Promise.all` of `tx` calls) or a listening connection's LISTEN and UNLISTEN wait here for their turn
 * instead. A statement that fails lets the next one go.
 */
export function oneAtATime(): <T>(statement: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(statement: () => Promise<T>): Promise<T> => {
    const turn = tail.then(statement);
    tail = turn.catch(() => undefined);
    return turn;
  };
}

/** A channel name as a quoted identifier (LISTEN and UNLISTEN take no parameters). */
const channelIdentifier = (channel: string) => `"${channel.replace(/"/g, '""')}"`;

/**
 * LISTEN on a connection of its own, never a pooled one (a pooled connection is handed to other queries, which would
 * take its notifications or leave it listening). Made on the first listen() and closed with the database. When it
 * breaks (the server restarted), it is made again after a pause (0.5 s, doubling up to 30 s), every channel is
 * listened to again, and every handler gets null: notifications sent meanwhile are lost, so listeners look again.
 */
function listenerOf(pg: PgModule, url: string) {
  type Handler = (payload: string | null) => void;
  const handlers = new Map<string, Set<Handler>>();
  let client: Client | null = null;
  let connecting: Promise<Client> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let pause = 500;
  let closed = false;
  // LISTEN and UNLISTEN of several channels at once (the daemon's workers start and stop together) take turns
  const turn = oneAtATime();

  const call = (fn: Handler, payload: string | null) => {
    try {
      fn(payload);
    } catch {
      // a listener's own error must not break the connection's event handling
    }
  };
  const reconnectLater = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      connect().then(
        () => {
          for (const set of handlers.values()) for (const fn of [...set]) call(fn, null);
        },
        () => reconnectLater(),
      );
    }, pause);
    timer.unref();
    pause = Math.min(pause * 2, 30_000);
  };
  const lost = (c: Client) => {
    if (c !== client) return;
    client = null;
    connecting = null;
    void c.end().catch(() => undefined);
    reconnectLater();
  };
  const connect = (): Promise<Client> =>
    (connecting ??= (async () => {
      const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
      c.on('notification', (m) => {
        for (const fn of [...(handlers.get(m.channel) ?? [])]) call(fn, m.payload ?? '');
      });
      c.on('error', () => lost(c));
      c.on('end', () => lost(c));
      try {
        await c.connect();
        for (const channel of [...handlers.keys()]) await turn(() => c.query(`LISTEN ${channelIdentifier(channel)}`));
      } catch (e) {
        await c.end().catch(() => undefined);
        throw e;
      }
      if (closed) {
        await c.end().catch(() => undefined);
        throw new Error('the database is closed');
      }
      client = c;
      pause = 500;
      return c;
    })().catch((e: unknown) => {
      connecting = null;
      throw e;
    }));

  return {
    async listen(channel: string, fn: Handler): Promise<() => Promise<void>> {
      if (closed) throw new Error('the database is closed');
      let set = handlers.get(channel);
      const first = !set;
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(fn);
      try {
        const c = await connect();
        // LISTEN again is harmless; a connection made while this channel was being added may have missed it
        if (first) await turn(() => c.query(`LISTEN ${channelIdentifier(channel)}`));
      } catch (e) {
        set.delete(fn);
        if (!set.size) handlers.delete(channel);
        throw e;
      }
      return async () => {
        const current = handlers.get(channel);
        if (!current?.delete(fn) || current.size) return;
        handlers.delete(channel);
        const c = client;
        if (c) await turn(() => c.query(`UNLISTEN ${channelIdentifier(channel)}`)).catch(() => undefined);
      };
    },
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      const c = client;
      client = null;
      handlers.clear();
      await c?.end().catch(() => undefined);
    },
  };
}

/** Run `fn` holding the session advisory lock `key` on a connection of its own, or answer null when it is taken. */
export async function withAdvisoryLockOn<T>(pool: Pool, key: number, fn: () => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A checked-out connection that breaks while it waits (the server restarted, the database was dropped) emits
  // 'error' with no listener of the pool's: without this one the process would die of it.
  const onError = (e: Error) => { broken = e; };
  client.on('error', onError);
  const counted = dbStatementsOf('postgres');
  try {
    counted.value += 1;
    const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key]);
    if (!got.rows[0]?.ok) return null;
    try {
      return await fn();
    } finally {
      counted.value += 1;
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e)); // the session ends with the connection: the lock goes too
      });
    }
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** Options of postgresDatabase beyond the URL. */
export interface PostgresOptions {
  /** Connections in the pool (default 10). */
  max?: number;
  /** Check the connection before returning (default true): a bad URL fails here, not on the first request. */
  check?: boolean;
}

/** Open the data layer on a PostgreSQL database (`postgres://user:password@host:port/database`). */
export async function postgresDatabase(url: string, options: PostgresOptions = {}): Promise<Database & { pool: Pool }> {
  const pg = await loadPg();
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, types: typeParsers(pg), connectionTimeoutMillis: 10_000 });
  // An idle connection that breaks (the server restarted) is dropped by the pool; without a listener it would throw.
  pool.on('error', () => undefined);
  if (options.check !== false) {
    try {
      const client = await pool.connect();
      client.release();
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw e;
    }
  }

  const counted = dbStatementsOf('postgres');
  /** How the statements of a Queries reach the server: the pool (any free connection) or one transaction's connection. */
  type Send = (statement: QueryConfig | string) => Promise<QueryResult>;
  /** A statement text with `?` placeholders as a named prepared statement. */
  const prepared = (text: string, args: readonly unknown[]): QueryConfig => {
    const t = toPostgres(text);
    return { name: t.name, text: t.text, values: args as unknown[] };
  };
  const queries = (send: Send): Queries => ({
    dialect: postgresDialect,
    all: async <T = Row>(text: string, args: readonly unknown[] = []) => (await send(prepared(text, args))).rows as T[],
    get: async <T = Row>(text: string, args: readonly unknown[] = []) => (await send(prepared(text, args))).rows[0] as T | undefined,
    run: async (text: string, args: readonly unknown[] = []): Promise<RunResult> => {
      const r = await send(prepared(text, args));
      const id = r.rows[0]?.id;
      return { changes: r.rowCount ?? 0, lastId: typeof id === 'number' ? id : undefined };
    },
    // Several statements without parameters (a migration file): pg's simple query protocol.
    exec: async (text: string): Promise<void> => {
      await send(text);
    },
  });
  const onPool: Send = (statement) => {
    counted.value += 1;
    return pool.query(statement);
  };

  /**
   * BEGIN ... COMMIT on one pooled connection; ROLLBACK when `fn` throws. Its statements take turns on the connection
   * (oneAtATime), so `tx` calls made side by side run one after the other, in call order; one whose turn comes after
   * the transaction ended (never awaited by `fn`) is refused, never sent after the COMMIT.
   */
  const inTransaction = async <T>(begin: string, fn: (tx: Queries) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    const turn = oneAtATime();
    let open = true;
    let broken: unknown;
    // (as in withAdvisoryLockOn: a connection that breaks between the transaction's statements must not kill the process)
    const onError = (e: Error) => { broken = e; };
    client.on('error', onError);
    const statement = (s: QueryConfig | string) => {
      counted.value += 1;
      return client.query(s);
    };
    const ended = () => Promise.reject(new Error('this transaction has ended'));
    try {
      await turn(() => statement(begin));
      const out = await fn(queries((s) => turn(() => (open ? statement(s) : ended()))));
      open = false;
      await turn(() => statement('COMMIT'));
      return out;
    } catch (e) {
      open = false;
      await turn(() => statement('ROLLBACK')).catch((err: unknown) => {
        broken = err; // the connection is unusable: destroy it instead of returning it to the pool
      });
      throw e;
    } finally {
      client.off('error', onError);
      client.release(broken instanceof Error ? broken : undefined);
    }
  };

  const notifications = listenerOf(pg, url);
  return {
    ...queries(onPool),
    transaction: (fn) => inTransaction('BEGIN', fn),
    snapshot: (fn) => inTransaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn),
    listen: (channel, fn) => notifications.listen(channel, fn),
    notify: async (channel, payload = '') => {
      await onPool(prepared('SELECT pg_notify(?, ?)', [channel, payload]));
    },
    close: async () => {
      await notifications.close();
      await pool.end();
    },
    withAdvisoryLock: (key, fn) => withAdvisoryLockOn(pool, key, fn),
    pool,
  };
}
