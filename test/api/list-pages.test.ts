/**
 * Deep pages of the long lists other than issues and projects (events, builds, pipelines, commit statuses, todos,
 * notes, users), read from the nearer end or from keyset bookmarks (db/keyset.ts): every page of a list of 2,345 rows
 * equals the same slice of the list sorted in JavaScript, single pages around the bookmark steps too, a write is seen
 * by the next request, and the page and bookmark queries walk an index in list order (SQLite's EXPLAIN QUERY PLAN;
 * PostgreSQL's EXPLAIN: a page read from the nearer end on an index, no seq scan or sort). Both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysetPageQuery, type KeysetList } from '../../daemon/db/keyset.js';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';
import { queryPlan, seq, timeAt } from '../helpers/postgres.js';
import { insertIssue, sqlValue } from '../helpers/collaboration.js';
import { commitTo } from '../helpers/repository.js';

let s: TestServer;
let pid: number;
let issueId: number;
let sha: string;
const N = 2345;
const ids: Record<string, number[]> = {};
let eventTimes: string[] = [];

beforeAll(async () => {
  s = await startTestServer();
  pid = (await s.api('POST', '/projects', s.root, { name: 'pages' })).body.id;
  sha = await commitTo(s.ctx, pid, 'master', { 'README.md': 'pages\n' });
  issueId = (await insertIssue(s.ctx, pid, { authorId: s.root.id })).id;
  // a bulk load in one SQL text on both engines (timestamps as each engine stores them)
  const d = s.ctx.data.dialect;
  const t = timeAt(d, '2024-01-01', 'second');
  const run = (sql: string) => s.ctx.data.run(sql);
  await run(`INSERT INTO events (project_id, author_id, action, target_type, target_title, created_at)
    ${seq(N)} SELECT ${pid}, ${s.root.id}, 'created', NULL, NULL, ${t} FROM seq`);
  // N pipelines of the commit; the builds all in the last one, so the commit's statuses are the builds
  await run(`INSERT INTO pipelines (project_id, ref, sha, status, user_id, created_at, updated_at)
    ${seq(N)} SELECT ${pid}, 'master', '${sha}', CASE WHEN i % 3 = 0 THEN 'success' ELSE 'running' END, ${s.root.id}, ${t}, ${t} FROM seq`);
  const last = (await s.ctx.data.get<{ id: number }>('SELECT MAX(id) AS id FROM pipelines'))!.id;
  await run(`INSERT INTO commit_statuses (type, project_id, pipeline_id, name, stage, stage_idx, ref, status, "when", user_id, commands,
      options, yaml_variables, tag_list, created_at, updated_at)
    ${seq(N)} SELECT 'build', ${pid}, ${last}, 'job ' || i, 'test', 0, 'master', CASE WHEN i % 4 = 0 THEN 'failed' ELSE 'success' END, 'on_success',
      ${s.root.id}, 'echo', '{}', '[]', '[]', ${t}, ${t} FROM seq`);
  await run(`INSERT INTO todos (user_id, project_id, author_id, target_type, target_id, action, state, created_at, updated_at)
    ${seq(N)} SELECT ${s.root.id}, ${pid}, ${s.root.id}, 'Issue', ${issueId}, CASE WHEN i % 2 = 0 THEN 'assigned' ELSE 'mentioned' END, 'pending', ${t}, ${t} FROM seq`);
  await run(`INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, created_at, updated_at)
    ${seq(N)} SELECT ${pid}, 'Issue', ${issueId}, 'note ' || i, ${s.root.id}, FALSE, ${t}, ${t} FROM seq`);
  await run(`INSERT INTO users (username, email, name, password_hash, private_token_salt, private_token_hash, state, created_at, updated_at)
    ${seq(N)} SELECT 'pager' || i, 'pager' || i || '@example.com', 'Pager ' || i, 'x', 's' || i, 'h' || i,
      CASE WHEN i % 5 = 0 THEN 'blocked' ELSE 'active' END, ${t}, ${t} FROM seq`);
  if (onPostgres) await run('ANALYZE');
  const col = async (sql: string) => (await s.ctx.data.all<{ id: number }>(sql)).map((r) => r.id);
  // events have no id in the API: they are told apart by created_at (one second apart here)
  ids.events = await col(`SELECT id FROM events WHERE project_id = ${pid} ORDER BY id DESC`);
  eventTimes = (await s.ctx.data.all<{ t: string }>(`SELECT created_at AS t FROM events WHERE project_id = ${pid} ORDER BY id DESC`))
    .map((r) => new Date(r.t).toISOString());
  ids.pipelines = await col(`SELECT id FROM pipelines WHERE project_id = ${pid} ORDER BY id DESC`);
  ids.runningPipelines = await col(`SELECT id FROM pipelines WHERE project_id = ${pid} AND status = 'running' ORDER BY id DESC`);
  ids.builds = await col(`SELECT id FROM commit_statuses WHERE project_id = ${pid} AND type = 'build' ORDER BY id DESC`);
  ids.successBuilds = await col(`SELECT id FROM commit_statuses WHERE project_id = ${pid} AND type = 'build' AND status = 'success' ORDER BY id DESC`);
  ids.statuses = [...ids.builds].reverse();
  ids.todos = await col(`SELECT id FROM todos WHERE user_id = ${s.root.id} ORDER BY id DESC`);
  ids.assignedTodos = await col(`SELECT id FROM todos WHERE user_id = ${s.root.id} AND action = 'assigned' ORDER BY id DESC`);
  ids.notes = await col(`SELECT id FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ${issueId} ORDER BY id`);
  ids.users = await col(`SELECT id FROM users ORDER BY id`);
  ids.activeUsers = await col(`SELECT id FROM users WHERE state = 'active' ORDER BY id`);
}, 60_000);
afterAll(async () => s?.close());

/** The lists: a URL (without paging) and the ids it should answer, in order. */
const lists = (): [string, string, () => (number | string)[]][] => [
  ['events', '/projects/<pid>/events', () => eventTimes],
  ['pipelines', '/projects/<pid>/pipelines', () => ids.pipelines!],
  ['running pipelines', '/projects/<pid>/pipelines?scope=running', () => ids.runningPipelines!],
  ['builds', '/projects/<pid>/builds', () => ids.builds!],
  ['successful builds', '/projects/<pid>/builds?scope=success', () => ids.successBuilds!],
  ['commit statuses', '/projects/<pid>/repository/commits/<sha>/statuses?all=true', () => ids.statuses!],
  ['todos', '/todos', () => ids.todos!],
  ['assigned todos', '/todos?action=assigned', () => ids.assignedTodos!],
  ['notes', '/projects/<pid>/issues/<issue>/notes', () => ids.notes!],
  ['users', '/users', () => ids.users!],
  ['active users', '/users?active=true', () => ids.activeUsers!],
];

