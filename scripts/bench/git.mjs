// Git suite: clone of a repository with 5,000 commits over Gantry's smart HTTP versus `git clone --no-local`
// of the same bare repository, and GET /repository/files throughput and latency at 300 requests/s.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startDaemon, rootToken, cannon, machine, table, writeSection } from './lib.mjs';

const git = (args, opts = {}) => execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28, ...opts }).toString();

/** A work tree with `n` commits, each touching a few small files (fast-import keeps this quick). */
export function makeHistory(dir, n) {
  git(['init', '-q', '-b', 'master', dir]);
  let stream = '';
  for (let i = 1; i <= n; i++) {
    const body = `line ${i}\n`.repeat(20);
    stream += `commit refs/heads/master\nmark :${i}\ncommitter Bench <bench@example.com> ${1700000000 + i} +0000\ndata ${`commit ${i}`.length}\ncommit ${i}\n`;
    if (i > 1) stream += `from :${i - 1}\n`;
    stream += `M 100644 inline src/file${i % 50}.txt\ndata ${Buffer.byteLength(body)}\n${body}\n`;
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, input: stream, maxBuffer: 1 << 28 });
  git(['checkout', '-q', 'master'], { cwd: dir });
}

/** The median of a list of numbers. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export async function run({ commits = Number(process.env.BENCH_COMMITS ?? 5000), rounds = Number(process.env.BENCH_ROUNDS ?? 5), seconds = Number(process.env.BENCH_SECONDS ?? 15) } = {}) {
  const d = await startDaemon();
  const work = mkdtempSync(join(tmpdir(), 'gantry-bench-git-'));
  try {
    const token = await rootToken(d.url);
    const headers = { 'private-token': token, 'content-type': 'application/json' };
    const created = await fetch(`${d.url}/api/v3/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'big', visibility_level: 20 }) }).then((r) => r.json());
    process.stderr.write(`bench git: making ${commits} commits and pushing them...\n`);
    const src = join(work, 'src');
    makeHistory(src, commits);
    const remote = `${d.url.replace('://', `://root:${token}@`)}/root/big.git`;
    git(['push', '-q', remote, 'master'], { cwd: src });
    const bare = join(d.dataDir, 'repositories', `${created.id}.git`);
    const localCopy = join(work, 'local.git');
    cpSync(bare, localCopy, { recursive: true });

    const timeClone = (url) => {
      const dest = mkdtempSync(join(work, 'clone-'));
      const t = performance.now();
      git(['clone', '-q', '--no-local', url, dest]);
      const ms = performance.now() - t;
      rmSync(dest, { recursive: true, force: true });
      return ms;
    };
    const gantry = [];
    const local = [];
    for (let i = 0; i < rounds; i++) {
      gantry.push(timeClone(`${d.url}/root/big.git`)); // public project: anonymous clone
      local.push(timeClone(localCopy));
    }
    const g = median(gantry);
    const l = median(local);

    process.stderr.write('bench git: GET /repository/files...\n');
    const path = `/api/v3/projects/${created.id}/repository/files?file_path=src%2Ffile7.txt&ref=master`;
    const probe = await fetch(`${d.url}${path}`, { headers });
    if (probe.status !== 200) throw new Error(`GET file answered ${probe.status}`);
    const rows = [];
    await cannon({ url: `${d.url}${path}`, headers, duration: 3, title: 'warm-up' });
    rows.push(await cannon({ url: `${d.url}${path}`, headers, duration: Math.max(2, Math.round(seconds * 2 / 3)), title: 'GET /repository/files, max throughput' }));
    rows.push(await cannon({ url: `${d.url}${path}`, headers, duration: seconds, overallRate: 300, title: 'GET /repository/files at 300 req/s' }));

    const md = `## Git hosting (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}. git ${git(['--version']).trim().replace('git version ', '')}.

Clone of a repository with ${commits} commits (median of ${rounds} rounds, each a fresh \`git clone --no-local\` into a new directory):

| how | median ms | all rounds (ms) |
|---|---|---|
| Gantry smart HTTP (anonymous, public project) | ${Math.round(g)} | ${gantry.map(Math.round).join(', ')} |
| \`git clone --no-local\` of the same bare repository | ${Math.round(l)} | ${local.map(Math.round).join(', ')} |

Ratio Gantry / local: **${(g / l).toFixed(2)}** (target at most 1.3).

Repository file reads (base64 content, blob_id, commit_id, last_commit_id of a file touched by 100 commits), 10 connections:

${table(rows)}

Target: p99 under 15 ms at 300 requests/s.`;
    writeSection('git', md);
    process.stdout.write(`${md}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
    await d.stop();
  }
}
