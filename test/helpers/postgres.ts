/** Fresh PostgreSQL databases for tests, on the server of GANTRY_TEST_DATABASE_URL (scripts/postgres-test-server). */
import { createHash, randomBytes } from 'node:crypto';

/** The PostgreSQL server the tests run on, or undefined (then the PostgreSQL tests are skipped). */
export const TEST_DATABASE_URL = process.env.GANTRY_TEST_DATABASE_URL || undefined;

type PgModule = typeof import('pg');
const loadPg = async () => {
  const m = await import('pg');
  return ((m as unknown as { default?: PgModule }).default ?? m) as PgModule;
};

/** Run statements on the server's maintenance database through a short-lived client. */
async function admin(serverUrl: string, statements: string[] | ((client: import('pg').Client) => Promise<void>)): Promise<void> {
  const pg = await loadPg();
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    if (typeof statements === 'function') await statements(client);
    else for (const s of statements) await client.query(s);
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

/** pg_advisory_lock key of the template's creation (any constant; the server is a throwaway one). */
const TEMPLATE_LOCK_KEY = 74_117_001;

/**
 * The name of a database migrated to this code's PostgreSQL schema, to copy test databases from: created once per
 * server and schema (its name carries a hash of the migrations), under an advisory lock so that parallel test
 * workers create it once. Copying it (CREATE DATABASE ... TEMPLATE) is about 0.2 s; migrating an empty one is 0.3-0.5 s.
 */
async function migratedTemplate(serverUrl: string): Promise<string> {
  const { knownPostgresMigrations, migratePostgres } = await import('../../daemon/db/migrate-postgres.js');
  const migrations = knownPostgresMigrations();
  const hash = createHash('sha256');
  for (const m of migrations) hash.update(`${m.name}\0${m.sql}\0`);
  const name = `gantry_tpl_${hash.digest('hex').slice(0, 16)}`;
  await admin(serverUrl, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    // Templates of older schemas are of no further use (the throwaway server would keep them forever otherwise); the
    // three newest are kept, for test runs of other checkouts or of a schema being edited, which may still copy them.
    const stale = await client.query(
      "SELECT datname FROM pg_database WHERE datname LIKE 'gantry\\_tpl\\_%' AND datname <> $1 ORDER BY oid DESC OFFSET 3", [name],
    );
    for (const row of stale.rows as { datname: string }[]) await client.query(`DROP DATABASE IF EXISTS ${row.datname}`).catch(() => undefined);
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount) return; // the session lock ends with the client
    // Migrated under another name, renamed when complete: a worker killed halfway never leaves a half template.
    const building = `gantry_tplwip_${randomBytes(6).toString('hex')}`;
    await client.query(`CREATE DATABASE ${building}`);
    const { postgresDatabase } = await import('../../daemon/db/layer/postgres.js');
    const data = await postgresDatabase(databaseUrl(serverUrl, building), { max: 1 });
    try {
      await migratePostgres(data, migrations);
    } finally {
      await data.close();
    }
    await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
  });
  return name;
}

const templates = new Map<string, Promise<string>>();

/**
 * Create a database `gantry_t_<random>` on the server of `serverUrl`: empty, or with `migrated` a copy of a database
 * migrated to this code's schema (the daemon's own migrate step then finds nothing to do). `drop()` removes it (ending
 * any connection still open on it).
 */
export async function createTestDatabase(
  serverUrl: string,
  { migrated = false }: { migrated?: boolean } = {},
): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `gantry_t_${randomBytes(6).toString('hex')}`;
  const template = async (): Promise<string> => {
    let pending = templates.get(serverUrl);
    if (!pending) {
      templates.set(serverUrl, (pending = migratedTemplate(serverUrl)));
      pending.catch(() => templates.delete(serverUrl));
    }
    return pending;
  };
  if (!migrated) await admin(serverUrl, [`CREATE DATABASE ${name}`]);
  else {
    try {
      await admin(serverUrl, [`CREATE DATABASE ${name} TEMPLATE ${await template()}`]);
    } catch (e) {
      // 3D000: the template is gone (dropped as stale by a run of another schema): make it again, once.
      if ((e as { code?: string }).code !== '3D000') throw e;
      templates.delete(serverUrl);
      await admin(serverUrl, [`CREATE DATABASE ${name} TEMPLATE ${await template()}`]);
    }
  }
  return {
    name,
    url: databaseUrl(serverUrl, name),
    drop: () => admin(serverUrl, [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]),
  };
}

type Queries = import('../../daemon/db/layer/types.js').Queries;

/**
 * The statements `fn` sends through the Queries it is given, recorded instead of run (reads answer no rows): what a
 * page reader sends for a page, say, to EXPLAIN it on its own.
 */
