/**
 * migrateDb() in-process (daemon/db/migrate-db.ts), on the cases real use rarely makes: SQLite timestamps without a
 * zone (read as UTC), a row that references a LATER row of its own table, ids of deleted rows never handed out again
 * (SQLite's AUTOINCREMENT high-water mark), counts that disagree with a recount (refused, nothing written), and the
 * foreign-key order itself. The PostgreSQL cases run when GANTRY_TEST_DATABASE_URL is set.
 */
import BetterSqlite from 'better-sqlite3';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap, loadSecrets, prepareDataDir } from '../../daemon/bootstrap.js';
import { buildApp } from '../../daemon/app.js';
import { resolveConfig } from '../../daemon/config.js';
import { DaemonState, dataPaths, type AppContext } from '../../daemon/context.js';
import { openDataLayer } from '../../daemon/db/layer/open.js';
import { postgresDatabase } from '../../daemon/db/layer/postgres.js';
import { foreignKeyOrder, migrateDb, MigrateDbError } from '../../daemon/db/migrate-db.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';

describe('foreignKeyOrder', () => {
  const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges).map(([name, refs]) => [name, { name, references: new Set(refs) }]));

  it('puts a table after every table it references, ties by name', () => {
    expect(foreignKeyOrder(graph({ issues: ['projects', 'users'], projects: ['namespaces', 'users'], namespaces: ['users'], users: [], labels: ['projects'] })))
      .toEqual(['users', 'namespaces', 'projects', 'issues', 'labels']);
  });

  it('refuses a cycle it cannot order', () => {
    expect(() => foreignKeyOrder(graph({ a: ['b'], b: ['a'], c: [] }))).toThrow(MigrateDbError);
    expect(() => foreignKeyOrder(graph({ a: ['b'], b: ['a'], c: [] }))).toThrow('the tables a, b reference each other in a cycle');
  });
});

