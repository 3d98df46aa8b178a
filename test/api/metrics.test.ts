/**
 * GET /-/metrics: the Prometheus text format (every line a comment or a valid sample), counts that move with
 * requests (per route pattern and status class), builds, runner claims, the webhook outbox, SQLite transaction
 * timings (SQLite) or the connection pool (PostgreSQL), git timings, sign-in failures, process memory; readable with
 * the --metrics-token or an administrator's token, 404 for everyone else. On both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, ROOT_PASSWORD, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { tokenRequest } from '../helpers/oauth.js';
import { makeProject } from '../helpers/fixtures.js';
import { claim, insertBuild, insertPipeline, registerRunner } from '../helpers/runner-fixtures.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

const TOKEN = 'scrape-secret-0123456789';
let s: TestServer;
let alice: TestUser;
let projectId: number;
let projectPath: string;

beforeAll(async () => {
  s = await startTestServer({ metricsToken: TOKEN });
  alice = await s.user('alice');
  const project = await makeProject(s, alice, 'measured');
  projectId = project.id;
  projectPath = project.path_with_namespace;
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:\\\\.|[^"\\\\\\n])*"';
const SAMPLE = new RegExp(`^(${NAME})(\\{${LABEL}(?:,${LABEL})*\\})? (NaN|[+-]Inf|-?\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?)$`);
const COMMENT = new RegExp(`^# (HELP|TYPE) (${NAME})(?: (.*))?$`);

/** Parse the exposition text strictly: throws on a line that is neither a HELP/TYPE comment nor a sample of a declared family. */
function parse(text: string): Map<string, number> {
  expect(text.endsWith('\n')).toBe(true);
  const types = new Map<string, string>();
  const samples = new Map<string, number>();
  for (const line of text.slice(0, -1).split('\n')) {
    const c = COMMENT.exec(line);
    if (c) {
      if (c[1] === 'TYPE') {
        expect(['counter', 'gauge', 'histogram'], line).toContain(c[3]);
        expect(types.has(c[2]!), `TYPE twice: ${line}`).toBe(false);
        types.set(c[2]!, c[3]!);
      }
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a valid sample line: ${JSON.stringify(line)}`);
    const family = m[1]!.replace(/_(bucket|sum|count)$/, '');
    expect(types.has(m[1]!) || types.get(family) === 'histogram', `sample before its TYPE: ${line}`).toBe(true);
    samples.set(`${m[1]}${m[2] ?? ''}`, Number(m[3] === '+Inf' ? Infinity : m[3]));
  }
  return samples;
}

async function scrape(): Promise<Map<string, number>> {
  const r = await s.app.inject({ method: 'GET', url: '/-/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(r.statusCode).toBe(200);
  expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parse(r.body);
}

const value = (m: Map<string, number>, key: string) => m.get(key) ?? 0;
const requests = (route: string, method: string, status: string) =>
  `gantry_http_request_duration_seconds_count{route="${route}",method="${method}",status="${status}"}`;

describe('access', () => {
  it('is 404 without a credential, with a wrong token, or for a user who is not an administrator', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { 'private-token': alice.token }, { authorization: `Bearer ${TOKEN}x` }]) {
      const r = await s.app.inject({ method: 'GET', url: '/-/metrics', headers });
      expect(r.statusCode).toBe(404);
      expect(r.json()).toEqual({ message: '404 Not Found' });
    }
    expect((await s.app.inject({ method: 'GET', url: '/-/metrics?token=nope' })).statusCode).toBe(404);
  });

  it('answers the metrics token as a bearer token or ?token=, and any token of an administrator', async () => {
    expect((await s.app.inject({ method: 'GET', url: `/-/metrics?token=${TOKEN}` })).statusCode).toBe(200);
    expect((await s.app.inject({ method: 'GET', url: '/-/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode).toBe(200);
    expect((await s.app.inject({ method: 'GET', url: '/-/metrics', headers: { 'private-token': s.root.token } })).statusCode).toBe(200);
    expect((await s.app.inject({ method: 'GET', url: `/-/metrics?private_token=${s.root.token}` })).statusCode).toBe(200);
    const oauth = await tokenRequest(s, { grant_type: 'password', username: 'root', password: ROOT_PASSWORD });
    expect((await s.app.inject({ method: 'GET', url: '/-/metrics', headers: { authorization: `Bearer ${oauth.body.access_token}` } })).statusCode).toBe(200);
    const aliceOauth = await tokenRequest(s, { grant_type: 'password', username: 'alice', password: 'password123' });
    expect((await s.app.inject({ method: 'GET', url: '/-/metrics', headers: { authorization: `Bearer ${aliceOauth.body.access_token}` } })).statusCode).toBe(404);
  });

  it('without --metrics-token only administrators read it', async () => {
    const other = await startTestServer();
    try {
      expect((await other.app.inject({ method: 'GET', url: '/-/metrics', headers: { authorization: 'Bearer ' } })).statusCode).toBe(404);
      expect((await other.app.inject({ method: 'GET', url: '/-/metrics?token=' })).statusCode).toBe(404);
      const admin = await other.app.inject({ method: 'GET', url: '/-/metrics', headers: { 'private-token': other.root.token } });
      expect(admin.statusCode).toBe(200);
      expect(parse(admin.body).size).toBeGreaterThan(10);
    } finally {
      await other.close();
    }
  });
});

describe('format and values', () => {
  it('is valid exposition text; histogram buckets are cumulative and end at the count', async () => {
    const m = await scrape();
    for (const [key, v] of m) {
      const b = /^(.+)_bucket\{(.*),le="\+Inf"\}$/.exec(key);
      if (b) expect(v, key).toBe(m.get(`${b[1]}_count{${b[2]}}`));
    }
    const buckets = [...m].filter(([k]) => k.startsWith('gantry_http_request_duration_seconds_bucket{route="/-/metrics",method="GET",status="2xx"'));
    expect(buckets.length).toBeGreaterThan(5);
    buckets.reduce((prev, [, v]) => (expect(v).toBeGreaterThanOrEqual(prev), v), 0);
  });

  it('counts requests by route pattern (never the raw URL), method and status class', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await s.api('GET', `/projects/${projectId}`, alice)).status).toBe(200);
    expect((await s.api('GET', '/projects/987654', alice)).status).toBe(404);
    expect((await s.app.inject({ method: 'GET', url: '/no/such/page/at/all' })).statusCode).toBe(404);
    const text = (await s.app.inject({ method: 'GET', url: `/-/metrics?token=${TOKEN}` })).body;
    const after = parse(text);
    expect(value(after, requests('/api/v3/projects/:id', 'GET', '2xx')) - value(before, requests('/api/v3/projects/:id', 'GET', '2xx'))).toBe(3);
    expect(value(after, requests('/api/v3/projects/:id', 'GET', '4xx')) - value(before, requests('/api/v3/projects/:id', 'GET', '4xx'))).toBe(1);
    expect(value(after, requests('(unmatched)', 'GET', '4xx')) - value(before, requests('(unmatched)', 'GET', '4xx'))).toBe(1);
    expect(text).not.toContain('987654');
    expect(text).not.toContain('/no/such/page');
    expect(value(after, 'gantry_http_request_duration_seconds_sum{route="/api/v3/projects/:id",method="GET",status="2xx"}')).toBeGreaterThan(0);
  });

  it('counts the statements sent to this engine, BEGIN and COMMIT included, and shows no other engine', async () => {
    const engine = onPostgres ? 'postgres' : 'sqlite';
    const other = onPostgres ? 'sqlite' : 'postgres';
    const key = (e: string) => `gantry_db_statements_total{engine="${e}"}`;
    const before = await scrape();
    const created = await s.api('POST', `/projects/${projectId}/issues`, alice, { title: 'counted' });
    expect(created.status).toBe(201);
    const after = await scrape();
    // at least BEGIN, the INSERT and COMMIT of the issue (the counter is process-wide: workers may add more)
    expect(value(after, key(engine)) - value(before, key(engine))).toBeGreaterThanOrEqual(3);
    expect(after.has(key(other))).toBe(false);
  });

  it('shows pending and running builds and counts runner claims', async () => {
    const runner = await registerRunner(s, {});
    const before = await scrape();
    await insertBuild(s, projectId, await insertPipeline(s, projectId));
    await insertBuild(s, projectId, await insertPipeline(s, projectId));
    const queued = await scrape();
    expect(value(queued, 'gantry_builds{status="pending"}') - value(before, 'gantry_builds{status="pending"}')).toBe(2);
    await claim(s, runner.token);
    const after = await scrape();
    expect(value(after, 'gantry_builds{status="pending"}') - value(before, 'gantry_builds{status="pending"}')).toBe(1);
    expect(value(after, 'gantry_builds{status="running"}') - value(before, 'gantry_builds{status="running"}')).toBe(1);
    expect(value(after, 'gantry_runner_build_requests_total{result="claimed"}') - value(before, 'gantry_runner_build_requests_total{result="claimed"}')).toBe(1);
  });

  it('shows the webhook outbox depth', async () => {
    const before = await scrape();
    expect((await s.api('POST', `/projects/${projectId}/hooks`, alice, { url: 'http://127.0.0.1:9/hook', issues_events: true, push_events: false })).status).toBe(201);
    expect((await s.api('POST', `/projects/${projectId}/issues`, alice, { title: 'measured' })).status).toBe(201);
    const after = await scrape();
    expect(value(after, 'gantry_webhook_outbox_pending') - value(before, 'gantry_webhook_outbox_pending')).toBe(1);
  });

  it.skipIf(onPostgres)('times SQLite transactions, those of the data layer included', async () => {
    const before = await scrape();
    expect((await s.api('POST', `/projects/${projectId}/issues`, alice, { title: 'timed' })).status).toBe(201);
    const mid = await scrape();
    expect(value(mid, 'gantry_sqlite_transaction_duration_seconds_count')).toBeGreaterThan(value(before, 'gantry_sqlite_transaction_duration_seconds_count'));
    // A transaction of ctx.data alone (no ctx.db underneath) is timed too.
    await s.ctx.data.transaction(async (tx) => tx.get('SELECT 1 AS one'));
    const after = await scrape();
    expect(value(after, 'gantry_sqlite_transaction_duration_seconds_count') - value(mid, 'gantry_sqlite_transaction_duration_seconds_count')).toBe(1);
    expect(after.has('gantry_postgres_pool_connections{state="idle"}')).toBe(false);
  });

  it.runIf(onPostgres)('shows the connection pool and no SQLite timings on PostgreSQL', async () => {
    const m = await scrape();
    expect([...m.keys()].some((k) => k.startsWith('gantry_sqlite_'))).toBe(false);
    const busy = value(m, 'gantry_postgres_pool_connections{state="busy"}');
    const idle = value(m, 'gantry_postgres_pool_connections{state="idle"}');
    expect(m.has('gantry_postgres_pool_connections{state="busy"}') && m.has('gantry_postgres_pool_connections{state="idle"}')).toBe(true);
    // The scrape's own queries have run and returned their connection: the pool holds at least one, idle now.
    expect(idle).toBeGreaterThanOrEqual(1);
    expect(busy).toBeGreaterThanOrEqual(0);
    expect(m.get('gantry_postgres_pool_waiting')).toBe(0);
  });

  it('times git processes by subcommand', async () => {
    const before = await scrape();
    const r = await s.app.inject({
      method: 'GET', url: `/${projectPath}.git/info/refs?service=git-upload-pack`,
      headers: { authorization: `Basic ${Buffer.from(`alice:${alice.token}`).toString('base64')}` },
    });
    expect(r.statusCode).toBe(200);
    // git's exit is observed just after its output ended: wait for it.
    const key = 'gantry_git_process_duration_seconds_count{command="upload-pack"}';
    let after = await scrape();
    for (let i = 0; i < 100 && value(after, key) === value(before, key); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await scrape();
    }
    expect(value(after, key) - value(before, key)).toBe(1);
    expect(after.has('gantry_git_processes')).toBe(true);
  });

  it('counts wrong passwords and throttled sign-ins', async () => {
    const before = await scrape();
    for (let i = 0; i < 11; i++) await s.app.inject({ method: 'POST', url: '/api/v3/session', remoteAddress: '203.0.113.99', payload: { login: `m${i}`, password: 'x' } });
    const after = await scrape();
    expect(value(after, 'gantry_signin_failures_total') - value(before, 'gantry_signin_failures_total')).toBe(10);
    expect(value(after, 'gantry_signin_throttled_total{scope="address"}') - value(before, 'gantry_signin_throttled_total{scope="address"}')).toBe(1);
  });

  it('shows process memory, CPU, open files and event loop lag', async () => {
    const m = await scrape();
    expect(value(m, 'process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024);
    expect(value(m, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(value(m, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(value(m, 'process_open_fds')).toBeGreaterThan(0);
    for (const k of ['nodejs_eventloop_lag_mean_seconds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_max_seconds']) expect(m.has(k), k).toBe(true);
  });
});
