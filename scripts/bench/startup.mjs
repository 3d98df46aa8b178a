// Start-up suite: how long a person waits before anything happens. Each figure is the median of `runs` runs, next to
// its floor measured in the same run (`node -e 0`, and a daemon-less `node` that only binds a port for the daemon):
// - CLI commands to exit: `gantry --help`, `gantry project list`, `gantry issue list` (against a running daemon),
//   `gantry-runner --help`;
// - gantryd from spawn to its ready line, on a fresh data dir and on one holding `projects` projects.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { daemonEnv, ROOT, ROOT_PASSWORD, machine, rootToken, startDaemon, writeSection } from './lib.mjs';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const ms = (x) => `${Math.round(x)} ms`;

/** Median wall time of a command run to its exit (ms). */
function timeCommand(args, env, runs) {
  const times = [];
  // one untimed run fills V8's compile cache, as any earlier use of the command would have
  spawnSync(process.execPath, args, { env, stdio: 'ignore' });
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    times.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited with ${r.status}: ${r.stderr}`);
  }
  return median(times);
}

/** Spawn to the line matching `ready` on stdout (ms), then SIGTERM. */
function timeToReady(args, env, ready) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    let readyAt = null;
    child.stdout.on('data', (d) => {
      out += d;
      if (readyAt === null && ready.test(out)) {
        readyAt = performance.now() - t0;
        child.kill('SIGTERM');
      }
    });
    child.once('exit', (code) => (readyAt !== null ? resolve(readyAt) : reject(new Error(`${args.join(' ')} exited with ${code} before ready: ${out}`))));
  });
}

async function daemonStart(dataDir, runs, fresh) {
  const env = daemonEnv({ ...process.env, GANTRY_ROOT_PASSWORD: ROOT_PASSWORD });
  const times = [];
  for (let i = 0; i <= runs; i++) {
    const dir = fresh ? mkdtempSync(join(tmpdir(), 'gantry-start-')) : dataDir;
    try {
      const t = await timeToReady([join(ROOT, 'bin/gantryd.js'), '--port', '0', '--data-dir', dir, '--log-level', 'warn'], env, /gantryd listening on/);
      if (i > 0) times.push(t); // the first run fills the compile cache
    } finally {
      if (fresh) rmSync(dir, { recursive: true, force: true });
    }
  }
  return median(times);
}

export async function run({ runs = Number(process.env.BENCH_RUNS ?? 10), projects = Number(process.env.BENCH_PROJECTS ?? 10000) } = {}) {
  const rows = [];
  const floor = timeCommand(['-e', '0'], process.env, runs);
  rows.push(['`node -e 0` (floor)', floor]);
  const d = await startDaemon({}, { keep: true });
  try {
    const token = await rootToken(d.url);
    const headers = { 'private-token': token, 'content-type': 'application/json' };
    const p = await fetch(`${d.url}/api/v3/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'startup' }) }).then((r) => r.json());
    await fetch(`${d.url}/api/v3/projects/${p.id}/issues`, { method: 'POST', headers, body: JSON.stringify({ title: 'An issue' }) });
    const env = { ...process.env, GANTRY_URL: d.url, GANTRY_TOKEN: token, HOME: mkdtempSync(join(tmpdir(), 'gantry-home-')) };
    const cli = join(ROOT, 'bin/gantry.js');
    rows.push(['`gantry --help`', timeCommand([cli, '--help'], env, runs)]);
    rows.push(['`gantry project list` (one request)', timeCommand([cli, 'project', 'list'], env, runs)]);
    rows.push([`\`gantry issue list ${p.path_with_namespace}\` (one request)`, timeCommand([cli, 'issue', 'list', p.path_with_namespace], env, runs)]);
    rows.push(['`gantry-runner --help`', timeCommand([join(ROOT, 'bin/gantry-runner.js'), '--help'], env, runs)]);
    process.stderr.write(`bench startup: creating ${projects} projects...\n`);
    const existing = 1;
    let next = 0;
    const worker = async () => {
      for (;;) {
        const n = next++;
        if (n >= projects - existing) return;
        const r = await fetch(`${d.url}/api/v3/projects`, { method: 'POST', headers, body: JSON.stringify({ name: `start ${n}` }) });
        if (r.status !== 201) throw new Error(`POST /projects: ${r.status}`);
        await r.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  } finally {
    await d.stop();
  }
  try {
    const fresh = await daemonStart(null, runs, true);
    const full = await daemonStart(d.dataDir, runs, false);
    rows.push(['gantryd spawn to ready line, fresh data dir', fresh]);
    rows.push([`gantryd spawn to ready line, ${projects} projects`, full]);
  } finally {
    rmSync(d.dataDir, { recursive: true, force: true });
  }
  const md = `## Start-up (${new Date().toISOString().slice(0, 10)})

\`npm run bench startup\` (scripts/bench/startup.mjs), on ${machine()}. Median of ${runs} runs each, after one untimed
run (V8's compile cache filled, as after any earlier use); commands run to their exit, the daemon to its
\`gantryd listening\` line. The floor, \`node -e 0\`, was measured in the same run.

| what | median | over the floor |
|---|---|---|
${rows.map(([what, t]) => `| ${what} | ${ms(t)} | ${what.includes('floor') ? '' : `+${ms(t - floor)}`} |`).join('\n')}
`;
  writeSection('startup', md);
  process.stdout.write(md);
}
