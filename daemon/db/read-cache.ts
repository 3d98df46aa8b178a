/**
 * Read results cached until the next database write. On SQLite the layer's count of writing statements moves with
 * every write on this connection (SqliteConnectionState.writes) and data_version with every commit of another
 * connection; the UTC date is part of the version because membership and token expiry depend on it. Inside a
 * transaction nothing is cached (what it reads may be rolled back).
 *
 * On PostgreSQL the version is `pg_current_snapshot()` (docs/design/postgres.md, "Caches that are exact only on one
 * process"): it changes whenever a transaction that wrote anything starts or ends, on any daemon of the database, and
 * two equal snapshots see the same committed data. It is read before the value is computed, so a value kept under a
 * version was computed from data at least as new as the version, and any commit anywhere moves every daemon to a new
 * one: exact across daemons. Reading it is a statement of its own, so on PostgreSQL only the caches whose hit saves
 * several statements use it (`postgres: true`: the response cache); the others compute every time there.
 */
import type { AppContext } from '../context.js';
import type { SqliteConnectionState } from './layer/types.js';

/** How often data_version (another connection's commits) is read again; this connection's writes show at once. */
const OTHER_CONNECTIONS_MS = 100;
const external = new WeakMap<SqliteConnectionState, { at: number; d: number; day: string }>();

/** The UTC day, part of every version (memberships and tokens expire by the day). */
const utcDay = () => new Date().toISOString().slice(0, 10);

/**
 * The write version on either engine: writeVersion on SQLite; on PostgreSQL the current snapshot (`xmin:xmax:xip`) and
 * the UTC day, one statement. Read it BEFORE reading what is kept under it.
 */
export async function writeVersionAsync(ctx: Pick<AppContext, 'data'>): Promise<string> {
  if (ctx.data.sqlite) return writeVersion(ctx.data.sqlite);
  const day = utcDay();
  const row = await ctx.data.get<{ v: string }>('SELECT pg_current_snapshot()::text AS v');
  return `${row!.v}:${day}`;
}

/**
 * The current write version of a SQLite connection: changes with every write of this connection (the layer's count of
 * writing statements, a JS number read on every call), with another connection's commits (data_version: read at most
 * every 100 ms, so a process that writes behind the daemon's back is seen within 0.1 s) and with the UTC date. Every
 * request reads it once or twice (the token and the answer caches), so it reads no native state on the way: a
 * total_changes() statement and the connection's inTransaction getter, twice a request, cost 7-15 µs of a kept project
 * list page's 110-120 (30 alternated rounds, 2026-11-28).
 */
function writeVersion(conn: SqliteConnectionState): string {
  const n = conn.writes();
  const now = Date.now();
  let e = external.get(conn);
  if (!e || now - e.at >= OTHER_CONNECTIONS_MS) {
    e = { at: now, d: conn.dataVersion(), day: new Date(now).toISOString().slice(0, 10) };
    external.set(conn, e);
  }
  return `${n}:${e.d}:${e.day}`;
}

const requestVersions = new WeakMap<object, Promise<string>>();

/**
 * The write version for one request (`holder`: the request), read once however many caches the request consults, on
 * either engine: on PostgreSQL one statement for the whole request instead of one per cache. Everything kept under it
 * must be computed after it was read (so read it before the request's first lookup); on SQLite the version is cheap
 * and each cache reads its own (getAsync ignores `version` there).
 */
export function requestVersion(ctx: Pick<AppContext, 'data'>, holder: object): Promise<string> {
  let v = requestVersions.get(holder);
  if (!v) requestVersions.set(holder, (v = writeVersionAsync(ctx)));
  return v;
}

/** How a cache is bounded: `postgres` also caches there (see the constructor); `weigh` with `maxBytes` bounds it by size. */
export interface CacheOptions<T> {
  /** Also cache on PostgreSQL, paying a statement per use for the version (worth it when a hit saves several). */
  postgres?: boolean;
  /** The bytes a value holds (a kept answer: its body); with `maxBytes`, the entries of a version stay within that sum. */
  weigh?: (value: T) => number;
  maxBytes?: number;
}

interface Entries<T> {
  version: string;
  /** In order of last use (a hit moves its key to the end): the first is evicted first. */
  values: Map<string, T>;
  bytes: number;
  /** The key used last (already at the end of `values`: a hit on it again moves nothing). */
  last?: string;
}

