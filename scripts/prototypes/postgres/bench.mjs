#!/usr/bin/env node
/**
 * Prototype benchmark for docs/design/postgres.md: the database work of GET /projects/:id, GET /projects?per_page=20
 * and POST /projects, on SQLite today (synchronous), on SQLite through the proposed async layer and through Kysely,
 * and on PostgreSQL 15 through the async layer and through Kysely. Variants alternate in one run (their order
 * rotates each round); the figures are medians of the rounds. Not wired into the daemon.
 *
 *   node scripts/prototypes/postgres/bench.mjs --pg-host /tmp/pg --pg-port 55432 [--rounds 12] [--seconds 0.5]
 *     [--concurrency 8] [--only POST] [--variants sqlite-sync,sqlite-async]
 *
 * Needs a PostgreSQL server reachable as user postgres (trust auth); it creates and drops the database gantry_proto.
 * Needs `npm run build` (the baseline's create transaction uses drizzle with dist/daemon/db/schema.js).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { and, eq } from 'drizzle-orm';
import { applyDaemonMigrations, createSliceSchema, dataSet, TABLES, tokenOf } from './schema.mjs';
import { openPostgresLayer, openSqliteConnection, openSqliteLayer } from './layer.mjs';
import { asyncRequests, kyselyRequests, syncRequests } from './requests.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const { values: opt } = parseArgs({
  options: {
    'pg-host': { type: 'string', default: '/tmp/pgproto' }, 'pg-port': { type: 'string', default: '55432' },
    rounds: { type: 'string', default: '12' }, only: { type: 'string' }, variants: { type: 'string' }, seconds: { type: 'string', default: '0.5' }, concurrency: { type: 'string', default: '8' },
  },
});
const ROUNDS = Number(opt.rounds);
const SECONDS = Number(opt.seconds);
const CONC = Number(opt.concurrency);
const pgBase = { host: opt['pg-host'], port: Number(opt['pg-port']), user: 'postgres' };
const schema = await import(join(root, 'dist/daemon/db/schema.js'));


// --- data: the same rows in both engines -------------------------------------------------------------------------
const rows = dataSet();
const USERS = 200;
const PER_USER = 45;
const dir = mkdtempSync(join(tmpdir(), 'gantry-pgproto-'));
const file = join(dir, 'gantry.sqlite3');
{
  const c = openSqliteConnection(file);
  applyDaemonMigrations(c, join(root, 'daemon/db/migrations'));
  const b = (v) => (v === true ? 1 : v === false ? 0 : v);
  c.transaction(() => {
    for (const t of TABLES) {
      const cols = Object.keys(rows[t][0]);
      const ins = c.prepare(`INSERT INTO ${t} (${cols.join(',')}) VALUES (${cols.map(() => '?').join(',')})`);
      for (const r of rows[t]) ins.run(...cols.map((k) => b(r[k])));
    }
  })();
  c.exec('ANALYZE');
  c.close();
}
{
  const admin = new pg.Client({ ...pgBase, database: 'postgres' });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS gantry_proto');
  await admin.query('CREATE DATABASE gantry_proto');
  await admin.end();
  const k = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ ...pgBase, database: 'gantry_proto', max: 1 }) }) });
  await createSliceSchema(k, 'postgres');
  for (const t of TABLES) for (let i = 0; i < rows[t].length; i += 500) await k.insertInto(t).values(rows[t].slice(i, i + 500)).execute();
  const c = new pg.Client({ ...pgBase, database: 'gantry_proto' });
  await c.connect();
  for (const t of ['users', 'namespaces', 'projects', 'members', 'project_group_links']) {
    await c.query(`SELECT setval(pg_get_serial_sequence('${t}', 'id'), (SELECT max(id) FROM ${t}))`);
  }
  await c.query('CREATE TABLE write_version (v bigint NOT NULL)');
  await c.query('INSERT INTO write_version VALUES (0)');
  await c.query('ANALYZE');
  await c.end();
  await k.destroy();
}

// --- variants ------------------------------------------------------------------------------------------------------
const pgConfig = { ...pgBase, database: 'gantry_proto', max: CONC };
const syncConn = openSqliteConnection(file);
const drizzleConn = openSqliteConnection(file);
const sqliteLayer = openSqliteLayer(file);
const pgLayer = openPostgresLayer(pgConfig);
const kSqlite = new Kysely({ dialect: new SqliteDialect({ database: openSqliteConnection(file) }) });
/** better-sqlite3 with prepare() cached per text, for Kysely (its SQLite driver prepares every statement it runs). */
const statementCache = (conn) => {
  const byText = new Map();
  return { prepare: (text) => byText.get(text) ?? byText.set(text, conn.prepare(text)).get(text), close: () => conn.close() };
};
const kSqliteCached = new Kysely({ dialect: new SqliteDialect({ database: statementCache(openSqliteConnection(file)) }) });
const kPg = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool(pgConfig) }) });
const variants = {
  'sqlite-sync': { sync: true, r: syncRequests(syncConn) },
  'sqlite-drizzle': { sync: true, only: 'POST', r: syncRequests(drizzleConn, { db: drizzle(drizzleConn, { schema }), schema, eq, and }) },
  'sqlite-async': { r: asyncRequests(sqliteLayer) },
  'sqlite-kysely': { r: kyselyRequests(kSqlite, 'sqlite') },
  'sqlite-kysely-cached': { r: kyselyRequests(kSqliteCached, 'sqlite') },
  'sqlite-async-batched': { r: asyncRequests(sqliteLayer, { batched: true }) },
  'pg-async': { r: asyncRequests(pgLayer) },
  'pg-async-batched': { r: asyncRequests(pgLayer, { batched: true }) },
  'pg-version-row': { r: asyncRequests(pgLayer, { batched: true, versioned: 'row' }) },
  'pg-version-snapshot': { r: asyncRequests(pgLayer, { batched: true, versioned: 'snapshot' }) },
  'pg-kysely': { r: kyselyRequests(kPg, 'postgres') },
};
const names = opt.variants ? opt.variants.split(',') : Object.keys(variants);

