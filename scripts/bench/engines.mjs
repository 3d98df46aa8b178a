// Engines suite (`npm run bench -- engines`, run only when named; issue 22 item 8): the hot request of every room on
// three daemons side by side, measured in alternation so the machine's drift hits them alike:
//   - SQLite before the port (a build of BENCH_BASELINE_REV, default b7c98d7, the last commit before the data layer,
//     with its own node_modules, built once into ~/.cache/gantry-bench/baseline-<commit>/ and reused; BENCH_BASELINE=<dir>
//     uses another built checkout, BENCH_BASELINE_REV=none leaves it out),
//   - SQLite on this checkout,
//   - PostgreSQL on this checkout, a fresh database on the server of GANTRY_BENCH_DATABASE_URL or
//     GANTRY_TEST_DATABASE_URL (e.g. `scripts/postgres-test-server`),
// and the floor: a bare Fastify process answering each request with the bytes Gantry answered (reference-server.mjs).
// Per request and daemon: the statements it sends (gantry_db_statements_total on /-/metrics, over BENCH_SEQUENTIAL
// sequential requests), its latency alone (those sequential requests: p50, p99), its latency paced at BENCH_RATE
// requests/s for BENCH_PACED_SECONDS (open loop, p50/p99), and at full speed (autocannon, 4 connections) a warm-up and BENCH_ROUNDS
// rounds of BENCH_SECONDS, daemons and floor in turn: the median rate and the serving process's CPU time per request
// (from /proc: what the 10 % bar is judged on, as it moves less with the machine's load than the rates). BENCH_DAEMONS=before
// leaves PostgreSQL out. Then two daemons behind nginx (deploy/nginx.conf) on one PostgreSQL database against one
// daemon behind the same nginx (BENCH_PAIR_ROUNDS rounds of BENCH_PAIR_SECONDS; 0 rounds leaves it out).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, api, cannon, machine, paced, rootToken, rssMb, startDaemon, startReferenceServer, writeSection } from './lib.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const git = (args, cwd) => execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/**
 * A built checkout of `rev` with its own dependencies, kept in ~/.cache/gantry-bench/baseline-<commit>/ (or under
 * $XDG_CACHE_HOME) and reused when present: the old code imports packages this checkout's node_modules no longer
 * holds (drizzle-orm), so it is unpacked with `git archive`, installed from its own package-lock.json (`npm ci
 * --ignore-scripts`: better-sqlite3 and esbuild ship prebuilt binaries for this machine) and built. It is built in a
 * sibling directory and renamed into place only once built, so an interrupted build is never taken for a finished one.
 */
function baselineBuild(rev) {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${rev}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gantry-bench');
  const dir = join(cache, `baseline-${commit}`);
  if (existsSync(join(dir, 'dist/daemon/gantryd.mjs'))) {
    process.stderr.write(`bench engines: the baseline ${rev} is built in ${dir}\n`);
    return { dir };
  }
  mkdirSync(cache, { recursive: true });
  const building = mkdtempSync(join(cache, `building-${commit.slice(0, 12)}-`));
  try {
    process.stderr.write(`bench engines: installing and building ${rev} in ${building} (a few minutes, once)...\n`);
    execFileSync('sh', ['-c', 'git archive --format=tar "$1" | tar -x -C "$2"', 'sh', commit, building], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: building, stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('npm', ['run', 'build'], { cwd: building, stdio: ['ignore', 'ignore', 'inherit'] });
    rmSync(dir, { recursive: true, force: true });
    renameSync(building, dir);
  } catch (err) {
    rmSync(building, { recursive: true, force: true });
    throw err;
  }
  process.stderr.write(`bench engines: the baseline ${rev} is built in ${dir}\n`);
  return { dir };
}

/** A fresh PostgreSQL database on the server of `url`; returns its URL and a drop(). */
export async function freshPostgres(url) {
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

/** CPU time (user + system) a process has used, in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Run `fn(i)` for i < n, `width` at a time. */
async function inFlight(n, width, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => { while (next < n) await fn(next++); }));
}

/**
 * What every daemon gets, through its API: `projects` projects, one of them ("hot") with `issues` issues, `notes`
 * notes on its first issue, `mrs` merge requests (one branch and commit each) and one CI build claimed by a runner.
 */
