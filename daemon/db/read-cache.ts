/**
 * Read results cached until the next database write. SQLite's total_changes() moves with every row written on this
 * connection and data_version with every commit of another connection; the UTC date is part of the version because
 * membership and token expiry depend on it. Inside a transaction nothing is cached (a rollback could bring the
 * counter back to a remembered value).
 */
import type Database from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { statement } from './statements.js';

/** The current write version of the context's database (changes on every committed write). */
export function writeVersion(ctx: Pick<AppContext, 'db'>): string {
  const v = statement(ctx, 'SELECT total_changes() AS n, (SELECT data_version FROM pragma_data_version) AS d').get() as { n: number; d: number };
  return `${v.n}:${v.d}:${new Date().toISOString().slice(0, 10)}`;
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
}
