// Benchmark helpers: start a real gantryd, run autocannon, report percentiles, write docs/benchmarks.md sections.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { cpus, loadavg, totalmem, tmpdir, release } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';
// the malloc settings every place that starts gantryd uses (shared/daemon-env.ts; the benchmarks run the build)
import { daemonEnv } from '../../dist/shared/daemon-env.js';

export { daemonEnv };

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const ROOT_PASSWORD = 'benchpassword1';

/**
 * Start gantryd on a free port in a fresh data dir (or `opts.dataDir`, kept on stop), in `opts.cwd` (default: this
 * process's), with `opts.port` (default 0: a free one); stderr is inherited unless `opts.stderr` is 'pipe'. Resolves
 * `opts.nodeArgs`: node flags before the launcher (default: BENCH_DAEMON_NODE_ARGS, space-separated: --trace-gc,
 * --cpu-prof, --heapsnapshot-signal=SIGUSR2 for a look inside). Resolves
 * with { url, pid, child, exited (a promise of { code, signal }), stderr() (piped text), stop, dataDir }.
 */
export async function startDaemon(extraEnv = {}, opts = {}) {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'gantry-bench-'));
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean)), join(opts.root ?? ROOT, 'bin/gantryd.js'), '--port', String(opts.port ?? 0), '--data-dir', dataDir, '--log-level', 'warn', ...(opts.args ?? [])], {
    // started as `npm start` and `gantry daemon start` start it (shared/daemon-env.ts)
    // SSH off unless a suite asks for it (GANTRY_SSH_PORT in extraEnv): a bench daemon must not take port 2222.
    env: daemonEnv({ ...process.env, GANTRY_ROOT_PASSWORD: ROOT_PASSWORD, GANTRY_SSH_PORT: 'off', ...extraEnv }),
    stdio: ['ignore', 'pipe', opts.stderr ?? 'inherit'],
    cwd: opts.cwd,
  });
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (d) => { err = (err + d).slice(-100_000); });
  const exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/gantryd listening on (\S+)/);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`gantryd exited with ${code}: ${out}${err}`)));
  });
  const stop = async () => {
    child.kill('SIGTERM');
    const end = await exited;
    if (!opts.keep) rmSync(dataDir, { recursive: true, force: true });
    return end;
  };
  return { url, pid: child.pid, child, exited, stderr: () => err, stop, dataDir };
}

/** POST /api/v3/session as root; returns the private token. */
export async function rootToken(url) {
  const res = await fetch(`${url}/api/v3/session`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'root', password: ROOT_PASSWORD }),
  });
  if (res.status !== 201) throw new Error(`login failed: ${res.status}`);
  return (await res.json()).private_token;
}

/** A JSON API call that must succeed. */
export async function api(url, token, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method, headers: { 'private-token': token, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Run autocannon and return a compact summary. */
export async function cannon(opts) {
  const result = await autocannon({ connections: 10, ...opts });
  const non2xx = result.non2xx + result.errors;
  return {
    title: opts.title,
    requests: result.requests.total,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: non2xx,
    // what the non-2xx were: { "404": n, ... } and the socket errors
    failures: Object.fromEntries([
      ...Object.entries(result.statusCodeStats ?? {}).filter(([code]) => !code.startsWith('2')).map(([code, v]) => [code, v.count]),
      ...(result.errors ? [['errors', result.errors]] : []),
    ]),
  };
}

/** RSS of a process in MB (Linux /proc). */
export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(status.match(/VmRSS:\s+(\d+)/)[1]);
  return Math.round(kb / 1024);
}

/** A short description of this machine. */
export function machine() {
  const c = cpus();
  return `${c.length} × ${c[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Linux ${release()}, Node ${process.version}`;
}

/** Markdown table of autocannon summaries. */
export function table(rows) {
  const head = '| scenario | requests | req/s | p50 ms | p90 ms | p99 ms | max ms | non-2xx/errors |\n|---|---|---|---|---|---|---|---|';
  return [head, ...rows.map((r) => `| ${r.title} | ${r.requests} | ${r.rps} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.max} | ${r.errors} |`)].join('\n');
}

/** Replace (or append) the section `name` of docs/benchmarks.md. */
export function writeSection(name, markdown) {
  const file = join(ROOT, 'docs/benchmarks.md');
  let doc = existsSync(file) ? readFileSync(file, 'utf8') : '# Gantry benchmarks\n\nProduced by `npm run bench` (scripts/bench.mjs). Each section is rewritten by its suite.\n';
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const re = new RegExp(`${start}[\\s\\S]*?${end}`);
  doc = re.test(doc) ? doc.replace(re, block) : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, doc);
}

/**
 * The main thread of process `pid`: its CPU time and its time runnable but waiting for a CPU (ms, Linux
 * /proc/<pid>/task/<pid>/schedstat), or null where there is none.
 */
export function schedstat(pid) {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { run: run / 1e6, wait: wait / 1e6 };
  } catch {
    return null;
  }
}

