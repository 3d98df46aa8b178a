/**
 * Project lists at scale: 10,000 projects (inserted in bulk), pages of 20. Checks the query plans (no sorting of the
 * whole set for a page), that the 'scan' and 'index' plans agree, and totals and order at that size. Latency is
 * measured by `npm run bench` (docs/benchmarks.md), not here. Both engines (on PostgreSQL the plans are its EXPLAIN's:
 * an index in list order, no seq scan of projects, no sort).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizedProjectsWhere, visibleProjectsWhere, type SqlCondition } from '../../daemon/policy/permissions.js';
import { projectListQueryAsync, type ProjectListQuery, type ProjectListScope, type ProjectListFilters } from '../../daemon/services/projects/lists.js';
import { keysetPageQuery } from '../../daemon/db/keyset.js';
import type { UserRow } from '../../daemon/db/schema.js';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync as addMember, makeGroupAsync as makeGroup, makeProject } from '../helpers/fixtures.js';
import { sqlRows, sqlValue } from '../helpers/collaboration.js';
import { queryPlan, seq, timeAt } from '../helpers/postgres.js';

let s: TestServer;
let bob: TestUser;
let carol: TestUser;
let groupId: number;
const userRow = async (id: number) => (await sqlRows(s.ctx, 'SELECT id, is_admin AS "isAdmin", external FROM users WHERE id = ?', [id]))[0] as UserRow;
const projectListQuery = (scope: ProjectListScope, filters: ProjectListFilters) => projectListQueryAsync(s.ctx, s.ctx.data, scope, filters);

/** Insert `n` projects into a namespace in one statement (created one second apart, oldest first), with master rows for `memberId`. */
async function bulkProjects(nsId: number, prefix: string, n: number, memberId?: number): Promise<void> {
  // one SQL text on both engines (timestamps as each engine stores them)
  const t = timeAt(s.ctx.data.dialect, '2020-01-01', 'second');
  await s.ctx.data.run(`
    INSERT INTO projects (name, path, namespace_id, description, visibility_level, creator_id, runners_token_salt, runners_token_hash,
                          last_activity_at, created_at, updated_at)
    ${seq(n)} SELECT '${prefix} ' || i, '${prefix}-' || i, ${nsId}, 'project number ' || i, (i % 3) * 10, NULL, '${prefix}s' || i, '${prefix}h' || i, ${t}, ${t}, ${t}
    FROM seq`);
  if (memberId !== undefined) {
    await s.ctx.data.run(`INSERT INTO members (source_type, source_id, user_id, access_level, created_at, updated_at)
             SELECT 'Project', id, ${memberId}, 40, created_at, created_at FROM projects WHERE namespace_id = ${nsId}`);
  }
}

beforeAll(async () => {
  s = await startTestServer();
  [bob, carol] = await Promise.all([s.user('bob'), s.user('carol')]);
  const rootNs = (await sqlValue(s.ctx, `SELECT id FROM namespaces WHERE owner_id = ?`, [s.root.id]))!;
  await bulkProjects(rootNs, 'bench', 9400, s.root.id);
  // five projects share each updated_at, so deep pages by updated_at meet ties (ordered by id)
  await s.ctx.data.run(`UPDATE projects SET updated_at = ${timeAt(s.ctx.data.dialect, '2021-01-01', 'second', '(id / 5)')}`);
  groupId = await makeGroup(s.ctx, 'big');
  await bulkProjects(groupId, 'grp', 600);
  await addMember(s.ctx, { type: 'Namespace', id: groupId }, bob.id, 30);
  await makeProject(s, bob, 'bobs own');
  const c = await makeProject(s, carol, 'carols own');
  await addMember(s.ctx, { type: 'Project', id: c.id }, bob.id, 20);
  if (onPostgres) await s.ctx.data.run('ANALYZE');
}, 60000);
afterAll(async () => { await s?.close(); });

