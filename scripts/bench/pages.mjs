// Pages suite (issue 24 item 5): the web pages of a signed-in reader under load. A project page (README rendered), an
// issue with 100 notes, a merge request whose diff touches 1,000 files, and a tree of 1,000 entries, each: p99 of an
// open-loop paced load (pages.rate a second for BENCH_SECONDS), the same page's median and p99 alone (sequential),
// max throughput against the floor (a bare Fastify answering the same bytes, alternated rounds), and the page weight
// (HTML + the stylesheet + the script when the page loads one). Targets: p99 under 50 ms on SQLite, under 100 KB before
// images for any page but the big diff. Sizes: BENCH_PAGE_FILES (1000), BENCH_PAGE_NOTES (100), BENCH_SECONDS (10),
// BENCH_PAGE_RATE (20 a second).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { againstReference, api, machine, paced, rootToken, sequential, startDaemon, startReference, writeSection, ROOT_PASSWORD } from './lib.mjs';

const FILES = Number(process.env.BENCH_PAGE_FILES ?? 1000);
const NOTES = Number(process.env.BENCH_PAGE_NOTES ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_PAGE_RATE ?? 20);
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0' };

function git(cwd, args) {
  const r = spawnSync('git', args, { cwd, env: GIT_ENV, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
}

/** Sign in at /users/sign_in as root; returns the Cookie header of the session. */
async function signIn(url) {
  const form = await fetch(`${url}/users/sign_in`);
  const jar = (form.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
  const csrf = /name="authenticity_token" value="([^"]+)"/.exec(await form.text())[1];
  const res = await fetch(`${url}/users/sign_in`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar },
    body: new URLSearchParams({ login: 'root', password: ROOT_PASSWORD, authenticity_token: csrf, redirect_to: '/' }).toString(),
  });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  const session = (res.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).find((c) => c.startsWith('gantry_session='));
  return session;
}

/** Bytes of a page with what it loads: the HTML, the stylesheet, and the script when the page names it. */
async function weight(url, path, headers) {
  const html = Buffer.from(await (await fetch(`${url}${path}`, { headers })).arrayBuffer());
  let total = html.length;
  const text = html.toString();
  for (const m of text.matchAll(/<(?:link rel="stylesheet" href|script src)="([^"]+)"/g)) total += Buffer.from(await (await fetch(`${url}${m[1]}`)).arrayBuffer()).length;
  return { html: html.length, total };
}

