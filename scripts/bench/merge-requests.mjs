// Merge requests suite: a repository written with `git fast-import` while the daemon is stopped (a feature branch of
// 5,000 commits changing 1,000 files off a diverged master, and a branch whose diff is 10 MB), 50,000 merge request
// rows seeded straight into SQLite, then a restarted gantryd: rounds of creating a merge request of the feature branch
// (its diff version, commits and merge status computed) and merging it (PUT .../merge), each next to its floor run in
// the same round (the git commands it needs, run directly on the same repository); GET changes and commits; GET
// changes of the 10 MB diff (time and daemon RSS, sampled while it serves); the list of 50,000 merge requests at max
// throughput and paced. With GANTRY_BENCH_DATABASE_URL (or GANTRY_TEST_DATABASE_URL) the create/merge rounds run
// again on a fresh PostgreSQL database.
// Sizes: BENCH_MR_COMMITS, BENCH_MR_FILES, BENCH_MR_COUNT, BENCH_MR_DIFF_MB, BENCH_MR_ROUNDS, BENCH_SECONDS (smoke-run
// with small ones).
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startDaemon, rootToken, cannon, paced, rssMb, machine, table, writeSection, sequential } from './lib.mjs';

const require = createRequire(import.meta.url);
const ms = (t) => Number((performance.now() - t).toFixed(1));
const GIT_ENV = {
  ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C',
  GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com',
};