/**
 * A cache of values that are exact until the next write, bounded: at most `maxEntries` values per connection (per
 * database layer on PostgreSQL) and, when the options weigh them, at most `maxBytes` in all; the least recently used
 * goes first. Only the current version's values are held (a new version drops the old ones at its first use).
 */
export class UntilNextWrite<T> {
  private readonly byClient = new WeakMap<object, Entries<T>>();

  constructor(private readonly maxEntries: number, private readonly options: CacheOptions<T> = {}) {}

  /**
   * The value kept for `key` if it is still current, without computing anything (undefined otherwise, and always on
   * PostgreSQL or inside a transaction): lets a hot path answer a cache hit synchronously, without a promise.
   */
  peek(ctx: Pick<AppContext, 'data'>, key: string): T | undefined {
    const conn = ctx.data.sqlite;
    if (!conn || conn.inTransaction()) return undefined;
    const entry = this.byClient.get(conn);
    return entry && entry.version === writeVersion(conn) ? this.used(entry, key) : undefined;
  }

  /**
   * The cached value for `key`, or `compute()`: on SQLite kept until the next write (the version is read in the same
   * synchronous stretch as `compute`'s first statement, so a kept value is at least as new as its version); on
   * PostgreSQL, for a cache made with `postgres: true`, the snapshot version read by a statement before `compute`, and
   * for the others no cache (`compute()` every time).
   * `inSnapshot`: the caller runs inside `ctx.data.snapshot` (reads only): on SQLite nothing can write on the connection
   * while it lasts, so the cache stays usable there; inside a write transaction nothing is cached (what it reads
   * may yet be rolled back). On PostgreSQL nothing is cached inside a snapshot (its reads are as of its start, older
   * than a version read now).
   * `version` (PostgreSQL): the write version this request already read (requestVersion), instead of a statement
   * of its own; `compute` runs after it was read, so what it reads is at least as new as the version.
   */
  async getAsync(ctx: Pick<AppContext, 'data'>, key: string, compute: () => Promise<T>, inSnapshot = false, version?: string): Promise<T> {
    const conn = ctx.data.sqlite;
    if (!conn) {
      // (a snapshot's reads run on their own connection from its start: a version read now could be newer than them)
      if (!this.options.postgres || inSnapshot) return compute();
      return this.keep(ctx.data, version ?? (await writeVersionAsync(ctx)), key, compute);
    }
    if (conn.inTransaction() && !inSnapshot) return compute();
    return this.keep(conn, writeVersion(conn), key, compute);
  }

  /** The value kept for `key` under `version` (read before), or compute() kept under it. */
  private async keep(owner: object, version: string, key: string, compute: () => Promise<T>): Promise<T> {
    let entry = this.byClient.get(owner);
    if (!entry || entry.version !== version) this.byClient.set(owner, (entry = { version, values: new Map(), bytes: 0 }));
    const cached = this.used(entry, key);
    if (cached !== undefined) return cached;
    const value = await compute();
    // (kept in the entry of its own version, even if a newer one replaced it meanwhile: then it is simply not found)
    this.add(entry, key, value);
    return value;
  }

  /** The value of `key` in `entry`, marked as the most recently used. */
  private used(entry: Entries<T>, key: string): T | undefined {
    const value = entry.values.get(key);
    if (value !== undefined && entry.values.size > 1 && key !== entry.last) {
      entry.values.delete(key);
      entry.values.set(key, value);
      entry.last = key;
    }
    return value;
  }

  /** Keep `value` under `key`, evicting the least recently used until the bounds hold (a value above maxBytes alone is not kept). */
  private add(entry: Entries<T>, key: string, value: T): void {
    const { weigh, maxBytes = Infinity } = this.options;
    const size = weigh ? weigh(value) : 0;
    if (size > maxBytes || entry.values.has(key)) return;
    for (const [oldest, old] of entry.values) {
      if (entry.values.size < this.maxEntries && entry.bytes + size <= maxBytes) break;
      entry.values.delete(oldest);
      if (weigh) entry.bytes -= weigh(old);
    }
    entry.values.set(key, value);
    entry.last = key;
    entry.bytes += size;
  }
}
