// Lists suite (issue 26 item 2): a project's issue and merge request lists, default order and the common filters, on
// 100,000 issues and 50,000 merge requests in one project and 1,000,000 issues in all (seeded with SQL straight into
// the database while the daemon is stopped), on SQLite and, with GANTRY_BENCH_DATABASE_URL (or GANTRY_TEST_DATABASE_URL)
// naming a PostgreSQL server, on a fresh PostgreSQL database beside it. Per engine: each request against the floor (a
// bare Fastify answering the same bytes, alternated in the same run, 4 connections, the owner's PRIVATE-TOKEN); paced
// at 500 req/s (open loop) on one page asked again and on every page in turn (no kept answer can serve those); and the
// first page against the last, each request with a URL of its own (so nothing kept answers it).
// Run: npm run bench -- lists (BENCH_SECONDS: seconds per round, default 3).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { againstReference, api, machine, paced, rootToken, rssMb, startDaemon, startReference, writeSection } from './lib.mjs';
import { freshPostgres } from './engines.mjs';

const require = createRequire(import.meta.url);
const ISSUES = Number(process.env.BENCH_LIST_ISSUES ?? 100_000);
const MRS = Number(process.env.BENCH_LIST_MRS ?? 50_000);
const ALL_ISSUES = Number(process.env.BENCH_ALL_ISSUES ?? 1_000_000);

/**
 * The seed, one statement per table on either engine (a recursive count on SQLite, generate_series on PostgreSQL): in
 * project `a` ISSUES issues (every third closed, every second assigned to `alice`, every fourth in milestone `m`,
 * labels bug/feature/ui in turn) and MRS merge requests (every third merged, every fifth closed); in project `b` the
 * rest of ALL_ISSUES.
 */
function seedStatements(engine, { a, b, root, alice, m, labels }) {
  const series = (n, body) => (engine === 'sqlite'
    ? `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}) ${body('s')}`
    : body(`generate_series(1, ${n}) AS s(i)`));
  const at = engine === 'sqlite'
    ? "strftime('%Y-%m-%dT%H:%M:%fZ', '2024-01-01', '+' || i || ' minutes')"
    : "timestamptz '2024-01-01T00:00:00Z' + i * interval '1 minute'";
  return [
    series(ISSUES, (from) => `INSERT INTO issues (project_id, iid, title, description, state, author_id, assignee_id, milestone_id, created_at, updated_at)
      SELECT ${a}, i, 'Issue ' || i, 'Description of issue ' || i, CASE WHEN i % 3 = 0 THEN 'closed' ELSE 'opened' END, ${root},
        CASE WHEN i % 2 = 0 THEN ${alice} END, CASE WHEN i % 4 = 0 THEN ${m} END, ${at}, ${at} FROM ${from}`),
    `INSERT INTO label_links (label_id, target_type, target_id, created_at)
      SELECT CASE iid % 3 WHEN 0 THEN ${labels[0]} WHEN 1 THEN ${labels[1]} ELSE ${labels[2]} END, 'Issue', id, created_at FROM issues WHERE project_id = ${a}`,
    series(MRS, (from) => `INSERT INTO merge_requests (target_project_id, iid, source_project_id, source_branch, target_branch, title, description, state,
        merge_status, author_id, assignee_id, created_at, updated_at)
      SELECT ${a}, i, ${a}, 'seed-' || i, 'master', 'Merge request ' || i, 'Description ' || i,
        CASE WHEN i % 3 = 0 THEN 'merged' WHEN i % 5 = 0 THEN 'closed' ELSE 'opened' END, 'can_be_merged', ${root},
        CASE WHEN i % 2 = 0 THEN ${alice} END, ${at}, ${at} FROM ${from}`),
    series(ALL_ISSUES - ISSUES, (from) => `INSERT INTO issues (project_id, iid, title, description, state, author_id, created_at, updated_at)
      SELECT ${b}, i, 'Issue ' || i, NULL, CASE WHEN i % 3 = 0 THEN 'closed' ELSE 'opened' END, ${root}, ${at}, ${at} FROM ${from}`),
  ];
}