// Same answers from every variant before anything is timed.
const canon = (x) => JSON.stringify(x, (k, v) => (k === 'runners_token' ? 'set' : v));
for (const [user, project] of [[1, 1], [7, 7 * PER_USER - 3], [150, 150 * PER_USER], [33, 33 * PER_USER - 11]]) {
  const answers = [];
  for (const n of names.filter((x) => !variants[x].only)) {
    answers.push(canon(await variants[n].r.getProject(tokenOf(user), project)));
    answers.push(canon(await variants[n].r.listProjects(tokenOf(user))));
  }
  for (let i = 2; i < answers.length; i++) {
    if (answers[i] !== answers[i % 2]) throw new Error(`variant ${names.filter((x) => !variants[x].only)[Math.floor(i / 2)]} answers differently for user ${user}`);
  }
}

// --- timing ----------------------------------------------------------------------------------------------------------
let seq = 0;
const requests = {
  'GET /projects/:id': (r, i) => {
    const u = (i % 150) + 1;
    return r.getProject(tokenOf(u), (u - 1) * PER_USER + ((i * 7) % PER_USER) + 1);
  },
  'GET /projects?per_page=20': (r, i) => r.listProjects(tokenOf((i % 150) + 1)),
  'POST /projects': (r, i) => r.createProject(tokenOf(151 + (i % 50)), `Bench-${process.pid}-${++seq}`),
};

/** Operations per second of `fn` for SECONDS: serial when sync, else `conc` workers each awaiting its own operation. */
async function rate(v, fn, conc) {
  const end = performance.now() + SECONDS * 1000;
  let n = 0;
  if (v.sync) {
    while (performance.now() < end) fn(v.r, n++);
  } else {
    await Promise.all(Array.from({ length: conc }, async () => {
      while (performance.now() < end) await fn(v.r, n++);
    }));
  }
  return n / SECONDS;
}

/** Remove the projects a POST cell created (untimed), so every cell runs on the same data set; checkpoint SQLite's WAL. */
const cleanupSqlite = openSqliteConnection(file);
const cleanupPg = new pg.Client(pgConfig);
await cleanupPg.connect();
const CLEANUP = [
  `DELETE FROM events WHERE project_id IN (SELECT id FROM projects WHERE name LIKE 'Bench-%')`,
  `DELETE FROM members WHERE source_type = 'Project' AND source_id IN (SELECT id FROM projects WHERE name LIKE 'Bench-%')`,
  `DELETE FROM projects WHERE name LIKE 'Bench-%'`,
];
async function cleanup(variant) {
  if (variant.startsWith('pg')) {
    for (const q of CLEANUP) await cleanupPg.query(q);
    await cleanupPg.query('VACUUM ANALYZE projects');
  } else {
    cleanupSqlite.transaction(() => CLEANUP.forEach((q) => cleanupSqlite.exec(q)))();
    cleanupSqlite.pragma('wal_checkpoint(TRUNCATE)');
  }
}

