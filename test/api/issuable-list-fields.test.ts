/**
 * The per-item fields of an issue or merge request list page, which the presenter counts for the whole page at once
 * (entities/issuables.ts: a statement per part, whatever the page size): labels by title, thumbsup/thumbsdown counts, user notes
 * (system notes left out), and `subscribed` for the caller (an explicit row wins; else the author and the assignee are
 * subscribed). Each item of the page must carry its own values, for both kinds, whatever the caller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { insertIssue, insertLabel, insertMergeRequest, linkLabel } from '../helpers/collaboration.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let pid: number;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice');
  bob = await s.user('bob');
  carol = await s.user('carol');
  const p = await s.api('POST', '/projects', alice, { name: 'fields', visibility_level: 20 });
  pid = p.body.id;
});
afterAll(async () => s?.close());

type Item = { id: number; labels: string[]; upvotes: number; downvotes: number; user_notes_count: number; subscribed: boolean };

describe.each([
  ['issues', 'Issue'],
  ['merge_requests', 'MergeRequest'],
] as const)('GET /projects/:id/%s: each item its own counts', (route, type) => {
  const ids: number[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      ids.push(type === 'Issue' ? (await insertIssue(s.ctx, pid, { authorId: alice.id })).id : await insertMergeRequest(s.ctx, pid, { authorId: alice.id }));
    }
    const [first, second] = ids;
    for (const title of [`${type}-zeta`, `${type}-Alpha`, `${type}-beta`]) await linkLabel(s.ctx, await insertLabel(s.ctx, pid, title), { type, id: first });
    const award = (id: number, u: TestUser, name: string) => s.api('POST', `/projects/${pid}/${route}/${id}/award_emoji`, u, { name });
    // (an author may not vote on their own: 8.13 answers 404)
    expect((await award(first, bob, 'thumbsup')).status).toBe(201);
    expect((await award(first, s.root, 'thumbsup')).status).toBe(201);
    expect((await award(first, carol, 'thumbsdown')).status).toBe(201);
    expect((await award(second, bob, 'heart')).status).toBe(201); // neither up nor down
    // nor a name between the two (the votes are read as a range of the award index, then picked by name)
    const t0 = new Date().toISOString();
    await s.ctx.data.run(`INSERT INTO award_emoji (name, user_id, awardable_type, awardable_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
      ['thumbsdown_tone1', carol.id, type, second, t0, t0]);
    for (const body of ['one', 'two']) expect((await s.api('POST', `/projects/${pid}/${route}/${second}/notes`, bob, { body })).status).toBe(201);
    // a system note does not count
    const t = new Date().toISOString();
    await s.ctx.data.run(`INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [pid, type, second, 'changed the description', alice.id, true, t, t]);
    // alice (the author) unsubscribes from the first; bob subscribes to the third
    expect((await s.api('DELETE', `/projects/${pid}/${route}/${first}/subscription`, alice)).status).toBe(200);
    expect((await s.api('POST', `/projects/${pid}/${route}/${ids[2]}/subscription`, bob)).status).toBe(201);
  });

  const page = async (u: TestUser) => {
    const r = await s.api('GET', `/projects/${pid}/${route}?per_page=20&sort=asc`, u);
    expect(r.status).toBe(200);
    return new Map((r.body as Item[]).map((x) => [x.id, x]));
  };

  it('labels by title, votes, user notes', async () => {
    const items = await page(alice);
    const [first, second, third] = ids.map((id) => items.get(id)!);
    expect(first.labels).toEqual([`${type}-Alpha`, `${type}-beta`, `${type}-zeta`]);
    expect([first.upvotes, first.downvotes, first.user_notes_count]).toEqual([2, 1, 0]);
    expect([second.labels, second.upvotes, second.downvotes, second.user_notes_count]).toEqual([[], 0, 0, 2]);
    expect([third.labels, third.upvotes, third.downvotes, third.user_notes_count]).toEqual([[], 0, 0, 0]);
  });

  it('subscribed: an explicit row wins, else the author is subscribed; others are not', async () => {
    const forAlice = await page(alice);
    expect(ids.map((id) => forAlice.get(id)!.subscribed)).toEqual([false, true, true]);
    const forBob = await page(bob);
    expect(ids.map((id) => forBob.get(id)!.subscribed)).toEqual([false, false, true]);
    const forCarol = await page(carol);
    expect(ids.map((id) => forCarol.get(id)!.subscribed)).toEqual([false, false, false]);
  });
});
