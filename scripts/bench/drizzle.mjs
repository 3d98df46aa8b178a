// drizzle suite (`npm run bench -- drizzle`, no daemon; issue 22 item 9): what drizzle-orm's query builder costs or
// saves against the data layer's hand-written SQL, on the daemon's own schema (dist/, migrated by openDatabase) with
// 10,000 projects, alternated in one run (median of ROUNDS rounds). Four ways to run the same statement:
//   - raw: a better-sqlite3 statement prepared once, called synchronously (the floor: no layer at all);
//   - data layer: ctx.data (db/layer/sqlite.ts: text -> cached statement, one promise per call) and the row
//     converter of db/rows.ts (toProject), what the ported code does;
//   - drizzle: the query built with drizzle's builder on every call, as the code before the port did
//     (`db.select().from(projects).where(eq(...)).get()`), rows mapped to its typed objects;
//   - drizzle prepared: the same query built once with `.prepare()` and placeholders (drizzle's fastest way, which the
//     code before the port used only in a few places).
// Plus the CPU drizzle spends building the SQL text of each query (`.toSQL()`), a cost it would add on PostgreSQL too,
// where a statement otherwise costs its round trip.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, machine, writeSection } from './lib.mjs';

const PROJECTS = 10_000;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Operations per second of `fn` (sync or async) over `ms` milliseconds, at least `min` calls. */
async function opsPerSecond(fn, ms, min = 200) {
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (n < min || t - t0 < ms) {
    for (let i = 0; i < 50; i++) {
      const r = fn(n++);
      if (r && typeof r.then === 'function') await r;
    }
    t = performance.now();
  }
  return (n / (t - t0)) * 1000;
}

