#!/usr/bin/env node
// Fuzz every route of a real gantryd: `node scripts/fuzz/run.mjs --requests 100000 --seed N [--concurrency 6]
// [--only I] [--json]`. Starts the built daemon (run `npm run build` first) on a temp data dir with cwd, HOME and
// TMPDIR in a temp parent, seeds a realistic instance (scripts/fuzz/world.mjs), sends bounded random and hostile
// requests (scripts/fuzz/requests.mjs) and reports 5xx answers (with the request to replay), answers slower than 2 s,
// a crash, files written outside the data dir, and afterwards PRAGMA integrity_check and git fsck of every
// repository. Exit code 1 when anything but slowness was found. `--only I` replays request I of the seed alone.
// `--database-url URL` runs the daemon on that (empty) PostgreSQL database instead of SQLite in the data dir.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { ROOT, startDaemon } from '../bench/lib.mjs';
import { loadOperations, makeRequest } from './requests.mjs';
import { repairWorld, seedWorld, startReceiver } from './world.mjs';

const SLOW_MS = 2000;
const HANG_MS = 30_000;
const STOP_MS = 15_000;

/** Every path under `dir` (not following links) with its size, except the subtrees in `skip`. */
export function snapshot(dir, skip = []) {
  const out = new Map();
  const walk = (d) => {
    let names;
    try { names = readdirSync(d); } catch { return; }
    for (const name of names) {
      const full = join(d, name);
      if (skip.includes(full)) continue;
      let st;
      try { st = lstatSync(full); } catch { continue; }
      out.set(full, st.isDirectory() ? 'dir' : st.size);
      if (st.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out;
}

/**
 * Paths in `after` that were not in `before`, or that changed size; Node's own cache of compiled modules
 * (node-compile-cache under TMPDIR, which gantryd turns on to start faster) is not the daemon writing files.
 */
export function strayFiles(before, after) {
  return [...after].filter(([p, size]) => (!before.has(p) || (before.get(p) !== size && size !== 'dir')) && !/[/\\]node-compile-cache([/\\]|$)/.test(p)).map(([p]) => p);
}

/** PRAGMA integrity_check and foreign_key_check of the database: a list of problems (empty when sound). */
export async function checkDatabase(file) {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file, { readonly: true });
  try {
    const problems = db.prepare('PRAGMA integrity_check').all().map((r) => r.integrity_check).filter((x) => x !== 'ok');
    for (const r of db.prepare('PRAGMA foreign_key_check').all()) problems.push(`foreign key: ${JSON.stringify(r)}`);
    return problems;
  } finally {
    db.close();
  }
}

/**
 * The PostgreSQL counterpart of checkDatabase: the server enforces foreign keys and checks its pages itself, so what
 * can go wrong is a constraint or index left unvalidated (NOT VALID, or an index build that failed): a list of those.
 */
export async function checkPostgresDatabase(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const constraints = await client.query(`SELECT conrelid::regclass::text AS t, conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = current_schema() AND NOT c.convalidated`);
    const indexes = await client.query(`SELECT indexrelid::regclass::text AS i FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND NOT (x.indisvalid AND x.indisready)`);
    return [
      ...constraints.rows.map((r) => `constraint not validated: ${r.t}.${r.conname}`),
      ...indexes.rows.map((r) => `index not valid: ${r.i}`),
    ];
  } finally {
    await client.end();
  }
}

/** Every bare repository under `dir` (a directory holding HEAD, objects/ and refs/). */
export function repositories(dir) {
  const out = [];
  const walk = (d) => {
    if (!existsSync(d)) return;
    if (existsSync(join(d, 'HEAD')) && existsSync(join(d, 'objects'))) return void out.push(d);
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
  };
  walk(dir);
  return out;
}

/** git fsck of every repository (dangling objects are fine: refused pushes leave them) and no stale ref locks. */
export function checkRepositories(dir) {
  const problems = [];
  for (const repo of repositories(dir)) {
    try {
      execFileSync('git', ['--git-dir', repo, 'fsck', '--no-progress', '--no-dangling', '--strict'], { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      problems.push(`${repo}: git fsck: ${(e.stderr?.toString() || e.stdout?.toString() || e.message).trim().slice(0, 500)}`);
    }
    const locks = execFileSync('find', [repo, '-name', '*.lock', '-not', '-path', '*/objects/*'], { encoding: 'utf8' }).trim();
    if (locks) problems.push(`${repo}: lock files left: ${locks}`);
  }
  return problems;
}

/** Write one request on a raw socket with a header-level trick; resolves with the status (0 when none came). */
function sendRaw(url, req, trick) {
  const { hostname, port } = new URL(url);
  const headers = { host: `${hostname}:${port}`, connection: 'close', ...req.headers };
  const body = Buffer.from(req.body ?? '');
  let head = `${req.method} ${req.path} HTTP/1.1\r\n`;
  if (trick === 'crlf-path') head = `${req.method} ${req.path}\r\nX-Fuzz-Injected: 1 HTTP/1.1\r\n`;
  if (trick === 'bad-version') head = `${req.method} ${req.path} HTTP/9.9\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  head += `content-length: ${body.length}\r\n`;
  if (trick === 'crlf-header') head += 'x-fuzz: a\r\nX-Fuzz-Injected: 1\r\n';
  if (trick === 'bare-cr') head += 'x-fuzz: a\rX-Fuzz-Injected: 1\r\n';
  if (trick === 'duplicate-length') head += `content-length: ${body.length + 5}\r\n`;
  if (trick === 'folded') head += 'x-fuzz: a\r\n folded: 1\r\n';
  if (trick === 'huge-header') head += `x-fuzz: ${'a'.repeat(70_000)}\r\n`;
  if (trick === 'nul-header') head += 'x-fuzz: a\0b\r\n';
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port) });
    let got = '';
    socket.setTimeout(HANG_MS, () => socket.destroy());
    socket.on('data', (d) => { got += d.toString('latin1'); });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(got)?.[1] ?? 0);
      resolve({ status, injected: /\r\nx-fuzz-injected:/i.test(got.split('\r\n\r\n')[0]) });
    });
    socket.end(Buffer.concat([Buffer.from(head + '\r\n', 'latin1'), body]));
  });
}

/** A request as a reader can replay it (the body cut at 2,000 characters). */
function describe(req, seed, i) {
  const body = req.body === undefined ? undefined : req.body.length > 2000 ? `${req.body.slice(0, 2000)}... (${req.body.length} chars)` : req.body;
  return { seed, index: i, as: req.as, route: req.op, method: req.method, path: req.path.length > 500 ? `${req.path.slice(0, 500)}...` : req.path, headers: req.headers, body, raw: req.raw };
}

/**
 * Run a fuzz round: { requests, seed, concurrency, only, log } -> report { seed, sent, statuses, failures, slow,
 * crash, stray, database, repositories, stopCode, ms, ok }.
 */
export async function runFuzz({ requests = 3000, seed = 1, concurrency = 6, only = null, databaseUrl = null, log = () => undefined } = {}) {
  const t0 = performance.now();
  const parent = mkdtempSync(join(tmpdir(), 'gantry-fuzz-'));
  const work = mkdtempSync(join(tmpdir(), 'gantry-fuzz-work-'));
  const dataDir = join(parent, 'data');
  for (const d of ['data', 'home', 'cwd', 'tmp']) mkdirSync(join(parent, d));
  const receiver = await startReceiver();
  const env = { HOME: join(parent, 'home'), TMPDIR: join(parent, 'tmp'), GANTRY_LOG_LEVEL: 'warn', ...(databaseUrl ? { GANTRY_DATABASE_URL: databaseUrl } : {}) };
  const daemon = await startDaemon(env, { dataDir, cwd: join(parent, 'cwd'), keep: true, stderr: 'pipe' });
  const report = { seed, requests, sent: 0, statuses: {}, adminNotFound: {}, failures: [], slow: [], crash: null, stray: [], database: [], repositories: [], stopCode: null, ms: 0, ok: false };
  try {
    log(`fuzz: daemon at ${daemon.url}, data ${dataDir}; seeding...`);
    const world = await seedWorld(daemon.url, work, receiver.url);
    world.hookUrl = receiver.url;
    const ops = await loadOperations(daemon.url);
    log(`fuzz: ${ops.length} operations; sending ${only === null ? requests : 1} requests (seed ${seed})`);
    const before = snapshot(parent, [dataDir]);
    const { Agent, request } = await import('undici');
    const agent = new Agent({ connections: concurrency * 2, headersTimeout: HANG_MS, bodyTimeout: HANG_MS });
    let crashed = false;
    void daemon.exited.then((e) => { if (!report.stopCode) crashed = e; });
    const inflight = new Map();
    let next = only ?? 0;
    const last = only === null ? requests : only + 1;
    const one = async (i) => {
      const req = makeRequest(seed, i, ops, world, parent);
      inflight.set(i, req);
      const t = performance.now();
      let status = 0;
      let injected = false;
      let answer = '';
      try {
        if (req.raw) ({ status, injected } = await sendRaw(daemon.url, req, req.raw));
        else {
          const res = await request(`${daemon.url}${req.path}`, { method: req.method, headers: req.headers, body: req.body, dispatcher: agent });
          status = res.statusCode;
          if (status >= 500) answer = (await res.body.text().catch((e) => String(e))).slice(0, 500);
          else await res.body.dump({ limit: 1 << 20 }).catch(() => undefined);
          injected = 'x-fuzz-injected' in res.headers;
        }
      } catch (e) {
        // undici refuses some headers itself (a client-side error, nothing reached the daemon)
        if (/invalid .*header|InvalidArgument|header/i.test(`${e?.code} ${e?.message}`) && !crashed) status = -1;
        else if (!crashed) report.failures.push({ kind: 'no answer', error: String(e?.message ?? e), request: describe(req, seed, i) });
      }
      const ms = performance.now() - t;
      inflight.delete(i);
      report.sent += 1;
      report.statuses[status] = (report.statuses[status] ?? 0) + 1;
      if (status === 404 && req.as === 'admin') report.adminNotFound[req.op] = (report.adminNotFound[req.op] ?? 0) + 1;
      if (status >= 500) {
        // the daemon's error line for it (the last one logged), which names the code that failed
        const logged = daemon.stderr().trim().split('\n').filter((l) => l.includes('"level":50')).at(-1)?.slice(0, 1500);
        report.failures.push({ kind: `${status}`, answer, logged, request: describe(req, seed, i) });
      }
      if (injected) report.failures.push({ kind: 'header injection reflected', request: describe(req, seed, i) });
      if (ms > SLOW_MS) report.slow.push({ ms: Math.round(ms), status, request: describe(req, seed, i) });
    };
    let last404 = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < last && !crashed) {
        const i = next++;
        // every 500 requests one worker puts the seeded objects back (the others go on meanwhile)
        if (i % 500 === 499) await repairWorld(daemon.url, world);
        await one(i);
        if (i % 1000 === 999) {
          // the share of 404 tells whether the seeded objects still stand (a fuzzer that deleted them tests little)
          const now404 = report.statuses[404] ?? 0;
          log(`fuzz: ${i + 1} sent, ${report.failures.length} failures, 404 on ${Math.round(((now404 - last404) / 1000) * 100)} % of the last 1000`);
          last404 = now404;
        }
      }
    }));
    await agent.close();
    if (crashed) {
      report.crash = { exit: crashed, stderr: daemon.stderr().slice(-4000), inflight: [...inflight].map(([i, req]) => describe(req, seed, i)) };
    } else {
      // SIGTERM drains what is in flight; a request that never ends keeps the daemon up: that is a finding too.
      daemon.child.kill('SIGTERM');
      const end = await Promise.race([daemon.exited, new Promise((r) => setTimeout(r, STOP_MS, null))]);
      report.stopCode = end ? end.code : 'timeout';
      if (!end) {
        const children = execFileSync('ps', ['-o', 'args=', '--ppid', String(daemon.pid)], { encoding: 'utf8' }).trim();
        report.failures.push({ kind: 'no exit', error: `still running ${STOP_MS / 1000} s after SIGTERM; its children: ${children}` });
        daemon.child.kill('SIGKILL');
        await daemon.exited;
      } else if (end.code !== 0) report.crash = { exit: end, stderr: daemon.stderr().slice(-4000), inflight: [] };
    }
    report.stray = strayFiles(before, snapshot(parent, [dataDir]));
    report.database = databaseUrl ? await checkPostgresDatabase(databaseUrl) : await checkDatabase(join(dataDir, 'gantry.db'));
    report.repositories = checkRepositories(dataDir);
  } finally {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
    }
    await receiver.stop();
    rmSync(work, { recursive: true, force: true });
    rmSync(parent, { recursive: true, force: true });
  }
  report.ms = Math.round(performance.now() - t0);
  report.ok = !report.failures.length && !report.crash && !report.stray.length && !report.database.length && !report.repositories.length;
  return report;
}

/** A short text summary of a report. */
export function summary(r) {
  const lines = [
    `fuzz seed ${r.seed}: ${r.sent} requests in ${(r.ms / 1000).toFixed(1)} s; statuses ${JSON.stringify(r.statuses)}`,
    `5xx/no answer: ${r.failures.length}; slower than ${SLOW_MS} ms: ${r.slow.length}; crash: ${r.crash ? JSON.stringify(r.crash.exit) : 'none'}; stray files: ${r.stray.length}; database: ${r.database.length ? r.database.join('; ') : 'ok'}; repositories: ${r.repositories.length ? r.repositories.join('; ') : 'ok'}`,
  ];
  for (const f of [...r.failures].sort((a, b) => (a.kind < b.kind ? 1 : -1)).slice(0, 20)) lines.push(`  ${f.kind}${f.error ? ` (${f.error})` : ''}${f.answer ? ` ${f.answer}` : ''}: ${JSON.stringify(f.request)}${f.logged ? `\n    logged: ${f.logged}` : ''}`);
  for (const s of r.slow.slice(0, 10)) lines.push(`  slow ${s.ms} ms (${s.status}): ${s.request.method} ${s.request.path.slice(0, 200)} [seed ${s.request.seed} --only ${s.request.index}]`);
  for (const p of r.stray.slice(0, 20)) lines.push(`  stray: ${p}`);
  if (r.crash) lines.push(`  crash stderr: ${r.crash.stderr}`, ...r.crash.inflight.map((q) => `  in flight: ${JSON.stringify(q)}`));
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : dflt;
  };
  if (process.argv.includes('--help')) {
    process.stdout.write('usage: node scripts/fuzz/run.mjs [--requests N (3000)] [--seed N (1)] [--concurrency N (6)] [--only I] [--database-url URL] [--json]\n');
    process.exit(0);
  }
  if (!existsSync(join(ROOT, 'dist/daemon/main.js')) && !existsSync(join(ROOT, 'dist/bundle'))) process.stderr.write('fuzz: run `npm run build` first\n');
  const only = arg('only', null);
  const report = await runFuzz({
    requests: Number(arg('requests', 3000)), seed: Number(arg('seed', 1)), concurrency: Number(arg('concurrency', 6)),
    only: only === null ? null : Number(only), databaseUrl: arg('database-url', null), log: (m) => process.stderr.write(`${m}\n`),
  });
  process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(report, null, 2)}\n` : `${summary(report)}\n`);
  process.exit(report.ok ? 0 : 1);
}
