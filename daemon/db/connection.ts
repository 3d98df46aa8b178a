/** Opens the SQLite database (WAL, foreign keys, full sync) and applies the migrations in migrations/. */
import Database from 'better-sqlite3';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { daemonAsset } from '../assets.js';
import { sqliteTransactionSeconds } from '../metrics.js';

const MIGRATIONS_DIR = daemonAsset('db/migrations');

/** A database that cannot be used by this version of the code (for example a newer schema). */
export class SchemaError extends Error {}

interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Migrations shipped with this code, ordered by their numeric prefix. */
export function knownMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 4)), name: f, sql: readFileSync(join(MIGRATIONS_DIR, f), 'utf8') }));
}

/** Open (creating if needed) the database file and bring its schema up to date. */
export function openDatabase(file: string): Database.Database {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  // FULL: every commit is fsynced before the 2xx goes out, so acknowledged writes survive a crash.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // SQLite's own page cache, on top of the OS's page cache of the same file. better-sqlite3 builds SQLite with a
  // 16 MiB default, which a daemon's resident memory then grows into as its database grows past 16 MiB (the soak's
  // RSS curve: +14 MB over its first 24 minutes, then flat). 4 MiB holds the hot pages of the lookups; the rest of a
  // scan is read from the OS's cache.
  sqlite.pragma('cache_size = -4096');
  migrate(sqlite);
  timeTransactions(sqlite);
  return sqlite;
}

function migrate(sqlite: Database.Database): void {
  const migrations = knownMigrations();
  const latest = migrations.at(-1)?.version ?? 0;
  const current = sqlite.pragma('user_version', { simple: true }) as number;
  if (current > latest) {
    throw new SchemaError(
      `the database schema (version ${current}) is newer than this gantryd knows (version ${latest}); ` +
        'upgrade gantry, or point --data-dir at a data directory made by this version',
    );
  }
  // Applied migrations are recorded one by one, so a migration merged later with a lower number still runs;
  // user_version keeps the highest applied number for the "newer schema" check above.
  sqlite.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((sqlite.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  for (const m of migrations) {
    if (applied.has(m.version)) continue;
    sqlite.transaction(() => {
      sqlite.exec(m.sql);
      sqlite.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
      sqlite.pragma(`user_version = ${Math.max(m.version, sqlite.pragma('user_version', { simple: true }) as number)}`);
    })();
  }
}

type TransactionFn = ((...args: unknown[]) => unknown) & Record<'default' | 'deferred' | 'immediate' | 'exclusive', (...args: unknown[]) => unknown>;

/** Time every outermost transaction of better-sqlite3's own (the migrations) into gantry_sqlite_transaction_duration_seconds. */
function timeTransactions(sqlite: Database.Database): void {
  const make = sqlite.transaction.bind(sqlite);
  const timed = (run: (...args: unknown[]) => unknown) =>
    function (this: unknown, ...args: unknown[]) {
      if (sqlite.inTransaction) return run.apply(this, args);
      const started = performance.now();
      try {
        return run.apply(this, args);
      } finally {
        sqliteTransactionSeconds.observe((performance.now() - started) / 1000);
      }
    };
  sqlite.transaction = ((fn: (...args: unknown[]) => unknown) => {
    const tx = make(fn) as unknown as TransactionFn;
    const wrapped = timed(tx) as TransactionFn;
    for (const k of ['default', 'deferred', 'immediate', 'exclusive'] as const) wrapped[k] = timed(tx[k]);
    return wrapped;
  }) as unknown as typeof sqlite.transaction;
}