export async function run() {
  const daemon = await startDaemon();
  const work = mkdtempSync(join(tmpdir(), 'gantry-bench-pages-'));
  try {
    const token = await rootToken(daemon.url);
    const project = await api(daemon.url, token, 'POST', '/api/v3/projects', { name: 'pages-bench' });
    const base = `/${project.path_with_namespace}`;
    // The repository: master with a README and 1,000 files in one folder (the big tree), and a branch changing all of them.
    const clone = join(work, 'repo');
    mkdirSync(clone);
    git(clone, ['init', '-q', '-b', 'master']);
    git(clone, ['config', 'user.email', 'bench@example.com']);
    git(clone, ['config', 'user.name', 'Bench']);
    writeFileSync(join(clone, 'README.md'), `# Pages bench\n\nA **readme** with a table:\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n\`\`\`js\nconst x = 1;\n\`\`\`\n`);
    mkdirSync(join(clone, 'many'));
    for (let i = 0; i < FILES; i++) writeFileSync(join(clone, 'many', `file${String(i).padStart(4, '0')}.txt`), `file ${i}\n${'a line of text\n'.repeat(10)}`);
    git(clone, ['add', '-A']);
    git(clone, ['commit', '-q', '-m', 'base']);
    git(clone, ['checkout', '-q', '-b', 'wide']);
    for (let i = 0; i < FILES; i++) writeFileSync(join(clone, 'many', `file${String(i).padStart(4, '0')}.txt`), `file ${i}\n${'a line of text\n'.repeat(5)}changed ${i}\n${'a line of text\n'.repeat(5)}`);
    git(clone, ['commit', '-q', '-am', 'change every file']);
    const remote = new URL(`${daemon.url}${base}.git`);
    remote.username = 'root';
    remote.password = token;
    git(clone, ['push', '-q', remote.toString(), 'master', 'wide']);
    // The merge request of 1,000 files: its diff version computed on create.
    const mr = await api(daemon.url, token, 'POST', `/api/v3/projects/${project.id}/merge_requests`, { title: 'Change every file', source_branch: 'wide', target_branch: 'master' });
    const issue = await api(daemon.url, token, 'POST', `/api/v3/projects/${project.id}/issues`, { title: 'An issue with many notes', description: 'See #1 and !1. :tada:\n\n- [x] done\n- [ ] todo' });
    for (let i = 0; i < NOTES; i++) await api(daemon.url, token, 'POST', `/api/v3/projects/${project.id}/issues/${issue.id}/notes`, { body: `Note ${i}: some **Markdown** with \`code\` and a link to #1.` });

    const headers = { cookie: await signIn(daemon.url) };
    // The merge request page shows up to the API's diff limits of files (the rest are listed as not shown).
    const pages = [
      ['project page', base],
      [`issue with ${NOTES} notes`, `${base}/issues/${issue.iid}`],
      [`merge request, ${FILES}-file diff`, `${base}/merge_requests/${mr.iid}`],
      [`tree of ${FILES} entries`, `${base}/tree/master/many`],
    ];
    for (const [, path] of pages) {
      const res = await fetch(`${daemon.url}${path}`, { headers });
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    }
    const rows = [];
    const reference = await startReference(daemon.url, headers, pages.map(([, p]) => p));
    try {
      for (const [title, path] of pages) {
        const w = await weight(daemon.url, path, headers);
        const alone = await sequential(daemon.url, headers, path, 100);
        const load = await paced({ title, url: daemon.url, headers, rate: RATE, seconds: SECONDS, connections: 20, pathFor: () => path });
        const floorLoad = await paced({ title, url: reference.url, headers, rate: RATE, seconds: SECONDS, connections: 20, pathFor: () => path });
        const vs = await againstReference({ title, gantryUrl: daemon.url, refUrl: reference.url, path, headers, rounds: 3, seconds: 3 });
        rows.push({ title, w, alone, load, floorLoad, vs });
        process.stderr.write(`pages: ${title}: p99 ${load.p99} ms under ${RATE}/s (floor ${floorLoad.p99}), ${Math.round(w.total / 1024)} KB\n`);
      }
    } finally {
      await reference.stop();
    }
    const kb = (n) => (n / 1024).toFixed(1);
    const target = (r) => (r.title.startsWith('merge request') ? 'n/a (the big diff)' : r.w.total < 100 * 1024 ? 'yes' : 'NO');
    writeSection('pages', `## Web pages (scripts/bench/pages.mjs)

Machine: ${machine()}. SQLite, one gantryd, a signed-in reader (the session cookie). On a shared machine (other work may run on
the same 2 cores) the absolute figures are noisy; the floor (a bare Fastify process answering the same bytes,
scripts/bench/reference-server.mjs) was measured in the same run, alternated with gantryd, and the ratio holds up better.

Paced load: ${RATE} requests a second for ${SECONDS} s (open loop, latency from each request's scheduled start). Alone:
100 sequential requests. Throughput: max req/s with 4 connections, median of 3 alternated rounds of 3 s.

| page | p99 paced ms | floor p99 ms | p50 / p99 alone ms | req/s | floor req/s | ratio | HTML KB | weight KB (HTML+CSS+JS) | under 100 KB |
|---|---|---|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.title} | ${r.load.p99} | ${r.floorLoad.p99} | ${r.alone.p50} / ${r.alone.p99} | ${r.vs.gantry} | ${r.vs.reference} | ${r.vs.ratio} | ${kb(r.w.html)} | ${kb(r.w.total)} | ${target(r)} |`).join('\n')}

Errors (non-2xx) under paced load: ${rows.map((r) => `${r.title} ${r.load.errors}`).join(', ')}.
The merge request page shows the first 50 files of its diff (inline; \`?files_page=\` for the rest, its changes kept per
diff version), the tree its first 200 entries (\`?page=\`). Targets: p99 under 50 ms on SQLite under the paced load
(${rows.filter((r) => r.load.p99 < 50).length} of ${rows.length} pages in this run${rows.some((r) => r.load.p99 >= 50) ? `; not: ${rows.filter((r) => r.load.p99 >= 50).map((r) => r.title).join(', ')}` : ''}), under 100 KB for every page but the big diff
(read each p99 beside the floor's of the same run: on a busy machine the floor's own p99 grows too).`);
  } finally {
    await daemon.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
