/**
 * The two schemas agree (docs/design/postgres.md, "Migrations from one source"): the SQLite migrations
 * (daemon/db/migrations) applied to a temporary file and the PostgreSQL migrations (daemon/db/migrations-postgres)
 * applied to a fresh database have the same tables, columns (order, NOT NULL, defaults, types as the design maps them),
 * foreign keys, unique and ordinary indexes and CHECK constraints, and the live-count triggers of 0018 and 0023 keep
 * the same counts on both engines. Also the runner: twice is a no-op, two at once apply each migration once, a newer
 * schema is refused, a failing migration leaves nothing behind.
 *
 * Runs when GANTRY_TEST_DATABASE_URL is set (scripts/postgres-test-server); each PostgreSQL database is created for the
 * test and dropped at the end. A failure names the table and column that differ. One SQLite-only test (the counts when
 * users are deleted, fixed by migration 0026) runs on every run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type BetterSqlite3 from 'better-sqlite3';
import { openDatabase, SchemaError } from '../../daemon/db/connection.js';
import { sqliteDatabase } from '../../daemon/db/layer/sqlite.js';
import { postgresDatabase } from '../../daemon/db/layer/postgres.js';
import type { Database } from '../../daemon/db/layer/types.js';
import { knownPostgresMigrations, migratePostgres } from '../../daemon/db/migrate-postgres.js';
import { createTestDatabase } from '../helpers/postgres.js';

const PG_URL = process.env.GANTRY_TEST_DATABASE_URL;

/** YYYY-MM-DD text columns on SQLite, `date` on PostgreSQL. */
const DATE_COLUMNS = new Set([
  'personal_access_tokens.expires_at', 'members.expires_at', 'project_group_links.expires_at',
  'milestones.due_date', 'milestones.start_date', 'issues.due_date',
]);
/** Byte sizes: `bigint` on PostgreSQL. */
const BIGINT_COLUMNS = new Set(['commit_statuses.trace_size', 'commit_statuses.artifacts_size', 'uploads.size']);
/**
 * The 0/1 columns of SQLite that the rows carry as booleans (the row types of daemon/db/schema*.ts, the converters of
 * db/rows.ts): `boolean` on PostgreSQL.
 */
const BOOLEAN_COLUMNS = new Set([
  'application_settings.domain_blacklist_enabled', 'application_settings.gravatar_enabled',
  'application_settings.signin_enabled', 'application_settings.signup_enabled',
  'application_settings.user_oauth_applications', 'commit_statuses.allow_failure', 'commit_statuses.tag',
  'issues.confidential', 'keys.can_push', 'labels.template', 'merge_requests.force_remove_source_branch',
  'merge_requests.merge_when_build_succeeds', 'merge_requests.should_remove_source_branch', 'namespaces.lfs_enabled',
  'namespaces.request_access_enabled', 'namespaces.share_with_group_lock', 'notes.system',
  'oauth_applications.builtin', 'personal_access_tokens.revoked', 'pipelines.tag', 'project_hooks.build_events',
  'project_hooks.enable_ssl_verification', 'project_hooks.issues_events', 'project_hooks.merge_requests_events',
  'project_hooks.note_events', 'project_hooks.pipeline_events', 'project_hooks.push_events',
  'project_hooks.tag_push_events', 'project_hooks.wiki_page_events', 'projects.archived', 'projects.builds_enabled',
  'projects.container_registry_enabled', 'projects.issues_enabled', 'projects.lfs_enabled',
  'projects.merge_requests_enabled', 'projects.only_allow_merge_if_build_succeeds', 'projects.public_builds',
  'projects.request_access_enabled', 'projects.shared_runners_enabled', 'projects.snippets_enabled',
  'projects.wiki_enabled', 'protected_branches.developers_can_merge', 'protected_branches.developers_can_push',
  'runners.active', 'runners.is_shared', 'runners.locked', 'runners.run_untagged', 'subscriptions.subscribed',
  'users.can_create_group', 'users.external', 'users.is_admin',
]);
/** 0/1 columns with no row type (the trigger-kept count tables). */
const EXTRA_BOOLEAN_COLUMNS = new Set([
  'issue_counts.confidential',
  'deployments.tag', // 0036
  // 0038: system hooks and project services
  'system_hooks.push_events', 'system_hooks.tag_push_events', 'system_hooks.enable_ssl_verification',
  ...['active', 'push_events', 'issues_events', 'merge_requests_events', 'tag_push_events', 'note_events', 'build_events', 'pipeline_events']
    .map((c) => `project_services.${c}`),
]);

