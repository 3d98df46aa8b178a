/**
 * Project lists at scale: 10,000 projects (inserted in bulk), pages of 20. Checks the query plans (no sorting of the
 * whole set for a page: SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN), that the 'scan' and 'index' plans agree,
 * and totals and order at that size, on either engine. Latency is measured by `npm run bench` (docs/benchmarks.md),
 * not here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorizedProjectsSql, authorizedProjectsWhere, visibleProjectsSql, visibleProjectsWhere, type SqlCondition,
} from '../../daemon/policy/permissions.js';
import {
  projectListQuery, projectListQueryAsync, type ProjectListQuery, type ProjectListScope,
} from '../../daemon/services/project-lists.js';
import { keysetPageAsync, keysetPageQuery } from '../../daemon/db/keyset.js';
import type { UserRow } from '../../daemon/db/schema.js';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeGroupAsync, makeProject } from '../helpers/fixtures.js';
import { explainPostgres, recordStatements } from '../helpers/postgres.js';

let s: TestServer;
let bob: TestUser;
let carol: TestUser;
let groupId: number;
const userRow = async (id: number) => {
  const u = (await s.ctx.data.get<{ id: number; is_admin: unknown; external: unknown }>('SELECT id, is_admin, external FROM users WHERE id = ?', [id]))!;
  return { id: u.id, isAdmin: !!u.is_admin, external: !!u.external } as UserRow;
};
/** `i` seconds after `day` (a column of `seq` or an expression), as each engine stores a timestamp. */
const at = (day: string, i: string) => (onPostgres
  ? `(TIMESTAMPTZ '${day} 00:00:00+00' + (${i}) * INTERVAL '1 second')`
  : `strftime('%Y-%m-%dT%H:%M:%fZ', '${day}', '+' || (${i}) || ' seconds')`);

/** Insert `n` projects into a namespace in one statement (created one second apart, oldest first), with master rows for `memberId`. */
async function bulkProjects(nsId: number, prefix: string, n: number, memberId?: number): Promise<void> {
  const t = at('2020-01-01', 'i');
  await s.ctx.data.run(`
    WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ${n})
    INSERT INTO projects (name, path, namespace_id, description, visibility_level, creator_id, runners_token_salt, runners_token_hash,
                          last_activity_at, created_at, updated_at)
    SELECT '${prefix} ' || i, '${prefix}-' || i, ${nsId}, 'project number ' || i, (i % 3) * 10, NULL, '${prefix}s' || i, '${prefix}h' || i,
      ${t}, ${t}, ${t}
    FROM seq`);
  if (memberId !== undefined) {
    await s.ctx.data.run(`INSERT INTO members (source_type, source_id, user_id, access_level, created_at, updated_at)
             SELECT 'Project', id, ${memberId}, 40, created_at, created_at FROM projects WHERE namespace_id = ${nsId}`);
  }
}

beforeAll(async () => {
  s = await startTestServer();
  [bob, carol] = await Promise.all([s.user('bob'), s.user('carol')]);
  const rootNs = (await s.ctx.data.get<{ id: number }>(`SELECT id FROM namespaces WHERE owner_id = ?`, [s.root.id]))!.id;
  await bulkProjects(rootNs, 'bench', 9400, s.root.id);
  // five projects share each updated_at, so deep pages by updated_at meet ties (ordered by id)
  await s.ctx.data.run(`UPDATE projects SET updated_at = ${at('2021-01-01', 'id / 5')}`);
  groupId = await makeGroupAsync(s.ctx, 'big');
  await bulkProjects(groupId, 'grp', 600);
  await addMemberAsync(s.ctx, { type: 'Namespace', id: groupId }, bob.id, 30);
  await makeProject(s, bob, 'bobs own');
  const c = await makeProject(s, carol, 'carols own');
  await addMemberAsync(s.ctx, { type: 'Project', id: c.id }, bob.id, 20);
  // the planner's statistics of the new rows (PostgreSQL's autovacuum would gather them some time later)
  if (onPostgres) await s.ctx.data.run('ANALYZE');
}, 60000);
afterAll(async () => { await s.close(); });