/** The ids on one page (events: their created_at). */
async function page(url: string, n: number, perPage: number): Promise<(number | string)[]> {
  const full = url.replace('<pid>', String(pid)).replace('<sha>', sha).replace('<issue>', String(issueId));
  const r = await s.api('GET', `${full}${full.includes('?') ? '&' : '?'}per_page=${perPage}&page=${n}`, s.root);
  expect(r.status, `${full} page ${n}: ${r.text.slice(0, 200)}`).toBe(200);
  return r.body.map((x: { id?: number; created_at: string }) => x.id ?? x.created_at);
}

describe('deep pages of long lists', () => {
  for (const [name, url, want] of lists()) {
    it(`${name}: every page equals the sorted slice, single pages around the bookmarks too`, async () => {
      const all = want();
      expect(all.length, 'fixture size').toBeGreaterThan(1000);
      const got: (number | string)[] = [];
      for (let n = 1; n <= Math.ceil(all.length / 100); n++) got.push(...(await page(url, n, 100)));
      expect(got).toEqual(all);
      for (const n of [25, 26, 50, 51, 58, 59, 60, 61, 100, 117]) {
        expect(await page(url, n, 20), `page ${n}`).toEqual(all.slice((n - 1) * 20, n * 20));
      }
    });
  }

  it('a write is seen by the next request (bookmarks are exact until the next write)', async () => {
    const before = await page(`/projects/${pid}/events`, 60, 20);
    expect(before).toEqual(eventTimes.slice(59 * 20, 60 * 20));
    // deleting the newest events moves every later page by that many rows
    const newest = ids.events!.slice(0, 7);
    await s.ctx.data.run(`DELETE FROM events WHERE id IN (${newest.join(',')})`);
    const rest = eventTimes.slice(7);
    expect(await page(`/projects/${pid}/events`, 60, 20)).toEqual(rest.slice(59 * 20, 60 * 20));
    expect(await page(`/projects/${pid}/events`, 30, 20)).toEqual(rest.slice(29 * 20, 30 * 20));
  });

  it('page and bookmark queries walk an index in list order, never sort the list', async () => {
    const plan = (sql: string, args: unknown[]) => queryPlan(s.ctx.data, sql, args);
    const cases: [string, KeysetList][] = [
      ['events', { from: 'events e', where: 'e.project_id = ?', values: [pid], key: 'e.id', id: 'e.id', desc: true }],
      ['builds', { from: 'commit_statuses c', where: `c.project_id = ? AND c.type = 'build' AND c.status IN ('success')`, values: [pid], key: 'c.id', id: 'c.id', desc: true }],
      ['pipelines', { from: 'pipelines p', where: `p.project_id = ? AND p.status IN ('running')`, values: [pid], key: 'p.id', id: 'p.id', desc: true }],
      ['todos', { from: 'todos t', where: `t.user_id = ? AND t.state = 'pending' AND t.action = 'assigned'`, values: [s.root.id], key: 't.id', id: 't.id', desc: true }],
      ['notes', { from: 'notes n', where: `n.noteable_type = 'Issue' AND n.noteable_id = ?`, values: [issueId], key: 'n.id', id: 'n.id', desc: false }],
      ['users', { from: 'users u', where: `u.state = 'active'`, values: [], key: 'u.id', id: 'u.id', desc: false }],
    ];
    for (const [name, list] of cases) {
      const total = (await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM ${list.from} WHERE ${list.where}`, list.values))!;
      const q = (await keysetPageQuery(s.ctx, s.ctx.data, list, 20, Math.floor(total / 2) - 20, total, false))!;
      const p = await plan(q.sql, q.args);
      if (onPostgres) {
        // no bookmarks on PostgreSQL (no cache across daemons): the page is read from the nearer end, on an index in list order
        expect(q.args.at(-1), `${name}: rows skipped`).toBeLessThanOrEqual(total / 2);
        expect(p, `${name}\n${p}`).not.toMatch(/Seq Scan|Sort/);
        expect(p, `${name}\n${p}`).toMatch(/Index (Only )?Scan/);
        continue;
      }
      // never more than two bookmark steps of OFFSET; in the lists of 2,345 one step
      expect(q.args.at(-1), `${name}: rows skipped after the bookmark`).toBeLessThan(total > 2300 ? 500 : 1000);
      expect(p, `${name}\n${p}`).not.toMatch(/TEMP B-TREE/);
      expect(p, `${name}\n${p}`).toMatch(/SEARCH|SCAN u/);
      // the bookmark pass reads index entries only where a list has an index of its own
      const marks = await plan(`SELECT ${list.key} AS k, ${list.id} AS id FROM ${list.from} WHERE ${list.where} ORDER BY ${list.id} ${list.desc ? 'DESC' : 'ASC'}`, list.values);
      expect(marks, `${name}\n${marks}`).not.toMatch(/TEMP B-TREE/);
      if (name !== 'users') expect(marks, `${name}\n${marks}`).toMatch(/COVERING INDEX/);
    }
  });
});
