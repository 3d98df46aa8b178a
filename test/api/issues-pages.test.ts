/**
 * Deep pages of long issue lists (keyset bookmarks, pages read from the nearer end): every page of a list of 2,345
 * issues with tied timestamps equals the same slice of the list sorted in JavaScript, in both orders and by both sort
 * keys, with filters, and a write is seen by the next request; the first and last pages of the list and its filters
 * walk an index on both engines (no scan of every issue, no sort of the list).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toProject, toUser } from '../../daemon/db/rows.js';
import { issueKeysetList, issueListQuery, type IssueListFilter } from '../../daemon/services/collaboration/index.js';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';
import { endPagePlanProblems } from '../helpers/postgres.js';

let s: TestServer;
let pid: number;
type Row = { id: number; created_at: string; updated_at: string; state: string };
let rows: Row[] = [];
const N = 2345;

beforeAll(async () => {
  s = await startTestServer();
  const p = await s.api('POST', '/projects', s.root, { name: 'pages' });
  pid = p.body.id;
  await s.ctx.data.transaction(async (tx) => {
    for (let i = 1; i <= N; i++) {
      // groups of three issues share a created_at (ties are ordered by id); updated_at runs the other way
      const created = new Date(Date.UTC(2024, 0, 1) + Math.floor(i / 3) * 60_000).toISOString();
      const updated = new Date(Date.UTC(2025, 0, 1) - i * 1000).toISOString();
      await tx.run(`INSERT INTO issues (project_id, iid, title, state, author_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [pid, i, `Issue ${i}`, i % 4 === 0 ? 'closed' : 'opened', s.root.id, created, updated]);
    }
  });
  rows = await s.ctx.data.all<Row>('SELECT id, created_at, updated_at, state FROM issues WHERE project_id = ?', [pid]);
});
afterAll(async () => s?.close());

function expected(list: Row[], key: 'created_at' | 'updated_at', sort: 'asc' | 'desc'): number[] {
  const sign = sort === 'asc' ? 1 : -1;
  return [...list].sort((a, b) => (a[key] < b[key] ? -sign : a[key] > b[key] ? sign : sign * (a.id - b.id))).map((r) => r.id);
}

async function page(query: string, n: number, perPage: number): Promise<number[]> {
  const r = await s.api('GET', `/projects/${pid}/issues?${query}&per_page=${perPage}&page=${n}`, s.root);
  expect(r.status).toBe(200);
  return r.body.map((i: { id: number }) => i.id);
}

describe('deep pages of a long issue list', () => {
  for (const [key, sort] of [['created_at', 'desc'], ['created_at', 'asc'], ['updated_at', 'desc'], ['updated_at', 'asc']] as const) {
    it(`every page equals the sorted slice, order_by=${key} sort=${sort}`, async () => {
      const want = expected(rows, key, sort);
      const perPage = 100;
      const got: number[] = [];
      for (let n = 1; n <= Math.ceil(N / perPage); n++) got.push(...(await page(`order_by=${key}&sort=${sort}`, n, perPage)));
      expect(got).toEqual(want);
      // single pages of 20 around the bookmark steps and the middle
      for (const n of [25, 26, 50, 51, 58, 59, 60, 61, 100, 117]) {
        expect(await page(`order_by=${key}&sort=${sort}`, n, 20), `page ${n}`).toEqual(want.slice((n - 1) * 20, n * 20));
      }
    });
  }

  it('filtered by state, deep pages match too', async () => {
    const want = expected(rows.filter((r) => r.state === 'opened'), 'created_at', 'desc');
    for (const n of [1, 30, 44, 45, 60, 88]) expect(await page('state=opened', n, 20), `page ${n}`).toEqual(want.slice((n - 1) * 20, n * 20));
  });

  it('a new issue moves every deep page by one at the next request', async () => {
    const before = await page('', 60, 20);
    const created = await s.api('POST', `/projects/${pid}/issues`, s.root, { title: 'newest' });
    expect(created.status).toBe(201);
    const after = await page('', 60, 20);
    expect(after.slice(1)).toEqual(before.slice(0, 19));
    expect((await page('', 1, 20))[0]).toBe(created.body.id);
  });

  it('the first and the last page of the list and of its filters walk an index, on either engine', async () => {
    // a label on every fifth issue and a milestone on every seventh, for the filters
    const label = (await s.api('POST', `/projects/${pid}/labels`, s.root, { name: 'bug', color: '#ff0000' })).body.id as number;
    const milestone = (await s.api('POST', `/projects/${pid}/milestones`, s.root, { title: 'v1' })).body.id as number;
    await s.ctx.data.run(`INSERT INTO label_links (label_id, target_type, target_id, created_at)
      SELECT ?, 'Issue', id, created_at FROM issues WHERE project_id = ? AND iid % 5 = 0`, [label, pid]);
    await s.ctx.data.run('UPDATE issues SET milestone_id = ? WHERE project_id = ? AND iid % 7 = 0', [milestone, pid]);
    if (onPostgres) await s.ctx.data.run('ANALYZE');
    const viewer = toUser((await s.ctx.data.get<Record<string, unknown>>('SELECT * FROM users WHERE id = ?', [s.root.id]))!);
    const project = toProject((await s.ctx.data.get<Record<string, unknown>>('SELECT * FROM projects WHERE id = ?', [pid]))!);
    const filters: [string, Partial<IssueListFilter>][] = [
      ['default', {}], ['state=opened', { state: 'opened' }], ['state=closed', { state: 'closed' }],
      ['order_by=updated_at', { orderBy: 'updated_at' }], ['sort=asc', { sort: 'asc' }],
      ['labels=bug', { labels: ['bug'] }], ['milestone=v1', { milestone: 'v1' }],
    ];
    const bad: string[] = [];
    for (const [name, extra] of filters) {
      const lq = await issueListQuery(s.ctx, { scope: { kind: 'project', project }, viewer, labelsMode: 'any', orderBy: 'created_at', sort: 'desc', ...extra });
      bad.push(...(await endPagePlanProblems(s.ctx, name, issueKeysetList(lq), 'issues', 'i')));
    }
    expect(bad).toEqual([]);
  });
});