const load = [loadavg()[0]];
const results = {}; // request -> conc -> variant -> [rates]
const concs = [1, CONC];
for (let round = 0; round < ROUNDS; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length]);
  for (const [req, fn] of Object.entries(requests)) {
    if (opt.only && !req.includes(opt.only)) continue;
    for (const c of concs) {
      for (const n of order) {
        const v = variants[n];
        if ((v.sync && c !== 1) || (v.only && !req.includes(v.only))) continue;
        ((results[req] ??= {})[c] ??= {})[n] ??= [];
        results[req][c][n].push(await rate(v, fn, c));
        if (req.startsWith('POST')) await cleanup(n);
      }
    }
  }
  load.push(loadavg()[0]);
  process.stderr.write(`round ${round + 1}/${ROUNDS} done (load ${loadavg()[0].toFixed(1)})\n`);
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const fmt = (x) => Math.round(x).toLocaleString('en-US');
console.log(`\nrounds ${ROUNDS} x ${SECONDS} s per cell, medians; load average during the run ${Math.min(...load).toFixed(1)}-${Math.max(...load).toFixed(1)} on ${navigator.hardwareConcurrency} cores`);
console.log(`data: ${rows.projects.length} projects, ${USERS} users; SQLite WAL synchronous=FULL; PostgreSQL fsync on, synchronous_commit on, pool ${CONC}\n`);
console.log(`| request | in flight | ${names.join(' | ')} |`);
console.log(`|---|---|${names.map(() => '---').join('|')}|`);
const out = {};
for (const [req, byConc] of Object.entries(results)) {
  for (const c of concs) {
    const floor = median(byConc[1]['sqlite-sync'] ?? [NaN]);
    const cells = names.map((n) => {
      const m = variants[n].sync ? (byConc[1][n] ? median(byConc[1][n]) : undefined) : byConc[c][n] ? median(byConc[c][n]) : undefined;
      if (m === undefined) return '';
      (out[req] ??= {})[`${n}@${c}`] = Math.round(m);
      return n === 'sqlite-sync' ? `${fmt(m)} ops/s (${(1e6 / m).toFixed(0)} µs)` : `${fmt(m)} (${(m / floor).toFixed(2)}; ${(1e6 / m).toFixed(0)} µs)`;
    });
    console.log(`| ${req} | ${c} | ${cells.join(' | ')} |`);
  }
}
console.log('\nratio = ops/s over the synchronous SQLite loop (the floor: today\'s code, one request at a time); µs = 1e6 / ops/s');
console.log(JSON.stringify({ rounds: ROUNDS, seconds: SECONDS, load, medians: out }));

// --- paired: every iteration runs the floor and each variant on the same input, one request at a time ----------------
// On a shared, loaded machine this is steadier than throughput cells: a burst of load hits all of one iteration. The
// SQLite variants are paired apart from the PostgreSQL ones, whose background work (socket reads, the pool, their
// garbage) otherwise lands on whichever variant runs next.
const ITERATIONS = { 'GET /projects/:id': 1500, 'GET /projects?per_page=20': 300, 'POST /projects': 300 };
for (const group of [['sqlite-sync', 'sqlite-async', 'sqlite-async-batched'], ['sqlite-sync', 'pg-async', 'pg-async-batched']]) {
  const PAIRED = group.filter((n) => names.includes(n));
  if (PAIRED.length < 2 || PAIRED[0] !== 'sqlite-sync') continue;
  console.log(`\nPaired, one request at a time: ${PAIRED.join(', ')} in turn on the same input in every iteration (order rotating), 3 rounds; µs per request (median round) and the floor's time over the variant's (1.00 = as fast as today)\n`);
  console.log(`| request | iterations | ${PAIRED.join(' | ')} |`);
  console.log(`|---|---|${PAIRED.map(() => '---').join('|')}|`);
  for (const [req, fn] of Object.entries(requests)) {
    if (opt.only && !req.includes(opt.only)) continue;
    const per = Object.fromEntries(PAIRED.map((n) => [n, []]));
    for (let round = 0; round < 3; round++) {
      const spent = Object.fromEntries(PAIRED.map((n) => [n, 0]));
      for (let i = 0; i < ITERATIONS[req]; i++) {
        for (let k = 0; k < PAIRED.length; k++) {
          const n = PAIRED[(i + k) % PAIRED.length];
          const t = performance.now();
          if (variants[n].sync) fn(variants[n].r, i);
          else await fn(variants[n].r, i);
          spent[n] += performance.now() - t;
        }
      }
      for (const n of PAIRED) per[n].push((spent[n] * 1000) / ITERATIONS[req]);
      if (req.startsWith('POST')) for (const n of PAIRED) await cleanup(n);
    }
    const floor = median(per['sqlite-sync']);
    console.log(`| ${req} | ${ITERATIONS[req]} x 3 | ${PAIRED.map((n) => `${median(per[n]).toFixed(0)} µs (${(floor / median(per[n])).toFixed(2)})`).join(' | ')} |`);
  }
}

// --- per statement: what the async shape itself adds, on the cheapest statement of every request (token -> user) ---
{
  const text = 'SELECT * FROM users WHERE private_token_hash = ?';
  const hash = rows.users[0].private_token_hash;
  const direct = syncConn.prepare(text);
  const N = 20000;
  const sync = [];
  const async = [];
  for (let round = 0; round < 5; round++) {
    let t = performance.now();
    for (let i = 0; i < N; i++) direct.get(hash);
    sync.push(((performance.now() - t) * 1000) / N);
    t = performance.now();
    for (let i = 0; i < N; i++) await sqliteLayer.get(text, [hash]);
    async.push(((performance.now() - t) * 1000) / N);
  }
  console.log(`\nOne statement (token -> user), 5 rounds of ${N}: synchronous ${median(sync).toFixed(2)} µs, through the async layer ${median(async).toFixed(2)} µs: +${(median(async) - median(sync)).toFixed(2)} µs per statement`);
}
console.log(`load average at the end ${loadavg()[0].toFixed(1)}`);

syncConn.close();
drizzleConn.close();
cleanupSqlite.close();
await cleanupPg.end();
await sqliteLayer.close();
await pgLayer.close();
await kSqlite.destroy();
await kSqliteCached.destroy();
await kPg.destroy();
rmSync(dir, { recursive: true, force: true });
