/**
 * Long merge request lists: every page of 1,234 merge requests with tied timestamps equals the slice of the list
 * sorted in JavaScript (both orders, both sort keys, the state filter), read from the nearer end or a keyset bookmark;
 * X-Total comes from live counts kept by triggers, exact through creates, state changes and soft deletes; the first
 * and last pages walk an index on both engines (no scan of every merge request, no sort of the list).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeRequestKeysetList, type MergeRequestListFilter } from '../../daemon/services/merge-requests/index.js';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';
import { endPagePlanProblems } from '../helpers/postgres.js';

let s: TestServer;
let pid: number;
type Row = { id: number; created_at: string; updated_at: string; state: string };
const N = 1234;
const rows = () => s.ctx.data.all<Row>('SELECT id, created_at, updated_at, state FROM merge_requests WHERE target_project_id = ? AND deleted_at IS NULL', [pid]);

beforeAll(async () => {
  s = await startTestServer();
  pid = (await s.api('POST', '/projects', s.root, { name: 'mr-pages' })).body.id;
  // through the data layer (either engine), 100 rows per statement
  await s.ctx.data.transaction(async (tx) => {
    for (let from = 1; from <= N; from += 100) {
      const values: unknown[] = [];
      const tuples: string[] = [];
      for (let i = from; i < Math.min(from + 100, N + 1); i++) {
        const created = new Date(Date.UTC(2024, 0, 1) + Math.floor(i / 3) * 60_000).toISOString();
        const updated = new Date(Date.UTC(2025, 0, 1) - i * 1000).toISOString();
        tuples.push(`(?, ?, ?, ?, 'master', ?, ?, ?, ?, ?)`);
        values.push(pid, i, pid, `b${i}`, `MR ${i}`, ['opened', 'merged', 'closed', 'reopened'][i % 4], s.root.id, created, updated);
      }
      await tx.run(`INSERT INTO merge_requests (target_project_id, iid, source_project_id, source_branch, target_branch, title, state, author_id, created_at, updated_at)
        VALUES ${tuples.join(', ')}`, values);
    }
  });
});
afterAll(async () => s?.close());

function sorted(list: Row[], key: 'created_at' | 'updated_at', sort: 'asc' | 'desc'): number[] {
  const sign = sort === 'asc' ? 1 : -1;
  return [...list].sort((a, b) => (a[key] < b[key] ? -sign : a[key] > b[key] ? sign : sign * (a.id - b.id))).map((r) => r.id);
}

async function page(query: string, n: number, perPage: number) {
  const r = await s.api('GET', `/projects/${pid}/merge_requests?${query}&per_page=${perPage}&page=${n}`, s.root);
  expect(r.status).toBe(200);
  return { ids: r.body.map((m: { id: number }) => m.id) as number[], total: Number(r.headers['x-total']) };
}

describe('long merge request lists', () => {
  for (const [key, sort] of [['created_at', 'desc'], ['created_at', 'asc'], ['updated_at', 'desc'], ['updated_at', 'asc']] as const) {
    it(`every page equals the sorted slice, order_by=${key} sort=${sort}`, async () => {
      const want = sorted(await rows(), key, sort);
      const got: number[] = [];
      for (let n = 1; n <= Math.ceil(N / 100); n++) got.push(...(await page(`order_by=${key}&sort=${sort}`, n, 100)).ids);
      expect(got).toEqual(want);
      for (const n of [26, 30, 31, 32, 40, 55]) expect((await page(`order_by=${key}&sort=${sort}`, n, 20)).ids, `page ${n}`).toEqual(want.slice((n - 1) * 20, n * 20));
    });
  }

  it('state=opened lists opened and reopened ones, deep pages included', async () => {
    const want = sorted((await rows()).filter((r) => r.state === 'opened' || r.state === 'reopened'), 'created_at', 'desc');
    const first = await page('state=opened', 1, 20);
    expect(first.total).toBe(want.length);
    for (const n of [1, 13, 26, 31]) expect((await page('state=opened', n, 20)).ids).toEqual(want.slice((n - 1) * 20, n * 20));
  });

  it('X-Total follows creates, state changes and soft deletes exactly', async () => {
    const total = async (q = '') => (await page(q, 1, 1)).total;
    const count = async (states: string[]) => (await rows()).filter((r) => states.includes(r.state)).length;
    expect(await total()).toBe(N);
    const [a, b] = (await rows()).filter((r) => r.state === 'opened').map((r) => r.id);
    await s.ctx.data.run(`UPDATE merge_requests SET state = 'closed' WHERE id = ?`, [a]);
    await s.ctx.data.run(`UPDATE merge_requests SET deleted_at = '2025-01-01T00:00:00.000Z' WHERE id = ?`, [b]);
    expect(await total()).toBe(N - 1);
    expect(await total('state=opened')).toBe(await count(['opened', 'reopened']));
    expect(await total('state=closed')).toBe(await count(['closed']));
    expect(await total('state=merged')).toBe(await count(['merged']));
    expect(await total('state=all')).toBe(N - 1);
  });

  it('the first and the last page of the list and of its state filters walk an index, on either engine', async () => {
    if (onPostgres) await s.ctx.data.run('ANALYZE');
    const filters: [string, Partial<MergeRequestListFilter>][] = [
      ['default', {}], ['state=opened', { state: 'opened' }], ['state=merged', { state: 'merged' }],
      ['order_by=updated_at', { orderBy: 'updated_at' }], ['sort=asc', { sort: 'asc' }],
    ];
    const bad: string[] = [];
    for (const [name, extra] of filters) {
      bad.push(...(await endPagePlanProblems(s.ctx, name, mergeRequestKeysetList({ projectId: pid, orderBy: 'created_at', sort: 'desc', ...extra }), 'merge_requests', 'm')));
    }
    expect(bad).toEqual([]);
  });
});
