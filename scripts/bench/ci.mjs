// CI suite: time from `git push` returning to the first trace byte stored by the daemon for a one-line job run by
// the real gantry-runner (long-polling, then polling; `git push` itself as the floor); builds claimed per second by 8
// concurrent runners; trace append (PATCH) throughput; 500 runners held by long-polling builds/register: the daemon's
// idle CPU and RSS with them against none, and one push's wake-up among them.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { ROOT, api, startDaemon, rootToken, machine, rssMb, writeSection } from './lib.mjs';

/** CPU seconds (user + system) a process has used so far (Linux /proc; clock ticks of 1/100 s). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const git = (args, cwd) => execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

async function ciPost(url, path, body, headers = {}) {
  const res = await fetch(`${url}/ci/api/v1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: res.status === 204 ? null : await res.json() };
}

export async function run({ rounds = Number(process.env.BENCH_ROUNDS ?? 10), claimBuilds = Number(process.env.BENCH_CLAIM_BUILDS ?? 1000), seconds = Number(process.env.BENCH_SECONDS ?? 10) } = {}) {
  const d = await startDaemon();
  const work = mkdtempSync(join(tmpdir(), 'gantry-bench-ci-'));
  let runner;
  try {
    const token = await rootToken(d.url);
    const registration = (await api(d.url, token, 'GET', '/api/v3/application/settings')).runners_registration_token;

    // 1. push -> first trace byte, with the real gantry-runner: long-polling (its default), then polling (--long-poll 0),
    // each against the same daemon; `git push` itself is the floor.
    const project = await api(d.url, token, 'POST', '/api/v3/projects', { name: 'latency' });
    const config = join(work, 'runner.json');
    execFileSync(process.execPath, [join(ROOT, 'bin/gantry-runner.js'), 'register', '--url', d.url, '--registration-token', registration, '--description', 'bench', '--run-untagged', '--config', config], { stdio: 'ignore' });
    const src = join(work, 'src');
    git(['init', '-q', '-b', 'master', src]);
    writeFileSync(join(src, '.gitlab-ci.yml'), 'hello:\n  script:\n    - echo hello\n');
    const remote = `${d.url.replace('://', `://root:${token}@`)}/root/latency.git`;
    let round = 0;
    const pushRounds = async (runnerArgs) => {
      runner = spawn(process.execPath, [join(ROOT, 'bin/gantry-runner.js'), 'run', '--config', config, '--builds-dir', join(work, 'builds'), ...runnerArgs], { stdio: 'ignore' });
      await sleep(1500); // the runner is asking (held, or backing off) when the first push lands
      const latencies = [];
      const pushTimes = [];
      for (let i = 0; i < rounds; i++) {
        writeFileSync(join(src, 'n.txt'), String(round++));
        git(['add', '-A'], src);
        git(['commit', '-q', '-m', `round ${round}`], src);
        const sha = git(['rev-parse', 'HEAD'], src).trim();
        const started = performance.now();
        git(['push', '-q', remote, 'master'], src);
        const pushed = performance.now();
        pushTimes.push(pushed - started);
        let first = null;
        while (first === null && performance.now() - pushed < 30000) {
          const builds = await api(d.url, token, 'GET', `/api/v3/projects/${project.id}/repository/commits/${sha}/builds`);
          const b = builds[0];
          if (b && b.status !== 'pending' && b.status !== 'created') {
            const res = await fetch(`${d.url}/api/v3/projects/${project.id}/builds/${b.id}/trace`, { headers: { 'private-token': token } });
            if (res.status === 200 && (await res.text()).length > 0) first = performance.now() - pushed;
          }
          if (first === null) await sleep(5);
        }
        if (first === null) throw new Error('no trace within 30 s');
        latencies.push(first);
        // let the build finish, and the runner go back to asking, before the next round
        for (let t = 0; t < 300; t++) {
          const [b] = await api(d.url, token, 'GET', `/api/v3/projects/${project.id}/repository/commits/${sha}/builds`);
          if (b && ['success', 'failed', 'canceled'].includes(b.status)) break;
          await sleep(50);
        }
        await sleep(1000);
      }
      runner.kill('SIGTERM');
      await new Promise((r) => runner.once('exit', r));
      runner = undefined;
      return { latencies, pushTimes };
    };
    process.stderr.write(`bench ci: ${rounds} pushes with the runner long-polling, ${rounds} polling, timing push -> first trace byte...\n`);
    const held = await pushRounds([]);
    const polled = await pushRounds(['--long-poll', '0']);
    const latencies = held.latencies;

    // 2. claims per second: many pending builds, 8 runners claiming concurrently.
    const bulk = await api(d.url, token, 'POST', '/api/v3/projects', { name: 'bulk' });
    const jobs = 200;
    const bulkSrc = join(work, 'bulk');
    git(['init', '-q', '-b', 'master', bulkSrc]);
    const bulkRemote = `${d.url.replace('://', `://root:${token}@`)}/root/bulk.git`;
    const pushes = Math.ceil(claimBuilds / jobs);
    process.stderr.write(`bench ci: queueing ${pushes * jobs} builds...\n`);
    for (let p = 0; p < pushes; p++) {
      const yml = Array.from({ length: jobs }, (_, j) => `job${j}:\n  script: ["true"]\n`).join('');
      writeFileSync(join(bulkSrc, '.gitlab-ci.yml'), yml);
      writeFileSync(join(bulkSrc, 'p.txt'), String(p));
      git(['add', '-A'], bulkSrc);
      git(['commit', '-q', '-m', `bulk ${p}`], bulkSrc);
      git(['push', '-q', bulkRemote, `master:refs/heads/b${p}`], bulkSrc);
    }
    let pending = 0;
    for (let t = 0; t < 600 && pending < pushes * jobs; t++) {
      const res = await fetch(`${d.url}/api/v3/projects/${bulk.id}/builds?scope=pending&per_page=1`, { headers: { 'private-token': token } });
      pending = Number(res.headers.get('x-total'));
      if (pending < pushes * jobs) await sleep(100);
    }
    const runners = [];
    for (let r = 0; r < 8; r++) runners.push((await ciPost(d.url, '/runners/register', { token: registration, description: `claimer ${r}`, run_untagged: true })).body.token);
    const claimed = new Set();
    let firstClaim = null;
    let duplicates = 0;
    const t0 = performance.now();
    await Promise.all(runners.map(async (rt) => {
      for (;;) {
        const res = await ciPost(d.url, '/builds/register', { token: rt }, { 'x-gantry-long-poll': '0' });
        if (res.status === 204) return;
        if (res.status !== 201) throw new Error(`claim answered ${res.status}`);
        if (claimed.has(res.body.id)) duplicates += 1;
        firstClaim ??= res.body;
        claimed.add(res.body.id);
      }
    }));
    const claimSeconds = (performance.now() - t0) / 1000;

    // 3. trace append throughput on one running build (sequential PATCHes of 4 KiB with Content-Range).
    // A build claimed above is running; its token (only in the claim payload) authorises the PATCHes.
    const fresh = { body: firstClaim };
    const chunk = Buffer.alloc(4096, 'x');
    let offset = 0;
    let appends = 0;
    const times = [];
    const tEnd = performance.now() + seconds * 1000;
    while (performance.now() < tEnd) {
      const s = performance.now();
      const res = await fetch(`${d.url}/ci/api/v1/builds/${fresh.body.id}/trace.txt`, {
        method: 'PATCH', headers: { 'BUILD-TOKEN': fresh.body.token, 'Content-Range': `${offset}-${offset + chunk.length - 1}`, 'content-type': 'text/plain' }, body: chunk,
      });
      await res.arrayBuffer();
      if (res.status !== 202) throw new Error(`PATCH answered ${res.status}`);
      times.push(performance.now() - s);
      offset += chunk.length;
      appends += 1;
    }

    // 4. 500 runners held: the daemon's CPU over `idleSeconds` idle without and with them, its RSS, and one push's
    // wake-up among them (one build queued: the oldest held runner gets it, the other 499 stay held).
    const heldCount = Number(process.env.BENCH_HELD_RUNNERS ?? 500);
    const idleSeconds = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
    process.stderr.write(`bench ci: registering ${heldCount} runners, ${idleSeconds} s idle without and with them held...\n`);
    const heldTokens = [];
    for (let r = 0; r < heldCount; r++) heldTokens.push((await ciPost(d.url, '/runners/register', { token: registration, description: `held ${r}`, run_untagged: true })).body.token);
    const metric = async () => Number((await (await fetch(`${d.url}/-/metrics`, { headers: { 'private-token': token } })).text()).match(/^gantry_runner_held_requests (\d+)$/m)?.[1] ?? NaN);
    await sleep(2000);
    const rssBefore = rssMb(d.pid);
    let cpu0 = cpuSeconds(d.pid);
    await sleep(idleSeconds * 1000);
    const idleCpu = cpuSeconds(d.pid) - cpu0;
    let woken = null;
    const pushAt = { t: 0 };
    const holds = heldTokens.map((rt) => ciPost(d.url, '/builds/register', { token: rt }, { 'x-gantry-long-poll': '60' }).then((res) => {
      if (res.status === 201 && woken === null) woken = performance.now() - pushAt.t;
      return res.status;
    }));
    for (let t = 0; t < 600 && (await metric()) < heldCount; t++) await sleep(100);
    const heldNow = await metric();
    await sleep(1000);
    cpu0 = cpuSeconds(d.pid);
    await sleep(idleSeconds * 1000);
    const heldCpu = cpuSeconds(d.pid) - cpu0;
    const rssHeld = rssMb(d.pid);
    const wake = await api(d.url, token, 'POST', '/api/v3/projects', { name: 'wake' });
    const wakeSrc = join(work, 'wake');
    git(['init', '-q', '-b', 'master', wakeSrc]);
    writeFileSync(join(wakeSrc, '.gitlab-ci.yml'), 'one:\n  script: ["true"]\n');
    git(['add', '-A'], wakeSrc);
    git(['commit', '-q', '-m', 'wake'], wakeSrc);
    const cpuWake0 = cpuSeconds(d.pid);
    git(['push', '-q', `${d.url.replace('://', `://root:${token}@`)}/root/wake.git`, 'master'], wakeSrc);
    pushAt.t = performance.now();
    for (let t = 0; t < 3000 && woken === null; t++) await sleep(2);
    await sleep(500);
    const wakeCpu = cpuSeconds(d.pid) - cpuWake0;
    const stillHeld = await metric();

    const md = `## CI (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}. The daemon, git, the runner and the load generator share the machine.

| measurement | result |
|---|---|
| \`git push\` returning -> first trace byte stored, one-line job, gantry-runner long-polling (its default; ${rounds} pushes) | median **${Math.round(median(latencies))} ms**, max ${Math.round(Math.max(...latencies))} ms (target median < 250 ms) |
| the same, gantry-runner polling (\`--long-poll 0\`: 0.5-5 s idle backoff, as before) | median ${Math.round(median(polled.latencies))} ms, max ${Math.round(Math.max(...polled.latencies))} ms |
| floor: the \`git push\` itself (same rounds) | median ${Math.round(median([...held.pushTimes, ...polled.pushTimes]))} ms |
| ${heldCount} runners held in builds/register (${heldNow} held per gantry_runner_held_requests), daemon CPU over ${idleSeconds} s idle | **${heldCpu.toFixed(2)} s** (${(100 * heldCpu / idleSeconds).toFixed(2)}% of a core); floor, the same ${idleSeconds} s with none held: ${idleCpu.toFixed(2)} s |
| daemon RSS, before the holds -> with ${heldCount} held | ${rssBefore} MB -> **${rssHeld} MB** (+${rssHeld - rssBefore} MB, ${(1024 * (rssHeld - rssBefore) / heldCount).toFixed(0)} KB per held request) |
| one push while ${heldCount} shared runners are held: push returning -> a held request answered 201 | ${woken === null ? 'none' : `**${Math.round(woken)} ms**`}; daemon CPU for the push and the wake-up ${wakeCpu.toFixed(2)} s; ${stillHeld} still held |
| builds claimed by 8 concurrent runners (POST /ci/api/v1/builds/register) | **${Math.round(claimed.size / claimSeconds)} claims/s** (${claimed.size} builds in ${claimSeconds.toFixed(1)} s, ${duplicates} handed out twice) |
| trace appends, one build, sequential 4 KiB PATCH trace.txt with Content-Range | **${Math.round(appends / seconds)} appends/s** (${((offset / seconds) / 1048576).toFixed(2)} MiB/s), p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms |

Push latencies (ms), long-polling: ${latencies.map(Math.round).join(', ')}; polling: ${polled.latencies.map(Math.round).join(', ')}.
Measured while other work ran on the machine (other helpers' tests share its 2 cores): compare the rows with their floors.`;
    writeSection('ci', md);
    process.stdout.write(`${md}\n`);
  } finally {
    if (runner) runner.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
    await d.stop();
  }
}
