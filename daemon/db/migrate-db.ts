/**
 * `gantryd migrate-db --to postgres://...` (docs/design/postgres.md, "Migrating an existing installation"): copies a
 * stopped installation's SQLite database into an empty PostgreSQL database, in ONE PostgreSQL transaction that
 * commits only when every table's row count and checksum agree with the SQLite file's.
 *
 * 1. Refuses while a gantryd (or another migrate-db) uses the data directory (run-lock.ts), then opens the SQLite file
 *    read-only and checks its schema is at this gantryd's latest migration, with no dangling foreign key.
 * 2. In the transaction: refuses a non-empty database (or, with --replace, drops what is in it), migrates it with the
 *    daemon's own PostgreSQL migrations (migrate-postgres.ts) to the same version, and reads the tables, their columns
 *    and types, primary keys, foreign keys, identity columns and triggers from the catalog: nothing here lists tables
 *    by hand, so a new migration is copied without a change to this file.
 * 3. Copies table by table in foreign-key order, rows in primary-key order, in batches of up to 1,000 rows sent as one
 *    JSON parameter (`INSERT ... SELECT FROM json_populate_recordset`, so PostgreSQL converts each value to its column's
 *    type: SQLite's 0/1 become booleans as JSON true/false, ISO text becomes timestamptz under TimeZone UTC). Ids are
 *    kept. For the copy, the foreign keys and the indexes that are not primary keys or unique constraints are dropped
 *    (inside the transaction: a failure brings them back with everything else) and made again afterwards: PostgreSQL
 *    then builds each index and checks each foreign key over all rows in one pass, instead of once per row (which
 *    also lets a row reference a later row of its own table, as issues.moved_to_id does), and without the superuser
 *    that `session_replication_role` would need. The user triggers (the live counts of issues and merge requests) are
 *    disabled during the copy, since the count tables are copied as they are, and enabled again before the commit.
 * 4. Every identity sequence is set past the highest id (or SQLite's AUTOINCREMENT high-water mark, so the ids of
 *    deleted rows are never handed out again); the copied counts are compared with a recount; every table is read
 *    back and its checksum (MD5 over the rows in primary-key order, each value in one normal form computed the same
 *    way from either side) compared with the one computed while reading SQLite.
 *
 * Nothing in the data directory is changed (but for this process's own file in run/), and the SQLite file stays as the
 * fallback. Any failure rolls the transaction back: the PostgreSQL database is left as it was.
 */
import BetterSqlite from 'better-sqlite3';
import { Command } from 'commander';
import { createHash, type Hash } from 'node:crypto';
import { existsSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client, QueryResult } from 'pg';
import { announce, describeHolder, holders } from '../run-lock.js';
import { knownMigrations } from './connection.js';
import { errorReason } from './layer/errors.js';
import { postgresDialect, toPostgres } from './layer/postgres.js';
import type { Database, Queries, Row, RunResult } from './layer/types.js';
import { knownPostgresMigrations, migratePostgres } from './migrate-postgres.js';

/** A failure with its one-line message for the operator (what went wrong and what to do next). */
export class MigrateDbError extends Error {}

export interface MigrateDbOptions {
  dataDir: string;
  /** postgres:// or postgresql:// URL of the target database. */
  to: string;
  /** Drop everything in the target database first instead of refusing a non-empty one. */
  replace?: boolean;
  /** Progress lines for the person waiting (default: none). */
  progress?: (line: string) => void;
  /** Rows per INSERT (default 1,000). */
  batchRows?: number;
}

export interface TableCopy {
  table: string;
  rows: number;
  checksum: string;
  seconds: number;
}

export interface MigrateDbResult {
  schemaVersion: number;
  tables: TableCopy[];
  rows: number;
  /** Seconds spent copying rows (the INSERTs), and in all (connecting, migrating, verifying, committing). */
  copySeconds: number;
  seconds: number;
}

/** Where a URL points, without its user or password: `host:port/database`. */
export function describeTarget(url: string): string {
  try {
    const u = new URL(url);
    const host = u.hostname || u.searchParams.get('host') || 'localhost';
    return `${host}:${u.port || '5432'}${u.pathname.length > 1 ? u.pathname : ''}`;
  } catch {
    return 'the given database';
  }
}

/** The URL with its password replaced, to print. */
function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '...';
    return u.toString();
  } catch {
    return url;
  }
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

// ---------------------------------------------------------------------------------------------------------------------
// The catalog of the migrated PostgreSQL database: what to copy and how.

type Kind = 'boolean' | 'integer' | 'float' | 'timestamp' | 'date' | 'text';

interface Column {
  name: string;
  /** information_schema's data_type. */
  type: string;
  kind: Kind;
  identity: boolean;
}