/** The SELECT of one page of a list query, as fetchProjects runs it (a deep page starts from a keyset bookmark). */
async function pageSql(q: ProjectListQuery, offset = 0, total?: number): Promise<{ sql: string; args: unknown[] }> {
  return (await keysetPageQuery(s.ctx, s.ctx.data, { from: 'projects p', where: q.where, values: q.args, key: q.key, id: 'p.id', desc: q.desc, select: 'p.*' }, 20, offset, total, false))!;
}
const plan = (sql: string, args: unknown[] = []) => queryPlan(s.ctx.data, sql, args);
const count = async (where: SqlCondition) => Number(await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM projects p WHERE ${where.sql}`, where.args));
const d = () => s.ctx.data.dialect;

describe('project lists with 10,000 projects', () => {
  it('the scan and index plans of the policy SQL select the same projects', async () => {
    for (const id of [s.root.id, bob.id, carol.id]) {
      expect(await count(authorizedProjectsWhere(d(), id, 'scan'))).toBe(await count(authorizedProjectsWhere(d(), id, 'index')));
      const u = await userRow(id);
      expect(await count(visibleProjectsWhere(d(), u, 'scan'))).toBe(await count(visibleProjectsWhere(d(), u, 'index')));
    }
    expect(await count(authorizedProjectsWhere(d(), bob.id, 'scan'))).toBe(602);
  });

  it('pages are read in list order, never by sorting every matching project', async () => {
    const scopes: [string, ProjectListScope][] = [
      ['root authorized', { kind: 'authorized', user: await userRow(s.root.id) }],
      ['root owned', { kind: 'owned', user: await userRow(s.root.id) }],
      ['bob visible', { kind: 'visible', user: await userRow(bob.id) }],
      ['all', { kind: 'all' }],
    ];
    const bad: string[] = [];
    for (const [label, scope] of scopes) {
      for (const order_by of ['created_at', 'id', 'name', 'path', 'updated_at', 'last_activity_at']) {
        const q = await projectListQuery(scope, { order_by });
        const first = await pageSql(q);
        const p = await plan(first.sql, first.args);
        const total = Number(await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM projects p WHERE ${q.where}`, q.args));
        const deep = await pageSql(q, Math.floor(total / 2) - 20, total);
        const dp = await plan(deep.sql, deep.args);
        if (onPostgres) {
          // PostgreSQL: no bookmarks (no cache across daemons); the page is read from the nearer end on an index in list order
          for (const x of [p, dp]) {
            // never a walk of the whole table; the lists of every project (root's authorized, all) walk an index in
            // list order, ties on the sort column sorted as they come (Incremental Sort), never the whole list sorted.
            // The lists of a scope PostgreSQL cannot size (root's own namespace: estimated at a quarter; bob's visible)
            // are gathered by index (projects_namespace, bitmap scans) and their top rows kept (a top-N sort): index
            // use, but a cost that grows with the scope, unlike SQLite's walk.
            const sorted = /(?<!Incremental )\bSort {2}\(cost/.test(x) && (label === 'root authorized' || label === 'all');
            if (/Seq Scan on projects/.test(x) || sorted || !/(Index (Only )?Scan|Bitmap Index Scan).* on projects/.test(x)) bad.push(`${label} order_by=${order_by}\n${x}`);
          }
          expect(deep.args.at(-1), `${label} order_by=${order_by}: rows skipped`).toBeLessThanOrEqual(total / 2);
          continue;
        }
        expect(p, `${label} order_by=${order_by}\n${p}`).not.toMatch(/TEMP B-TREE/);
        // a middle page starts from a bookmark: a range on the sort index, not an OFFSET walk
        expect(deep.args.at(-1), `${label} order_by=${order_by}: offset after the bookmark`).toBeLessThan(500);
        expect(dp, `${label} order_by=${order_by}\n${dp}`).not.toMatch(/TEMP B-TREE/);
        expect(dp, `${label} order_by=${order_by}\n${dp}`).toMatch(/SEARCH p USING (INTEGER PRIMARY KEY|INDEX)/);
      }
    }
    // A user who reaches a small share of the projects gets them through the member indexes (then sorts those few).
    expect(bad).toEqual([]);
    // (SQLite's plan choice: PostgreSQL plans for itself.)
    if (!onPostgres) {
      for (const u of [carol, bob]) {
        const few = await pageSql(await projectListQuery({ kind: 'authorized', user: await userRow(u.id) }, {}));
        expect(await plan(few.sql, few.args)).toMatch(/MULTI-INDEX OR/);
      }
    }
  });

  it('totals follow writes at once (the memoised counts are keyed by the write counter)', async () => {
    const before = Number((await s.api('GET', '/projects?per_page=1', s.root)).headers['x-total']);
    const p = await makeProject(s, s.root, 'one more');
    expect(Number((await s.api('GET', '/projects?per_page=1', s.root)).headers['x-total'])).toBe(before + 1);
    await addMember(s.ctx, { type: 'Project', id: p.id }, carol.id, 10);
    expect((await s.api('GET', '/projects?per_page=1', carol)).headers['x-total']).toBe('2');
    await s.ctx.data.run('DELETE FROM members WHERE source_type = ? AND source_id = ? AND user_id = ?', ['Project', p.id, carol.id]);
    expect((await s.api('GET', '/projects?per_page=1', carol)).headers['x-total']).toBe('1');
    await s.api('DELETE', `/projects/${p.id}`, s.root);
    expect(Number((await s.api('GET', '/projects?per_page=1', s.root)).headers['x-total'])).toBe(before);
  });

  it('GET /projects answers pages of 20 with correct totals and order', async () => {
    const first = await s.api('GET', '/projects?per_page=20', s.root);
    expect(first.status).toBe(200);
    expect(first.headers['x-total']).toBe('9400');
    expect(first.body.map((p: { path: string }) => p.path).slice(0, 3)).toEqual(['bench-9400', 'bench-9399', 'bench-9398']);
    const bobs = await s.api('GET', '/projects?per_page=20&order_by=name&sort=asc', bob);
    expect(bobs.headers['x-total']).toBe('602');
    expect(bobs.body[0].name).toBe('bobs own');
    // Speed is measured by `npm run bench` (docs/benchmarks.md), never by wall-clock limits in tests.
    for (const [url, who] of [['/api/v3/projects?per_page=20&page=50', s.root], ['/api/v3/projects/visible?per_page=20', bob]] as const) {
      const r = await s.app.inject({ method: 'GET', url, headers: { 'private-token': who.token } });
      expect(r.statusCode).toBe(200);
      expect(JSON.parse(r.body)).toHaveLength(20);
    }
  });

  it('every page equals the same slice of the sorted list, deep pages and ties included', async () => {
    for (const [order_by, sort] of [['updated_at', 'desc'], ['updated_at', 'asc'], ['created_at', 'desc'], ['name', 'asc']] as const) {
      const q = await projectListQuery({ kind: 'authorized', user: await userRow(s.root.id) }, { order_by, sort });
      const dir = q.desc ? 'DESC' : 'ASC';
      const want = (await sqlRows(s.ctx, `SELECT p.id FROM projects p WHERE ${q.where} ORDER BY ${q.key} ${dir}, p.id ${dir}`, q.args)).map((r) => r.id as number);
      const got: number[] = [];
      for (let n = 1; n <= Math.ceil(want.length / 100); n++) {
        const r = await s.api('GET', `/projects?order_by=${order_by}&sort=${sort}&per_page=100&page=${n}&simple=true`, s.root);
        got.push(...r.body.map((p: { id: number }) => p.id));
      }
      expect(got, `${order_by} ${sort}`).toEqual(want);
      for (const n of [25, 26, 50, 51, 200, 235, 236, 469, 470]) {
        const r = await s.api('GET', `/projects?order_by=${order_by}&sort=${sort}&per_page=20&page=${n}&simple=true`, s.root);
        expect(r.body.map((p: { id: number }) => p.id), `${order_by} ${sort} page ${n}`).toEqual(want.slice((n - 1) * 20, n * 20));
      }
    }
  }, 120_000); // about 400 page requests: on PostgreSQL under load longer than the default 30 s
});
