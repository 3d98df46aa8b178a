// Engines suite (`npm run bench -- engines`, run only when named; issue 11 item 3): the slice's hot requests on
// SQLite before the data layer (a build of BENCH_BASELINE_REV, default b7c98d7, the last commit before it, in a
// temporary git worktree), on SQLite after it (this checkout) and on PostgreSQL (this checkout with --database-url on
// a fresh database of GANTRY_BENCH_DATABASE_URL or GANTRY_TEST_DATABASE_URL, e.g. `scripts/postgres-test-server`).
// All three daemons run side by side and are measured in alternation, so the machine's drift hits them alike:
// POST /projects (BENCH_PROJECTS creates, 4 in flight), then rounds of GET /projects/:id (random) and
// GET /projects?per_page=20 at full speed (4 connections, 5 s each, median of BENCH_ROUNDS), and each daemon's RSS.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, cannon, machine, rootToken, rssMb, startDaemon, writeSection } from './lib.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A built checkout of `rev` in a temporary worktree sharing this checkout's node_modules. */
function baselineBuild(rev) {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-baseline-'));
  execFileSync('git', ['worktree', 'add', '--detach', '-f', dir, rev], { cwd: ROOT, stdio: 'ignore' });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  process.stderr.write(`bench engines: building ${rev} in ${dir}...\n`);
  execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  return { dir, remove: () => { execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' }); rmSync(dir, { recursive: true, force: true }); } };
}

/** A fresh PostgreSQL database on the server of `url`; returns its URL and a drop(). */
async function freshPostgres(url) {
  const { default: pg } = await import('pg');
  const name = `gantry_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'`);
  await admin.end();
  const u = new URL(url);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function run({ projects = Number(process.env.BENCH_PROJECTS ?? 2000), rounds = Number(process.env.BENCH_ROUNDS ?? 3) } = {}) {
  const pgBase = process.env.GANTRY_BENCH_DATABASE_URL ?? process.env.GANTRY_TEST_DATABASE_URL;
  if (!pgBase) throw new Error('bench engines needs a PostgreSQL server: GANTRY_BENCH_DATABASE_URL=$(scripts/postgres-test-server)');
  const rev = process.env.BENCH_BASELINE_REV ?? 'b7c98d7';
  const baseline = process.env.BENCH_BASELINE ? { dir: process.env.BENCH_BASELINE, remove: () => undefined } : baselineBuild(rev);
  if (!existsSync(join(baseline.dir, 'dist/daemon/gantryd.mjs'))) throw new Error(`${baseline.dir} is not built (npm run build there)`);
  const db = await freshPostgres(pgBase);
  const variants = [
    { name: `SQLite before (${rev})`, start: () => startDaemon({}, { root: baseline.dir }) },
    { name: 'SQLite after (this checkout)', start: () => startDaemon({}) },
    { name: 'PostgreSQL 15 (this checkout)', start: () => startDaemon({ GANTRY_DATABASE_URL: db.url }) },
  ];
  const running = [];
  try {
    for (const v of variants) {
      const d = await v.start();
      const token = await rootToken(d.url);
      const headers = { 'private-token': token, 'content-type': 'application/json' };
      running.push({ ...v, d, headers, get: [], list: [], fresh: [] });
    }
    // Creation, one daemon after the other (each on its own empty database).
    for (const r of running) {
      let n = 0;
      process.stderr.write(`bench engines: ${r.name}: ${projects} x POST /projects...\n`);
      const t0 = performance.now();
      r.create = await cannon({
        title: 'create', url: `${r.d.url}/api/v3/projects`, method: 'POST', headers: r.headers, amount: projects, connections: 4,
        requests: [{ setupRequest: (req) => { n += 1; return { ...req, body: JSON.stringify({ name: `bench ${n}`, path: `bench-${n}` }) }; } }],
      });
      r.create.rps = Math.round(projects / ((performance.now() - t0) / 1000));
    }
    for (let round = 0; round < rounds; round++) {
      for (const r of running) {
        process.stderr.write(`bench engines: round ${round + 1}: ${r.name}\n`);
        r.get.push((await cannon({
          title: 'get', url: `${r.d.url}/api/v3/projects/1`, headers: r.headers, duration: 5, connections: 4,
          requests: [{ setupRequest: (req) => ({ ...req, path: `/api/v3/projects/${1 + Math.floor(Math.random() * projects)}` }) }],
        })).rps);
        r.list.push((await cannon({ title: 'list', url: `${r.d.url}/api/v3/projects?per_page=20`, headers: r.headers, duration: 5, connections: 4 })).rps);
        // every request a URL of its own (an unknown parameter, ignored by the route): no kept answer on SQLite either
        let u = 0;
        r.fresh.push((await cannon({
          title: 'list uncached', url: `${r.d.url}/api/v3/projects?per_page=20`, headers: r.headers, duration: 5, connections: 4,
          requests: [{ setupRequest: (req) => ({ ...req, path: `/api/v3/projects?per_page=20&page=${1 + (u % 10)}&n=${u++}` }) }],
        })).rps);
      }
    }
    for (const r of running) r.rss = rssMb(r.d.pid);
  } finally {
    for (const r of running) await r.d.stop();
    await db.drop();
    baseline.remove();
  }
  const [before] = running;
  const ratio = (x, b) => (x / b).toFixed(2);
  const rows = running.map((r) => {
    const get = median(r.get);
    const list = median(r.list);
    const fresh = median(r.fresh);
    return `| ${r.name} | ${r.create.rps} (p99 ${r.create.p99} ms) | ${get} (${ratio(get, median(before.get))}) | ${list} (${ratio(list, median(before.list))}) | ${fresh} (${ratio(fresh, median(before.fresh))}) | ${r.rss} |`;
  });
  const md = `## Engines: SQLite before and after the data layer, and PostgreSQL (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}. \`GANTRY_BENCH_DATABASE_URL=$(scripts/postgres-test-server) npm run bench -- engines\`
(scripts/bench/engines.mjs). Three daemons side by side: SQLite at ${rev} (before the slice moved authentication, users,
projects, groups, members and settings onto \`ctx.data\`), SQLite and PostgreSQL 15 on this checkout (PostgreSQL on the
same machine, over TCP on 127.0.0.1, the test server's settings: fsync off). Each creates ${projects} projects with POST /projects (4 in
flight), then the reads run in ${rounds} alternating rounds of 5 s per daemon (4 connections, full speed; the median
is shown, with its ratio to SQLite before in brackets). RSS after the run.

| daemon | POST /projects req/s | GET /projects/:id (random) req/s | GET /projects?per_page=20 req/s (a kept page on SQLite) | the same, every request a new URL (pages 1-10: no kept answer) req/s | RSS MB |
|---|---|---|---|---|---|
${rows.join('\n')}

Rounds (req/s): ${running.map((r) => `${r.name}: get ${r.get.join(', ')}; list ${r.list.join(', ')}; new URLs ${r.fresh.join(', ')}`).join(' · ')}.
SQLite keeps a list page's bytes until the next write (the response cache); PostgreSQL keeps nothing yet (the cache is
keyed on SQLite's write counters: docs/design/postgres.md, "Caches"), so the kept-page column compares a cache hit with a
query; the new-URL column compares the queries.`;
  writeSection('engines', md);
  process.stdout.write(`${md}\n`);
}
