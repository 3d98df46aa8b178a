/**
 * The schema migrations of a PostgreSQL database (docs/design/postgres.md, "Migrations from one source"): the files of
 * migrations-postgres/ (NNNN_name.sql, starting with the 0025 baseline), each applied once in its own transaction and
 * recorded in schema_migrations, as db/connection.ts does for SQLite. Every migration after the baseline has a SQLite
 * file and a PostgreSQL file with the same number; test/unit/postgres-schema.test.ts checks the two schemas agree.
 *
 * Several daemons may start at once on one database: every migration transaction first takes a transaction-scoped
 * advisory lock (one constant key), then re-reads schema_migrations, so a migration another daemon applied while this
 * one waited is skipped, never applied twice.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { daemonAsset } from '../assets.js';
import { SchemaError } from './connection.js';
import type { Database, Queries } from './layer/types.js';

const MIGRATIONS_DIR = daemonAsset('db/migrations-postgres');

/** pg_advisory_xact_lock key of schema migrations ('gantry' 'schema', as two ASCII halves). */
const MIGRATION_LOCK_KEY = 0x67616e74_7363686dn;

export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
}

/** PostgreSQL migrations shipped with this code, ordered by their numeric prefix. */
export function knownPostgresMigrations(dir: string = MIGRATIONS_DIR): PostgresMigration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 4)), name: f, sql: readFileSync(join(dir, f), 'utf8') }));
}

const CREATE_TABLE = 'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)';

/** Take the migration lock for the rest of the transaction; make sure schema_migrations exists; return what is applied. */
async function lockAndRead(tx: Queries): Promise<Set<number>> {
  await tx.get('SELECT pg_advisory_xact_lock(?::bigint) AS locked', [MIGRATION_LOCK_KEY.toString()]);
  await tx.run(CREATE_TABLE);
  const rows = await tx.all<{ version: number }>('SELECT version FROM schema_migrations');
  return new Set(rows.map((r) => r.version));
}

function newerSchema(applied: Set<number>, latest: number): SchemaError | null {
  const current = Math.max(0, ...applied);
  if (current <= latest) return null;
  return new SchemaError(
    `the database schema (version ${current}) is newer than this gantryd knows (version ${latest}); ` +
      'upgrade gantry, or point --database-url at a database made by this version',
  );
}

/** A database with no migration applied must hold no tables but schema_migrations: never build Gantry's over others. */
async function refuseForeignTables(tx: Queries): Promise<void> {
  const other = await tx.all<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_name <> 'schema_migrations' ORDER BY 1 LIMIT 3`,
  );
  if (other.length) {
    throw new SchemaError(
      `the database has tables (${other.map((t) => t.name).join(', ')}${other.length === 3 ? ', ...' : ''}) but no Gantry schema; ` +
        'point --database-url at an empty database, or at one made by gantryd',
    );
  }
}

/**
 * Bring a PostgreSQL database's schema up to date (an empty database gets the whole schema). Throws SchemaError when
 * the database has a migration newer than the newest this code knows.
 */
export async function migratePostgres(data: Database, migrations: PostgresMigration[] = knownPostgresMigrations()): Promise<void> {
  const latest = migrations.at(-1)?.version ?? 0;
  // One short transaction to check the version (and create schema_migrations on an empty database) under the lock.
  const applied = await data.transaction(async (tx) => {
    const done = await lockAndRead(tx);
    const refused = newerSchema(done, latest);
    if (refused) throw refused;
    return done;
  });
  for (const m of migrations) {
    if (applied.has(m.version)) continue;
    await data.transaction(async (tx) => {
      if (!tx.exec) throw new Error('the data layer cannot run a migration file (no exec on this engine)');
      // Re-read under the lock: another daemon may have applied it (or a newer one) while this one waited.
      const now = await lockAndRead(tx);
      const refused = newerSchema(now, latest);
      if (refused) throw refused;
      if (now.has(m.version)) return;
      if (now.size === 0) await refuseForeignTables(tx);
      await tx.exec(m.sql);
      await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, new Date().toISOString()]);
    });
  }
}