/** Run git in a bare repository and return stdout (throws on failure). */
function git(gitDir, args, input) {
  const r = spawnSync('git', [`--git-dir=${gitDir}`, ...args], { env: GIT_ENV, input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
}

/** Time a git command run directly (the floor of what the daemon does with it). */
function timedGit(gitDir, args) {
  const t = performance.now();
  git(gitDir, args);
  return ms(t);
}

const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : Number(((v[v.length / 2 - 1] + v[v.length / 2]) / 2).toFixed(1));
};

/**
 * The git commands a merge request's creation needs, run directly (its floor): the merge base, the commits of the
 * source not in the target with their contents (rev-list into one cat-file), the changed files, the merge.
 */
function floorCreate(gitDir, target, source) {
  const t = performance.now();
  const base = git(gitDir, ['merge-base', target, source]).trim();
  const shas = git(gitDir, ['rev-list', '--max-count=10000', source, '--not', target]);
  git(gitDir, ['cat-file', '--batch'], shas);
  git(gitDir, ['diff-tree', '-r', '-M', '--name-only', '-z', base, source]);
  git(gitDir, ['merge-tree', '--write-tree', '--name-only', '-z', target, source]);
  return ms(t);
}

/** What a merge writes, run directly (its floor): the merged tree, the merge commit, the compare-and-set ref update. */
function floorMerge(gitDir, target, source, ref) {
  const before = git(gitDir, ['rev-parse', target]).trim();
  git(gitDir, ['update-ref', ref, before]);
  const t = performance.now();
  const tree = git(gitDir, ['merge-tree', '--write-tree', '--name-only', '-z', target, source]).split('\0')[0];
  const commit = git(gitDir, ['commit-tree', tree, '-p', target, '-p', source, '-F', '-'], 'floor merge\n').trim();
  git(gitDir, ['update-ref', ref, commit, before]);
  return ms(t);
}

/**
 * `rounds` merge requests of the feature branch created and merged, each next to its floor in the same round: master
 * is put back on its first head before each round (the same merge every time), the source is a new branch at
 * `feature`. Returns the timings and the first merge request (for the reads measured on it before its merge).
 */
async function mergeRounds(d, headers, gitDir, projectId, rounds, beforeMerge) {
  const mrs = `/projects/${projectId}/merge_requests`;
  const master = git(gitDir, ['rev-parse', 'master']).trim();
  const r = { create: [], floorCreate: [], merge: [], floorMerge: [], parents: 0 };
  for (let i = 0; i < rounds; i++) {
    git(gitDir, ['update-ref', 'refs/heads/master', master]);
    git(gitDir, ['update-ref', `refs/heads/feature-${i}`, 'feature']);
    r.floorCreate.push(floorCreate(gitDir, 'master', `feature-${i}`));
    let t = performance.now();
    const mr = (await call(d.url, headers, 'POST', mrs, { source_branch: `feature-${i}`, target_branch: 'master', title: `Big feature ${i}` }, 201)).json;
    r.create.push(ms(t));
    if (i === 0 && beforeMerge) await beforeMerge(mr);
    r.floorMerge.push(floorMerge(gitDir, 'master', `feature-${i}`, `refs/heads/floor-${i}`));
    t = performance.now();
    const merged = (await call(d.url, headers, 'PUT', `${mrs}/${mr.id}/merge`, {}, 200)).json;
    r.merge.push(ms(t));
    if (merged.state !== 'merged' || !merged.merge_commit_sha) throw new Error(`merge answered state ${merged.state}`);
    r.parents = git(gitDir, ['rev-list', '--parents', '-n', '1', 'master']).trim().split(' ').length - 1;
  }
  return r;
}

/** A row of the create/merge table: medians, their ratio, every round. */
function roundRows(label, r) {
  const row = (what, floorName, xs, fs) =>
    `| ${what} (${label}) | **${median(xs)}** | ${floorName} | ${median(fs)} | **${(median(xs) / median(fs)).toFixed(2)}** | ${xs.join(', ')} / ${fs.join(', ')} |`;
  return [
    row('PUT .../merge', '`git merge-tree --write-tree` + `commit-tree` + `update-ref`', r.merge, r.floorMerge),
    row('POST merge request', '`merge-base` + `rev-list` + `cat-file --batch` + `diff-tree` + `merge-tree`', r.create, r.floorCreate),
  ].join('\n');
}

/**
 * Write the history with one `git fast-import` stream: master with `files` files, then one more master commit
 * (diverged), `feature` with `commits` commits off the base each changing one file (all `files` changed in the end),
 * and `bigdiff` off the base adding about `diffMb` MB of text in 40 files.
 */
export async function writeHistory(gitDir, { commits, files, diffMb }) {
  const child = spawn('git', [`--git-dir=${gitDir}`, 'fast-import', '--quiet', '--force'], { env: GIT_ENV, stdio: ['pipe', 'inherit', 'inherit'] });
  const done = new Promise((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`)))));
  const out = child.stdin;
  const chunks = [];
  const flush = async () => {
    if (!chunks.length) return;
    const buf = chunks.join('');
    chunks.length = 0;
    if (!out.write(buf)) await new Promise((r) => out.once('drain', r));
  };
  const data = (s) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  let ts = 1_700_000_000;
  const commit = (ref, mark, from, message, changes) => {
    ts += 60;
    chunks.push(`commit ${ref}\nmark :${mark}\ncommitter Bench <bench@example.com> ${ts} +0000\n${data(message)}${from ? `from :${from}\n` : ''}`);
    for (const [path, content] of changes) chunks.push(`M 100644 inline ${path}\n${data(content)}`);
    chunks.push('\n');
  };
  const base = [];
  for (let i = 0; i < files; i++) base.push([`src/dir${i % 50}/file${i}.txt`, `file ${i}\n${'base line\n'.repeat(20)}`]);
  commit('refs/heads/master', 1, null, 'base', base);
  commit('refs/heads/master', 2, 1, 'master moves on', [['MASTER.md', 'master only\n']]);
  let mark = 3;
  let prev = 1;
  for (let k = 0; k < commits; k++) {
    const i = k % files;
    commit('refs/heads/feature', mark, prev, `feature change ${k}`, [[`src/dir${i % 50}/file${i}.txt`, `file ${i}\n${'base line\n'.repeat(20)}change ${k}\n`]]);
    prev = mark++;
    if (chunks.length > 4000) await flush();
  }
  const line = `${'x'.repeat(79)}\n`;
  const perFile = Math.ceil((diffMb * 1024 * 1024) / 40 / line.length);
  const big = [];
  for (let f = 0; f < 40; f++) big.push([`big/file${f}.txt`, line.repeat(perFile)]);
  commit('refs/heads/bigdiff', mark, 1, 'a 10 MB diff', big);
  await flush();
  out.end();
  await done;
}

/** Insert `count` merge request rows (every 3rd merged, every 5th closed) into the project, in one transaction. */
export function seedMergeRequests(dataDir, projectId, rootId, count) {
  const Database = require('better-sqlite3');
  const db = new Database(join(dataDir, 'gantry.db'));
  db.pragma('journal_mode = WAL');
  const t0 = Date.parse('2024-01-01T00:00:00Z');
  db.transaction(() => {
    const base = db.prepare('SELECT COALESCE(MAX(iid), 0) AS n FROM merge_requests WHERE target_project_id = ?').get(projectId).n;
    const ins = db.prepare(`INSERT INTO merge_requests (target_project_id, iid, source_project_id, source_branch, target_branch, title, description, state,
      merge_status, author_id, created_at, updated_at) VALUES (?, ?, ?, ?, 'master', ?, ?, ?, 'can_be_merged', ?, ?, ?)`);
    for (let i = 1; i <= count; i++) {
      const at = new Date(t0 + i * 60_000).toISOString();
      const state = i % 3 === 0 ? 'merged' : i % 5 === 0 ? 'closed' : 'opened';
      ins.run(projectId, base + i, projectId, `seed-${i}`, `Seeded merge request ${i}`, `Description ${i}`, state, rootId, at, at);
    }
  })();
  db.close();
}

/** Call the API and fail loudly on an unexpected status. */
async function call(url, headers, method, path, body, expected) {
  const res = await fetch(`${url}/api/v3${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== expected) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { json: text ? JSON.parse(text) : null, bytes: Buffer.byteLength(text) };
}

/** The create/merge rounds on PostgreSQL: a fresh database, the same history (without the 10 MB branch). */
async function postgresRounds(pgBase, { commits, files, rounds }) {
  const { freshPostgres } = await import('./engines.mjs');
  const db = await freshPostgres(pgBase);
  let d = await startDaemon({ GANTRY_DATABASE_URL: db.url }, { keep: true });
  const dataDir = d.dataDir;
  try {
    let headers = { 'private-token': await rootToken(d.url), 'content-type': 'application/json' };
    const project = (await call(d.url, headers, 'POST', '/projects', { name: 'mr-bench' }, 201)).json;
    await d.stop();
    const gitDir = join(dataDir, 'repositories', `${project.id}.git`);
    process.stderr.write('bench merge-requests: PostgreSQL rounds...\n');
    await writeHistory(gitDir, { commits, files, diffMb: 0.01 });
    d = await startDaemon({ GANTRY_DATABASE_URL: db.url }, { dataDir, keep: true });
    headers = { 'private-token': await rootToken(d.url), 'content-type': 'application/json' };
    return await mergeRounds(d, headers, gitDir, project.id, rounds);
  } finally {
    await d.stop();
    const { rmSync } = await import('node:fs');
    rmSync(dataDir, { recursive: true, force: true });
    await db.drop();
  }
}

export async function run({
  commits = Number(process.env.BENCH_MR_COMMITS ?? 5_000), files = Number(process.env.BENCH_MR_FILES ?? 1_000),
  count = Number(process.env.BENCH_MR_COUNT ?? 50_000), diffMb = Number(process.env.BENCH_MR_DIFF_MB ?? 10),
  seconds = Number(process.env.BENCH_SECONDS ?? 10), rounds = Number(process.env.BENCH_MR_ROUNDS ?? 5),
  pgBase = process.env.GANTRY_BENCH_DATABASE_URL ?? process.env.GANTRY_TEST_DATABASE_URL,
} = {}) {
  const startLoad = loadavg()[0].toFixed(2);
  let d = await startDaemon({}, { keep: true });
  const dataDir = d.dataDir;
  try {
    let headers = { 'private-token': await rootToken(d.url), 'content-type': 'application/json' };
    const project = (await call(d.url, headers, 'POST', '/projects', { name: 'mr-bench' }, 201)).json;
    await d.stop();
    const gitDir = join(dataDir, 'repositories', `${project.id}.git`);
    process.stderr.write(`bench merge-requests: writing ${commits} commits over ${files} files and a ${diffMb} MB diff...\n`);
    let t = performance.now();
    await writeHistory(gitDir, { commits, files, diffMb });
    const historyMs = ms(t);
    process.stderr.write(`bench merge-requests: seeding ${count} merge requests...\n`);
    seedMergeRequests(dataDir, project.id, 1, count);
    d = await startDaemon({}, { dataDir, keep: true });
    headers = { 'private-token': await rootToken(d.url), 'content-type': 'application/json' };
    const mrs = `/projects/${project.id}/merge_requests`;

    // floors: git run directly on the same repository
    const floorDiff = timedGit(gitDir, ['diff', '--patch', '--find-renames', 'master...feature']);
    const floorLog = timedGit(gitDir, ['rev-list', '--count', 'master..feature']);
    const floorBigDiff = timedGit(gitDir, ['diff', '--patch', 'master...bigdiff']);

    // create and merge, each round next to its floor; the reads are measured on the first merge request before its merge
    let changes, changesMs, commitsRes, commitsMs;
    const sqliteRounds = await mergeRounds(d, headers, gitDir, project.id, rounds, async (mr) => {
      t = performance.now();
      changes = await call(d.url, headers, 'GET', `${mrs}/${mr.id}/changes`, undefined, 200);
      changesMs = ms(t);
      t = performance.now();
      commitsRes = await call(d.url, headers, 'GET', `${mrs}/${mr.id}/commits`, undefined, 200);
      commitsMs = ms(t);
    });
    const parents = sqliteRounds.parents;

    // the 10 MB diff: time and RSS sampled every 10 ms while it serves
    const big = (await call(d.url, headers, 'POST', mrs, { source_branch: 'bigdiff', target_branch: 'master', title: 'Big diff' }, 201)).json;
    const rssBefore = rssMb(d.pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, rssMb(d.pid)); }, 10);
    const bigTimes = [];
    let bigBytes = 0;
    for (let i = 0; i < 5; i++) {
      t = performance.now();
      bigBytes = (await call(d.url, headers, 'GET', `${mrs}/${big.id}/changes`, undefined, 200)).bytes;
      bigTimes.push(ms(t));
    }
    clearInterval(sampler);
    bigTimes.sort((a, b) => a - b);

    // the list of every merge request
    const list = `/api/v3${mrs}?per_page=20`;
    const total = Number((await fetch(`${d.url}${list}`, { headers })).headers.get('x-total'));
    const lastPage = Math.max(1, Math.ceil(total / 20));
    const rows = [];
    await cannon({ url: `${d.url}${list}`, headers, title: 'warm-up', duration: 2 });
    rows.push(await cannon({ url: `${d.url}${list}`, headers, title: `GET /projects/:id/merge_requests?per_page=20 (${total.toLocaleString('en')} MRs), max throughput`, duration: seconds }));
    rows.push(await paced({ url: d.url, headers, title: '**GET /projects/:id/merge_requests?per_page=20 at 500 req/s (paced)**', rate: 500, seconds, pathFor: () => list }));
    rows.push(await paced({ url: d.url, headers, title: '**GET /projects/:id/merge_requests?state=opened&per_page=20 at 500 req/s (paced)**', rate: 500, seconds, pathFor: () => `${list}&state=opened` }));
    const first = await sequential(d.url, headers, `${list}&page=1`, 100);
    const last = await sequential(d.url, headers, `${list}&page=${lastPage}`, 100);
    const rss = rssMb(d.pid);
    await d.stop();
    const pgRounds = pgBase ? await postgresRounds(pgBase, { commits, files, rounds }) : null;

    const openSeeded = Array.from({ length: count }, (_, k) => k + 1).filter((i) => i % 3 !== 0 && i % 5 !== 0).length;
    const md = `## Merge requests (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}, load average ${startLoad} (1 min) at the start. One gantryd, SQLite (WAL, synchronous=FULL); the
create/merge rounds again on PostgreSQL 15 (scripts/postgres-test-server: fsync off, a throwaway server). Repository written with git fast-import in ${historyMs} ms:
a feature branch of ${commits.toLocaleString('en')} commits changing ${files.toLocaleString('en')} files off a master that moved on, and
a branch adding ${diffMb} MB of text. ${count.toLocaleString('en')} merge requests seeded in SQLite. Floors are the git commands run directly on the
same repository.

Create and merge: ${rounds} rounds, each a new merge request of the same feature branch into master (put back on its
first head before each round) created and merged, each next to its floor run in the same round; medians, their
ratio (goal: at most 2), and every round (gantry / floor). Measured while other work shared the 2 cores. On SQLite every
merge into master also sets the ${openSeeded.toLocaleString('en')} seeded open merge requests that target master back to
\`unchecked\` in its push transaction (their merge status must be checked again): the floor has no such rows to write.

| operation | gantry ms (median) | floor | floor ms (median) | ratio | rounds ms (gantry / floor) |
|---|---|---|---|---|---|
${roundRows('SQLite', sqliteRounds)}
${pgRounds ? roundRows('PostgreSQL', pgRounds) : '| PostgreSQL | not run | (GANTRY_BENCH_DATABASE_URL unset) | | | |'}

| read | gantry ms | floor | floor ms |
|---|---|---|---|
| GET .../changes (${changes.json.changes?.length ?? 0} files, ${Math.round(changes.bytes / 1024)} KB) | ${changesMs} | \`git diff master...feature\` | ${floorDiff} |
| GET .../commits | ${commitsMs} | \`git rev-list --count master..feature\` | ${floorLog} |
| GET .../changes of the ${diffMb} MB diff (p50 of 5; answer ${Math.round(bigBytes / 1024)} KB) | ${bigTimes[2]} | \`git diff master...bigdiff\` | ${floorBigDiff} |

The merge commit on master has ${parents} parents. Daemon RSS: ${rssBefore} MB before the big diff, **${rssPeak} MB peak** while serving it
(sampled every 10 ms), ${rss} MB after the list runs.

${table(rows)}

List page cost, 100 sequential requests each: page 1 p50 ${first.p50} ms / p99 ${first.p99} ms; last page (${lastPage}) p50 ${last.p50} ms /
p99 ${last.p99} ms. Targets: merge and create within 2x of their floors; RSS under 150 MB while serving the big diff.`;
    writeSection('merge-requests', md);
    process.stdout.write(`${md}\n`);
  } finally {
    await d.stop();
    const { rmSync } = await import('node:fs');
    rmSync(dataDir, { recursive: true, force: true });
  }
}