export async function run({ rounds = Number(process.env.BENCH_ROUNDS ?? 5), ms = Number(process.env.BENCH_MS ?? 400) } = {}) {
  const { openDatabase } = await import(join(ROOT, 'dist/daemon/db/connection.js'));
  const { sqliteDatabase } = await import(join(ROOT, 'dist/daemon/db/layer/sqlite.js'));
  const { toProject } = await import(join(ROOT, 'dist/daemon/db/rows.js'));
  const { projects } = await import(join(ROOT, 'dist/daemon/db/schema.js'));
  const { eq, desc, sql } = await import('drizzle-orm');
  const dir = mkdtempSync(join(tmpdir(), 'gantry-bench-drizzle-'));
  const db = openDatabase(join(dir, 'gantry.db'));
  const conn = db.$client;
  const data = sqliteDatabase(conn);
  try {
    const now = new Date().toISOString();
    conn.prepare(`INSERT INTO users (username, email, name, password_hash, private_token_salt, private_token_hash, created_at, updated_at)
      VALUES ('bench', 'bench@example.com', 'Bench', 'x', 's', 'h', ?, ?)`).run(now, now);
    conn.prepare(`INSERT INTO namespaces (name, path, kind, owner_id, created_at, updated_at) VALUES ('bench', 'bench', 'user', 1, ?, ?)`).run(now, now);
    const insert = conn.prepare(`INSERT INTO projects (name, path, namespace_id, description, runners_token_salt, runners_token_hash, last_activity_at, created_at, updated_at)
      VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?)`);
    conn.transaction(() => {
      for (let i = 1; i <= PROJECTS; i++) insert.run(`project ${i}`, `project-${i}`, `the project number ${i}`, `salt${i}`, `hash${i}`, now, now, now);
    })();
    let created = 0;
    const fresh = () => {
      created += 1;
      return { name: `new ${created}`, path: `new-${created}-${process.pid}`, salt: `ns${created}`, hash: `nh${created}-${Math.random()}` };
    };
    const id = (i) => 1 + ((i * 7919) % PROJECTS);
    const off = (i) => (i % 50) * 20;

    // The statements, each four ways.
    const rawGet = conn.prepare('SELECT * FROM projects WHERE id = ?');
    const rawPage = conn.prepare('SELECT * FROM projects WHERE namespace_id = ? ORDER BY id DESC LIMIT 20 OFFSET ?');
    const rawInsert = conn.prepare(`INSERT INTO projects (name, path, namespace_id, runners_token_salt, runners_token_hash, last_activity_at, created_at, updated_at)
      VALUES (?, ?, 1, ?, ?, ?, ?, ?) RETURNING id`);
    const dzGetPrepared = db.select().from(projects).where(eq(projects.id, sql.placeholder('id'))).prepare();
    const dzPagePrepared = db.select().from(projects).where(eq(projects.namespaceId, sql.placeholder('ns'))).orderBy(desc(projects.id)).limit(20).offset(sql.placeholder('off')).prepare();
    const values = (p) => ({ name: p.name, path: p.path, namespaceId: 1, runnersTokenSalt: p.salt, runnersTokenHash: p.hash, lastActivityAt: now, createdAt: now, updatedAt: now });
    const dzInsertPrepared = db.insert(projects).values({
      name: sql.placeholder('name'), path: sql.placeholder('path'), namespaceId: 1, runnersTokenSalt: sql.placeholder('salt'), runnersTokenHash: sql.placeholder('hash'),
      lastActivityAt: now, createdAt: now, updatedAt: now,
    }).returning({ id: projects.id }).prepare();
    const INSERT = `INSERT INTO projects (name, path, namespace_id, runners_token_salt, runners_token_hash, last_activity_at, created_at, updated_at)
      VALUES (?, ?, 1, ?, ?, ?, ?, ?) RETURNING id`;

    const ops = [
      {
        name: 'get a project by id', ways: {
          raw: (i) => rawGet.get(id(i)),
          'data layer': async (i) => toProject(await data.get('SELECT * FROM projects WHERE id = ?', [id(i)])),
          drizzle: (i) => db.select().from(projects).where(eq(projects.id, id(i))).get(),
          'drizzle prepared': (i) => dzGetPrepared.get({ id: id(i) }),
        },
        build: (i) => db.select().from(projects).where(eq(projects.id, id(i))).toSQL(),
      },
      {
        name: 'a 20-row page (ORDER BY id DESC LIMIT 20 OFFSET n)', ways: {
          raw: (i) => rawPage.all(1, off(i)),
          'data layer': async (i) => (await data.all('SELECT * FROM projects WHERE namespace_id = ? ORDER BY id DESC LIMIT 20 OFFSET ?', [1, off(i)])).map(toProject),
          drizzle: (i) => db.select().from(projects).where(eq(projects.namespaceId, 1)).orderBy(desc(projects.id)).limit(20).offset(off(i)).all(),
          'drizzle prepared': (i) => dzPagePrepared.all({ ns: 1, off: off(i) }),
        },
        build: (i) => db.select().from(projects).where(eq(projects.namespaceId, 1)).orderBy(desc(projects.id)).limit(20).offset(off(i)).toSQL(),
      },
      {
        name: 'insert a project in a transaction (synchronous=FULL)', ways: {
          raw: () => { const p = fresh(); conn.transaction(() => rawInsert.get(p.name, p.path, p.salt, p.hash, now, now, now))(); },
          'data layer': () => { const p = fresh(); return data.transaction((tx) => tx.run(INSERT, [p.name, p.path, p.salt, p.hash, now, now, now])); },
          drizzle: () => { const p = fresh(); db.transaction((tx) => tx.insert(projects).values(values(p)).returning({ id: projects.id }).get()); },
          'drizzle prepared': () => { const p = fresh(); db.transaction(() => dzInsertPrepared.get(p)); },
        },
        build: () => db.insert(projects).values(values(fresh())).returning({ id: projects.id }).toSQL(),
      },
    ];
    const ways = ['raw', 'data layer', 'drizzle', 'drizzle prepared'];
    const results = ops.map(() => Object.fromEntries([...ways, 'build'].map((w) => [w, []])));
    // One round not recorded: every way compiled by V8 before it is timed.
    for (const op of ops) for (const w of ways) await opsPerSecond(op.ways[w], ms / 4, 20);
    for (let r = 0; r < rounds; r++) {
      process.stderr.write(`bench drizzle: round ${r + 1}/${rounds}\n`);
      for (const [k, op] of ops.entries()) {
        // writes get a shorter window: each is an fsync
        const window = k === 2 ? ms / 2 : ms;
        for (const w of ways) results[k][w].push(await opsPerSecond(op.ways[w], window, k === 2 ? 20 : 200));
        results[k].build.push(await opsPerSecond(op.build, ms / 2));
      }
    }
    const fmt = (x) => Math.round(x).toLocaleString('en-US');
    const us = (x) => (1e6 / x).toFixed(1);
    const rows = ops.map((op, k) => {
      const m = Object.fromEntries([...ways, 'build'].map((w) => [w, median(results[k][w])]));
      const cell = (w) => `${fmt(m[w])} (${us(m[w])} µs; ${(m[w] / m.raw).toFixed(2)})`;
      return `| ${op.name} | ${ways.map(cell).join(' | ')} | ${us(m.build)} µs |`;
    });
    const md = `## drizzle-orm's query builder against the data layer's SQL (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}, **measured under load** (the 2 cores shared with other work: read the ratios, not the
absolute figures). \`npm run bench -- drizzle\` (scripts/bench/drizzle.mjs): the daemon's SQLite schema (migrated by
openDatabase) with ${PROJECTS.toLocaleString('en-US')} projects, no daemon; each statement run four ways, alternated, ${rounds} rounds, the median shown.
Operations per second (in brackets: µs per operation; the ratio to raw better-sqlite3, 1.00 = no cost over the driver):

| statement | raw better-sqlite3 (prepared once) | data layer (ctx.data + rows.ts converter) | drizzle query builder (built per call) | drizzle \`.prepare()\` (built once) | drizzle building the SQL alone (\`.toSQL()\`) |
|---|---|---|---|---|---|
${rows.join('\n')}

"drizzle query builder" is how the code before the port ran most statements; "drizzle building the SQL alone" is
the CPU it spends per statement before the driver is called, on either engine (docs/decisions.md, the drizzle row).`;
    writeSection('drizzle', md);
    process.stdout.write(`${md}\n`);
  } finally {
    conn.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
