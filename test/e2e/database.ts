/**
 * The test database of the end-to-end tests: gantryd's `--data-dir` with `--database-url` of a fresh database on the
 * PostgreSQL pass (GANTRY_TEST_DATABASE_URL set), and two daemons on one database. Kept apart from helpers.ts so that a
 * test importing only helpers.ts provably runs the same code on both passes (scripts/engine-files.mjs).
 */
import { cleanEnv, cleanupTmp, killAll, startGantryd, tmp, type Daemon, type Exit } from './helpers.js';

/** Two gantryd on one fresh PostgreSQL database and one data dir, as the two-daemon tests run them. */
export interface DaemonPair {
  a: Daemon;
  b: Daemon;
  dataDir: string;
  databaseUrl: string;
  /** SIGTERM both (each must exit 0), then drop the database and the temporary folders. */
  stop(): Promise<Exit[]>;
}

/**
 * Start two gantryd at once on an empty PostgreSQL database of the test server and one new data dir (both migrate
 * and bootstrap at the same moment: one wins, both end up with the same schema, secret, root user and SSH host key).
 * `args`: more flags for both (e.g. `['--ssh-port', '0']`; SSH is off unless given); `env`: more environment for both
 * (e.g. GANTRY_HOOK_RETRY_BASE_MS).
 */
export async function startDaemonPair(serverUrl: string, password: string, args: string[] = [], prefix = 'gantry-two-', env: Record<string, string> = {}): Promise<DaemonPair> {
  const { createTestDatabase } = await import('../helpers/postgres.js');
  const db = await createTestDatabase(serverUrl); // empty: the daemons migrate it
  const dataDir = tmp(prefix);
  const all = ['--port', '0', '--data-dir', dataDir, '--root-password', password, '--database-url', db.url, ...(args.includes('--ssh-port') ? [] : ['--ssh-port', 'off']), ...args];
  let a: Daemon | undefined;
  let b: Daemon | undefined;
  try {
    [a, b] = await Promise.all([startGantryd(all, cleanEnv(env), 60_000), startGantryd(all, cleanEnv(env), 60_000)]);
  } catch (e) {
    killAll();
    await db.drop();
    throw e;
  }
  const [da, db2] = [a, b];
  return {
    a: da, b: db2, dataDir, databaseUrl: db.url,
    stop: async () => {
      const exits = [await da.stop('SIGTERM'), await db2.stop('SIGTERM')];
      killAll();
      await db.drop();
      cleanupTmp();
      return exits;
    },
  };
}

/** The databases dataDirArgs made, by data dir (GANTRY_TEST_DATABASE_URL set), for dropDatabases. */
const dirDatabases = new Map<string, Promise<{ url: string; drop: () => Promise<void> }>>();

/**
 * The database of a data dir on the engine of the test pass: none on SQLite (the file in the data dir); on the
 * PostgreSQL pass (GANTRY_TEST_DATABASE_URL set) an empty database of its own, the same one each time for the same
 * dir, so a daemon restarted on a data dir finds its data as it would in SQLite's file. dropDatabases() removes them.
 */
export async function databaseUrlOf(dir: string): Promise<string | undefined> {
  const server = process.env.GANTRY_TEST_DATABASE_URL;
  if (!server) return undefined;
  if (!dirDatabases.has(dir)) {
    const { createTestDatabase } = await import('../helpers/postgres.js');
    const made = createTestDatabase(server);
    made.catch(() => dirDatabases.delete(dir));
    dirDatabases.set(dir, made);
  }
  return (await dirDatabases.get(dir)!).url;
}

/** gantryd's `--data-dir` flag for `dir`, with `--database-url` of databaseUrlOf(dir) on the PostgreSQL pass. */
export async function dataDirArgs(dir: string): Promise<string[]> {
  const url = await databaseUrlOf(dir);
  return ['--data-dir', dir, ...(url ? ['--database-url', url] : [])];
}

/** Drop every database dataDirArgs made (afterAll, once the daemons stopped; nothing on SQLite). */
export async function dropDatabases(): Promise<void> {
  const made = [...dirDatabases.values()];
  dirDatabases.clear();
  for (const db of made) await (await db.catch(() => null))?.drop();
}