describe.skipIf(!TEST_DATABASE_URL)('migrateDb on PostgreSQL', () => {
  let dir: string;
  const drops: (() => Promise<void>)[] = [];
  const ids: { first?: number; second?: number; project?: number } = {};

  beforeAll(async () => {
    // A SQLite installation made by the daemon's own code, then edited by hand where the API cannot reach.
    dir = mkdtempSync(join(tmpdir(), 'gantry-migrate-unit-'));
    const config = resolveConfig({ dataDir: dir, rootPassword: 'rootpassword123', logLevel: 'silent', port: '0' }, {});
    const paths = dataPaths(dir);
    prepareDataDir(paths);
    const database = await openDataLayer(config);
    const ctx: AppContext = { data: database.data, config, secrets: loadSecrets(dir), paths, externalUrl: () => 'http://gantry.test', state: new DaemonState() };
    await bootstrap(ctx);
    const app = await buildApp(ctx);
    await app.ready();
    const token = JSON.parse((await app.inject({ method: 'POST', url: '/api/v3/session', payload: { login: 'root', password: 'rootpassword123' } })).body).private_token;
    const call = async (method: 'POST' | 'DELETE', url: string, payload?: object) => {
      const r = await app.inject({ method, url: `/api/v3${url}`, headers: { 'private-token': token }, ...(payload ? { payload } : {}) });
      expect(r.statusCode, r.body).toBeLessThan(300);
      return JSON.parse(r.body);
    };
    ids.project = (await call('POST', '/projects', { name: 'kept' })).id;
    const gone = (await call('POST', '/projects', { name: 'gone' })).id;
    await call('DELETE', `/projects/${gone}`);
    ids.first = (await call('POST', `/projects/${ids.project}/issues`, { title: 'first', confidential: true })).id;
    ids.second = (await call('POST', `/projects/${ids.project}/issues`, { title: 'second' })).id;
    await app.close();
    const sqlite = database.sqlite!;
    sqlite.prepare("UPDATE users SET created_at = '2026-01-02 03:04:05' WHERE username = 'root'").run();
    sqlite.prepare('UPDATE issues SET moved_to_id = ? WHERE id = ?').run(ids.second, ids.first);
    await database.close();
  }, 60_000);

  afterAll(async () => {
    for (const drop of drops) await drop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  const target = async () => {
    const db = await createTestDatabase(TEST_DATABASE_URL!);
    drops.push(db.drop);
    return db;
  };

  it('copies what SQLite holds as PostgreSQL must read it', async () => {
    const db = await target();
    const progress: string[] = [];
    const result = await migrateDb({ dataDir: dir, to: db.url, progress: (line) => progress.push(line), batchRows: 1 });
    expect(result.tables.find((t) => t.table === 'issues')).toMatchObject({ rows: 2 });
    expect(result.rows).toBe(result.tables.reduce((n, t) => n + t.rows, 0));
    expect(progress.at(-2)).toMatch(/^ {2}[\d,]+ rows in \d+ tables match \(row counts and checksums\) {2}\d+\.\d\d s$/);
    expect(progress.at(-1)).toMatch(/^ {2}analyzed and committed {2}\d+\.\d\d s$/);
    const pg = await postgresDatabase(db.url, { max: 1 });
    try {
      // A time without a zone is UTC, as the daemon meant it.
      expect(await pg.get("SELECT created_at FROM users WHERE username = 'root'")).toEqual({ created_at: '2026-01-02T03:04:05.000Z' });
      // The row that points at a later row of its own table, and a boolean.
      expect(await pg.get('SELECT moved_to_id, confidential FROM issues WHERE id = ?', [ids.first])).toEqual({ moved_to_id: ids.second, confidential: true });
      // The deleted project's id is not handed out again; issue ids go on after the highest.
      expect(await pg.get("SELECT nextval(pg_get_serial_sequence('projects', 'id')) AS id")).toEqual({ id: ids.project! + 2 });
      expect(await pg.get("SELECT nextval(pg_get_serial_sequence('issues', 'id')) AS id")).toEqual({ id: ids.second! + 1 });
      // The count triggers are on again: a new issue is counted.
      const before = await pg.get<{ n: number }>('SELECT COALESCE(SUM(n), 0) AS n FROM issue_counts WHERE project_id = ?', [ids.project]);
      await pg.run(
        "INSERT INTO issues (project_id, iid, title, state, confidential, created_at, updated_at) VALUES (?, 3, 'third', 'opened', FALSE, now(), now())",
        [ids.project],
      );
      expect(await pg.get('SELECT COALESCE(SUM(n), 0) AS n FROM issue_counts WHERE project_id = ?', [ids.project])).toEqual({ n: before!.n + 1 });
    } finally {
      await pg.close();
    }
  }, 60_000);

  it('refuses a value beyond a PostgreSQL column\'s range with the row named, and writes nothing', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'gantry-migrate-unit-'));
    try {
      cpSync(join(dir, 'gantry.db'), join(copy, 'gantry.db'));
      const sqlite = new BetterSqlite(join(copy, 'gantry.db'));
      sqlite.prepare('UPDATE projects SET visibility_level = 3000000000 WHERE id = ?').run(ids.project);
      sqlite.close();
      const db = await target();
      await expect(migrateDb({ dataDir: copy, to: db.url })).rejects.toThrow(
        `projects.visibility_level of the row with id ${ids.project} in the SQLite database holds 3000000000 (beyond the column's range), which PostgreSQL's integer column cannot take`,
      );
      const pg = await postgresDatabase(db.url, { max: 1 });
      expect(await pg.all("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")).toEqual([]);
      await pg.close();
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses counts that disagree with a recount, and writes nothing', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'gantry-migrate-unit-'));
    try {
      cpSync(join(dir, 'gantry.db'), join(copy, 'gantry.db'));
      const sqlite = new BetterSqlite(join(copy, 'gantry.db'));
      sqlite.prepare('UPDATE issue_counts SET n = n + 1 WHERE project_id = ? AND confidential = 0').run(ids.project);
      sqlite.close();
      const db = await target();
      const run = migrateDb({ dataDir: copy, to: db.url });
      await expect(run).rejects.toThrow(MigrateDbError);
      await expect(run).rejects.toThrow(/^the counts in issue_counts disagree with a recount of issues \(.*"side":"copied".*\); the SQLite database is inconsistent/);
      const pg = await postgresDatabase(db.url, { max: 1 });
      expect(await pg.all("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")).toEqual([]);
      await pg.close();
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 60_000);
});
