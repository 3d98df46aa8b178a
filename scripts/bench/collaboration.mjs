// Collaboration suite: a project with 100,000 issues and 200,000 notes (seeded straight into SQLite while the daemon
// is stopped, then served by a restarted gantryd): GET /projects/:id/issues?per_page=20 and GET /issues at max
// throughput and paced at 500 req/s; the cost of page 1 against the last page; POST issue with an @mention.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startDaemon, rootToken, cannon, paced, rssMb, machine, table, writeSection, sequential } from './lib.mjs';

const require = createRequire(import.meta.url);

/** Insert `issues` issues (3 labels cycling, every 3rd closed) and `notes` notes into the project, in one transaction. */
export function seed(dataDir, projectId, rootId, issues, notes) {
  const Database = require('better-sqlite3');
  const db = new Database(join(dataDir, 'gantry.db'));
  db.pragma('journal_mode = WAL');
  const t0 = Date.parse('2024-01-01T00:00:00Z');
  const iso = (ms) => new Date(ms).toISOString();
  db.transaction(() => {
    const label = db.prepare('INSERT INTO labels (project_id, title, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
    const labelIds = ['bug', 'feature', 'ui'].map((t) => Number(label.run(projectId, t, '#428bca', iso(t0), iso(t0)).lastInsertRowid));
    const base = db.prepare('SELECT COALESCE(MAX(iid), 0) AS n FROM issues WHERE project_id = ?').get(projectId).n;
    const issue = db.prepare(`INSERT INTO issues (project_id, iid, title, description, state, author_id, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    const link = db.prepare('INSERT INTO label_links (label_id, target_type, target_id, created_at) VALUES (?, ?, ?, ?)');
    const note = db.prepare(`INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, created_at, updated_at)
      VALUES (?, 'Issue', ?, ?, ?, 0, ?, ?)`);
    const ids = [];
    for (let i = 1; i <= issues; i++) {
      const at = iso(t0 + i * 60_000);
      const id = Number(issue.run(projectId, base + i, `Issue ${i}`, `Description of issue ${i}`, i % 3 === 0 ? 'closed' : 'opened', rootId, at, at).lastInsertRowid);
      link.run(labelIds[i % 3], 'Issue', id, at);
      ids.push(id);
    }
    for (let n = 0; n < notes; n++) {
      const at = iso(t0 + n * 30_000);
      note.run(projectId, ids[n % ids.length], `Comment ${n}`, rootId, at, at);
    }
  })();
  db.close();
}

export async function run({ issues = Number(process.env.BENCH_ISSUES ?? 100_000), notes = Number(process.env.BENCH_NOTES ?? 200_000), seconds = Number(process.env.BENCH_SECONDS ?? 10) } = {}) {
  let d = await startDaemon({}, { keep: true });
  const dataDir = d.dataDir;
  try {
    let token = await rootToken(d.url);
    let headers = { 'private-token': token, 'content-type': 'application/json' };
    const project = await fetch(`${d.url}/api/v3/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'issues-bench' }) }).then((r) => r.json());
    const mentioned = await fetch(`${d.url}/api/v3/users`, {
      method: 'POST', headers, body: JSON.stringify({ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alicepassword1' }),
    }).then((r) => r.json());
    await fetch(`${d.url}/api/v3/projects/${project.id}/members`, { method: 'POST', headers, body: JSON.stringify({ user_id: mentioned.id, access_level: 30 }) });
    await d.stop();
    process.stderr.write(`bench collaboration: seeding ${issues} issues and ${notes} notes...\n`);
    const s0 = performance.now();
    seed(dataDir, project.id, 1, issues, notes);
    process.stderr.write(`bench collaboration: seeded in ${Math.round(performance.now() - s0)} ms\n`);
    d = await startDaemon({}, { dataDir, keep: true });
    token = await rootToken(d.url);
    headers = { 'private-token': token, 'content-type': 'application/json' };
    const list = `/api/v3/projects/${project.id}/issues?per_page=20`;
    const total = Number((await fetch(`${d.url}${list}`, { headers })).headers.get('x-total'));
    const lastPage = Math.ceil(total / 20);
    const rows = [];
    await cannon({ url: `${d.url}${list}`, headers, title: 'warm-up', duration: 2 });
    rows.push(await cannon({ url: `${d.url}${list}`, headers, title: 'GET /projects/:id/issues?per_page=20, max throughput', duration: seconds }));
    rows.push(await paced({ url: d.url, headers, title: '**GET /projects/:id/issues?per_page=20 at 500 req/s (paced)**', rate: 500, seconds, pathFor: () => list }));
    rows.push(await paced({
      url: d.url, headers, title: `**GET /projects/:id/issues?per_page=20&page=1..${lastPage} in turn at 500 req/s (paced)**`, rate: 500, seconds,
      pathFor: (i) => `${list}&page=${1 + ((i * 7919) % lastPage)}`,
    }));
    rows.push(await paced({ url: d.url, headers, title: '**GET /projects/:id/issues?state=opened&labels=bug at 500 req/s (paced)**', rate: 500, seconds, pathFor: () => `${list}&state=opened&labels=bug` }));
    rows.push(await cannon({ url: `${d.url}/api/v3/issues?per_page=20`, headers, title: 'GET /issues?per_page=20, max throughput', duration: seconds }));
    rows.push(await paced({ url: d.url, headers, title: '**GET /issues?per_page=20 at 500 req/s (paced)**', rate: 500, seconds, pathFor: () => '/api/v3/issues?per_page=20' }));
    const first = await sequential(d.url, headers, `${list}&page=1`, 200);
    const last = await sequential(d.url, headers, `${list}&page=${lastPage}`, 200);
    const notesFirst = await sequential(d.url, headers, `/api/v3/projects/${project.id}/issues/1/notes?per_page=20`, 100).catch(() => null);
    let n = 0;
    rows.push(await cannon({
      title: 'POST /projects/:id/issues with an @mention (2,000 creates)', url: `${d.url}/api/v3/projects/${project.id}/issues`, method: 'POST', headers,
      amount: 2000, connections: 4,
      requests: [{ setupRequest: (req) => { n += 1; return { ...req, body: JSON.stringify({ title: `Bench ${n}`, description: `Please look, @alice (${n})`, labels: 'bug' }) }; } }],
    }));
    const todos = await fetch(`${d.url}/api/v3/todos?per_page=1&sudo=alice`, { headers }).then((r) => r.headers.get('x-total'));
    const rss = rssMb(d.pid);
    const md = `## Collaboration: issues and notes (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}. One gantryd, SQLite (WAL, synchronous=FULL). Database: one project with ${total.toLocaleString('en')} issues
(3 labels, every third closed) and ${notes.toLocaleString('en')} notes, listed as root.

${table(rows)}

Page cost, 200 sequential requests each (nothing queued): page 1 p50 ${first.p50} ms / p99 ${first.p99} ms; last page (${lastPage})
p50 ${last.p50} ms / p99 ${last.p99} ms: the last page costs **${(last.p50 / first.p50).toFixed(2)}x** page 1 (target: within 2x).
${notesFirst ? `Notes of one issue (page 1): p50 ${notesFirst.p50} ms / p99 ${notesFirst.p99} ms.` : ''}
The mention POSTs left ${todos} pending todos for @alice. Daemon RSS after the run: ${rss} MB.
Targets: list p99 under 10 ms at 500 requests/s (paced rows).`;
    writeSection('collaboration', md);
    process.stdout.write(`${md}\n`);
  } finally {
    await d.stop();
    const { rmSync } = await import('node:fs');
    rmSync(dataDir, { recursive: true, force: true });
  }
}