interface Table {
  name: string;
  columns: Column[];
  primaryKey: Column[];
  /** Tables this one references (not itself). */
  references: Set<string>;
  hasTriggers: boolean;
}

const KINDS: Record<string, Kind> = {
  boolean: 'boolean',
  integer: 'integer',
  bigint: 'integer',
  smallint: 'integer',
  'double precision': 'float',
  real: 'float',
  numeric: 'float',
  'timestamp with time zone': 'timestamp',
  'timestamp without time zone': 'timestamp',
  date: 'date',
  text: 'text',
  'character varying': 'text',
  character: 'text',
};

async function readCatalog(client: Client): Promise<Map<string, Table>> {
  const columns = await client.query<{ table_name: string; column_name: string; data_type: string; is_identity: string }>(
    `SELECT c.table_name, c.column_name, c.data_type, c.is_identity
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> 'schema_migrations'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const keys = await client.query<{ table_name: string; column_name: string }>(
    `SELECT tc.table_name, k.column_name
       FROM information_schema.table_constraints tc
       JOIN information_schema.key_column_usage k
         ON k.constraint_schema = tc.constraint_schema AND k.constraint_name = tc.constraint_name AND k.table_name = tc.table_name
      WHERE tc.table_schema = current_schema() AND tc.constraint_type = 'PRIMARY KEY'
      ORDER BY tc.table_name, k.ordinal_position`,
  );
  const foreign = await client.query<{ table_name: string; column_name: string; ref_table: string }>(
    `SELECT cl.relname AS table_name, a.attname AS column_name, rf.relname AS ref_table
       FROM pg_constraint con
       JOIN pg_class cl ON cl.oid = con.conrelid
       JOIN pg_class rf ON rf.oid = con.confrelid
       JOIN pg_namespace n ON n.oid = cl.relnamespace
       CROSS JOIN LATERAL unnest(con.conkey) AS k(attnum)
       JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
      WHERE con.contype = 'f' AND n.nspname = current_schema()`,
  );
  const triggers = await client.query<{ table_name: string }>(
    `SELECT DISTINCT cl.relname AS table_name
       FROM pg_trigger tg JOIN pg_class cl ON cl.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
      WHERE NOT tg.tgisinternal AND n.nspname = current_schema()`,
  );
  const tables = new Map<string, Table>();
  for (const c of columns.rows) {
    let t = tables.get(c.table_name);
    if (!t) tables.set(c.table_name, (t = { name: c.table_name, columns: [], primaryKey: [], references: new Set(), hasTriggers: false }));
    const kind = KINDS[c.data_type];
    if (!kind) throw new MigrateDbError(`column ${c.table_name}.${c.column_name} has type ${c.data_type}, which migrate-db does not convert: this gantryd's migrate-db needs updating`);
    t.columns.push({ name: c.column_name, type: c.data_type, kind, identity: c.is_identity === 'YES' });
  }
  for (const k of keys.rows) {
    const t = tables.get(k.table_name);
    if (t) t.primaryKey.push(t.columns.find((c) => c.name === k.column_name)!);
  }
  for (const f of foreign.rows) {
    const t = tables.get(f.table_name);
    if (!t) continue;
    if (f.ref_table !== f.table_name) t.references.add(f.ref_table);
  }
  for (const r of triggers.rows) {
    const t = tables.get(r.table_name);
    if (t) t.hasTriggers = true;
  }
  for (const t of tables.values()) {
    if (!t.primaryKey.length) throw new MigrateDbError(`table ${t.name} has no primary key, which migrate-db needs to verify it: this gantryd's migrate-db needs updating`);
  }
  return tables;
}

/** The tables in foreign-key order (a table after every table it references; ties by name, so the order is stable). */
export function foreignKeyOrder(tables: Map<string, Pick<Table, 'name' | 'references'>>): string[] {
  const order: string[] = [];
  const done = new Set<string>();
  const left = [...tables.keys()].sort();
  while (left.length) {
    const i = left.findIndex((name) => [...tables.get(name)!.references].every((r) => done.has(r) || !tables.has(r)));
    if (i < 0) throw new MigrateDbError(`the tables ${left.join(', ')} reference each other in a cycle, which migrate-db cannot order: this gantryd's migrate-db needs updating`);
    const [name] = left.splice(i, 1);
    order.push(name!);
    done.add(name!);
  }
  return order;
}

/**
 * The live counts kept by triggers, checked against a recount once copied: the table whose triggers keep them, and a
 * query giving the rows that differ between the two (empty when they agree). A table with triggers that is not here
 * stops the copy (the count it keeps could not be checked).
 */
