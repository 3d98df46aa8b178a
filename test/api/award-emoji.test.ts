/**
 * Award emoji on issues and on their notes (reference 2.11): list, get, award, remove; shapes, 8.x errors,
 * pagination, the author's own vote, removing only one's own award (admins any), upvotes/downvotes on issues, the
 * authorization matrix on private, internal and public projects and on a confidential issue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { ACTORS, expectedStatus, insertIssue, issueCountsAndRecount, sqlValue, type Actor } from '../helpers/collaboration.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';

let s: TestServer;
let cast: Cast;
let projects: Record<number, { id: number }>;
let pid: number;

const userOf = (a: Actor): TestUser | null => (a === 'anonymous' ? null : cast[a as keyof Cast]);
const awards = async () => (await sqlValue(s.ctx, 'SELECT count(*) AS n FROM award_emoji'))!;
const issueAwards = (p: number, issue: number) => `/projects/${p}/issues/${issue}/award_emoji`;
const noteAwards = (p: number, issue: number, note: number) => `/projects/${p}/issues/${issue}/notes/${note}/award_emoji`;

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'a');
  projects = {};
  for (const vis of [0, 10, 20]) {
    const p = await makeProject(s, cast.owner, `awards-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    projects[vis] = p;
  }
  pid = projects[0]!.id;
});
afterAll(async () => { await s.close(); });

describe('award emoji on an issue', () => {
  let issue: number;
  beforeAll(async () => { issue = (await insertIssue(s.ctx, pid, { authorId: cast.guest.id })).id; });

  it('POST awards: 201 with the AwardEmoji shape; `+1` is stored as thumbsup', async () => {
    const r = await s.api('POST', issueAwards(pid, issue), cast.developer, { name: '+1' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number), name: 'thumbsup',
      user: expect.objectContaining({ id: cast.developer.id, username: cast.developer.username, state: 'active', web_url: `http://gantry.test/${cast.developer.username}` }),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/), updated_at: expect.any(String),
      awardable_id: issue, awardable_type: 'Issue',
    });
  });
  it('400 `"name" not given` without a name; 404 with the 8.x errors for an unknown emoji or the same award twice', async () => {
    const before = (await awards());
    expect((await s.api('POST', issueAwards(pid, issue), cast.developer, {})).body).toEqual({ message: '400 (Bad request) "name" not given' });
    expect((await s.api('POST', issueAwards(pid, issue), cast.developer, { name: '' })).status).toBe(400);
    const unknown = await s.api('POST', issueAwards(pid, issue), cast.developer, { name: 'no_such_emoji' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Award Emoji {:name=>["is not included in the list"]} Not Found' });
    const twice = await s.api('POST', issueAwards(pid, issue), cast.developer, { name: 'thumbsup' });
    expect(twice.status).toBe(404);
    expect(twice.body).toEqual({ message: '404 Award Emoji {:name=>["has already been taken"]} Not Found' });
    expect((await awards())).toBe(before);
  });
  it('the author may not vote on their own issue (404 `404 Award Emoji Not Found`) but may award other emoji', async () => {
    for (const name of ['thumbsup', '+1', 'thumbsdown', '-1']) {
      const r = await s.api('POST', issueAwards(pid, issue), cast.guest, { name });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Award Emoji Not Found' });
    }
    expect((await s.api('POST', issueAwards(pid, issue), cast.guest, { name: 'tada' })).status).toBe(201);
  });
  it('upvotes and downvotes on the issue count thumbsup and thumbsdown', async () => {
    await s.api('POST', issueAwards(pid, issue), cast.reporter, { name: 'thumbsup' });
    await s.api('POST', issueAwards(pid, issue), cast.master, { name: '-1' });
    const r = await s.api('GET', `/projects/${pid}/issues/${issue}`, cast.guest);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ upvotes: 2, downvotes: 1 });
  });
  it('GET lists the awards oldest first, paginated', async () => {
    const r = await s.api('GET', issueAwards(pid, issue), cast.guest);
    expect(r.status).toBe(200);
    expect(r.body.map((a: { name: string }) => a.name)).toEqual(['thumbsup', 'tada', 'thumbsup', 'thumbsdown']);
    expect(r.headers).toMatchObject({ 'x-total': '4', 'x-total-pages': '1', 'x-page': '1', 'x-per-page': '20', 'x-next-page': '', 'x-prev-page': '' });
    const p2 = await s.api('GET', `${issueAwards(pid, issue)}?per_page=3&page=2`, cast.guest);
    expect(p2.body.map((a: { name: string }) => a.name)).toEqual(['thumbsdown']);
    expect(p2.headers).toMatchObject({ 'x-total': '4', 'x-total-pages': '2', 'x-page': '2', 'x-prev-page': '1', 'x-next-page': '' });
    expect(String(p2.headers.link)).toContain('rel="prev"');
    const empty = await s.api('GET', issueAwards(pid, (await insertIssue(s.ctx, pid)).id), cast.guest);
    expect(empty.body).toEqual([]);
    expect(empty.headers).toMatchObject({ 'x-total': '0', 'x-total-pages': '0' });
  });
  it('GET one award; 404 `404 Not found` for an unknown award, another issue\'s award or an unknown issue', async () => {
    const list = (await s.api('GET', issueAwards(pid, issue), cast.guest)).body;
    const one = await s.api('GET', `${issueAwards(pid, issue)}/${list[0].id}`, cast.guest);
    expect(one.body).toEqual(list[0]);
    const other = (await insertIssue(s.ctx, pid)).id;
    expect((await s.api('GET', `${issueAwards(pid, issue)}/999999`, cast.guest)).body).toEqual({ message: '404 Not found' });
    expect((await s.api('GET', `${issueAwards(pid, other)}/${list[0].id}`, cast.guest)).body).toEqual({ message: '404 Not found' });
    expect((await s.api('GET', issueAwards(pid, 999999), cast.guest)).body).toEqual({ message: '404 Not found' });
    expect((await s.api('POST', issueAwards(pid, 999999), cast.guest, { name: 'tada' })).body).toEqual({ message: '404 Not found' });
    expect((await s.api('GET', issueAwards(999999, issue), cast.guest)).body).toEqual({ message: '404 Project Not Found' });
  });
  it('DELETE: only the awarder (200 with the AwardEmoji) or an admin; others 401; unknown 404', async () => {
    const mine = (await s.api('POST', issueAwards(pid, issue), cast.developer, { name: 'heart' })).body;
    for (const who of [cast.guest, cast.master, cast.owner]) {
      const r = await s.api('DELETE', `${issueAwards(pid, issue)}/${mine.id}`, who);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ message: '401 Unauthorized' });
    }
    const r = await s.api('DELETE', `${issueAwards(pid, issue)}/${mine.id}`, cast.developer);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(mine);
    expect((await s.api('DELETE', `${issueAwards(pid, issue)}/${mine.id}`, cast.developer)).body).toEqual({ message: '404 Not found' });
    const theirs = (await s.api('POST', issueAwards(pid, issue), cast.developer, { name: 'rocket' })).body;
    expect((await s.api('DELETE', `${issueAwards(pid, issue)}/${theirs.id}`, cast.admin)).status).toBe(200);
    expect((await s.api('GET', `${issueAwards(pid, issue)}/${theirs.id}`, cast.developer)).status).toBe(404);
  });
});

describe('award emoji on a note', () => {
  let issue: number;
  let note: number;
  beforeAll(async () => {
    issue = (await insertIssue(s.ctx, pid, { authorId: cast.owner.id })).id;
    note = (await s.api('POST', `/projects/${pid}/issues/${issue}/notes`, cast.reporter, { body: 'a comment' })).body.id;
  });

  it('awards, lists, gets and removes on a note (awardable_type Note)', async () => {
    const r = await s.api('POST', noteAwards(pid, issue, note), cast.developer, { name: 'thumbsup' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'thumbsup', awardable_id: note, awardable_type: 'Note', user: { id: cast.developer.id } });
    const list = await s.api('GET', noteAwards(pid, issue, note), cast.guest);
    expect(list.body).toEqual([r.body]);
    expect(list.headers).toMatchObject({ 'x-total': '1' });
    expect((await s.api('GET', `${noteAwards(pid, issue, note)}/${r.body.id}`, cast.guest)).body).toEqual(r.body);
    // an award on the note is not one on the issue
    expect((await s.api('GET', `${issueAwards(pid, issue)}/${r.body.id}`, cast.guest)).status).toBe(404);
    expect((await s.api('GET', issueAwards(pid, issue), cast.guest)).body).toEqual([]);
    expect((await s.api('DELETE', `${noteAwards(pid, issue, note)}/${r.body.id}`, cast.guest)).status).toBe(401);
    expect((await s.api('DELETE', `${noteAwards(pid, issue, note)}/${r.body.id}`, cast.developer)).status).toBe(200);
  });
  it('the note\'s author may not vote on it; duplicates and unknown emoji get the 8.x 404s', async () => {
    expect((await s.api('POST', noteAwards(pid, issue, note), cast.reporter, { name: '+1' })).body).toEqual({ message: '404 Award Emoji Not Found' });
    expect((await s.api('POST', noteAwards(pid, issue, note), cast.reporter, { name: 'eyes' })).status).toBe(201);
    expect((await s.api('POST', noteAwards(pid, issue, note), cast.reporter, { name: 'eyes' })).body)
      .toEqual({ message: '404 Award Emoji {:name=>["has already been taken"]} Not Found' });
    expect((await s.api('POST', noteAwards(pid, issue, note), cast.reporter, { name: 'nope_nope' })).status).toBe(404);
  });
  it('the Note entity keeps upvote/downvote false (8.x), whatever the awards', async () => {
    await s.api('POST', noteAwards(pid, issue, note), cast.master, { name: 'thumbsup' });
    const n = await s.api('GET', `/projects/${pid}/issues/${issue}/notes/${note}`, cast.guest);
    expect(n.body).toMatchObject({ upvote: false, downvote: false });
  });
  it('404 `404 Not found` for an unknown note or a note of another issue', async () => {
    expect((await s.api('GET', noteAwards(pid, issue, 999999), cast.guest)).body).toEqual({ message: '404 Not found' });
    expect((await s.api('POST', noteAwards(pid, issue, 999999), cast.guest, { name: 'eyes' })).body).toEqual({ message: '404 Not found' });
    const other = (await insertIssue(s.ctx, pid)).id;
    expect((await s.api('GET', noteAwards(pid, other, note), cast.guest)).status).toBe(404);
  });
});

describe('authorization matrix', () => {
  for (const vis of [0, 10, 20]) {
    it(`list, award and remove on a ${{ 0: 'private', 10: 'internal', 20: 'public' }[vis]} project`, async () => {
      const p = projects[vis]!.id;
      const issue = (await insertIssue(s.ctx, p, { authorId: cast.owner.id })).id;
      const note = (await s.api('POST', `/projects/${p}/issues/${issue}/notes`, cast.owner, { body: 'n' })).body.id;
      for (const actor of ACTORS) {
        const who = userOf(actor);
        for (const url of [issueAwards(p, issue), noteAwards(p, issue, note)]) {
          expect([actor, url, (await s.api('GET', url, who)).status]).toEqual([actor, url, expectedStatus(actor, vis, 10, 200, true)]);
          const post = await s.api('POST', url, who, { name: 'tada' });
          expect([actor, url, post.status]).toEqual([actor, url, expectedStatus(actor, vis, 10, 201, true)]);
          if (post.status === 201) expect((await s.api('DELETE', `${url}/${post.body.id}`, who)).status).toBe(200);
        }
      }
    });
  }

  it('a confidential issue: only those who may read it see, award or remove', async () => {
    const p = projects[20]!.id;
    const issue = (await insertIssue(s.ctx, p, { confidential: true, authorId: cast.guest.id })).id;
    const award = (await s.api('POST', issueAwards(p, issue), cast.reporter, { name: 'eyes' })).body;
    const note = (await s.api('POST', `/projects/${p}/issues/${issue}/notes`, cast.reporter, { body: 'hush' })).body.id;
    for (const who of [cast.nonMember, cast.external]) {
      expect((await s.api('GET', issueAwards(p, issue), who)).body).toEqual({ message: '404 Not found' });
      expect((await s.api('GET', `${issueAwards(p, issue)}/${award.id}`, who)).status).toBe(404);
      expect((await s.api('POST', issueAwards(p, issue), who, { name: 'tada' })).status).toBe(404);
      expect((await s.api('GET', noteAwards(p, issue, note), who)).status).toBe(404);
      expect((await s.api('POST', noteAwards(p, issue, note), who, { name: 'tada' })).status).toBe(404);
    }
    for (const who of [cast.guest, cast.reporter, cast.admin]) {
      expect((await s.api('GET', issueAwards(p, issue), who)).status).toBe(200);
      expect((await s.api('POST', noteAwards(p, issue, note), who, { name: 'tada' })).status).toBe(201);
    }
    expect((await s.api('DELETE', `${issueAwards(p, issue)}/${award.id}`, cast.reporter)).status).toBe(200);
  });
});

describe('awards at once', () => {
  it('the same award twice at once: one 201, one 404 with 8.x\'s message, one row', async () => {
    const issue = (await insertIssue(s.ctx, pid, { authorId: cast.owner.id })).id;
    const rs = await Promise.all([0, 1].map(() => s.api('POST', issueAwards(pid, issue), cast.guest, { name: 'rocket' })));
    expect(rs.map((r) => r.status).sort()).toEqual([201, 404]);
    expect(rs.find((r) => r.status === 404)!.body).toEqual({ message: '404 Award Emoji {:name=>["has already been taken"]} Not Found' });
    expect(await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM award_emoji WHERE awardable_type = 'Issue' AND awardable_id = ?`, [issue])).toBe(1);
  });

  it('an award on an issue deleted meanwhile: 404, no award left behind', async () => {
    const issue = (await insertIssue(s.ctx, pid, { authorId: cast.owner.id })).id;
    const [award, del] = await Promise.all([
      s.api('POST', issueAwards(pid, issue), cast.guest, { name: 'rocket' }),
      s.api('DELETE', `/projects/${pid}/issues/${issue}`, cast.owner),
    ]);
    expect(del.status).toBe(200);
    expect([201, 404]).toContain(award.status);
    if (award.status === 404) expect(await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM award_emoji WHERE awardable_type = 'Issue' AND awardable_id = ?`, [issue])).toBe(0);
  });

  it('two removals of one award at once: one 200, one 404', async () => {
    const issue = (await insertIssue(s.ctx, pid, { authorId: cast.owner.id })).id;
    const id = (await s.api('POST', issueAwards(pid, issue), cast.guest, { name: 'rocket' })).body.id;
    const rs = await Promise.all([0, 1].map(() => s.api('DELETE', `${issueAwards(pid, issue)}/${id}`, cast.guest)));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 404]);
  });
});

describe('live issue counts (kept by triggers on both engines)', () => {
  it('equal a recount of the live issues after the writes of this file', async () => {
    const { kept, recount } = await issueCountsAndRecount(s.ctx);
    expect(recount.length).toBeGreaterThan(0);
    expect(kept).toEqual(recount);
  });
});
