/** Test fixtures: a real app (real SQLite in a temp data dir, or a fresh PostgreSQL database when
 * GANTRY_TEST_DATABASE_URL is set) driven through app.inject, and builders for users, groups, projects and members. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../daemon/app.js';
import { resolveConfig, type DaemonFlags } from '../../daemon/config.js';
import { DaemonState, dataPaths, type AppContext } from '../../daemon/context.js';
import type BetterSqlite3 from 'better-sqlite3';
import { openDataLayer } from '../../daemon/db/layer/open.js';
import { bootstrap, loadSecrets, prepareDataDir } from '../../daemon/bootstrap.js';
import { createTestDatabase, TEST_DATABASE_URL } from './postgres.js';
import { setPasswordHashCostForTests } from '../../daemon/secrets.js';

// Passwords hashed at scrypt N = 1024 instead of 16384 (about 2.5 ms of CPU instead of 40 per hash or sign-in):
// creating users and signing in took about a sixth of the CPU of eight API and page test files measured. Each such hash records its N, so gantryd
// processes of the same test still verify it; test/unit/secrets.test.ts checks the full cost.
setPasswordHashCostForTests(1024);

/**
 * Whether the tests run on PostgreSQL (GANTRY_TEST_DATABASE_URL is set: every startTestServer gets a fresh database
 * there). For the few assertions that only hold on SQLite; use sparingly.
 */
export const onPostgres = TEST_DATABASE_URL !== undefined;

export const ROOT_PASSWORD = 'rootpassword123';

export interface TestUser {
  id: number;
  username: string;
  token: string;
}

/** A test server: app + context + the root user's token, and helpers to call the API. */
export interface TestServer {
  app: FastifyInstance;
  ctx: AppContext;
  root: TestUser;
  dataDir: string;
  /**
   * SQLite only: the raw connection under ctx.data, for what exists only there (EXPLAIN QUERY PLAN, PRAGMAs). Read
   * and write the database through ctx.data (either engine) everywhere else.
   */
  sqlite?: BetterSqlite3.Database;
  /** Call /api/v3<path> as `as` (a token, a user, or null for anonymous). */
  api(method: InjectOptions['method'], path: string, as: TestUser | string | null, payload?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  /** Create a user (as root) and return it with its private token. */
  user(username: string, extra?: Record<string, unknown>): Promise<TestUser>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

/**
 * Start a fresh app on a new temporary data dir; `flags` as gantryd's (e.g. `{ maxBodySize: '64k' }`). With
 * GANTRY_TEST_DATABASE_URL set, the database is a new one on that PostgreSQL server (dropped by close()), opened and
 * migrated as gantryd does with --database-url.
 */
export async function startTestServer(flags: DaemonFlags = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gantry-test-'));
  const pg = TEST_DATABASE_URL && !flags.databaseUrl ? await createTestDatabase(TEST_DATABASE_URL, { migrated: true }) : null;
  const databaseUrl = flags.databaseUrl ?? pg?.url;
  // Runner requests without X-Gantry-Long-Poll answer at once unless a test asks for holds (runnerLongPoll).
  const config = resolveConfig({ runnerLongPoll: '0', ...flags, dataDir, rootPassword: ROOT_PASSWORD, logLevel: 'silent', port: '0', databaseUrl }, {});
  const paths = dataPaths(dataDir);
  prepareDataDir(paths);
  const database = await openDataLayer(config);
  // A throwaway database, as the PostgreSQL test server's (fsync=off, scripts/postgres-test-server): no fsync per commit
  // (every transaction is still atomic; the daemon's own connection keeps synchronous = FULL, test/unit/data-layer.test.ts)
  database.sqlite?.pragma('synchronous = OFF');
  const ctx: AppContext = {
    data: database.data,
    config,
    secrets: loadSecrets(dataDir),
    paths,
    externalUrl: () => 'http://gantry.test',
    state: new DaemonState(),
  };
  await bootstrap(ctx);
  const app = await buildApp(ctx);
  await app.ready();

  const api: TestServer['api'] = async (method, path, as, payload, headers = {}) => {
    const token = typeof as === 'string' ? as : as?.token;
    const res = await app.inject({
      method,
      url: `/api/v3${path}`,
      headers: { ...(token ? { 'private-token': token } : {}), ...headers },
      ...(payload !== undefined ? { payload: payload as InjectOptions['payload'] } : {}),
    });
    let body: unknown = res.body;
    try {
      body = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.statusCode, body, headers: res.headers as ApiResponse['headers'], text: res.body };
  };

  const login = await api('POST', '/session', null, { login: 'root', password: ROOT_PASSWORD });
  const root: TestUser = { id: login.body.id, username: 'root', token: login.body.private_token };

  const user: TestServer['user'] = async (username, extra = {}) => {
    const created = await api('POST', '/users', root, {
      username, email: `${username}@example.com`, name: username, password: 'password123', ...extra,
    });
    if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${created.text}`);
    const session = await api('POST', '/session', null, { login: username, password: 'password123' });
    return { id: created.body.id, username, token: session.body.private_token };
  };

  return {
    app, ctx, root, dataDir, api, user, sqlite: database.sqlite,
    close: async () => {
      await app.close();
      await database.close();
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
