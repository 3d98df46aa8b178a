/**
 * The data layer on PostgreSQL (docs/design/postgres.md, "Data-layer shape"): a `pg.Pool`; each SQL text is rewritten
 * once from `?` to `$n` and runs as a named prepared statement (parsed and planned once per pooled connection).
 * Rows come back shaped as SQLite's: int8 and numeric as numbers, timestamptz as the API's ISO 8601 text with
 * milliseconds, date as `YYYY-MM-DD` text (booleans stay true/false: row mappers use `!!`).
 *
 * `pg` is loaded with a dynamic import when a PostgreSQL database is opened, never by a SQLite daemon (start-up time
 * and RSS are measured); this module itself only imports pg's types.
 */
import type { Pool, PoolClient, PoolConfig, QueryResult } from 'pg';
import type { Database, Dialect, Queries, Row, RunResult } from './types.js';

export const postgresDialect: Dialect = {
  name: 'postgres',
  inIds: '(SELECT unnest(?::int[]))',
  ids: (list) => [...list],
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
 * LISTEN on `channel` over a pooled connection kept for it; `fn(payload)` for each notification. When the connection
 * breaks, it is dropped and LISTEN is issued again on a new one after `retryMs` (notifications sent meanwhile are
 * lost: listeners re-read what they follow, as docs/design/postgres.md says). Resolves once listening, to the stopper.
 */
export async function listenOn(pool: Pool, channel: string, fn: (payload: string) => void, retryMs = 1000): Promise<() => Promise<void>> {
  let client: PoolClient | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const onNotification = (m: { channel: string; payload?: string }) => {
    if (m.channel === channel) fn(m.payload ?? '');
  };
  const connect = async (): Promise<void> => {
    const c = await pool.connect();
    c.on('notification', onNotification);
    c.on('error', () => {
      if (client !== c) return;
      client = undefined;
      c.release(true);
      if (!stopped) timer = setTimeout(() => void connect().catch(() => undefined), retryMs);
    });
    await c.query(`LISTEN ${quoteIdent(channel)}`);
    if (stopped) {
      c.release(true);
      return;
    }
    client = c;
  };
  await connect();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    const c = client;
    client = undefined;
    if (c) {
      await c.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
      c.release();
    }
  };
}

/** Run `fn` holding the session advisory lock `key` on a connection of its own, or answer null when it is taken. */
export async function withAdvisoryLockOn<T>(pool: Pool, key: number, fn: () => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key]);
    if (!got.rows[0]?.ok) return null;
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e)); // the session ends with the connection: the lock goes too
      });
    }
  } finally {
    client.release(broken);
  }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

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

  const query = (on: Pool | PoolClient, text: string, args: readonly unknown[]): Promise<QueryResult> => {
    const t = toPostgres(text);
    return on.query({ name: t.name, text: t.text, values: args as unknown[] });
  };
  const queries = (on: Pool | PoolClient, open: () => boolean = () => true): Queries => {
    const ended = () => Promise.reject(new Error('this transaction has ended'));
    return {
      dialect: postgresDialect,
      all: async <T = Row>(text: string, args: readonly unknown[] = []) => (open() ? (await query(on, text, args)).rows as T[] : ended()),
      get: async <T = Row>(text: string, args: readonly unknown[] = []) => (open() ? (await query(on, text, args)).rows[0] as T | undefined : ended()),
      run: async (text: string, args: readonly unknown[] = []): Promise<RunResult> => {
        if (!open()) return ended();
        const r = await query(on, text, args);
        const id = r.rows[0]?.id;
        return { changes: r.rowCount ?? 0, lastId: typeof id === 'number' ? id : undefined };
      },
      // Several statements without parameters (a migration file): pg's simple query protocol.
      exec: async (text: string): Promise<void> => {
        if (!open()) return ended();
        await on.query(text);
      },
    };
  };

  /** BEGIN ... COMMIT on one pooled connection; ROLLBACK when `fn` throws. */
  const inTransaction = async <T>(begin: string, fn: (tx: Queries) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    let open = true;
    let broken: unknown;
    try {
      await client.query(begin);
      const out = await fn(queries(client, () => open));
      open = false;
      await client.query('COMMIT');
      return out;
    } catch (e) {
      open = false;
      await client.query('ROLLBACK').catch((err: unknown) => {
        broken = err; // the connection is unusable: destroy it instead of returning it to the pool
      });
      throw e;
    } finally {
      client.release(broken instanceof Error ? broken : undefined);
    }
  };

  return {
    ...queries(pool),
    transaction: (fn) => inTransaction('BEGIN', fn),
    snapshot: (fn) => inTransaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn),
    close: () => pool.end(),
    listen: (channel, fn) => listenOn(pool, channel, fn),
    withAdvisoryLock: (key, fn) => withAdvisoryLockOn(pool, key, fn),
    pool,
  };
}