export async function seed(d, { projects, issues, notes, mrs }, work) {
  const token = await rootToken(d.url);
  const hot = await api(d.url, token, 'POST', '/api/v3/projects', { name: 'hot', path: 'hot' });
  const projectIds = [hot.id];
  await inFlight(projects - 1, 4, async (i) => { projectIds.push((await api(d.url, token, 'POST', '/api/v3/projects', { name: `bench ${i}`, path: `bench-${i}` })).id); });
  await inFlight(issues, 4, (i) => api(d.url, token, 'POST', `/api/v3/projects/${hot.id}/issues`, { title: `issue ${i}`, description: `the issue number ${i}` }));
  const [issue] = await api(d.url, token, 'GET', `/api/v3/projects/${hot.id}/issues?per_page=1&sort=asc`);
  await inFlight(notes, 4, (i) => api(d.url, token, 'POST', `/api/v3/projects/${hot.id}/issues/${issue.id}/notes`, { body: `note ${i}` }));
  // The repository: a first commit, a branch per merge request off it with a commit of its own, and master with a
  // .gitlab-ci.yml of one job on top (pushed over HTTP: only master's push makes a pipeline).
  const src = join(work, `src-${d.pid}`);
  git(['init', '-q', '-b', 'master', src]);
  writeFileSync(join(src, 'README.md'), 'hot\n');
  git(['add', '-A'], src);
  git(['commit', '-q', '-m', 'first'], src);
  for (let i = 0; i < mrs; i++) {
    git(['checkout', '-q', '-b', `feature-${i}`, 'master'], src);
    writeFileSync(join(src, `feature-${i}.txt`), `feature ${i}\n`);
    git(['add', '-A'], src);
    git(['commit', '-q', '-m', `feature ${i}`], src);
  }
  git(['checkout', '-q', 'master'], src);
  writeFileSync(join(src, '.gitlab-ci.yml'), 'hello:\n  script:\n    - echo hello\n');
  git(['add', '-A'], src);
  git(['commit', '-q', '-m', 'ci'], src);
  const remote = `${d.url.replace('://', `://root:${token}@`)}/root/hot.git`;
  git(['push', '-q', remote, '--all'], src);
  await inFlight(mrs, 2, (i) => api(d.url, token, 'POST', `/api/v3/projects/${hot.id}/merge_requests`, { source_branch: `feature-${i}`, target_branch: 'master', title: `merge request ${i}` }));
  const [mr] = await api(d.url, token, 'GET', `/api/v3/projects/${hot.id}/merge_requests?per_page=1&sort=asc`);
  // A runner claims the one build of master's pipeline; after that it has nothing to do.
  const registration = (await api(d.url, token, 'GET', '/api/v3/application/settings')).runners_registration_token;
  const runner = await ciPost(d.url, '/runners/register', { token: registration, description: 'bench', run_untagged: true });
  let build;
  for (let t = 0; t < 300 && !build; t++) {
    const r = await ciPost(d.url, '/builds/register', { token: runner.body.token });
    if (r.status === 201) build = r.body;
    else await new Promise((res) => setTimeout(res, 50));
  }
  if (!build) throw new Error('no build to claim within 15 s');
  const left = await ciPost(d.url, '/builds/register', { token: runner.body.token });
  if (left.status !== 204) throw new Error(`a second claim answered ${left.status}`);
  return { token, hot: hot.id, projectIds, issue: issue.id, mr: mr.id, runnerToken: runner.body.token, build };
}

// builds/register answers at once (X-Gantry-Long-Poll: 0): a daemon since issue 26 holds a header-less request up to
// --runner-long-poll (10 s) while nothing is pending; the baseline ignores the header
const NO_HOLD = { 'x-gantry-long-poll': '0' };

