/**
 * Opening the daemon's database on either engine, for startDaemon and the tests: SQLite in the data directory (the
 * default), or PostgreSQL when `--database-url` / GANTRY_DATABASE_URL is set. Secrets and storage stay in the data
 * directory on both.
 */
import { join } from 'node:path';
import type { DaemonConfig } from '../../config.js';
import { ConfigError } from '../../config.js';
import type BetterSqlite3 from 'better-sqlite3';
import { openDatabase } from '../connection.js';
import { errorReason } from './errors.js';
import { sqliteDatabase } from './sqlite.js';
import type { Database } from './types.js';

export interface OpenedDatabase {
  data: Database;
  /**
   * SQLite only: the raw connection under `data`, for the few checks that only exist on SQLite (EXPLAIN QUERY PLAN in
   * tests); the code reaches the database through `data` alone.
   */
  sqlite?: BetterSqlite3.Database;
  close(): Promise<void>;
}

/** Open and migrate the database of a configuration. */
export async function openDataLayer(config: DaemonConfig): Promise<OpenedDatabase> {
  if (!config.databaseUrl) {
    const sqlite = openDatabase(join(config.dataDir, 'gantry.db'));
    return { sqlite, data: sqliteDatabase(sqlite), close: async () => void sqlite.close() };
  }
  return openPostgres(config.databaseUrl);
}

/** Open a PostgreSQL database and bring its schema up to date; a ConfigError when it cannot be reached. */
export async function openPostgres(url: string): Promise<OpenedDatabase> {
  // Loaded only here: a SQLite daemon never loads pg (start-up time and RSS).
  const { postgresDatabase, describePostgresUrl } = await import('./postgres.js');
  let data: Database;
  try {
    data = await postgresDatabase(url);
  } catch (e) {
    throw new ConfigError(`cannot connect to PostgreSQL at ${describePostgresUrl(url)}: ${errorReason(e)}; check --database-url`);
  }
  try {
    const { migratePostgres } = await import('../migrate-postgres.js');
    await migratePostgres(data);
  } catch (e) {
    await data.close().catch(() => undefined);
    throw e;
  }
  return { data, close: () => data.close() };
}