const RECOUNTS: Record<string, { counts: string; differences: string }> = {
  issues: {
    counts: 'issue_counts',
    differences: `
      WITH kept AS (SELECT project_id, author_id, state, confidential, n FROM issue_counts WHERE n <> 0),
           recount AS (SELECT project_id, COALESCE(author_id, 0) AS author_id, state, confidential, COUNT(*)::integer AS n
                         FROM issues WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4)
      (SELECT 'copied' AS side, * FROM kept EXCEPT SELECT 'copied', * FROM recount)
      UNION ALL
      (SELECT 'recounted' AS side, * FROM recount EXCEPT SELECT 'recounted', * FROM kept)
      LIMIT 3`,
  },
  merge_requests: {
    counts: 'merge_request_counts',
    differences: `
      WITH kept AS (SELECT project_id, state, n FROM merge_request_counts WHERE n <> 0),
           recount AS (SELECT target_project_id AS project_id, state, COUNT(*)::integer AS n
                         FROM merge_requests WHERE deleted_at IS NULL GROUP BY 1, 2)
      (SELECT 'copied' AS side, * FROM kept EXCEPT SELECT 'copied', * FROM recount)
      UNION ALL
      (SELECT 'recounted' AS side, * FROM recount EXCEPT SELECT 'recounted', * FROM kept)
      LIMIT 3`,
  },
};

// ---------------------------------------------------------------------------------------------------------------------
// Values: SQLite's as PostgreSQL's input, and one normal form of either side's for the checksum.

/** ISO text without a zone is UTC (as PostgreSQL reads it under TimeZone UTC); epoch milliseconds, or NaN. */
function timestampMs(text: string): number {
  let t = text.trim();
  if (/^\d{4}-\d\d-\d\d \d/.test(t)) t = `${t.slice(0, 10)}T${t.slice(11)}`;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(t)) t += 'Z';
  // PostgreSQL's output under TimeZone UTC ends in +00 (no minutes), which Date.parse does not take.
  t = t.replace(/([+-]\d\d)$/, '$1:00');
  return Date.parse(t);
}

type Canonical = string | null;

/** The largest value of PostgreSQL's integer types (bigint's is beyond what SQLite hands JS as a number). */
const INTEGER_LIMITS: Record<string, number> = { smallint: 32_767, integer: 2_147_483_647 };

/** A SQLite value checked and converted for PostgreSQL (JSON for json_populate_recordset), with its normal form. */
function fromSqlite(table: string, column: Column, value: unknown, where: () => string): [unknown, Canonical] {
  if (value === null || value === undefined) return [null, null];
  const bad = (what: string): never => {
    throw new MigrateDbError(
      `${table}.${column.name} of ${where()} in the SQLite database holds ${what}, which PostgreSQL's ${column.type} column cannot take; ` +
        'correct that row in SQLite (gantryd stopped), then run migrate-db again',
    );
  };
  if (Buffer.isBuffer(value)) return bad('binary data');
  switch (column.kind) {
    case 'boolean':
      if (typeof value !== 'number' && typeof value !== 'bigint') return bad(`${JSON.stringify(value)} (not 0 or 1)`);
      return value ? [true, 't'] : [false, 'f'];
    case 'integer': {
      const n = Number(value);
      if (typeof value === 'string' || !Number.isInteger(n)) return bad(`${JSON.stringify(String(value))} (not a whole number)`);
      const limit = INTEGER_LIMITS[column.type];
      if (limit !== undefined && (n > limit || n < -limit - 1)) return bad(`${n} (beyond the column's range)`);
      return [n, String(n)];
    }
    case 'float': {
      const n = Number(value);
      if (typeof value === 'string' || !Number.isFinite(n)) return bad(`${JSON.stringify(String(value))} (not a number)`);
      return [n, String(n)];
    }
    case 'timestamp': {
      const ms = typeof value === 'string' ? timestampMs(value) : NaN;
      if (Number.isNaN(ms)) return bad(`${JSON.stringify(String(value))} (not an ISO 8601 time)`);
      return [value, String(ms)];
    }
    case 'date':
      if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\d$/.test(value)) return bad(`${JSON.stringify(String(value))} (not a YYYY-MM-DD date)`);
      return [value, value];
    case 'text': {
      const s = typeof value === 'string' ? value : String(value);
      if (s.includes('\0')) return bad('a NUL character');
      return [s, s];
    }
  }
}

/** The normal form of a value PostgreSQL returned as text. */
function fromPostgres(column: Column, raw: string | null): Canonical {
  if (raw === null) return null;
  switch (column.kind) {
    case 'boolean':
      return raw === 't' || raw === 'true' ? 't' : 'f';
    case 'integer':
    case 'float':
      return String(Number(raw));
    case 'timestamp':
      return String(timestampMs(raw));
    default:
      return raw;
  }
}

/** pg type parsing that leaves every value as PostgreSQL's text. */
const RAW_TYPES = { getTypeParser: () => (text: string) => text };

