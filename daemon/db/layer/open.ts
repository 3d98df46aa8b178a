/**
 * Opening the daemon's database on either engine, for startDaemon and the tests: SQLite in the data directory (the
 * default), or PostgreSQL when `--database-url` / GANTRY_DATABASE_URL is set. Secrets and storage stay in the data
 * directory on both.
 */
import { join } from 'node:path';
import type { DaemonConfig } from '../../config.js';
import { ConfigError } from '../../config.js';
import { openDatabase, type Db } from '../connection.js';
import { sqliteDatabase } from './sqlite.js';
import type { Database } from './types.js';

export interface OpenedDatabase {
  /** The synchronous SQLite handle; on PostgreSQL a stand-in that throws on any use (see unavailableDb). */
  db: Db;
  data: Database;
  close(): Promise<void>;
}

/** The message of ctx.db on PostgreSQL. */
export const DB_UNAVAILABLE = 'ctx.db is not available on PostgreSQL: this room is not ported yet';

/**
 * `ctx.db` on PostgreSQL: any use throws, so code of a room not yet ported fails loudly instead of reaching a SQLite
 * file. (`then` and symbols read as undefined, so awaiting or printing a context does not throw.)
 */
export function unavailableDb(): Db {
  return new Proxy({} as Db, {
    get(_target, key) {
      if (typeof key === 'symbol' || key === 'then') return undefined;
      throw new Error(DB_UNAVAILABLE);
    },
    set() {
      throw new Error(DB_UNAVAILABLE);
    },
    has() {
      throw new Error(DB_UNAVAILABLE);
    },
  });
}

/** Why a connection failed, in a few words (pg's AggregateError of a refused connection has no message of its own). */
function reason(e: unknown): string {
  const err = e as NodeJS.ErrnoException & { errors?: unknown[] };
  if (err?.message) return err.message;
  const first = err?.errors?.[0] as Error | undefined;
  return first?.message || err?.code || String(e);
}

/** Open and migrate the database of a configuration. */
export async function openDataLayer(config: DaemonConfig): Promise<OpenedDatabase> {
  if (!config.databaseUrl) {
    const db = openDatabase(join(config.dataDir, 'gantry.db'));
    return { db, data: sqliteDatabase(db.$client), close: async () => void db.$client.close() };
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
    throw new ConfigError(`cannot connect to PostgreSQL at ${describePostgresUrl(url)}: ${reason(e)}; check --database-url`);
  }
  try {
    const { migratePostgres } = await import('../migrate-postgres.js');
    await migratePostgres(data);
  } catch (e) {
    await data.close().catch(() => undefined);
    throw e;
  }
  return { db: unavailableDb(), data, close: () => data.close() };
}
