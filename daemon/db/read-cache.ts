/**
 * Read results cached until the next database write. SQLite's total_changes() moves with every row written on this
 * connection and data_version with every commit of another connection; the UTC date is part of the version because
 * membership and token expiry depend on it. Inside a transaction nothing is cached (a rollback could bring the
 * counter back to a remembered value).
 */
import type Database from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { statement } from './statements.js';

/** How often data_version (another connection's commits) is read again; this connection's writes show at once. */
const OTHER_CONNECTIONS_MS = 100;
const external = new WeakMap<Database.Database, { at: number; d: number; day: string }>();

/**
 * The current write version of the context's database: changes with every write of this connection (total_changes(),
 * read on every call), with another connection's commits (data_version: read at most every 100 ms, so a process that
 * writes behind the daemon's back is seen within 0.1 s) and with the UTC date.
 */
export function writeVersion(ctx: Pick<AppContext, 'db'>): string {
  const client = ctx.db.$client;
  const n = statement(ctx, 'SELECT total_changes()').pluck().get() as number;
  const now = Date.now();
  let e = external.get(client);
  if (!e || now - e.at >= OTHER_CONNECTIONS_MS) {
    e = { at: now, d: statement(ctx, 'PRAGMA data_version').pluck().get() as number, day: new Date(now).toISOString().slice(0, 10) };
    external.set(client, e);
  }
  return `${n}:${e.d}:${e.day}`;
}

/** A cache of values that are exact until the next write; at most `maxEntries` per connection. */
export class UntilNextWrite<T> {
  private readonly byClient = new WeakMap<Database.Database, { version: string; values: Map<string, T> }>();

  constructor(private readonly maxEntries: number) {}

  /** The cached value for `key`, or `compute()` (cached when outside a transaction). */
  get(ctx: Pick<AppContext, 'db'>, key: string, compute: () => T): T {
    const client = ctx.db.$client;
    if (client.inTransaction) return compute();
    const version = writeVersion(ctx);
    let entry = this.byClient.get(client);
    if (!entry || entry.version !== version) this.byClient.set(client, (entry = { version, values: new Map() }));
    let value = entry.values.get(key);
    if (value === undefined) {
      value = compute();
      if (entry.values.size >= this.maxEntries) entry.values.delete(entry.values.keys().next().value as string);
      entry.values.set(key, value);
    }
    return value;
  }

  /**
   * The value kept for `key` if it is still current, without computing anything (undefined otherwise, and always on
   * PostgreSQL or inside a transaction): lets a hot path answer a cache hit synchronously, without a promise.
   */
  peek(ctx: Pick<AppContext, 'db' | 'data'>, key: string): T | undefined {
    if (ctx.data.dialect.name !== 'sqlite') return undefined;
    const client = ctx.db.$client;
    if (client.inTransaction) return undefined;
    const entry = this.byClient.get(client);
    return entry && entry.version === writeVersion(ctx) ? entry.values.get(key) : undefined;
  }

  /**
   * The async twin of `get` for code on the data layer: on SQLite the same cache (the version is read in the same
   * synchronous stretch as `compute`'s first statement, so a kept value is at least as new as its version); on
   * PostgreSQL no cache (`compute()` every time: the version would be a query, see docs/design/postgres.md "Caches").
   * `inSnapshot`: the caller runs inside `ctx.data.snapshot` (reads only): on SQLite nothing can write on the connection
   * while it lasts, so the cache stays usable there; inside a write transaction nothing is cached, as in `get`.
   */
  async getAsync(ctx: Pick<AppContext, 'db' | 'data'>, key: string, compute: () => Promise<T>, inSnapshot = false): Promise<T> {
    if (ctx.data.dialect.name !== 'sqlite') return compute();
    const client = ctx.db.$client;
    if (client.inTransaction && !inSnapshot) return compute();
    const version = writeVersion(ctx);
    let entry = this.byClient.get(client);
    if (!entry || entry.version !== version) this.byClient.set(client, (entry = { version, values: new Map() }));
    const cached = entry.values.get(key);
    if (cached !== undefined) return cached;
    const value = await compute();
    if (entry.values.size >= this.maxEntries) entry.values.delete(entry.values.keys().next().value as string);
    entry.values.set(key, value);
    return value;
  }
}
