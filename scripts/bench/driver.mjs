// SQLite driver comparison: better-sqlite3 (what Gantry uses) against Node's built-in node:sqlite (DatabaseSync),
// alternated in one run on the same data, with the statement shapes of Gantry's hot paths: a token lookup by
// primary key, a 20-row page by index with ORDER BY ... LIMIT/OFFSET, a count, and a write transaction of three
// inserts with synchronous=FULL in WAL mode (what a POST costs the driver). Run: npm run bench driver.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

const ROWS = 100_000;
const ROUNDS = 3;

function schema(exec) {
  exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;
    CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, title TEXT NOT NULL, state TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS items_project ON items(project_id, created_at, id);`);
}

function openBetter(file) {
  const Database = require('better-sqlite3');
  const db = new Database(file);
  schema((s) => db.exec(s));
  return {
    name: `better-sqlite3 ${require('better-sqlite3/package.json').version}`,
    prepare: (sql) => db.prepare(sql),
    tx: (fn) => db.transaction(fn)(),
    close: () => db.close(),
  };
}

function openNode(file) {
  const { DatabaseSync } = require('node:sqlite');
  const db = new DatabaseSync(file);
  schema((s) => db.exec(s));
  return {
    name: `node:sqlite (Node ${process.versions.node})`,
    prepare: (sql) => db.prepare(sql),
    tx: (fn) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        fn();
        db.exec('COMMIT');
      } catch (e) {
        db.exec('ROLLBACK');
        throw e;
      }
    },
    close: () => db.close(),
  };
}

function seed(d) {
  const ins = d.prepare('INSERT INTO items (project_id, title, state, created_at) VALUES (?, ?, ?, ?)');
  d.tx(() => {
    for (let i = 0; i < ROWS; i++) ins.run(i % 10, `item ${i}`, i % 3 ? 'opened' : 'closed', new Date(1_700_000_000_000 + i * 1000).toISOString());
  });
}

/** Operations per second of `fn` over about `ms` milliseconds. */
function rate(fn, ms = 400) {
  for (let i = 0; i < 200; i++) fn(i);
  let n = 0;
  const start = process.hrtime.bigint();
  const until = start + BigInt(ms) * 1_000_000n;
  let t = start;
  while (t < until) {
    for (let k = 0; k < 50; k++) fn(n++);
    t = process.hrtime.bigint();
  }
  return n / (Number(t - start) / 1e9);
}

function measure(d) {
  const byId = d.prepare('SELECT * FROM items WHERE id = ?');
  const page = d.prepare('SELECT * FROM items WHERE project_id = ? ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET ?');
  const count = d.prepare("SELECT count(*) AS n FROM items WHERE project_id = ? AND state = 'opened'");
  const ins = d.prepare('INSERT INTO items (project_id, title, state, created_at) VALUES (?, ?, ?, ?)');
  return {
    'get by id': rate((i) => byId.get((i % ROWS) + 1)),
    '20-row page': rate((i) => page.all(i % 10, (i % 50) * 20)),
    'count (index)': rate((i) => count.get(i % 10), 300),
    'write tx (3 inserts, fsync)': rate((i) => d.tx(() => { for (let k = 0; k < 3; k++) ins.run(i % 10, 'w', 'opened', '2026-01-01T00:00:00.000Z'); }), 600),
  };
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-driver-bench-'));
  try {
    const drivers = [['better', openBetter], ['node', openNode]];
    const dbs = Object.fromEntries(drivers.map(([k, open]) => [k, open(join(dir, `${k}.db`))]));
    for (const d of Object.values(dbs)) seed(d);
    const results = {};
    for (let r = 0; r < ROUNDS; r++) {
      for (const [k] of drivers) {
        const m = measure(dbs[k]);
        for (const [op, v] of Object.entries(m)) ((results[op] ??= {})[k] ??= []).push(v);
      }
    }
    const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const lines = [`| operation (ops/s, median of ${ROUNDS} alternated rounds) | ${dbs.better.name} | ${dbs.node.name} | node:sqlite / better-sqlite3 |`, '|---|---|---|---|'];
    for (const [op, v] of Object.entries(results)) {
      const b = median(v.better);
      const n = median(v.node);
      lines.push(`| ${op} | ${Math.round(b).toLocaleString('en')} | ${Math.round(n).toLocaleString('en')} | ${(n / b).toFixed(2)} |`);
    }
    for (const d of Object.values(dbs)) d.close();
    console.log(lines.join('\n'));
    return lines.join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