interface Column {
  name: string;
  type: string;
  notNull: boolean;
  /** The default, normalised across engines (`0`, `'active'`), or null. */
  dflt: string | null;
}
interface ForeignKey {
  column: string;
  references: string;
  onDelete: string;
}
interface Index {
  table: string;
  name: string | null;
  unique: boolean;
  partial: boolean;
  /** Key columns; a COLLATE NOCASE column on SQLite and lower() on PostgreSQL both read `lower(col)`. */
  columns: string[];
}
interface Schema {
  tables: string[];
  columns: Map<string, Column[]>;
  foreignKeys: Map<string, ForeignKey[]>;
  indexes: Index[];
  checks: Map<string, number>;
}

const byTable = <T>(rows: (T & { tbl: string })[]): Map<string, T[]> => {
  const m = new Map<string, T[]>();
  for (const r of rows) m.set(r.tbl, [...(m.get(r.tbl) ?? []), r]);
  return m;
};

function sqliteSchema(c: BetterSqlite3.Database): Schema {
  const tables = (c.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
    name: string;
    sql: string;
  }[]);
  const columns = new Map<string, Column[]>();
  const foreignKeys = new Map<string, ForeignKey[]>();
  const indexes: Index[] = [];
  const checks = new Map<string, number>();
  for (const { name: t, sql } of tables) {
    const info = c.pragma(`table_info(${t})`) as { name: string; type: string; notnull: number; dflt_value: string | null; pk: number }[];
    columns.set(t, info.map((col) => ({ name: col.name, type: col.type.toUpperCase(), notNull: col.notnull === 1 || col.pk > 0, dflt: col.dflt_value })));
    const fks = c.pragma(`foreign_key_list(${t})`) as { table: string; from: string; to: string; on_delete: string }[];
    foreignKeys.set(t, fks.map((f) => ({ column: f.from, references: `${f.table}.${f.to}`, onDelete: f.on_delete })));
    // A rowid alias (INTEGER PRIMARY KEY) is a unique key with no index_list entry: PostgreSQL's primary key index.
    const pk = info.filter((col) => col.pk > 0);
    if (pk.length === 1 && pk[0]!.type.toUpperCase() === 'INTEGER') indexes.push({ table: t, name: null, unique: true, partial: false, columns: [pk[0]!.name] });
    const list = c.pragma(`index_list(${t})`) as { name: string; unique: number; origin: string; partial: number }[];
    for (const ix of list) {
      const cols = (c.pragma(`index_xinfo(${ix.name})`) as { name: string | null; coll: string; key: number }[])
        .filter((x) => x.key === 1)
        .map((x) => (x.coll.toUpperCase() === 'NOCASE' ? `lower(${x.name})` : String(x.name)));
      indexes.push({ table: t, name: ix.origin === 'c' ? ix.name : null, unique: ix.unique === 1, partial: ix.partial === 1, columns: cols });
    }
    checks.set(t, (sql.match(/CHECK \(/g) ?? []).length);
  }
  return { tables: tables.map((t) => t.name), columns, foreignKeys, indexes, checks };
}