export async function recordStatements(dialect: Queries['dialect'], fn: (q: Queries) => Promise<unknown>): Promise<{ sql: string; args: readonly unknown[] }[]> {
  const sent: { sql: string; args: readonly unknown[] }[] = [];
  const recorder: Queries = {
    dialect,
    all: async <T>(sql: string, args: readonly unknown[] = []) => { sent.push({ sql, args }); return [] as T[]; },
    get: async (sql: string, args: readonly unknown[] = []) => { sent.push({ sql, args }); return undefined; },
    run: async (sql: string, args: readonly unknown[] = []) => { sent.push({ sql, args }); return { changes: 0 }; },
  };
  await fn(recorder);
  return sent;
}

/** PostgreSQL's EXPLAIN of one statement, as its text lines. */
export async function explainPostgres(q: Queries, sql: string, args: readonly unknown[]): Promise<string> {
  return (await q.all<Record<string, string>>(`EXPLAIN ${sql}`, args)).map((r) => r['QUERY PLAN']).join('\n');
}

type Dialect = Queries['dialect'];

/** `WITH RECURSIVE seq(i)`: the numbers 1..n, for bulk loads in one SQL text on both engines (`INSERT ... ${seq(n)} SELECT ... FROM seq`). */
export const seq = (n: number) => `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ${Math.trunc(n)})`;

/** The timestamp `i` units (second, minute) after midnight UTC of `day` (YYYY-MM-DD), in a bulk load over seq (stored as each engine stores times). */
export const timeAt = (d: Dialect, day: string, unit: 'second' | 'minute', i = 'i') => (d.name === 'postgres'
  ? `(timestamptz '${day}T00:00:00Z' + ${i} * interval '1 ${unit}')`
  : `strftime('%Y-%m-%dT%H:%M:%fZ', '${day}', '+' || ${i} || ' ${unit}s')`);

/**
 * The plan of one statement: SQLite's EXPLAIN QUERY PLAN details, or PostgreSQL's EXPLAIN text. On PostgreSQL the
 * plan is asked with sequential scans priced out (SET LOCAL enable_seqscan = off, in a transaction of its own): the
 * test tables hold thousands of rows, where a seq scan and a sort are as cheap as an index walk, and the check is that
 * an index *can* give the page in list order (a plan that still needs `Seq Scan` or `Sort` has no such index).
 */
export async function queryPlan(q: import('../../daemon/db/layer/types.js').Database, sql: string, args: readonly unknown[]): Promise<string> {
  if (q.dialect.name !== 'postgres') return (await q.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, args)).map((r) => r.detail).join('\n');
  return q.transaction(async (tx) => {
    await tx.run('SET LOCAL enable_seqscan = off');
    return explainPostgres(tx, sql, args);
  });
}

/**
 * What is wrong with the plans of the first and the last page of an ordered list (db/keyset.ts), [] when nothing: each
 * page must be read from its nearer end without an OFFSET walk and walk an index of `table` (aliased `alias` in the
 * list) in list order: no seq scan and no sort of the list on PostgreSQL (an Incremental Sort of ties is fine), no
 * temporary b-tree on SQLite.
 */
export async function endPagePlanProblems(
  ctx: import('../../daemon/context.js').AppContext, name: string, list: import('../../daemon/db/keyset.js').KeysetList, table: string, alias: string,
): Promise<string[]> {
  const { keysetPageQuery } = await import('../../daemon/db/keyset.js');
  const total = Number((await ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${list.from} WHERE ${list.where}`, list.values))!.n);
  const problems: string[] = [];
  for (const offset of [0, Math.floor((total - 1) / 20) * 20]) {
    const q = (await keysetPageQuery(ctx, ctx.data, list, 20, offset, total, false))!;
    if (q.args.at(-1) !== 0) problems.push(`${name} offset ${offset}: skips ${String(q.args.at(-1))} rows`);
    const p = await queryPlan(ctx.data, q.sql, q.args);
    const ok = ctx.data.dialect.name === 'postgres'
      ? !new RegExp(`Seq Scan on ${table}\\b|(?<!Incremental )\\bSort {2}\\(cost`).test(p) && new RegExp(`Index (Only )?Scan\\S* .*on ${table}\\b`).test(p)
      : !/TEMP B-TREE/.test(p) && new RegExp(`SEARCH ${alias} USING (COVERING )?INDEX`).test(p);
    if (!ok) problems.push(`${name} offset ${offset}\n${p}`);
  }
  return problems;
}

/**
 * Count the statements sent on a pg client while another statement of the same client was still running (pg 8 warns
 * "client is already executing a query", pg 9 refuses it): every client of the process, the pools' and the listening
 * connections', from now until restore().
 */
export async function countOverlappingQueries(): Promise<{ count(): number; restore(): void }> {
  const pg = await loadPg();
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const running = new WeakMap<object, number>();
  let overlaps = 0;
  proto.query = function (this: object, ...args: unknown[]) {
    const busy = running.get(this) ?? 0;
    if (busy > 0) overlaps++;
    const out = original.apply(this, args);
    if (out instanceof Promise) {
      running.set(this, busy + 1);
      void out.finally(() => running.set(this, (running.get(this) ?? 1) - 1)).catch(() => undefined);
    }
    return out;
  };
  return { count: () => overlaps, restore: () => { proto.query = original; } };
}