/** The SELECT of one page of a list query, as fetchProjects runs it on SQLite (a deep page starts from a keyset bookmark). */
function pageSql(q: ProjectListQuery, offset = 0, total?: number): { sql: string; args: unknown[] } {
  return keysetPageQuery(s.ctx, { from: 'projects p', where: q.where, values: q.args, key: q.key, id: 'p.id', desc: q.desc, select: 'p.*' }, 20, offset, total)!;
}
/** The statement fetchProjectsAsync sends for one page (recorded, not run): PostgreSQL's, read from the nearer end. */
async function pageSqlAsync(q: ProjectListQuery, offset = 0, total?: number): Promise<{ sql: string; args: readonly unknown[] }> {
  const list = { from: 'projects p', where: q.where, values: q.args, key: q.key, id: 'p.id', desc: q.desc, select: 'p.*' };
  const sent = await recordStatements(s.ctx.data.dialect, (r) => keysetPageAsync(s.ctx, r, list, 20, offset, total));
  expect(sent).toHaveLength(1);
  return sent[0]!;
}
const plan = (sql: string, args: unknown[] = []) => (s.ctx.db.$client.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail).join('\n');
const count = async (c: SqlCondition) =>
  Number((await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM projects p WHERE ${c.sql}`, c.args))!.n);
/** The policy SQL: SQLite's inlined text (what its routes use), or the portable twin with bound values on PostgreSQL. */
const authorizedSql = (id: number, p: 'scan' | 'index'): SqlCondition =>
  (onPostgres ? authorizedProjectsWhere(s.ctx.data.dialect, id, p) : { sql: authorizedProjectsSql(id, p), args: [] });
const visibleSql = (u: UserRow, p: 'scan' | 'index'): SqlCondition =>
  (onPostgres ? visibleProjectsWhere(s.ctx.data.dialect, u, p) : { sql: visibleProjectsSql(u, p), args: [] });

describe('project lists with 10,000 projects', () => {
  it('the scan and index plans of the policy SQL select the same projects', async () => {
    for (const id of [s.root.id, bob.id, carol.id]) {
      expect(await count(authorizedSql(id, 'scan'))).toBe(await count(authorizedSql(id, 'index')));
      const u = await userRow(id);
      expect(await count(visibleSql(u, 'scan'))).toBe(await count(visibleSql(u, 'index')));
    }
    expect(await count(authorizedSql(bob.id, 'scan'))).toBe(602);
  });

  const scopes = async (): Promise<[string, ProjectListScope][]> => [
    ['root authorized', { kind: 'authorized', user: await userRow(s.root.id) }],
    ['root owned', { kind: 'owned', user: await userRow(s.root.id) }],
    ['bob visible', { kind: 'visible', user: await userRow(bob.id) }],
    ['all', { kind: 'all' }],
  ];
  const ORDERS = ['created_at', 'id', 'name', 'path', 'updated_at', 'last_activity_at'];

  // SQLite's EXPLAIN QUERY PLAN and its plan hints; PostgreSQL plans for itself (next test)
  it.runIf(!onPostgres)('pages are read in list order, never by sorting every matching project', async () => {
    for (const [label, scope] of await scopes()) {
      for (const order_by of ORDERS) {
        const q = projectListQuery(s.ctx, scope, { order_by });
        const first = pageSql(q);
        const p = plan(first.sql, first.args);
        expect(p, `${label} order_by=${order_by}\n${p}`).not.toMatch(/TEMP B-TREE/);
        // a middle page starts from a bookmark: a range on the sort index, not an OFFSET walk
        const total = (s.ctx.db.$client.prepare(`SELECT COUNT(*) AS n FROM projects p WHERE ${q.where}`).get(...q.args) as { n: number }).n;
        const deep = pageSql(q, Math.floor(total / 2) - 20, total);
        expect(deep.args.at(-1), `${label} order_by=${order_by}: offset after the bookmark`).toBeLessThan(500);
        const d = plan(deep.sql, deep.args);
        expect(d, `${label} order_by=${order_by}\n${d}`).not.toMatch(/TEMP B-TREE/);
        expect(d, `${label} order_by=${order_by}\n${d}`).toMatch(/SEARCH p USING (INTEGER PRIMARY KEY|INDEX)/);
      }
    }
    // A user who reaches a small share of the projects gets them through the member indexes (then sorts those few).
    for (const u of [carol, bob]) {
      const few = pageSql(projectListQuery(s.ctx, { kind: 'authorized', user: await userRow(u.id) }, {}));
      expect(plan(few.sql, few.args)).toMatch(/MULTI-INDEX OR/);
    }
  });

  it.runIf(onPostgres)('PostgreSQL: first pages are read in list order along an index, middle pages from the nearer end', async () => {
    for (const [label, scope] of await scopes()) {
      // KNOWN GAP, not skipped silently: PostgreSQL's baseline indexes lower(path) only (SQLite: path), so a list
      // ordered by path sorts every matching project there; it needs an index on projects (path) (a migration).
      for (const order_by of ORDERS.filter((o) => o !== 'path')) {
        const q = await projectListQueryAsync(s.ctx, s.ctx.data, scope, { order_by });
        const first = await pageSqlAsync(q);
        const p = await explainPostgres(s.ctx.data, first.sql, first.args);
        // no Sort of the matching rows; an Incremental Sort over the sort column's index orders ties by id only
        expect(p, `${label} order_by=${order_by}\n${p}`).not.toMatch(/(^|-> +)Sort /m);
        expect(p, `${label} order_by=${order_by}\n${p}`).toMatch(/Index Scan/);
        const total = await count({ sql: q.where, args: q.args });
        const deep = await pageSqlAsync(q, Math.floor(total / 2) - 20, total);
        expect(Number(deep.args.at(-1)), `${label} order_by=${order_by}: rows skipped`).toBeLessThanOrEqual(total / 2);
      }
    }
  });

  it('totals follow writes at once (the memoised counts are keyed by the write counter)', async () => {
    const before = Number((await s.api('GET', '/projects?per_page=1', s.root)).headers['x-total']);
    const p = await makeProject(s, s.root, 'one more');
    expect(Number((await s.api('GET', '/projects?per_page=1', s.root)).headers['x-total'])).toBe(before + 1);
    await addMemberAsync(s.ctx, { type: 'Project', id: p.id }, carol.id, 10);
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
      const q = await projectListQueryAsync(s.ctx, s.ctx.data, { kind: 'authorized', user: await userRow(s.root.id) }, { order_by, sort });
      const dir = q.desc ? 'DESC' : 'ASC';
      const want = (await s.ctx.data.all<{ id: number }>(`SELECT p.id FROM projects p WHERE ${q.where} ORDER BY ${q.key} ${dir}, p.id ${dir}`, q.args))
        .map((r) => Number(r.id));
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
  });
});