/**
 * Open-loop load at a fixed rate (as wrk2 does): one request every 1000/rate ms, each timed from its *scheduled*
 * start, so a slow response delays nothing else and queueing shows up in the percentiles (no coordinated omission).
 * `pathFor(i)` gives the path of the i-th request (and `bodyFor(i)` its body, with `method`). Uses undici's Pool with up
 * to `connections` sockets, in a process of its own (paced-client.mjs). With `pid` (the daemon's) the answer also says
 * how long the daemon and the client waited for a CPU meanwhile (schedstat): on a shared machine that, not the daemon,
 * is often the tail.
 */
export async function paced({ title, url, headers, rate, seconds, connections = 50, pathFor, method = 'GET', bodyFor, pid }) {
  const total = Math.round(rate * seconds);
  const paths = Array.from({ length: total }, (_, i) => pathFor(i));
  const bodies = bodyFor ? Array.from({ length: total }, (_, i) => bodyFor(i) ?? null) : undefined;
  // the generator is a process of its own (paced-client.mjs): no garbage of this one's autocannon rounds pauses it
  const client = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'paced-client.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const out = [];
  client.stdout.on('data', (d) => out.push(d));
  const exited = new Promise((r) => client.once('exit', r));
  client.stdin.end(JSON.stringify({ origin: new URL(url).origin, method, headers, rate, seconds, connections, paths, bodies }));
  const before = pid ? [schedstat(pid), schedstat(client.pid)] : null;
  let after = null;
  // the client's CPU figures are read just before it exits (its /proc entry goes with it)
  // (the last readings, of an exiting process, may come back empty: the largest is kept)
  const later = (a, b) => (!a ? b : !b ? a : b.run >= a.run ? b : a);
  const poll = setInterval(() => { if (pid) after = [schedstat(pid), later(after?.[1], schedstat(client.pid))]; }, 100);
  const code = await exited;
  clearInterval(poll);
  if (pid) after = [schedstat(pid), after?.[1] ?? null];
  if (code !== 0) throw new Error(`paced client exited with ${code}`);
  const { latencies, errors } = JSON.parse(Buffer.concat(out).toString('utf8'));
  const sorted = latencies.sort((a, b) => a - b);
  const at = (p) => Number(sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))].toFixed(1));
  const delta = (i, k) => (before?.[i] && after?.[i] ? Math.round(after[i][k] - before[i][k]) : null);
  return {
    title, requests: sorted.length, rps: Math.round(sorted.length / seconds), p50: at(50), p90: at(90), p99: at(99),
    max: Number(sorted.at(-1).toFixed(1)), errors,
    // with `pid` (the daemon): its main thread's CPU time and its time runnable but waiting for a CPU, the same for
    // the paced client (to its last 0.1 s), and the load average, over the run: the machine's share of the tail
    ...(pid ? { daemonRanMs: delta(0, 'run'), daemonWaitedMs: delta(0, 'wait'), clientRanMs: delta(1, 'run'), clientWaitedMs: delta(1, 'wait'), load: Number(loadavg()[0].toFixed(1)) } : {}),
  };
}

/**
 * Start the bare-Fastify reference (scripts/bench/reference-server.mjs) answering each of `paths` with the bytes
 * Gantry answered for it (fetched now from `gantryUrl` with `headers`). Resolves with { url, stop }.
 */
export async function startReference(gantryUrl, headers, paths) {
  const responses = {};
  for (const path of paths) {
    const res = await fetch(`${gantryUrl}${path}`, { headers });
    responses[path] = { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()).toString('base64') };
  }
  return startReferenceServer(responses);
}

/**
 * The reference server answering each path of `responses` (path -> { status, type, body (base64) }), whatever the
 * method. Resolves with { url, pid, stop }.
 */
export async function startReferenceServer(responses) {
  const file = join(mkdtempSync(join(tmpdir(), 'gantry-ref-')), 'responses.json');
  writeFileSync(file, JSON.stringify(responses));
  const child = spawn(process.execPath, [join(ROOT, 'scripts/bench/reference-server.mjs'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (\S+)/);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`reference server exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dirname(file), { recursive: true, force: true });
    },
  };
}

/**
 * Gantry against the reference, alternated in the same run (`rounds` times each, `seconds` per round, max
 * throughput with `connections` connections): the median req/s of each and their ratio.
 */
export async function againstReference({ title, gantryUrl, refUrl, path, headers, rounds = 3, seconds = 5, connections = 4 }) {
  const g = [];
  const r = [];
  for (let i = 0; i < rounds; i++) {
    g.push((await cannon({ title, url: `${gantryUrl}${path}`, headers, duration: seconds, connections })).rps);
    r.push((await cannon({ title, url: `${refUrl}${path}`, headers, duration: seconds, connections })).rps);
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { title, gantry: med(g), reference: med(r), ratio: Number((med(g) / med(r)).toFixed(2)) };
}

/** Median and p99 of `n` sequential GETs of one path (the cost of that request alone, nothing queued). */
export async function sequential(url, headers, path, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(`${url}${path}`, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: Number(times[Math.floor(n / 2)].toFixed(2)), p99: Number(times[Math.min(n - 1, Math.floor(n * 0.99))].toFixed(2)) };
}