/** PostgreSQL's default text as SQLite writes it: `'active'::text` -> `'active'`, false/true -> 0/1. */
function pgDefault(d: string | null): string | null {
  if (d === null) return null;
  const bare = d.replace(/::[a-z ]+$/, '');
  return bare === 'false' ? '0' : bare === 'true' ? '1' : bare;
}

async function postgresSchema(db: Database): Promise<Schema> {
  const tables = (await db.all<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
  )).map((r) => r.name);
  const cols = await db.all<{ tbl: string; name: string; type: string; nullable: string; dflt: string | null }>(
    `SELECT table_name AS tbl, column_name AS name, data_type AS type, is_nullable AS nullable, column_default AS dflt
       FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
  );
  const fks = await db.all<{ tbl: string; column: string; references: string; del: string; n: number }>(
    `SELECT c.conrelid::regclass::text AS tbl, a.attname AS column, c.confrelid::regclass::text || '.' || af.attname AS references,
            c.confdeltype AS del, array_length(c.conkey, 1) AS n
       FROM pg_constraint c
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
       JOIN pg_attribute af ON af.attrelid = c.confrelid AND af.attnum = c.confkey[1]
      WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace`,
  );
  const ON_DELETE: Record<string, string> = { a: 'NO ACTION', r: 'RESTRICT', c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };
  const ixs = await db.all<{ table: string; name: string; unique: boolean; primary: boolean; constraint: boolean; partial: boolean; columns: string[] }>(
    `SELECT t.relname AS table, i.relname AS name, x.indisunique AS unique, x.indisprimary AS primary, x.indpred IS NOT NULL AS partial,
            EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.contype IN ('p', 'u')) AS constraint,
            (SELECT array_agg(pg_get_indexdef(x.indexrelid, k, true) ORDER BY k) FROM generate_series(1, x.indnkeyatts) k) AS columns
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      WHERE t.relnamespace = 'public'::regnamespace`,
  );
  const checks = await db.all<{ tbl: string; n: number }>(
    "SELECT conrelid::regclass::text AS tbl, COUNT(*) AS n FROM pg_constraint WHERE contype = 'c' AND connamespace = 'public'::regnamespace GROUP BY 1",
  );
  const unquote = (s: string) => s.replace(/"/g, '');
  return {
    tables,
    columns: new Map([...byTable(cols)].map(([t, list]) => [t, list.map((col) => ({ name: col.name, type: col.type, notNull: col.nullable === 'NO', dflt: pgDefault(col.dflt) }))])),
    foreignKeys: new Map(
      [...byTable(fks)].map(([t, list]) => [t, list.map((f) => ({ column: f.n === 1 ? f.column : `${f.column} (+${f.n - 1})`, references: f.references, onDelete: ON_DELETE[f.del]! }))]),
    ),
    // Constraint-backed unique indexes (UNIQUE, PRIMARY KEY) are SQLite's autoindexes: compared without their name.
    indexes: ixs.map((x) => ({ table: x.table, name: x.constraint ? null : x.name, unique: x.unique, partial: x.partial, columns: x.columns.map(unquote) })),
    checks: new Map(checks.map((r) => [unquote(r.tbl), r.n])),
  };
}

const describeIndex = (ix: Index) => `${ix.table}(${ix.columns.join(', ')})${ix.partial ? ' WHERE ...' : ''}`;
const sortFks = (list: ForeignKey[] = []) => list.map((f) => `${f.column} -> ${f.references} ON DELETE ${f.onDelete}`).sort();

describe.skipIf(!PG_URL)('the PostgreSQL schema against the SQLite schema', () => {
  let dir: string;
  let sqliteDb: BetterSqlite3.Database;
  let lite: Database;
  let pg: Database;
  let dropPg: () => Promise<void>;
  let sl: Schema;
  let ps: Schema;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gantry-schema-'));
    sqliteDb = openDatabase(join(dir, 'gantry.db'));
    lite = sqliteDatabase(sqliteDb);
    const fresh = await createTestDatabase(PG_URL!);
    dropPg = fresh.drop;
    pg = await postgresDatabase(fresh.url, { max: 2 });
    await migratePostgres(pg);
    sl = sqliteSchema(sqliteDb);
    ps = await postgresSchema(pg);
  });
  afterAll(async () => {
    await pg?.close();
    await dropPg?.();
    sqliteDb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is at the same schema version', async () => {
    const sqliteVersion = sqliteDb.pragma('user_version', { simple: true });
    const pgVersion = await pg.get<{ v: number }>('SELECT MAX(version) AS v FROM schema_migrations');
    expect(pgVersion?.v).toBe(sqliteVersion);
  });

  it('has the same tables', () => {
    expect(ps.tables).toEqual(sl.tables);
  });

  it('has the same columns, in the same order, with the same NOT NULL and defaults', () => {
    const diffs: string[] = [];
    for (const t of sl.tables) {
      const a = sl.columns.get(t) ?? [];
      const b = ps.columns.get(t) ?? [];
      if (a.map((c) => c.name).join() !== b.map((c) => c.name).join()) {
        diffs.push(`${t}: columns ${a.map((c) => c.name).join(', ')} on SQLite, ${b.map((c) => c.name).join(', ')} on PostgreSQL`);
      }
      for (const c of a) {
        const p = b.find((x) => x.name === c.name);
        if (!p) continue;
        if (c.notNull !== p.notNull) diffs.push(`${t}.${c.name}: ${c.notNull ? 'NOT NULL' : 'nullable'} on SQLite, ${p.notNull ? 'NOT NULL' : 'nullable'} on PostgreSQL`);
        if (c.dflt !== p.dflt) diffs.push(`${t}.${c.name}: default ${c.dflt} on SQLite, ${p.dflt} on PostgreSQL`);
      }
    }
    expect(diffs).toEqual([]);
  });

  it('maps every column type as the design says', () => {
    const diffs: string[] = [];
    for (const t of sl.tables) {
      for (const c of sl.columns.get(t) ?? []) {
        const key = `${t}.${c.name}`;
        const p = ps.columns.get(t)?.find((x) => x.name === c.name);
        if (!p) continue;
        let want: string;
        if (c.type === 'INTEGER') {
          want = BOOLEAN_COLUMNS.has(key) || EXTRA_BOOLEAN_COLUMNS.has(key) ? 'boolean' : BIGINT_COLUMNS.has(key) ? 'bigint' : 'integer';
        } else if (c.type === 'TEXT') {
          want = DATE_COLUMNS.has(key) ? 'date' : c.name.endsWith('_at') ? 'timestamp with time zone' : 'text';
        } else if (c.type === 'REAL') {
          want = 'double precision';
        } else if (c.type === 'BLOB') {
          want = 'bytea';
        } else {
          want = `(unknown SQLite type ${c.type})`;
        }
        if (p.type !== want) diffs.push(`${key}: ${c.type} on SQLite is ${p.type} on PostgreSQL, expected ${want}`);
      }
    }
    expect(diffs).toEqual([]);
  });

  it('has the same foreign keys (column -> table.column, ON DELETE)', () => {
    const diffs: string[] = [];
    for (const t of sl.tables) {
      const a = sortFks(sl.foreignKeys.get(t));
      const b = sortFks(ps.foreignKeys.get(t));
      for (const f of a) if (!b.includes(f)) diffs.push(`${t}.${f}: missing on PostgreSQL`);
      for (const f of b) if (!a.includes(f)) diffs.push(`${t}.${f}: only on PostgreSQL`);
    }
    expect(diffs).toEqual([]);
  });

  it('has a unique index on the same columns for each unique key (lower() for COLLATE NOCASE)', () => {
    const keys = (s: Schema) => new Set(s.indexes.filter((ix) => ix.unique).map(describeIndex));
    const a = keys(sl);
    const b = keys(ps);
    const diffs = [...[...a].filter((k) => !b.has(k)).map((k) => `unique ${k}: missing on PostgreSQL`), ...[...b].filter((k) => !a.has(k)).map((k) => `unique ${k}: only on PostgreSQL`)];
    // A unique index created by name on SQLite keeps its name.
    for (const ix of sl.indexes.filter((x) => x.unique && x.name)) {
      if (!ps.indexes.some((x) => x.name === ix.name)) diffs.push(`${ix.table}: unique index ${ix.name} missing on PostgreSQL`);
    }
    expect(diffs).toEqual([]);
  });

  it('has the same ordinary indexes, by name, on the same columns', () => {
    const plain = (s: Schema) => new Map(s.indexes.filter((ix) => !ix.unique).map((ix) => [ix.name!, describeIndex(ix)]));
    const a = plain(sl);
    const b = plain(ps);
    const diffs: string[] = [];
    for (const [name, d] of a) if (b.get(name) !== d) diffs.push(`index ${name}: ${d} on SQLite, ${b.get(name) ?? 'missing'} on PostgreSQL`);
    for (const [name, d] of b) if (!a.has(name)) diffs.push(`index ${name}: ${d} only on PostgreSQL`);
    expect(diffs).toEqual([]);
  });

  it('has as many CHECK constraints per table', () => {
    const diffs: string[] = [];
    for (const t of sl.tables) {
      const a = sl.checks.get(t) ?? 0;
      const b = ps.checks.get(t) ?? 0;
      if (a !== b) diffs.push(`${t}: ${a} CHECK constraints on SQLite, ${b} on PostgreSQL`);
    }
    expect(diffs).toEqual([]);
  });

  // The live counts of 0018 (issue_counts) and 0023 (merge_request_counts): the same writes on both engines, through
  // the data layer with the same SQL, leave the same count rows after every step.
  const T = '2026-11-25T10:00:00.000Z';
  const user = (id: number) => [
    'INSERT INTO users (id, username, email, name, password_hash, private_token_salt, private_token_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [id, `u${id}`, `u${id}@example.com`, `U ${id}`, 'x', 's', `hash${id}`, T, T],
  ] as const;
  const setup: (readonly [string, readonly unknown[]])[] = [
    user(1),
    user(2),
    user(3),
    ["INSERT INTO namespaces (id, name, path, kind, owner_id, created_at, updated_at) VALUES (1, 'u1', 'u1', 'user', 1, ?, ?)", [T, T]],
    ...[1, 2].map((id) => [
      'INSERT INTO projects (id, name, path, namespace_id, runners_token_salt, runners_token_hash, last_activity_at, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)',
      [id, `p${id}`, `p${id}`, 's', `rt${id}`, T, T, T],
    ] as const),
  ];
  const issue = (id: number, project: number, author: number | null, confidential = false, deleted: string | null = null) =>
    [
      'INSERT INTO issues (id, project_id, iid, title, confidential, author_id, deleted_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [id, project, id, `issue ${id}`, confidential, author, deleted, T, T],
    ] as const;

  async function countsAfterEachStep(
    steps: (readonly [string, string, readonly unknown[]])[],
    read: string,
    live: string,
  ): Promise<string[]> {
    const diffs: string[] = [];
    for (const [sql, args] of setup) {
      await lite.run(sql, args);
      await pg.run(sql, args);
    }
    const norm = (rows: Record<string, unknown>[]) => rows.map((r) => Object.values(r).map((v) => (typeof v === 'boolean' ? Number(v) : v)).join('|'));
    for (const [label, sql, args] of steps) {
      for (const [engine, db] of [['SQLite', lite], ['PostgreSQL', pg]] as const) {
        await db.run(sql, args).catch((e: Error) => {
          throw new Error(`${label} on ${engine}: ${e.message}`);
        });
      }
      const a = norm(await lite.all(read));
      const b = norm(await pg.all(read));
      if (a.join(' ; ') !== b.join(' ; ')) diffs.push(`after ${label}: SQLite [${a.join(' ; ')}], PostgreSQL [${b.join(' ; ')}]`);
      // And the counts are right: the non-zero rows are a recount of the live rows.
      const recount = norm(await pg.all(live));
      const nonZero = b.filter((r) => !r.endsWith('|0'));
      if (nonZero.join(' ; ') !== recount.join(' ; ')) diffs.push(`after ${label}: PostgreSQL counts [${nonZero.join(' ; ')}], recount [${recount.join(' ; ')}]`);
    }
    return diffs;
  }

  it('keeps the live issue counts (0018 triggers) as SQLite does', async () => {
    const later = '2026-11-25T11:00:00.000Z';
    const steps: (readonly [string, string, readonly unknown[]])[] = [
      ['insert issue 1', ...issue(1, 1, 1)],
      ['insert confidential issue 2', ...issue(2, 1, 1, true)],
      ['insert issue 3 of user 2', ...issue(3, 1, 2)],
      ['insert deleted issue 4', ...issue(4, 1, 1, false, later)],
      ['insert issue 5 without author', ...issue(5, 2, null)],
      ['insert issue 6 of user 3', ...issue(6, 2, 3)],
      ['close issue 1', "UPDATE issues SET state = 'closed', closed_at = ? WHERE id = 1", [later]],
      ['reopen issue 1', "UPDATE issues SET state = 'opened', closed_at = NULL WHERE id = 1", []],
      ['close issue 1 again', "UPDATE issues SET state = 'closed' WHERE id = 1", []],
      ['retitle issue 3', "UPDATE issues SET title = 'new', updated_at = ? WHERE id = 3", [later]],
      ['set issue 3 state to itself', 'UPDATE issues SET state = state WHERE id = 3', []],
      ['make issue 3 confidential', 'UPDATE issues SET confidential = ? WHERE id = 3', [true]],
      ['soft-delete issue 2', 'UPDATE issues SET deleted_at = ? WHERE id = 2', [later]],
      ['restore issue 4', 'UPDATE issues SET deleted_at = NULL WHERE id = 4', []],
      ['move issue 5 to project 1', 'UPDATE issues SET project_id = 1 WHERE id = 5', []],
      ['give issue 5 an author', 'UPDATE issues SET author_id = 2 WHERE id = 5', []],
      ['delete issue 3', 'DELETE FROM issues WHERE id = 3', []],
      ['delete soft-deleted issue 2', 'DELETE FROM issues WHERE id = 2', []],
      ['delete user 2 (author set to NULL)', 'DELETE FROM users WHERE id = 2', []],
      ['delete project 2 (its issues cascade)', 'DELETE FROM projects WHERE id = 2', []],
    ];
    const diffs = await countsAfterEachStep(
      steps,
      'SELECT project_id, author_id, state, confidential, n FROM issue_counts ORDER BY project_id, author_id, state, confidential',
      `SELECT project_id, COALESCE(author_id, 0) AS author_id, state, confidential, COUNT(*) AS n FROM issues WHERE deleted_at IS NULL
        GROUP BY project_id, COALESCE(author_id, 0), state, confidential ORDER BY 1, 2, 3, 4`,
    );
    expect(diffs).toEqual([]);
  });

  it('keeps the live merge request counts (0023 triggers) as SQLite does', async () => {
    for (const db of [lite, pg]) {
      await db.run('DELETE FROM projects');
      await db.run('DELETE FROM namespaces');
      await db.run('DELETE FROM users');
    }
    const later = '2026-11-25T11:00:00.000Z';
    const mr = (id: number, project: number, state = 'opened', deleted: string | null = null) =>
      [
        `insert merge request ${id} (${state}${deleted ? ', deleted' : ''})`,
        'INSERT INTO merge_requests (id, target_project_id, iid, source_project_id, source_branch, target_branch, title, state, author_id, deleted_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [id, project, id, project, `b${id}`, 'master', `mr ${id}`, state, 1, deleted, T, T],
      ] as const;
    const steps: (readonly [string, string, readonly unknown[]])[] = [
      mr(1, 1),
      mr(2, 1),
      mr(3, 1, 'merged'),
      mr(4, 1, 'opened', later),
      mr(5, 2),
      ['close merge request 1', "UPDATE merge_requests SET state = 'closed', closed_at = ? WHERE id = 1", [later]],
      ['reopen merge request 1', "UPDATE merge_requests SET state = 'reopened' WHERE id = 1", []],
      ['lock merge request 2', "UPDATE merge_requests SET state = 'locked', locked_at = ?, lock_state = 'opened' WHERE id = 2", [later]],
      ['merge merge request 2', "UPDATE merge_requests SET state = 'merged', merged_at = ? WHERE id = 2", [later]],
      ['retitle merge request 5', "UPDATE merge_requests SET title = 'new' WHERE id = 5", []],
      ['soft-delete merge request 3', 'UPDATE merge_requests SET deleted_at = ? WHERE id = 3', [later]],
      ['restore merge request 4', 'UPDATE merge_requests SET deleted_at = NULL WHERE id = 4', []],
      ['retarget merge request 5 to project 1', 'UPDATE merge_requests SET target_project_id = 1 WHERE id = 5', []],
      ['delete merge request 1', 'DELETE FROM merge_requests WHERE id = 1', []],
      ['delete soft-deleted merge request 3', 'DELETE FROM merge_requests WHERE id = 3', []],
      mr(6, 2),
      ['delete project 2 (its merge requests cascade)', 'DELETE FROM projects WHERE id = 2', []],
    ];
    const diffs = await countsAfterEachStep(
      steps,
      'SELECT project_id, state, n FROM merge_request_counts ORDER BY project_id, state',
      `SELECT target_project_id AS project_id, state, COUNT(*) AS n FROM merge_requests WHERE deleted_at IS NULL
        GROUP BY target_project_id, state ORDER BY 1, 2`,
    );
    expect(diffs).toEqual([]);
  });
});

// Runs on SQLite alone too: the bug the step-by-step comparison found (fixed by migration 0026).
describe('the SQLite issue counts when users are deleted', () => {
  it('moves the live issues of each deleted author to author 0 (0026: an upsert no foreign-key action overrides)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gantry-counts-'));
    const db = openDatabase(join(dir, 'gantry.db'));
    try {
      const c = db;
      const T = '2026-11-25T10:00:00.000Z';
      for (const id of [1, 2, 3]) {
        c.prepare(`INSERT INTO users (id, username, email, name, password_hash, private_token_salt, private_token_hash, created_at, updated_at)
          VALUES (?, ?, ?, 'n', 'x', 's', ?, ?, ?)`).run(id, `u${id}`, `u${id}@example.com`, `h${id}`, T, T);
      }
      c.prepare("INSERT INTO namespaces (id, name, path, kind, owner_id, created_at, updated_at) VALUES (1, 'u3', 'u3', 'user', 3, ?, ?)").run(T, T);
      c.prepare(`INSERT INTO projects (id, name, path, namespace_id, runners_token_salt, runners_token_hash, last_activity_at, created_at, updated_at)
        VALUES (1, 'p', 'p', 1, 's', 'r', ?, ?, ?)`).run(T, T, T);
      const issue = c.prepare('INSERT INTO issues (project_id, iid, title, author_id, created_at, updated_at) VALUES (1, ?, ?, ?, ?, ?)');
      issue.run(1, 'a', 1, T, T);
      issue.run(2, 'b', 2, T, T);
      c.prepare('DELETE FROM users WHERE id = 1').run();
      // Before 0026: "UNIQUE constraint failed: issue_counts..." (the author-0 row existed already).
      c.prepare('DELETE FROM users WHERE id = 2').run();
      expect(c.prepare('SELECT author_id, state, n FROM issue_counts WHERE n > 0').all()).toEqual([{ author_id: 0, state: 'opened', n: 2 }]);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!PG_URL)('migratePostgres', () => {
  const open = async () => {
    const fresh = await createTestDatabase(PG_URL!);
    const pools = [await postgresDatabase(fresh.url, { max: 2 }), await postgresDatabase(fresh.url, { max: 2 })];
    return {
      a: pools[0]!,
      b: pools[1]!,
      close: async () => {
        for (const p of pools) await p.close();
        await fresh.drop();
      },
    };
  };
  const recorded = (db: Database) => db.all<{ version: number; name: string; applied_at: string }>('SELECT version, name, applied_at FROM schema_migrations ORDER BY version');

  it('applied twice is a no-op', async () => {
    const { a, close } = await open();
    try {
      await migratePostgres(a);
      const first = await recorded(a);
      expect(first.map((r) => r.name)).toEqual(knownPostgresMigrations().map((m) => m.name));
      await migratePostgres(a);
      expect(await recorded(a)).toEqual(first);
    } finally {
      await close();
    }
  });

  it('two runners at once (two pools) apply each migration once', async () => {
    const { a, b, close } = await open();
    try {
      await Promise.all([migratePostgres(a), migratePostgres(b)]);
      expect((await recorded(b)).map((r) => r.version)).toEqual(knownPostgresMigrations().map((m) => m.version));
      expect(await a.get('SELECT COUNT(*) AS n FROM oauth_applications')).toEqual({ n: 1 });
    } finally {
      await close();
    }
  });

  it('applies a later migration, and refuses a database newer than the code', async () => {
    const { a, b, close } = await open();
    try {
      const known = knownPostgresMigrations();
      const next = { version: 9998, name: '9998_next.sql', sql: 'CREATE TABLE h2_next (id integer); CREATE INDEX h2_next_id ON h2_next (id);' };
      await migratePostgres(a);
      await Promise.all([migratePostgres(a, [...known, next]), migratePostgres(b, [...known, next])]);
      expect((await recorded(a)).at(-1)?.version).toBe(9998);
      expect(await a.get('SELECT COUNT(*) AS n FROM h2_next')).toEqual({ n: 0 });
      const refused = migratePostgres(b, known);
      await expect(refused).rejects.toBeInstanceOf(SchemaError);
      await expect(refused).rejects.toThrow(`(version 9998) is newer than this gantryd knows (version ${known.at(-1)!.version})`);
    } finally {
      await close();
    }
  });

  it('refuses to build the schema in a database that holds other tables', async () => {
    const { a, close } = await open();
    try {
      await a.run('CREATE TABLE someone_elses (id integer)');
      const refused = migratePostgres(a);
      await expect(refused).rejects.toBeInstanceOf(SchemaError);
      await expect(refused).rejects.toThrow('the database has tables (someone_elses) but no Gantry schema');
      expect(await a.get("SELECT to_regclass('users') AS t")).toEqual({ t: null });
    } finally {
      await close();
    }
  });

  it('leaves nothing of a migration that fails', async () => {
    const { a, close } = await open();
    try {
      const known = knownPostgresMigrations();
      await migratePostgres(a);
      const broken = { version: 9999, name: '9999_broken.sql', sql: 'CREATE TABLE h2_half (id integer); SELECT no_such_function();' };
      await expect(migratePostgres(a, [...known, broken])).rejects.toThrow(/no_such_function/);
      expect(await a.get("SELECT to_regclass('h2_half') AS t")).toEqual({ t: null });
      expect((await recorded(a)).map((r) => r.version)).toEqual(known.map((m) => m.version));
    } finally {
      await close();
    }
  });
});