async function ciPost(url, path, body) {
  const res = await fetch(`${url}/ci/api/v1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...NO_HOLD }, body: JSON.stringify(body) });
  return { status: res.status, body: res.status === 204 ? null : await res.json() };
}

/**
 * The hot requests, each as { name, room, method, path(i), body(i), headers, paced (false: requests that must not
 * overlap, the trace appends) }. `s` is what seed() returned for the daemon; `counter` numbers writes across calls.
 */
function scenarios(s) {
  const auth = { 'private-token': s.token };
  const json = { ...auth, 'content-type': 'application/json' };
  const chunk = 'x'.repeat(4095) + '\n';
  let offset = 0;
  let n = 0;
  const random = () => s.projectIds[Math.floor(Math.random() * s.projectIds.length)];
  return [
    { name: 'GET /user', room: 'users', method: 'GET', path: () => '/api/v3/user', headers: auth },
    { name: 'GET /projects/:id (random)', room: 'projects', method: 'GET', path: () => `/api/v3/projects/${random()}`, floorPath: `/api/v3/projects/${s.hot}`, headers: auth },
    { name: 'GET /projects?per_page=20 (pages 1-10, a new URL each time)', room: 'projects', method: 'GET', path: (i) => `/api/v3/projects?per_page=20&page=${1 + (i % 10)}&n=${n++}`, floorPath: '/api/v3/projects?per_page=20', headers: auth },
    // the issue and merge request lists keep their pages' bytes until the next write (api/response-cache.ts), as the
    // project list does: a new URL each time measures the query and the presenter, what the port could make slower
    { name: 'GET /projects/:id/issues?per_page=20 (pages 1-10, a new URL each time)', room: 'issues', method: 'GET', path: (i) => `/api/v3/projects/${s.hot}/issues?per_page=20&page=${1 + (i % 10)}&n=${n++}`, floorPath: `/api/v3/projects/${s.hot}/issues?per_page=20`, headers: auth },
    { name: 'GET /projects/:id/issues/:issue_id', room: 'issues', method: 'GET', path: () => `/api/v3/projects/${s.hot}/issues/${s.issue}`, headers: auth },
    { name: 'POST /projects/:id/issues', room: 'issues', method: 'POST', path: () => `/api/v3/projects/${s.hot}/issues`, body: () => JSON.stringify({ title: `posted ${n++}`, description: 'a benchmark issue' }), headers: json },
    { name: 'POST /projects/:id/issues/:issue_id/notes', room: 'notes', method: 'POST', path: () => `/api/v3/projects/${s.hot}/issues/${s.issue}/notes`, body: () => JSON.stringify({ body: `posted note ${n++}` }), headers: json },
    { name: 'GET /projects/:id/merge_requests?per_page=20 (pages 1-2, a new URL each time)', room: 'merge requests', method: 'GET', path: (i) => `/api/v3/projects/${s.hot}/merge_requests?per_page=20&page=${1 + (i % 2)}&n=${n++}`, floorPath: `/api/v3/projects/${s.hot}/merge_requests?per_page=20`, headers: auth },
    { name: 'GET /projects/:id/merge_requests/:merge_request_id', room: 'merge requests', method: 'GET', path: () => `/api/v3/projects/${s.hot}/merge_requests/${s.mr}`, headers: auth },
    { name: 'POST /ci/api/v1/builds/register (nothing to do)', room: 'CI', method: 'POST', path: () => '/ci/api/v1/builds/register', body: () => JSON.stringify({ token: s.runnerToken }), headers: { 'content-type': 'application/json', ...NO_HOLD }, status: 204 },
    { name: 'PUT /ci/api/v1/builds/:id (4 KiB trace)', room: 'CI', method: 'PUT', path: () => `/ci/api/v1/builds/${s.build.id}`, body: () => JSON.stringify({ token: s.build.token, state: 'running', trace: chunk }), headers: { 'content-type': 'application/json' } },
    {
      // the appends start at the end of the trace the PUTs left: a part far past it is refused (416, nothing
      // written) with the trace's length in its Range header
      name: 'PATCH /ci/api/v1/builds/:id/trace.txt (4 KiB appended)', room: 'CI', method: 'PATCH', paced: false,
      start: async (url) => {
        const res = await fetch(`${url}/ci/api/v1/builds/${s.build.id}/trace.txt`, { method: 'PATCH', headers: { 'BUILD-TOKEN': s.build.token, 'content-type': 'text/plain', 'content-range': '1000000000-1000000000' }, body: 'x' });
        await res.arrayBuffer();
        offset = Number(res.headers.get('range')?.split('-')[1]);
        if (res.status !== 416 || !Number.isInteger(offset)) throw new Error(`the trace length probe answered ${res.status} ${res.headers.get('range')}`);
      }, path: () => `/ci/api/v1/builds/${s.build.id}/trace.txt`, body: () => chunk,
      headers: { 'BUILD-TOKEN': s.build.token, 'content-type': 'text/plain' }, headersFor: () => ({ 'BUILD-TOKEN': s.build.token, 'content-type': 'text/plain', 'content-range': `${offset}-${(offset += chunk.length) - 1}` }),
    },
  ];
}

/** gantry_db_statements_total of a daemon (all engines summed); the caller is an administrator. */
async function statementsOf(url, token) {
  const text = await (await fetch(`${url}/-/metrics`, { headers: { 'private-token': token } })).text();
  let sum = 0;
  for (const m of text.matchAll(/^gantry_db_statements_total\{[^}]*\} (\d+)$/gm)) sum += Number(m[1]);
  return sum;
}

/** One request of a scenario, timed; throws on an unexpected status. */
async function once(url, sc, i) {
  const t = performance.now();
  const res = await fetch(`${url}${sc.path(i)}`, { method: sc.method, headers: sc.headersFor ? sc.headersFor() : sc.headers, body: sc.body?.(i) });
  await res.arrayBuffer();
  const ms = performance.now() - t;
  if (res.status >= 300) throw new Error(`${sc.method} ${sc.path(i)}: ${res.status} (range ${res.headers.get('range')})`);
  return ms;
}

/** `n` sequential requests: statements per request (when the daemon counts them) and latency p50/p99. */
async function sequentialCost(d, sc, n, counts) {
  // The cost of a scrape itself (and of anything in the background), measured as two scrapes back to back.
  const s0 = counts ? await statementsOf(d.url, d.token) : 0;
  const s1 = counts ? await statementsOf(d.url, d.token) : 0;
  const times = [];
  for (let i = 0; i < n; i++) times.push(await once(d.url, sc, i));
  const s2 = counts ? await statementsOf(d.url, d.token) : 0;
  const statements = counts ? Math.max(0, (s2 - s1) - (s1 - s0)) / n : null;
  return { statements, p50: pct(times, 50), p99: pct(times, 99) };
}

/** A free TCP port (nginx needs its ports in advance). */
async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** nginx with deploy/nginx.conf (placeholders filled in as envsubst does) in front of `a` and `b` (host:port). */
async function startNginx(a, b) {
  const http = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gantry-bench-nginx-'));
  const values = { GANTRY_A: a, GANTRY_B: b, GANTRY_A_SSH: `127.0.0.1:${await freePort()}`, GANTRY_B_SSH: `127.0.0.1:${await freePort()}`, GANTRY_HTTP_LISTEN: `127.0.0.1:${http}`, GANTRY_SSH_LISTEN: `127.0.0.1:${await freePort()}`, GANTRY_NGINX_DIR: dir };
  const conf = readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8').replace(/\$\{(GANTRY_[A-Z_]+)\}/g, (all, k) => values[k] ?? all)
    // no access log line per request: the benchmark measures the proxying, not nginx's disk writes
    .replace(/access_log [^;]+;/, 'access_log off;');
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const nginx = ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p)) ?? 'nginx';
  const proc = spawn(nginx, ['-c', join(dir, 'nginx.conf'), '-e', 'stderr', '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${http}`;
  for (let t = 0; (await fetch(`${url}/-/health`).then((r) => r.status, () => 0)) === 0; t++) {
    if (t > 150 || proc.exitCode !== null) throw new Error('nginx did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, stop: async () => { proc.kill('SIGTERM'); await new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r))); rmSync(dir, { recursive: true, force: true }); } };
}

/** Throughput of one PostgreSQL daemon against two behind nginx, on one database and one shared data dir. */
export async function scaleOut(dbUrl, seconds, rounds, size) {
  const dataDir = mkdtempSync(join(tmpdir(), 'gantry-bench-pair-'));
  const a = await startDaemon({ GANTRY_DATABASE_URL: dbUrl }, { dataDir, keep: true });
  let b;
  let one;
  let two;
  const out = { one: [], two: [] };
  try {
    // Seeded through the first daemon (projects and issues: what the read mix reads).
    const token = await rootToken(a.url);
    const seeded = await api(a.url, token, 'POST', '/api/v3/projects', { name: 'hot', path: 'hot' });
    // (the ids as answered: a PostgreSQL sequence may skip values, so they are not seeded.id + i)
    const ids = [seeded.id];
    await inFlight(size.projects - 1, 4, async (i) => { ids.push((await api(a.url, token, 'POST', '/api/v3/projects', { name: `bench ${i}`, path: `bench-${i}` })).id); });
    await inFlight(size.issues, 4, (i) => api(a.url, token, 'POST', `/api/v3/projects/${seeded.id}/issues`, { title: `issue ${i}` }));
    b = await startDaemon({ GANTRY_DATABASE_URL: dbUrl }, { dataDir, keep: true });
    const hostOf = (u) => new URL(u).host;
    one = await startNginx(hostOf(a.url), hostOf(a.url));
    two = await startNginx(hostOf(a.url), hostOf(b.url));
    const hot = seeded.id;
    // A read mix: a random project, an issue list page, GET /user, in turn.
    let k = 0;
    const mix = () => {
      const i = k++ % 3;
      return i === 0 ? `/api/v3/projects/${ids[Math.floor(Math.random() * ids.length)]}` : i === 1 ? `/api/v3/projects/${hot}/issues?per_page=20` : '/api/v3/user';
    };
    for (let r = 0; r < rounds; r++) {
      for (const [key, n] of [['one', one], ['two', two]]) {
        process.stderr.write(`bench engines: nginx round ${r + 1}, ${key} daemon(s)\n`);
        out[key].push(await cannon({ title: key, url: `${n.url}/api/v3/user`, headers: { 'private-token': token }, duration: seconds, connections: 8, requests: [{ setupRequest: (req) => ({ ...req, path: mix() }) }] }));
      }
    }
  } finally {
    await one?.stop();
    await two?.stop();
    await a.stop();
    await b?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return out;
}

export async function run() {
  const env = process.env;
  const size = { projects: Number(env.BENCH_PROJECTS ?? 200), issues: Number(env.BENCH_ISSUES ?? 200), notes: Number(env.BENCH_NOTES ?? 50), mrs: Number(env.BENCH_MRS ?? 25) };
  const rate = Number(env.BENCH_RATE ?? 100);
  const pacedSeconds = Number(env.BENCH_PACED_SECONDS ?? 2);
  const seconds = Number(env.BENCH_SECONDS ?? 1);
  const rounds = Number(env.BENCH_ROUNDS ?? 8);
  const sequentialN = Number(env.BENCH_SEQUENTIAL ?? 100);
  const pairRounds = Number(env.BENCH_PAIR_ROUNDS ?? 2);
  const pgBase = env.GANTRY_BENCH_DATABASE_URL ?? env.GANTRY_TEST_DATABASE_URL;
  if (!pgBase) throw new Error('bench engines needs a PostgreSQL server: GANTRY_BENCH_DATABASE_URL=$(scripts/postgres-test-server)');
  const rev = env.BENCH_BASELINE_REV ?? 'b7c98d7';
  const baseline = rev === 'none' ? null : env.BENCH_BASELINE ? { dir: env.BENCH_BASELINE } : baselineBuild(rev);
  if (baseline && !existsSync(join(baseline.dir, 'dist/daemon/gantryd.mjs'))) throw new Error(`${baseline.dir} is not built (npm run build there)`);
  const startLoad = loadavg()[0];
  const started = new Date();
  const db = await freshPostgres(pgBase);
  const pairDb = await freshPostgres(pgBase);
  const work = mkdtempSync(join(tmpdir(), 'gantry-bench-engines-'));
  const variants = [
    ...(baseline ? [{ name: `SQLite before the port (${rev})`, short: 'before', counts: false, start: () => startDaemon({}, { root: baseline.dir }) }] : []),
    { name: 'SQLite (this checkout)', short: 'sqlite', counts: true, start: () => startDaemon({}) },
    { name: 'PostgreSQL 15 (this checkout)', short: 'pg', counts: true, start: () => startDaemon({ GANTRY_DATABASE_URL: db.url }) },
  ];
  // BENCH_DAEMONS=before,sqlite (say) measures only those (the SQLite check without PostgreSQL); SQLite is always kept,
  // the floor's bytes come from it
  const only = env.BENCH_DAEMONS?.split(',');
  if (only) variants.splice(0, variants.length, ...variants.filter((v) => v.short === 'sqlite' || only.includes(v.short)));
  const running = [];
  let floor;
  const results = []; // per scenario: { name, room, per: { short: {...} }, floor: {...} }
  let pair;
  try {
    for (const v of variants) {
      const d = await v.start();
      running.push({ ...v, d });
      process.stderr.write(`bench engines: seeding ${v.name}...\n`);
      const t0 = performance.now();
      d.seed = await seed(d, size, work);
      d.token = d.seed.token;
      d.seedSeconds = (performance.now() - t0) / 1000;
      d.scenarios = scenarios(d.seed);
    }
    // The floor answers each scenario's path with what SQLite (this checkout) answered for it.
    const ref = running.find((r) => r.short === 'sqlite').d;
    const floorResponses = {};
    for (const sc of ref.scenarios) {
      const path = sc.floorPath ?? sc.path(0);
      await sc.start?.(ref.url);
      const res = await fetch(`${ref.url}${path}`, { method: sc.method, headers: sc.headersFor ? sc.headersFor() : sc.headers, body: sc.body?.(0) });
      if (res.status >= 300) throw new Error(`${sc.method} ${path}: ${res.status}`);
      floorResponses[path] = { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()).toString('base64') };
    }
    floor = await startReferenceServer(floorResponses);
    for (const [k, sc0] of ref.scenarios.entries()) {
      const row = { name: sc0.name, room: sc0.room, per: {}, floor: null };
      results.push(row);
      process.stderr.write(`bench engines: ${sc0.name}\n`);
      const floorSc = { ...sc0, path: () => sc0.floorPath ?? sc0.path(0), headersFor: undefined };
      const targets = [...running.map((r) => ({ key: r.short, url: r.d.url, d: r.d, counts: r.counts, sc: r.d.scenarios[k] })), { key: 'floor', url: floor.url, d: { url: floor.url, pid: floor.pid }, counts: false, sc: floorSc }];
      const entries = new Map();
      for (const t of targets) {
        if (t.key !== 'floor') await t.sc.start?.(t.url);
        const seq = await sequentialCost(t.d, t.sc, sequentialN, t.counts);
        const p = t.sc.paced === false ? null : await pacedRequests({ url: t.url, sc: t.sc, rate, seconds: pacedSeconds });
        entries.set(t.key, { ...seq, paced: p, rates: [], cpuMs: 0, requests: 0, errors: p?.errors ?? 0 });
      }
      // Full speed: `rounds` rounds, the targets in turn in each (the median rate; CPU over all the rounds' requests).
      // The first is a warm-up, not counted: it follows the other targets' sequential and paced phases, 10-15 s in
      // which a daemon sat idle (and gantryd's idle reclaimer gave memory back, which the next second's work faults
      // in again: docs/decisions.md, "memory given back after a burst of work").
      for (let round = 0; round <= rounds; round++) {
        for (const t of targets) {
          if (t.key !== 'floor') await t.sc.start?.(t.url);
          const e = entries.get(t.key);
          const cpu0 = cpuMs(t.d.pid);
          const tp = await cannon({
            // (copies: autocannon writes content-length into the headers object it is given)
            title: t.key, url: `${t.url}${t.sc.path(0)}`, method: t.sc.method, headers: { ...t.sc.headers }, duration: seconds,
            // the trace appends must arrive in order: one connection
            connections: t.sc.paced === false ? 1 : 4,
            requests: [{ setupRequest: (req) => ({ ...req, path: t.sc.path(0), headers: { ...(t.sc.headersFor ? t.sc.headersFor() : t.sc.headers) }, body: t.sc.body?.(0) }) }],
          });
          e.errors += tp.errors;
          if (round === 0) continue;
          e.cpuMs += cpuMs(t.d.pid) - cpu0;
          e.requests += tp.requests;
          e.rates.push(tp.rps);
        }
      }
      for (const [key, e] of entries) {
        // cpu: ms of the process's CPU per request at full speed
        const entry = { ...e, rps: median(e.rates), cpu: e.cpuMs / e.requests };
        if (key === 'floor') row.floor = entry;
        else row.per[key] = entry;
      }
    }
    for (const r of running) r.rss = rssMb(r.d.pid);
  } finally {
    await floor?.stop();
    for (const r of running) await r.d.stop().catch(() => undefined);
  }
  try {
    process.stderr.write('bench engines: two daemons behind nginx on PostgreSQL...\n');
    if (pairRounds > 0) pair = await scaleOut(pairDb.url, Number(env.BENCH_PAIR_SECONDS ?? 8), pairRounds, size);
  } finally {
    await db.drop();
    await pairDb.drop();
    rmSync(work, { recursive: true, force: true });
  }
  const endLoad = loadavg()[0];
  report({ results, running, rev, size, rate, pacedSeconds, seconds, rounds, sequentialN, pair, started, startLoad, endLoad });
}

/** Paced (open-loop) requests of a scenario at `rate`/s: p50/p99 from each request's scheduled start. */
function pacedRequests({ url, sc, rate, seconds }) {
  return paced({ title: sc.name, url, rate, seconds, method: sc.method, headers: sc.headers, pathFor: (i) => sc.path(i), bodyFor: sc.body ? (i) => sc.body(i) : undefined });
}

/** The non-2xx answers and errors of some rounds: the total, and by status when there were any ("2 (404: 2)"). */
function failures(rounds) {
  const by = {};
  for (const r of rounds) for (const [k, n] of Object.entries(r.failures ?? {})) by[k] = (by[k] ?? 0) + n;
  const total = rounds.reduce((a, x) => a + x.errors, 0);
  return total ? `${total} (${Object.entries(by).map(([k, n]) => `${k}: ${n}`).join(', ')})` : '0';
}

function report({ results, running, rev, size, rate, pacedSeconds, seconds, rounds, sequentialN, pair, started, startLoad, endLoad }) {
  const keys = running.map((r) => r.short);
  const hasBefore = keys.includes('before');
  const label = { before: `SQLite ${rev}`, sqlite: 'SQLite', pg: 'PostgreSQL' };
  const f1 = (x) => (x === null || x === undefined ? '-' : Number(x).toFixed(1));
  const f2 = (x) => (x === null || x === undefined ? '-' : Number(x).toFixed(2));
  const statementRows = results.map((r) => `| ${r.room} | ${r.name} | ${f1(r.per.sqlite?.statements)} | ${f1(r.per.pg?.statements)} |`);
  const latencyRows = results.map((r) => {
    const cell = (e) => `${f2(e.p50)} / ${f2(e.p99)}`;
    const pacedCell = (e) => (e.paced ? `${f1(e.paced.p50)} / ${f1(e.paced.p99)}` : '-');
    return `| ${r.name} | ${[...keys.map((k) => cell(r.per[k])), cell(r.floor)].join(' | ')} | ${[...keys.map((k) => pacedCell(r.per[k])), pacedCell(r.floor)].join(' | ')} |`;
  });
  const tpRows = results.map((r) => {
    const fl = r.floor.rps;
    const cells = keys.map((k) => `${r.per[k].rps} (${f2(r.per[k].rps / fl)})`);
    return `| ${r.name} | ${[...cells, fl].join(' | ')} |${hasBefore ? ` ${f2(r.per.sqlite.rps / r.per.before.rps)} |` : ''}`;
  });
  const cpuRows = results.map((r) => {
    const us = (e) => Math.round(e.cpu * 1000);
    const cells = keys.map((k) => `${us(r.per[k])} (${f2(r.per[k].cpu / r.floor.cpu)})`);
    return `| ${r.name} | ${[...cells, us(r.floor)].join(' | ')} |${hasBefore ? ` **${f2(r.per.sqlite.cpu / r.per.before.cpu)}** |` : ''}`;
  });
  const errors = results.flatMap((r) => [...keys.map((k) => r.per[k].errors), r.floor.errors]).reduce((a, b) => a + b, 0);
  const pairMed = (xs) => median(xs.map((x) => x.rps));
  const md = `## Engines: the hot request of every room on SQLite and PostgreSQL, beside the floor (${started.toISOString().slice(0, 10)})

Machine: ${machine()}. **Measured under load**: the machine's 2 cores were shared with other work (load average
${startLoad.toFixed(1)} at the start, ${endLoad.toFixed(1)} at the end), so absolute figures drift between runs: read each
figure beside the floor and the other daemons of the same run. \`GANTRY_BENCH_DATABASE_URL=$(scripts/postgres-test-server) npm run bench -- engines\`
(scripts/bench/engines.mjs). Daemons side by side, each on its own fresh database: ${hasBefore ? `SQLite at ${rev} (before the port to the data layer), ` : ''}SQLite and
PostgreSQL 15 on this checkout (PostgreSQL on the same machine over TCP, the test server's settings: fsync off), and the
floor: a bare Fastify process answering each request with the bytes SQLite answered (no database, authentication or
presenter). Each daemon was seeded through its API with ${size.projects} projects, one of them with ${size.issues} issues, ${size.notes} notes on one
issue, ${size.mrs} merge requests and one running build (a runner claimed it, so the register request finds nothing to do).
Every request is measured on every daemon in turn before the next request: ${sequentialN} sequential requests (the statements
they sent, from \`gantry_db_statements_total\` on /-/metrics, and the latency of a request alone), ${pacedSeconds} s paced at ${rate}
requests/s (open loop, timed from each request's scheduled start); then a warm-up round (not counted) and ${rounds} rounds of ${seconds} s at full speed (autocannon, 4
connections; the trace appends: 1, in order), the daemons and the floor in turn in each round (the median rate is shown). Writes are real (each POST creates an issue or a note).

Statements per request (BEGIN and COMMIT count as statements; on SQLite the count includes the cached synchronous
statements of db/statements.ts and the write-version probes of the read caches):

| room | request | SQLite | PostgreSQL |
|---|---|---|---|
${statementRows.join('\n')}

Latency in ms, p50 / p99: alone (${sequentialN} sequential requests), and paced at ${rate} requests/s:

| request | ${keys.map((k) => `${label[k]} alone`).join(' | ')} | floor alone | ${keys.map((k) => `${label[k]} paced`).join(' | ')} | floor paced |
|---|${[...keys, 'f', ...keys, 'f'].map(() => '---').join('|')}|
${latencyRows.join('\n')}

Throughput, requests/s at full speed (in brackets: the ratio to the floor of the same run)${hasBefore ? `; the last column is SQLite on this checkout over SQLite at ${rev}` : ''}:

| request | ${keys.map((k) => label[k]).join(' | ')} | floor |${hasBefore ? ' SQLite now / before |' : ''}
|---|${keys.map(() => '---').join('|')}|---|${hasBefore ? '---|' : ''}
${tpRows.join('\n')}

CPU time of the serving process per request, in µs, during the full-speed runs (user + system time of the process
from /proc, over the requests it answered; in brackets: the ratio to the floor's). It moves with the machine's load
too (shared caches and cores), but less than the rates, and the daemons are measured in the same rounds: it is the
figure the 10 % bar is judged on${hasBefore ? `; the last column is SQLite on this checkout over SQLite at ${rev} (below 1.10: within the bar)` : ''}. PostgreSQL's own
server processes are not counted in the PostgreSQL column.

| request | ${keys.map((k) => label[k]).join(' | ')} | floor |${hasBefore ? ' SQLite now / before |' : ''}
|---|${keys.map(() => '---').join('|')}|---|${hasBefore ? '---|' : ''}
${cpuRows.join('\n')}

Non-2xx answers or errors in all: ${errors}. Daemon RSS after the run: ${running.map((r) => `${label[r.short]} ${r.rss} MB`).join(', ')}.
Seeding through the API took ${running.map((r) => `${label[r.short]} ${r.d.seedSeconds.toFixed(1)} s`).join(', ')}.

${pair ? `Two daemons behind nginx (deploy/nginx.conf, access log off) on one PostgreSQL database and one shared data dir,
against one daemon behind the same nginx (both upstream lines pointing at it), a read mix (a random project, an issue
list page, GET /user in turn), 8 connections, ${pair.one.length} alternating rounds:

| behind nginx | req/s (median) | rounds | p50 ms | p99 ms | non-2xx/errors |
|---|---|---|---|---|---|
${[['one daemon', pair.one], ['two daemons', pair.two]].map(([n, xs]) => `| ${n} | ${pairMed(xs)} | ${xs.map((x) => x.rps).join(', ')} | ${median(xs.map((x) => x.p50))} | ${median(xs.map((x) => x.p99))} | ${failures(xs)} |`).join('\n')}

Two daemons over one: **${f2(pairMed(pair.two) / pairMed(pair.one))}x**, with nginx, PostgreSQL, both daemons and the load generator on the same 2 cores.` : ''}`;
  writeSection('engines', md);
  process.stdout.write(`${md}\n`);
}
