/** Fresh PostgreSQL databases for tests, on the server of GANTRY_TEST_DATABASE_URL (scripts/postgres-test-server). */
import { randomBytes } from 'node:crypto';

/** The PostgreSQL server the tests run on, or undefined (then the PostgreSQL tests are skipped). */
export const TEST_DATABASE_URL = process.env.GANTRY_TEST_DATABASE_URL || undefined;

type PgModule = typeof import('pg');
const loadPg = async () => {
  const m = await import('pg');
  return ((m as unknown as { default?: PgModule }).default ?? m) as PgModule;
};

/** Run statements on the server's maintenance database through a short-lived client. */
async function admin(serverUrl: string, statements: string[]): Promise<void> {
  const pg = await loadPg();
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
}

/** The URL of another database on the same server. */
export function databaseUrl(serverUrl: string, name: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Create an empty database `gantry_t_<random>` on the server of `serverUrl`; `drop()` removes it (ending any
 * connection still open on it).
 */
export async function createTestDatabase(serverUrl: string): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `gantry_t_${randomBytes(6).toString('hex')}`;
  await admin(serverUrl, [`CREATE DATABASE ${name}`]);
  return {
    name,
    url: databaseUrl(serverUrl, name),
    drop: () => admin(serverUrl, [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]),
  };
}