export async function seed(engine, dataDir, dbUrl, ids) {
  const statements = seedStatements(engine, ids);
  if (engine === 'sqlite') {
    const Database = require('better-sqlite3');
    const db = new Database(join(dataDir, 'gantry.db'));
    db.pragma('journal_mode = WAL');
    db.transaction(() => { for (const s of statements) db.prepare(s).run(); })();
    db.exec('ANALYZE');
    db.close();
    return;
  }
  // PostgreSQL: the live-count triggers are off for the load and the counts made after it in one statement each.
  // (Each issue's trigger updates its count row; 100,000 updates of one row in one transaction leave as many dead
  // versions of it for the next update to walk past: hours for a million rows.)
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  await c.query('BEGIN');
  await c.query('ALTER TABLE issues DISABLE TRIGGER USER');
  await c.query('ALTER TABLE merge_requests DISABLE TRIGGER USER');
  for (const s of statements) await c.query(s);
  await c.query('ALTER TABLE issues ENABLE TRIGGER USER');
  await c.query('ALTER TABLE merge_requests ENABLE TRIGGER USER');
  await c.query(`INSERT INTO issue_counts (project_id, author_id, state, confidential, n)
    SELECT project_id, COALESCE(author_id, 0), state, confidential, COUNT(*) FROM issues WHERE deleted_at IS NULL AND project_id IN (${ids.a}, ${ids.b})
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (project_id, author_id, state, confidential) DO UPDATE SET n = issue_counts.n + EXCLUDED.n`);
  await c.query(`INSERT INTO merge_request_counts (project_id, state, n)
    SELECT target_project_id, state, COUNT(*) FROM merge_requests WHERE deleted_at IS NULL AND target_project_id = ${ids.a} GROUP BY 1, 2
    ON CONFLICT (project_id, state) DO UPDATE SET n = merge_request_counts.n + EXCLUDED.n`);
  await c.query('COMMIT');
  await c.query('ANALYZE');
  await c.end();
}