// ---------------------------------------------------------------------------------------------------------------------
// The SQLite side.

interface SqliteSource {
  db: BetterSqlite.Database;
  file: string;
  version: number;
}

function openSource(dataDir: string): SqliteSource {
  const file = join(dataDir, 'gantry.db');
  // A read-only connection to a WAL database makes the -wal and -shm files when a stopped daemon left none, and
  // cannot remove them when it closes: close() removes the ones made here (the -wal still empty), so the data
  // directory is left as it was found.
  const made = ['-wal', '-shm'].map((suffix) => `${file}${suffix}`).filter((f) => !existsSync(f));
  let db: BetterSqlite.Database;
  try {
    db = new BetterSqlite(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
  } catch (e) {
    throw new MigrateDbError(`cannot open ${file} read-only: ${(e as Error).message}; run migrate-db as the user gantryd runs as`);
  }
  const close = db.close.bind(db);
  db.close = () => {
    close();
    const wal = `${file}-wal`;
    if (made.includes(wal) && existsSync(wal) && statSync(wal).size > 0) return db; // written by someone else meanwhile: keep both
    for (const f of made) rmSync(f, { force: true });
    return db;
  };
  try {
    const migrations = knownMigrations();
    const latest = migrations.at(-1)?.version ?? 0;
    const version = db.pragma('user_version', { simple: true }) as number;
    const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    const applied = new Set(hasTable ? (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version) : []);
    if (version > latest) {
      throw new MigrateDbError(
        `the SQLite database is at schema version ${version}, newer than this gantryd knows (${latest}); run the migrate-db of the gantryd that last ran on it`,
      );
    }
    const missing = migrations.filter((m) => !applied.has(m.version));
    if (missing.length) {
      throw new MigrateDbError(
        `the SQLite database is at schema version ${version}, this gantryd's is ${latest} (missing: ${missing.map((m) => m.name).join(', ')}); ` +
          'start this gantryd once on the data directory (without --database-url) to migrate it, stop it, then run migrate-db again',
      );
    }
    const dangling = db.prepare('PRAGMA foreign_key_check').all() as { table: string; rowid: number; parent: string }[];
    if (dangling.length) {
      const first = dangling[0]!;
      throw new MigrateDbError(
        `the SQLite database has ${dangling.length} row(s) whose foreign key points nowhere (first: ${first.table} rowid ${first.rowid} -> ${first.parent}); ` +
          'PostgreSQL would refuse them: delete or correct those rows in SQLite (gantryd stopped), then run migrate-db again',
      );
    }
    return { db, file, version: latest };
  } catch (e) {
    db.close();
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// The PostgreSQL side.

type PgModule = typeof import('pg');
const loadPg = async (): Promise<PgModule> => {
  const m = await import('pg');
  return ((m as unknown as { default?: PgModule }).default ?? m) as PgModule;
};

/** The data layer's interface over one client inside the copy's transaction, for migratePostgres. */
function inTransaction(client: Client): Database {
  const q = async (text: string, args: readonly unknown[] = []): Promise<QueryResult> => client.query(toPostgres(text).text, args as unknown[]);
  const queries: Queries = {
    dialect: postgresDialect,
    all: async <T = Row>(text: string, args?: readonly unknown[]) => (await q(text, args)).rows as T[],
    get: async <T = Row>(text: string, args?: readonly unknown[]) => (await q(text, args)).rows[0] as T | undefined,
    run: async (text: string, args?: readonly unknown[]): Promise<RunResult> => ({ changes: (await q(text, args)).rowCount ?? 0 }),
    exec: async (text: string) => void (await client.query(text)),
  };
  // Each "transaction" of the migration runner is part of the one outer transaction: it commits or rolls back with it.
  return { ...queries, transaction: (fn) => fn(queries), snapshot: (fn) => fn(queries), close: async () => undefined };
}

/** Everything in the target's schema that is not an extension's: tables, views, sequences, functions. */
async function existingObjects(client: Client): Promise<{ relations: { name: string; kind: string }[]; functions: string[] }> {
  const relations = await client.query<{ name: string; kind: string }>(
    `SELECT c.relname AS name, c.relkind::text AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('e', 'i', 'a'))
      ORDER BY c.relname`,
  );
  const functions = await client.query<{ sig: string }>(
    `SELECT p.oid::regprocedure::text AS sig FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = current_schema()
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
      ORDER BY 1`,
  );
  return { relations: relations.rows, functions: functions.rows.map((r) => r.sig) };
}

const DROP_KIND: Record<string, string> = { r: 'TABLE', p: 'TABLE', f: 'FOREIGN TABLE', v: 'VIEW', m: 'MATERIALIZED VIEW', S: 'SEQUENCE' };

// ---------------------------------------------------------------------------------------------------------------------

const fmt = (n: number) => n.toLocaleString('en-US');
const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

/** A checksum being computed over rows in primary-key order. */
class RowHash {
  private hash: Hash = createHash('md5');
  rows = 0;
  add(values: Canonical[]): void {
    this.hash.update(JSON.stringify(values));
    this.hash.update('\n');
    this.rows++;
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/** Copy the SQLite database of `dataDir` into the PostgreSQL database `to`, verified; see the file's comment. */
export async function migrateDb(opts: MigrateDbOptions): Promise<MigrateDbResult> {
  const started = performance.now();
  const say = opts.progress ?? (() => undefined);
  const dataDir = resolve(opts.dataDir);
  const target = describeTarget(opts.to);
  if (!existsSync(join(dataDir, 'gantry.db'))) {
    const what = existsSync(dataDir) && statSync(dataDir).isDirectory() ? `${dataDir} has no SQLite database (gantry.db)` : `${dataDir} does not exist`;
    throw new MigrateDbError(`${what}: point --data-dir at the data directory of the installation to copy`);
  }
  let mark: ReturnType<typeof announce>;
  try {
    mark = announce(dataDir, 'migrate-db');
  } catch (e) {
    throw new MigrateDbError(`cannot write to ${join(dataDir, 'run')}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; run migrate-db as the user gantryd runs as`);
  }
  const onSignal = () => {
    mark.release();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  let source: SqliteSource | undefined;
  let client: Client | undefined;
  try {
    const others = holders(dataDir, { self: mark.file, removeStale: true });
    const daemon = others.find((h) => h.kind === 'gantryd');
    if (daemon) throw new MigrateDbError(`stop gantryd first (it is running as ${describeHolder(daemon)}); migrate-db copies a stopped installation`);
    if (others.length) throw new MigrateDbError(`another gantryd migrate-db is running on this data dir (${describeHolder(others[0]!)}); wait for it to finish`);

    source = openSource(dataDir);
    const sqlite = source.db;
    const pgLatest = knownPostgresMigrations().at(-1)?.version ?? 0;
    if (pgLatest !== source.version) {
      throw new MigrateDbError(`this gantryd's SQLite schema is version ${source.version} but its PostgreSQL schema is ${pgLatest}: this build of gantry is broken, use a released one`);
    }
    say(`gantryd migrate-db: copying ${source.file} (schema version ${source.version}) into ${target}`);

    const pg = await loadPg();
    client = new pg.Client({ connectionString: opts.to, connectionTimeoutMillis: 10_000 });
    client.on('error', () => undefined); // a broken connection fails the next query, which is reported
    try {
      await client.connect();
    } catch (e) {
      throw new MigrateDbError(`cannot connect to PostgreSQL at ${target}: ${errorReason(e)}; check --to`);
    }

    // One read transaction on SQLite (a consistent view) and one write transaction on PostgreSQL.
    sqlite.exec('BEGIN');
    await client.query('BEGIN');
    await client.query("SET LOCAL TimeZone = 'UTC'");
    await client.query("SET LOCAL DateStyle = 'ISO, YMD'");
    await client.query("SET LOCAL maintenance_work_mem = '256MB'"); // the indexes are built once, after the copy

    const existing = await existingObjects(client);
    const names = [...existing.relations.map((r) => r.name), ...existing.functions];
    if (names.length) {
      if (!opts.replace) {
        throw new MigrateDbError(
          `the PostgreSQL database ${target} is not empty (it has ${names.slice(0, 4).join(', ')}${names.length > 4 ? ', ...' : ''}); ` +
            'copy into a new empty database (createdb --locale=C.UTF-8 -T template0 NAME), or add --replace to drop everything in this one first',
        );
      }
      for (const r of existing.relations) await client.query(`DROP ${DROP_KIND[r.kind]} IF EXISTS ${quote(r.name)} CASCADE`);
      for (const f of existing.functions) await client.query(`DROP FUNCTION IF EXISTS ${f} CASCADE`);
      say(`  dropped what was in the database (--replace): ${names.length} tables, views, sequences and functions`);
    }
    await migratePostgres(inTransaction(client));
    say(`  schema: migrated to version ${source.version}`);

    const tables = await readCatalog(client);
    const sqliteTables = new Set(
      (sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'schema_migrations'").all() as { name: string }[]).map((r) => r.name),
    );
    for (const name of sqliteTables) {
      if (!tables.has(name)) throw new MigrateDbError(`table ${name} of the SQLite database has no PostgreSQL counterpart: this build of gantry is broken, use a released one`);
    }
    for (const t of tables.values()) {
      if (!sqliteTables.has(t.name)) throw new MigrateDbError(`table ${t.name} of the PostgreSQL schema has no SQLite counterpart: this build of gantry is broken, use a released one`);
      const cols = new Set((sqlite.prepare(`PRAGMA table_info(${quote(t.name)})`).all() as { name: string }[]).map((c) => c.name));
      const differ = t.columns.filter((c) => !cols.has(c.name)).map((c) => c.name);
      if (differ.length || cols.size !== t.columns.length) {
        throw new MigrateDbError(`table ${t.name} has other columns in SQLite than in PostgreSQL: this build of gantry is broken, use a released one`);
      }
      if (t.hasTriggers && !RECOUNTS[t.name]) {
        throw new MigrateDbError(`table ${t.name} has triggers whose counts migrate-db cannot check: this gantryd's migrate-db needs updating`);
      }
    }
    const order = foreignKeyOrder(tables);
    const highWater = new Map<string, number>(
      sqlite.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").get()
        ? (sqlite.prepare('SELECT name, seq FROM sqlite_sequence').all() as { name: string; seq: number }[]).map((r) => [r.name, r.seq])
        : [],
    );

    // Copy, over whatever rows the migrations seeded (the built-in OAuth application of 0025 is in SQLite too), without
    // the foreign keys and the secondary indexes, which are made again after the copy (see the file's comment).
    await client.query(`TRUNCATE ${order.map(quote).join(', ')}`);
    const deferred = await withoutChecks(client);
    const copyStarted = performance.now();
    const copies: TableCopy[] = [];
    const width = Math.max(...order.map((n) => n.length));
    let total = 0;
    for (const name of order) {
      const t = tables.get(name)!;
      if (t.hasTriggers) await client.query(`ALTER TABLE ${quote(name)} DISABLE TRIGGER USER`);
      const tableStarted = performance.now();
      const expected = (sqlite.prepare(`SELECT COUNT(*) AS n FROM ${quote(name)}`).get() as { n: number }).n;
      const copy = await copyTable(client, sqlite, t, expected, opts.batchRows ?? 1000, (done) =>
        say(`  ${name.padEnd(width)} ${fmt(done).padStart(10)} of ${fmt(expected)} rows ...`),
      );
      if (copy.rows !== expected) throw new MigrateDbError(`${name}: read ${copy.rows} rows from SQLite where it counts ${expected}; nothing was written, run migrate-db again`);
      const seconds = (performance.now() - tableStarted) / 1000;
      copies.push({ table: name, rows: copy.rows, checksum: copy.checksum, seconds });
      total += copy.rows;
      say(`  ${name.padEnd(width)} ${fmt(copy.rows).padStart(10)} rows  ${secs(seconds * 1000)}`);
    }
    const copySeconds = (performance.now() - copyStarted) / 1000;
    sqlite.exec('COMMIT');
    const rebuilt = performance.now();
    say(`  building ${deferred.indexes} indexes and checking ${deferred.foreignKeys} foreign keys ...`);
    await deferred.restore();
    say(`  indexes built and foreign keys checked  ${secs(performance.now() - rebuilt)}`);

    // Identity sequences past the highest id (or SQLite's high-water mark of an AUTOINCREMENT table).
    for (const t of tables.values()) {
      for (const c of t.columns.filter((col) => col.identity)) {
        const max = (await client.query<{ m: number | null }>(`SELECT MAX(${quote(c.name)}) AS m FROM ${quote(t.name)}`)).rows[0]?.m;
        const top = Math.max(Number(max ?? 0), highWater.get(t.name) ?? 0);
        await client.query('SELECT setval(pg_get_serial_sequence($1, $2), $3, $4)', [quote(t.name), c.name, Math.max(top, 1), top > 0]);
      }
    }

    // The live counts, copied as they were, against a recount; then their triggers on again.
    for (const t of tables.values()) {
      if (!t.hasTriggers) continue;
      const check = RECOUNTS[t.name]!;
      const differences = await client.query(check.differences);
      if (differences.rows.length) {
        throw new MigrateDbError(
          `the counts in ${check.counts} disagree with a recount of ${t.name} (${differences.rows.map((r) => JSON.stringify(r)).join(', ')}); ` +
            'the SQLite database is inconsistent: report this to the Gantry project; nothing was written to PostgreSQL',
        );
      }
      await client.query(`ALTER TABLE ${quote(t.name)} ENABLE TRIGGER USER`);
    }
    say('  counts kept by triggers agree with a recount');

    // Read every table back: row count and checksum against SQLite's.
    say('  verifying row counts and checksums ...');
    const verifying = performance.now();
    for (const copy of copies) {
      const back = await checksumPostgres(client, tables.get(copy.table)!);
      if (back.rows !== copy.rows || back.checksum !== copy.checksum) {
        throw new MigrateDbError(
          `${copy.table} reads back from PostgreSQL as ${back.rows} rows (checksum ${back.checksum}) where SQLite has ${copy.rows} (checksum ${copy.checksum}); ` +
            'nothing was written to PostgreSQL: report this to the Gantry project',
        );
      }
    }
    say(`  ${fmt(total)} rows in ${copies.length} tables match (row counts and checksums)  ${secs(performance.now() - verifying)}`);
    const committing = performance.now();
    for (const name of order) await client.query(`ANALYZE ${quote(name)}`); // the planner's statistics, for the first requests
    await client.query('COMMIT');
    const seconds = (performance.now() - started) / 1000;
    say(`  analyzed and committed  ${secs(performance.now() - committing)}`);
    return { schemaVersion: source.version, tables: copies, rows: total, copySeconds, seconds };
  } catch (e) {
    if (client) await client.query('ROLLBACK').catch(() => undefined);
    if (e instanceof MigrateDbError) throw e;
    const err = e as { code?: string; message?: string; detail?: string; table?: string };
    if (err.code && /^[0-9A-Z]{5}$/.test(err.code)) {
      const detail = err.detail ? ` (${err.detail})` : '';
      const hint = err.code === '42501' ? ': the --to user must own the database, or be allowed to create tables in it' : '';
      throw new MigrateDbError(`PostgreSQL refused the copy${err.table ? ` of ${err.table}` : ''}: ${err.message}${detail}${hint}; nothing was written to PostgreSQL`);
    }
    throw new MigrateDbError(`the copy failed: ${errorReason(e)}; nothing was written to PostgreSQL`);
  } finally {
    process.off('SIGINT', onSignal);
    await client?.end().catch(() => undefined);
    source?.db.close();
    mark.release();
  }
}

/**
 * Drop the foreign keys and the indexes that back no primary key or unique constraint of the current schema; restore()
 * makes them again from their definitions (pg_get_indexdef, pg_get_constraintdef), each checked over all rows.
 */
async function withoutChecks(client: Client): Promise<{ indexes: number; foreignKeys: number; restore(): Promise<void> }> {
  const foreignKeys = await client.query<{ table_name: string; name: string; def: string }>(
    `SELECT cl.relname AS table_name, con.conname AS name, pg_get_constraintdef(con.oid) AS def
       FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
      WHERE con.contype = 'f' AND n.nspname = current_schema() ORDER BY 1, 2`,
  );
  const indexes = await client.query<{ name: string; def: string }>(
    `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = current_schema() AND t.relname <> 'schema_migrations'
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u', 'x'))
      ORDER BY 1`,
  );
  for (const f of foreignKeys.rows) await client.query(`ALTER TABLE ${quote(f.table_name)} DROP CONSTRAINT ${quote(f.name)}`);
  for (const i of indexes.rows) await client.query(`DROP INDEX ${quote(i.name)}`);
  return {
    indexes: indexes.rows.length,
    foreignKeys: foreignKeys.rows.length,
    async restore() {
      for (const i of indexes.rows) await client.query(i.def);
      for (const f of foreignKeys.rows) await client.query(`ALTER TABLE ${quote(f.table_name)} ADD CONSTRAINT ${quote(f.name)} ${f.def}`);
    },
  };
}

/**
 * Copy one table: rows in primary-key order, in batches (up to `batchRows` rows or about 8 MB of JSON), one batch in
 * flight while the next is read. Returns the row count and the checksum of what was read.
 */
async function copyTable(
  client: Client,
  sqlite: BetterSqlite.Database,
  t: Table,
  expected: number,
  batchRows: number,
  progress: (done: number) => void,
): Promise<{ rows: number; checksum: string }> {
  const cols = t.columns.map((c) => quote(c.name)).join(', ');
  const identity = t.columns.some((c) => c.identity) ? ' OVERRIDING SYSTEM VALUE' : '';
  const insert = `INSERT INTO ${quote(t.name)} (${cols})${identity} SELECT ${cols} FROM json_populate_recordset(NULL::${quote(t.name)}, $1::json)`;
  const order = t.primaryKey.map((c) => `${quote(c.name)} COLLATE BINARY`).join(', ');
  const read = sqlite.prepare(`SELECT ${cols} FROM ${quote(t.name)} ORDER BY ${order}`).raw(true);
  const pk = t.primaryKey.map((c) => t.columns.indexOf(c));
  const hash = new RowHash();
  let batch: string[] = [];
  let bytes = 0;
  let inFlight: Promise<unknown> | null = null;
  let nextProgress = performance.now() + 2000;
  const send = async () => {
    if (!batch.length) return;
    const json = `[${batch.join(',')}]`;
    batch = [];
    bytes = 0;
    if (inFlight) await inFlight;
    const sent = client.query(insert, [json]);
    sent.catch(() => undefined); // awaited before the next batch or at the end
    inFlight = sent;
    if (performance.now() > nextProgress && hash.rows < expected) {
      progress(hash.rows);
      nextProgress = performance.now() + 2000;
    }
  };
  for (const row of read.iterate() as Iterable<unknown[]>) {
    const where = () => `the row with ${t.primaryKey.map((c, i) => `${c.name} ${String(row[pk[i]!])}`).join(', ')}`;
    const values: Record<string, unknown> = {};
    const canonical: Canonical[] = [];
    for (let i = 0; i < t.columns.length; i++) {
      const column = t.columns[i]!;
      const [value, normal] = fromSqlite(t.name, column, row[i], where);
      values[column.name] = value;
      canonical.push(normal);
    }
    hash.add(canonical);
    const json = JSON.stringify(values);
    batch.push(json);
    bytes += json.length;
    if (batch.length >= batchRows || bytes > 8_000_000) await send();
  }
  await send();
  if (inFlight) await inFlight;
  return { rows: hash.rows, checksum: hash.digest() };
}

/** A table's rows as PostgreSQL has them, in primary-key order (text keys in byte order, as SQLite's BINARY). */
async function checksumPostgres(client: Client, t: Table): Promise<{ rows: number; checksum: string }> {
  const cols = t.columns.map((c) => quote(c.name)).join(', ');
  const order = t.primaryKey.map((c) => `${quote(c.name)}${c.kind === 'text' ? ' COLLATE "C"' : ''}`).join(', ');
  await client.query(`DECLARE migrate_db_check NO SCROLL CURSOR FOR SELECT ${cols} FROM ${quote(t.name)} ORDER BY ${order}`);
  const hash = new RowHash();
  for (;;) {
    const r = await client.query({ text: 'FETCH 5000 FROM migrate_db_check', rowMode: 'array', types: RAW_TYPES });
    for (const row of r.rows as (string | null)[][]) hash.add(row.map((v, i) => fromPostgres(t.columns[i]!, v)));
    if (r.rows.length < 5000) break;
  }
  await client.query('CLOSE migrate_db_check');
  return { rows: hash.rows, checksum: hash.digest() };
}

// ---------------------------------------------------------------------------------------------------------------------

/** `gantryd migrate-db [--data-dir DIR] --to postgres://... [--replace]` (args after `migrate-db`). */
export async function migrateDbCommand(args: string[]): Promise<void> {
  const program = new Command('gantryd migrate-db')
    .description(
      "copy a stopped installation's SQLite database into an empty PostgreSQL database, verified by row counts and checksums; " +
        'the data directory and its SQLite file stay as they are',
    )
    .option('--data-dir <dir>', 'the installation\'s data directory (GANTRY_DATA_DIR, default ~/.local/share/gantry)')
    .option('--to <url>', 'the PostgreSQL database to fill, postgres://user:password@host:5432/name')
    .option('--replace', 'drop everything in the PostgreSQL database first (default: refuse a database that is not empty)')
    .parse(args, { from: 'user' });
  const flags = program.opts<{ dataDir?: string; to?: string; replace?: boolean }>();
  const fail = (message: string): never => {
    process.stderr.write(`gantryd: ${message}\n`);
    process.exit(1);
  };
  const to = flags.to?.trim();
  if (!to) return fail('migrate-db needs --to postgres://user:password@host:5432/name, the empty PostgreSQL database to copy into');
  let protocol = '';
  try {
    protocol = new URL(to).protocol;
  } catch {
    /* reported below */
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    return fail('invalid --to URL: use a PostgreSQL URL such as postgres://user:password@host:5432/gantry (postgres:// or postgresql://)');
  }
  const env = process.env.GANTRY_DATA_DIR?.trim();
  const dataDir = resolve(flags.dataDir?.trim() || env || join(homedir(), '.local/share/gantry'));
  const out = (line: string) => process.stdout.write(`${line}\n`);
  let result: MigrateDbResult;
  try {
    result = await migrateDb({ dataDir, to, replace: !!flags.replace, progress: out });
  } catch (e) {
    return fail(e instanceof MigrateDbError ? e.message : `migrate-db failed: ${(e as Error).message}`);
  }
  const rate = result.copySeconds > 0 ? Math.round(result.rows / result.copySeconds) : result.rows;
  out(
    `gantryd migrate-db: done: ${fmt(result.rows)} rows copied in ${result.seconds.toFixed(1)} s (${fmt(rate)} rows/s while copying)\n` +
      `Start gantryd on PostgreSQL with the same data directory:\n` +
      `  gantryd --data-dir ${dataDir} --database-url '${withoutPassword(to)}'\n` +
      `  (or GANTRY_DATABASE_URL; give the password the URL had). ${join(dataDir, 'gantry.db')} is left as it was, as the fallback.`,
  );
}
