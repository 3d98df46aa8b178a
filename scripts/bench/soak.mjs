// Soak suite (`npm run bench -- soak`): mixed load on one daemon for GANTRY_SOAK_MINUTES (default 60) at about
// GANTRY_SOAK_RATE API requests a second (default 15): reads of projects, issues, merge requests, commits, trees and
// files; writes (issues, notes, labels, close and reopen); a clone over HTTP every 10 s and a push every 20 s whose
// pipeline the real gantry-runner runs. The daemon's RSS and open file descriptors (/proc/<pid>/fd) are sampled every
// minute (GANTRY_SOAK_SAMPLE_SECONDS); the verdict: RSS growth over the last 5/6 of the run under 10 %, a flat fd count,
// no error answers.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { ROOT, machine, rssMb, startDaemon, writeSection } from './lib.mjs';
import { call, git, seedWorld, startReceiver } from '../fuzz/world.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const gitAsync = async (args, cwd) => (await promisify(execFile)('git', ['-c', 'user.name=Soak', '-c', 'user.email=soak@example.com', ...args], { cwd, maxBuffer: 1 << 26 })).stdout;
const fds = (pid) => readdirSync(`/proc/${pid}/fd`).length;
/** Anonymous and file-backed resident memory (MB) from /proc/<pid>/status. */
const rssParts = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  return { anon: Math.round(kb('RssAnon') / 1024), file: Math.round(kb('RssFile') / 1024) };
};
/** The V8 heap (allocated and in use) and external memory (MB) from the daemon's /-/metrics. */
const heapParts = async (url, token) => {
  try {
    const text = await (await fetch(`${url}/-/metrics`, { headers: { 'private-token': token } })).text();
    const mb = (name) => Math.round(Number(text.match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1] ?? NaN) / 1048576);
    return { heap: mb('nodejs_heap_size_total_bytes'), heapUsed: mb('nodejs_heap_size_used_bytes'), external: mb('nodejs_external_memory_bytes') };
  } catch {
    return { heap: NaN, heapUsed: NaN, external: NaN };
  }
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function run({
  minutes = Number(process.env.GANTRY_SOAK_MINUTES ?? 60), rate = Number(process.env.GANTRY_SOAK_RATE ?? 15),
  sampleSeconds = Number(process.env.GANTRY_SOAK_SAMPLE_SECONDS ?? 60),
} = {}) {
  const work = mkdtempSync(join(tmpdir(), 'gantry-soak-'));
  const receiver = await startReceiver();
  const d = await startDaemon({}, { stderr: 'pipe' });
  let runner;
  const counts = { api: 0, apiErrors: 0, clones: 0, pushes: 0, gitErrors: 0, pipelines: 0, builds: {} };
  const errors = [];
  const samples = [];
  try {
    process.stderr.write('bench soak: seeding...\n');
    const w = await seedWorld(d.url, join(work, 'seed'), receiver.url);
    const admin = w.admin;
    const dev = w.users.developer.token;
    const soak = (await call(d.url, 'POST', '/api/v3/projects', admin, { name: 'soak', visibility_level: 20 }, 201)).body;
    await call(d.url, 'POST', `/api/v3/projects/${soak.id}/hooks`, admin, { url: `${receiver.url}/soak`, push_events: true, build_events: true, pipeline_events: true }, 201);
    const src = join(work, 'src');
    mkdirSync(src);
    git(['init', '-q'], src);
    writeFileSync(join(src, '.gitlab-ci.yml'), 'build:\n  script:\n    - echo building\n    - mkdir -p out && date > out/stamp\n  artifacts:\n    paths: [out/]\n');
    writeFileSync(join(src, 'n.txt'), '0\n');
    git(['add', '-A'], src);
    git(['commit', '-q', '-m', 'soak start'], src);
    const remote = `${d.url.replace('://', `://root:${admin}@`)}/${soak.path_with_namespace}.git`;
    git(['push', '-q', remote, 'master'], src);
    const config = join(work, 'runner.json');
    execFileSync(process.execPath, [join(ROOT, 'bin/gantry-runner.js'), 'register', '--url', d.url, '--registration-token', w.registration, '--description', 'soak', '--run-untagged', '--config', config], { stdio: 'ignore' });
    runner = spawn(process.execPath, [join(ROOT, 'bin/gantry-runner.js'), 'run', '--config', config, '--builds-dir', join(work, 'builds')], { stdio: 'ignore' });

    const [p] = w.projects;
    const reads = [
      () => `/api/v3/projects?per_page=20`, () => `/api/v3/projects/${p.id}`, () => `/api/v3/projects/${p.id}/issues?per_page=20`,
      () => `/api/v3/projects/${p.id}/merge_requests`, () => `/api/v3/projects/${p.id}/merge_requests/${p.mr}/changes`,
      () => `/api/v3/projects/${p.id}/repository/commits`, () => `/api/v3/projects/${p.id}/repository/tree?recursive=true`,
      () => `/api/v3/projects/${p.id}/repository/files?file_path=README.md&ref=master`, () => `/api/v3/projects/${p.id}/issues/${p.issue}/notes`,
      () => `/api/v3/projects/${soak.id}/pipelines`, () => `/api/v3/projects/${soak.id}/builds`, () => '/api/v3/issues', () => '/api/v3/user',
    ];
    let n = 0;
    const writes = [
      async () => call(d.url, 'POST', `/api/v3/projects/${p.id}/issues`, dev, { title: `soak ${n++}`, labels: 'bug' }),
      async () => call(d.url, 'POST', `/api/v3/projects/${p.id}/issues/${p.issue}/notes`, dev, { body: `soak note ${n++}` }),
      async () => call(d.url, 'PUT', `/api/v3/projects/${p.id}/issues/${p.issue}`, dev, { state_event: n++ % 2 ? 'close' : 'reopen' }),
      async () => call(d.url, 'POST', `/api/v3/projects/${p.id}/merge_requests/${p.mr}/notes`, dev, { body: `soak mr note ${n++}` }),
    ];
    const apiOnce = async () => {
      counts.api += 1;
      try {
        let status;
        let what;
        if (Math.random() < 0.8) {
          what = reads[Math.floor(Math.random() * reads.length)]();
          const res = await fetch(`${d.url}${what}`, { headers: { 'private-token': Math.random() < 0.5 ? admin : dev } });
          await res.arrayBuffer();
          status = res.status;
        } else {
          const k = Math.floor(Math.random() * writes.length);
          what = `write ${k}`;
          status = (await writes[k]()).status;
        }
        if (status >= 400) {
          counts.apiErrors += 1;
          if (errors.length < 20) errors.push(`API ${status} (${what})`);
        }
      } catch (e) {
        counts.apiErrors += 1;
        if (errors.length < 20) errors.push(`API: ${e.message}`);
      }
    };
    const busy = new Set();
    const gitOnce = async (kind) => {
      // one clone and one push at a time: a push started while the last one still runs would race it in the work tree
      if (busy.has(kind)) return;
      busy.add(kind);
      try {
        if (kind === 'clone') {
          const dest = mkdtempSync(join(work, 'clone-'));
          await gitAsync(['clone', '-q', `${d.url}/${soak.path_with_namespace}.git`, dest], work);
          rmSync(dest, { recursive: true, force: true });
          counts.clones += 1;
        } else {
          writeFileSync(join(src, 'n.txt'), `${counts.pushes + 1}\n`);
          await gitAsync(['commit', '-q', '-am', `soak push ${counts.pushes + 1}`], src);
          await gitAsync(['push', '-q', remote, 'master'], src);
          counts.pushes += 1;
        }
      } catch (e) {
        counts.gitErrors += 1;
        if (errors.length < 20) errors.push(`git ${kind}: ${e.message.split('\n').slice(0, 3).join(' ')}`);
      } finally {
        busy.delete(kind);
      }
    };

    const t0 = performance.now();
    const end = t0 + minutes * 60_000;
    const sample = async () => {
      const s = { minute: Number(((performance.now() - t0) / 60_000).toFixed(1)), rss: rssMb(d.pid), ...rssParts(d.pid), fds: fds(d.pid), requests: counts.api, errors: counts.apiErrors + counts.gitErrors };
      samples.push(s);
      Object.assign(s, await heapParts(d.url, admin));
      process.stderr.write(`bench soak: ${JSON.stringify(s)}\n`);
    };
    await sample();
    const sampler = setInterval(() => void sample(), sampleSeconds * 1000);
    const clones = setInterval(() => void gitOnce('clone'), 10_000);
    const pushes = setInterval(() => void gitOnce('push'), 20_000);
    // Open loop at `rate` a second: a slow answer does not slow the load down.
    const inflight = new Set();
    for (let i = 0; performance.now() < end; i++) {
      const due = t0 + (i * 1000) / rate;
      if (due > performance.now()) await sleep(due - performance.now());
      const job = apiOnce().finally(() => inflight.delete(job));
      inflight.add(job);
    }
    clearInterval(clones);
    clearInterval(pushes);
    await Promise.all(inflight);
    await sample();
    clearInterval(sampler);
    const pipelines = (await call(d.url, 'GET', `/api/v3/projects/${soak.id}/pipelines?per_page=100`, admin)).headers.get('x-total');
    counts.pipelines = Number(pipelines);
    for (let page = 1; page < 50; page++) {
      const r = await call(d.url, 'GET', `/api/v3/projects/${soak.id}/builds?per_page=100&page=${page}`, admin);
      for (const b of r.body) counts.builds[b.status] = (counts.builds[b.status] ?? 0) + 1;
      if (r.body.length < 100) break;
    }

    // Growth over the last 5/6 of the run (the last 50 minutes of an hour): the median of the first three samples of
    // that window against the median of the last three.
    const from = samples.filter((s) => s.minute >= minutes / 6);
    const first = median(from.slice(0, 3).map((s) => s.rss));
    const last = median(from.slice(-3).map((s) => s.rss));
    const growth = from.length >= 2 ? ((last - first) / first) * 100 : NaN;
    const fdFirst = median(from.slice(0, 3).map((s) => s.fds));
    const fdLast = median(from.slice(-3).map((s) => s.fds));
    const verdict = growth < 10 && counts.apiErrors === 0 && counts.gitErrors === 0 && fdLast <= fdFirst + 5;
    const curve = samples.map((s) => `| ${s.minute} | ${s.rss} | ${s.anon} / ${s.file} | ${s.heap} / ${s.heapUsed} / ${s.external} | ${s.fds} | ${s.requests} | ${s.errors} |`).join('\n');
    const md = `## Soak (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}, shared with other work during the run. \`GANTRY_SOAK_MINUTES=${minutes} npm run bench -- soak\`
(scripts/bench/soak.mjs): ${rate} API requests/s (80 % reads of projects, issues, merge requests, diffs, commits, trees,
files, pipelines; 20 % writes: issues, notes, close/reopen), a clone over HTTP every 10 s, a push every 20 s whose
pipeline the real gantry-runner runs (with an artifact), on a seeded instance.

| measurement | result |
|---|---|
| API requests / error answers | ${counts.api} / **${counts.apiErrors}** |
| clones / pushes / git errors | ${counts.clones} / ${counts.pushes} / **${counts.gitErrors}** |
| pipelines / builds by status | ${counts.pipelines} / ${JSON.stringify(counts.builds)} |
| RSS growth over the last 5/6 of the run (minute ${from[0]?.minute} to the end) | **${growth.toFixed(1)} %** (${first} MB -> ${last} MB; target < 10 %) |
| open file descriptors, same window | ${fdFirst} -> ${fdLast} |
| verdict | ${verdict ? 'pass' : '**fail**'} |
${errors.length ? `\nErrors: ${[...new Set(errors)].join('; ')}\n` : ''}
| minute | RSS MB | of which anonymous / file-backed MB | V8 heap allocated / used, external MB | fds | API requests so far | errors so far |
|---|---|---|---|---|---|---|
${curve}`;
    writeSection('soak', md);
    process.stdout.write(`${md}\n`);
    return { verdict, growth, counts, samples };
  } finally {
    if (runner) runner.kill('SIGTERM');
    await d.stop();
    await receiver.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