/** p50 of `n` sequential GETs of `pathFor(i)` (each URL its own: no kept answer serves it). */
async function uncached(url, headers, pathFor, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(`${url}${pathFor(i)}`, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${pathFor(i)}: ${res.status}`);
    times.push(performance.now() - t);
  }
  times.sort((x, y) => x - y);
  return { p50: Number(times[Math.floor(n / 2)].toFixed(2)), p99: Number(times[Math.min(n - 1, Math.floor(n * 0.99))].toFixed(2)) };
}

/** One engine: seed, then every figure of the suite. */
async function measure(engine, seconds, pgBase) {
  const pgDb = engine === 'postgres' ? await freshPostgres(pgBase) : null;
  const env = pgDb ? { GANTRY_DATABASE_URL: pgDb.url } : {};
  let d = await startDaemon(env, { keep: true });
  const dataDir = d.dataDir;
  try {
    const token = await rootToken(d.url);
    const root = (await api(d.url, token, 'GET', '/api/v3/user')).id;
    const a = await api(d.url, token, 'POST', '/api/v3/projects', { name: 'lists-bench' });
    const b = await api(d.url, token, 'POST', '/api/v3/projects', { name: 'other-issues' });
    const alice = await api(d.url, token, 'POST', '/api/v3/users', { username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alicepassword1' });
    await api(d.url, token, 'POST', `/api/v3/projects/${a.id}/members`, { user_id: alice.id, access_level: 30 });
    const m = await api(d.url, token, 'POST', `/api/v3/projects/${a.id}/milestones`, { title: 'v1.0' });
    const labels = [];
    for (const name of ['bug', 'feature', 'ui']) labels.push((await api(d.url, token, 'POST', `/api/v3/projects/${a.id}/labels`, { name, color: '#428bca' })).id);
    await d.stop();
    process.stderr.write(`bench lists (${engine}): seeding ${ISSUES} + ${ALL_ISSUES - ISSUES} issues and ${MRS} merge requests...\n`);
    const s0 = performance.now();
    await seed(engine, dataDir, pgDb?.url, { a: a.id, b: b.id, root, alice: alice.id, m: m.id, labels });
    const seedMs = Math.round(performance.now() - s0);
    d = await startDaemon(env, { dataDir, keep: true });
    const headers = { 'private-token': token };
    const issues = `/api/v3/projects/${a.id}/issues?per_page=20`;
    const mrs = `/api/v3/projects/${a.id}/merge_requests?per_page=20`;
    const requests = [
      ['GET /projects/:id/issues?per_page=20', issues],
      ['… &state=opened', `${issues}&state=opened`],
      ['… &labels=bug', `${issues}&labels=bug`],
      ['… &milestone=v1.0', `${issues}&milestone=v1.0`],
      ['GET /projects/:id/merge_requests?per_page=20', mrs],
      ['… &state=opened', `${mrs}&state=opened`],
    ];
    const ref = await startReference(d.url, headers, requests.map(([, p]) => p));
    const ratios = [];
    try {
      for (const [title, path] of requests) ratios.push(await againstReference({ title, gantryUrl: d.url, refUrl: ref.url, path, headers, seconds }));
    } finally {
      await ref.stop();
    }
    const total = async (p) => Number((await fetch(`${d.url}${p}`, { headers })).headers.get('x-total'));
    const issuePages = Math.ceil((await total(issues)) / 20);
    const mrPages = Math.ceil((await total(mrs)) / 20);
    const pacedRows = [];
    for (const [title, path, pages] of [['GET /projects/:id/issues?per_page=20', issues, issuePages], ['GET /projects/:id/merge_requests?per_page=20', mrs, mrPages]]) {
      pacedRows.push(await paced({ url: d.url, pid: d.pid, headers, title: `${title} (one page asked again)`, rate: 500, seconds: 5, pathFor: () => path }));
      pacedRows.push(await paced({ url: d.url, pid: d.pid, headers, title: `${title}&page=1..${pages} in turn (nothing kept)`, rate: 500, seconds: 5, pathFor: (i) => `${path}&page=${1 + ((i * 7919) % pages)}` }));
      pacedRows.push(await paced({ url: d.url, pid: d.pid, headers, title: `${title}&state=opened&page=1..${Math.ceil(pages / 2)} in turn (nothing kept)`, rate: 500, seconds: 5, pathFor: (i) => `${path}&state=opened&page=${1 + ((i * 7919) % Math.ceil(pages / 2))}` }));
    }
    const depth = [];
    for (const [title, path, pages] of [['issues', issues, issuePages], ['merge requests', mrs, mrPages]]) {
      const first = await uncached(d.url, headers, (i) => `${path}&page=1&bench=${i}`, 100);
      const last = await uncached(d.url, headers, (i) => `${path}&page=${pages}&bench=${i}`, 100);
      depth.push({ title, pages, first, last });
    }
    return { ratios, pacedRows, depth, seedMs, rss: rssMb(d.pid) };
  } finally {
    await d.stop();
    const { rmSync } = await import('node:fs');
    rmSync(dataDir, { recursive: true, force: true });
    await pgDb?.drop();
  }
}

export async function run({ seconds = Number(process.env.BENCH_SECONDS ?? 3) } = {}) {
  const pgBase = process.env.GANTRY_BENCH_DATABASE_URL ?? process.env.GANTRY_TEST_DATABASE_URL;
  const engines = pgBase ? ['sqlite', 'postgres'] : ['sqlite'];
  const results = {};
  for (const e of engines) results[e] = await measure(e, seconds, pgBase);
  const names = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
  const cols = engines.map((e) => names[e]);
  const ratioTable = [
    `| request | ${engines.map((e) => `${names[e]} req/s | floor req/s | ratio`).join(' | ')} |`,
    `|---|${engines.map(() => '---:|---:|---:').join('|')}|`,
    ...results[engines[0]].ratios.map((r, i) => `| ${r.title} | ${engines.map((e) => { const x = results[e].ratios[i]; return `${x.gantry} | ${x.reference} | **${x.ratio}**`; }).join(' | ')} |`),
  ].join('\n');
  const pacedTable = [
    `| paced at 500 req/s, 5 s (open loop) | ${cols.map((c) => `${c} p50 / p99 ms | daemon ran / waited for a CPU ms (load)`).join(' | ')} | non-2xx/errors |`,
    `|---|${engines.map(() => '---:|---:').join('|')}|---:|`,
    ...results[engines[0]].pacedRows.map((r, i) => `| ${r.title} | ${engines.map((e) => { const x = results[e].pacedRows[i]; return `${x.p50} / **${x.p99}** | ${x.daemonRanMs} / ${x.daemonWaitedMs} (${x.load})`; }).join(' | ')} | ${engines.map((e) => results[e].pacedRows[i].errors).join(' / ')} |`),
  ].join('\n');
  const depthTable = [
    `| list | ${cols.map((c) => `${c} page 1 p50 / p99 ms | last page p50 / p99 ms | last / first`).join(' | ')} |`,
    `|---|${engines.map(() => '---:|---:|---:').join('|')}|`,
    ...results[engines[0]].depth.map((r, i) => `| ${r.title} (${r.pages} pages) | ${engines.map((e) => { const x = results[e].depth[i]; return `${x.first.p50} / ${x.first.p99} | ${x.last.p50} / ${x.last.p99} | **${(x.last.p50 / x.first.p50).toFixed(2)}x**`; }).join(' | ')} |`),
  ].join('\n');
  const md = `## Lists: a project's issues and merge requests (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}. **Measured while other work ran** on the same 2 cores: read each figure beside the floor of
the same run. \`npm run bench -- lists\` (scripts/bench/lists.mjs; with \`GANTRY_BENCH_DATABASE_URL=$(scripts/postgres-test-server)\`
PostgreSQL is measured beside SQLite, on a fresh database of that server). One gantryd per engine, seeded with SQL while
stopped: one project with ${ISSUES.toLocaleString('en')} issues (every third closed, labels bug/feature/ui in turn, every
fourth in milestone v1.0, every second assigned) and ${MRS.toLocaleString('en')} merge requests, and
${ALL_ISSUES.toLocaleString('en')} issues in all (the rest in a second project); seeding took ${engines.map((e) => `${names[e]} ${(results[e].seedMs / 1000).toFixed(1)} s`).join(', ')}.
Every request carries the owner's PRIVATE-TOKEN (root, who owns the project). author_id and assignee_id are not
filters of GitLab 8.13's v3 lists (they came with 9.0), so they are not measured.

Against the floor (a bare Fastify answering the very bytes Gantry answered, scripts/bench/reference-server.mjs),
alternated in the same run: autocannon, 4 connections, 3 rounds of ${seconds} s each, medians. A page asked again is
answered from its kept bytes (api/response-cache.ts: exact, kept until the next write; on PostgreSQL under the
database snapshot, one statement per request):

${ratioTable}

Paced: one request every 2 ms whatever came back, each timed from its scheduled start. Beside each: the daemon's main
thread's CPU time over the 5 s and its time runnable but waiting for a CPU (Linux schedstat), and the load average:
when the wait is a large share of the 5 s, the tail is the machine's (other work on the 2 cores, the bench's own
client among it), not the daemon's: a kept page costs the daemon about 0.3 ms of CPU and no mark-compact runs during
its row (--trace-gc; the API section says how this was traced). The paced generator is a process of its own. "In turn" rows walk the pages
in a scattered order, so no kept answer serves them: each runs the count and the page query (covering indexes, the
nearer end, keyset bookmarks on SQLite: db/keyset.ts) and the presenter:

${pacedTable}

Page depth, 100 sequential requests each, every URL its own (nothing kept serves them):

${depthTable}

Daemon RSS after the run: ${engines.map((e) => `${names[e]} ${results[e].rss} MB`).join(', ')}.
Targets (issue 26): ratio ≥ 0.3, paced p99 under 10 ms, the last page within 1.5x of the first.`;
  writeSection('lists', md);
  process.stdout.write(`${md}\n`);
}
