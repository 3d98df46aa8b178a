import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setEventNotePresenter } from '../../daemon/api/entities/events.js';
import { now } from '../../daemon/context.js';
import { recordEvent, type EventInput } from '../../daemon/services/instance/events.js';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeProject } from '../helpers/fixtures.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let projectId: number;
const ZERO = '0000000000000000000000000000000000000000';
const SHA = 'a'.repeat(40);

beforeAll(async () => {
  s = await startTestServer();
  [alice, bob] = await Promise.all([s.user('alice'), s.user('bob')]);
  projectId = (await makeProject(s, alice, 'eventful')).id;
  const ev = (e: Omit<EventInput, 'projectId'>) => recordEvent(s.ctx.data, { projectId, ...e });
  await ev({ authorId: alice.id, action: 'pushed', data: { before: ZERO, after: SHA, ref: 'refs/heads/master', total_commits_count: 1, commits: [] } });
  await ev({ authorId: alice.id, action: 'pushed', data: { before: SHA, after: SHA.replace(/a/g, 'b'), ref: 'refs/heads/master' } });
  await ev({ authorId: alice.id, action: 'pushed', data: { before: SHA, after: ZERO, ref: 'refs/heads/gone' } });
  await ev({ authorId: alice.id, action: 'created', targetId: 7, targetType: 'Issue', targetTitle: 'Bug' });
  await ev({ authorId: alice.id, action: 'closed', targetId: 7, targetType: 'Issue', targetTitle: 'Bug' });
  await ev({ authorId: alice.id, action: 'reopened', targetId: 7, targetType: 'Issue', targetTitle: 'Bug' });
  await ev({ authorId: alice.id, action: 'merged', targetId: 3, targetType: 'MergeRequest', targetTitle: 'Feature' });
  await ev({ authorId: bob.id, action: 'commented', targetId: 11, targetType: 'Note', targetTitle: 'Bug', noteId: 11 });
  await ev({ authorId: bob.id, action: 'joined' });
  await ev({ authorId: bob.id, action: 'left' });
  await ev({ authorId: alice.id, action: 'destroyed', targetType: 'Milestone', targetTitle: 'v1' });
  await ev({ authorId: alice.id, action: 'updated', targetId: 1, targetType: 'WikiPage::Meta', targetTitle: 'home' });
  await ev({ authorId: null, action: 'expired' });
});
afterAll(async () => { await s.close(); });

describe('GET /projects/:id/events', () => {
  it('lists events newest first with GitLab action names and the Event shape', async () => {
    const r = await s.api('GET', `/projects/${projectId}/events?per_page=100`, alice);
    expect(r.status).toBe(200);
    expect(r.body.map((e: { action_name: string }) => e.action_name)).toEqual([
      'removed due to membership expiration from', 'updated', 'destroyed', 'left', 'joined', 'commented on', 'accepted', 'opened',
      'closed', 'opened', 'deleted', 'pushed to', 'pushed new', 'created',
    ]);
    const push = r.body.at(-2);
    expect(push).toEqual({
      title: null, project_id: projectId, action_name: 'pushed new', target_id: null, target_type: null, author_id: alice.id,
      data: { before: ZERO, after: SHA, ref: 'refs/heads/master', total_commits_count: 1, commits: [] }, target_title: null,
      created_at: expect.any(String), author: expect.objectContaining({ id: alice.id, username: 'alice', state: 'active' }), author_username: 'alice',
    });
    const closed = r.body[8];
    expect(closed).toMatchObject({ target_id: 7, target_type: 'Issue', target_title: 'Bug', data: null });
    const anon = r.body[0];
    expect(anon.author).toBeUndefined();
    expect(anon.author_id).toBeNull();
    expect(anon.note).toBeUndefined();
  });
  it('paginates', async () => {
    const r = await s.api('GET', `/projects/${projectId}/events?per_page=5&page=3`, alice);
    expect(r.body.length).toBe(4);
    expect(r.headers).toMatchObject({ 'x-total': '14', 'x-total-pages': '3', 'x-page': '3', 'x-prev-page': '2', 'x-next-page': '' });
    expect(r.body.at(-1).action_name).toBe('created');
  });
  it('shows the note of comment events once a note presenter is installed (the data-layer one first)', async () => {
    const note = (id: number, body: string) => ({
      id, body, attachment: null, author: { id: bob.id, name: 'bob', username: 'bob', state: 'active', avatar_url: null, web_url: 'http://gantry.test/bob' },
      created_at: '2016-09-22T15:20:06.081Z', updated_at: '2016-09-22T15:20:06.081Z', system: false, noteable_id: 7, noteable_type: 'Issue',
      upvote: false, downvote: false,
    });
    const comment = async () => {
      const r = await s.api('GET', `/projects/${projectId}/events?per_page=100`, alice);
      expect(r.body.filter((e: { note?: unknown }) => e.note).length).toBeLessThanOrEqual(1);
      return r.body.find((e: { action_name: string }) => e.action_name === 'commented on');
    };
    // without a presenter (the notes room installs one), comment events show no note
    const installed = setEventNotePresenter(null);
    try {
      expect((await comment()).note).toBeUndefined();
      setEventNotePresenter(async (_ctx, noteIds) => new Map(noteIds.map((id) => [id, note(id, 'looks async')])));
      expect((await comment()).note).toMatchObject({ id: 11, body: 'looks async', noteable_type: 'Issue', author: { username: 'bob' } });
    } finally {
      setEventNotePresenter(installed); // the notes module's, for the test files after this one in the worker
    }
  });
  it('needs read access: 404 for outsiders of a private project, 200 for a guest, 401 anonymous', async () => {
    expect((await s.api('GET', `/projects/${projectId}/events`, bob)).body).toEqual({ message: '404 Project Not Found' });
    await addMemberAsync(s.ctx, { type: 'Project', id: projectId }, bob.id, 10);
    expect((await s.api('GET', `/projects/${projectId}/events`, bob)).status).toBe(200);
    expect((await s.api('GET', `/projects/${projectId}/events`, null)).status).toBe(401);
    expect((await s.api('GET', '/projects/alice%2Feventful/events', alice)).status).toBe(200);
  });
});

describe('GET /projects/:id/events: what the caller may not read (found by the authorization matrix, test/authz)', () => {
  let carol: TestUser;
  let reporter: TestUser;
  let pub: number;
  const titles = async (as: TestUser) => {
    const r = await s.api('GET', `/projects/${pub}/events?per_page=100`, as);
    expect(r.status).toBe(200);
    return { titles: r.body.map((e: { target_title: string | null }) => e.target_title), total: r.headers['x-total'] };
  };

  beforeAll(async () => {
    [carol, reporter] = await Promise.all([s.user('carol'), s.user('evreporter')]);
    pub = (await makeProject(s, alice, 'public-events', { visibility: 20 })).id;
    await addMemberAsync(s.ctx, { type: 'Project', id: pub }, reporter.id, 20);
    // Issues, a comment and their events as the issues and notes services record them (through the data layer, so
    // that the rules are checked on either engine before the issues room is).
    let iid = 0;
    const issue = async (title: string, author: TestUser, confidential = false): Promise<number> => {
      const t = now();
      const row = await s.ctx.data.get<{ id: number }>(
        'INSERT INTO issues (project_id, iid, title, confidential, author_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id',
        [pub, ++iid, title, confidential, author.id, t, t],
      );
      await recordEvent(s.ctx.data, { projectId: pub, authorId: author.id, action: 'created', targetId: row!.id, targetType: 'Issue', targetTitle: title });
      return row!.id;
    };
    await issue('Open issue', alice);
    const secret = await issue('Secret issue', alice, true);
    await issue("Carol's secret", carol, true);
    const t = now();
    const note = await s.ctx.data.get<{ id: number }>(
      'INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id',
      [pub, 'Issue', secret, 'a comment on the secret', alice.id, t, t],
    );
    await recordEvent(s.ctx.data, {
      projectId: pub, authorId: alice.id, action: 'commented', targetId: note!.id, targetType: 'Note', targetTitle: 'Secret issue', noteId: note!.id,
    });
    // a merge request's event, shown while merge requests are on
    await recordEvent(s.ctx.data, { projectId: pub, authorId: alice.id, action: 'created', targetId: 1, targetType: 'MergeRequest', targetTitle: 'An MR' });
  });

  it("leaves out a confidential issue's events and its comments' for whoever may not read it; X-Total counts what is shown", async () => {
    const outsider = await titles(bob);
    expect(outsider.titles).toContain('Open issue');
    expect(outsider.titles).not.toContain('Secret issue');
    expect(outsider.titles).not.toContain("Carol's secret");
    expect(outsider.total).toBe(String(outsider.titles.length));
    // the author reads her own confidential issue; a reporter reads every one, the comment's event included
    const author = await titles(carol);
    expect(author.titles).toContain("Carol's secret");
    expect(author.titles).not.toContain('Secret issue');
    const member = await titles(reporter);
    expect(member.titles.filter((t: string) => t === 'Secret issue').length).toBe(2);
    expect(member.titles).toContain("Carol's secret");
  });

  it('leaves out issue and merge request events while those features are off, for everyone', async () => {
    const feature = (column: string, on: boolean) => s.ctx.data.run(`UPDATE projects SET ${column} = ? WHERE id = ?`, [on, pub]);
    await feature('issues_enabled', false);
    try {
      const off = await titles(alice);
      expect(off.titles).not.toContain('Open issue');
      expect(off.titles).not.toContain('Secret issue');
      expect(off.titles).toContain('An MR');
      expect(off.total).toBe(String(off.titles.length));
    } finally {
      await feature('issues_enabled', true);
    }
    expect((await titles(alice)).titles).toContain('Open issue');
    await feature('merge_requests_enabled', false);
    try {
      expect((await titles(bob)).titles).not.toContain('An MR');
    } finally {
      await feature('merge_requests_enabled', true);
    }
    expect((await titles(bob)).titles).toContain('An MR');
  });
});

describe('GET /projects/:id/events: deep pages', () => {
  it('reads pages far into a long list exactly (from the nearer end, or a bookmark on SQLite), agreeing with the total', async () => {
    const deep = (await makeProject(s, alice, 'deep-events')).id;
    const N = 2630;
    // one multi-row INSERT per 300 events: the ids grow with the order, as the events of a project do
    for (let from = 0; from < N; from += 300) {
      const n = Math.min(300, N - from);
      const t = now();
      await s.ctx.data.run(
        `INSERT INTO events (project_id, author_id, action, title, created_at) VALUES ${Array(n).fill('(?, ?, ?, ?, ?)').join(', ')}`,
        Array.from({ length: n }, (_, i) => [deep, alice.id, 'joined', `e${from + i}`, t]).flat(),
      );
    }
    const page = async (perPage: number, p: number) => {
      const r = await s.api('GET', `/projects/${deep}/events?per_page=${perPage}&page=${p}`, alice);
      expect(r.status).toBe(200);
      expect(r.headers['x-total']).toBe(String(N + 1));
      return r.body.map((e: { title: string }) => e.title);
    };
    // newest first: e(N-1) down to e0, then the project's own "created" event (no title)
    const all = [...Array.from({ length: N }, (_, i) => `e${N - 1 - i}`), null];
    const expected = (perPage: number, p: number) => all.slice((p - 1) * perPage, p * perPage);
    for (const [perPage, p] of [[100, 1], [20, 12], [100, 12], [100, 15], [50, 27], [7, 250], [100, 26], [100, 27], [100, 28]] as const) {
      expect(await page(perPage, p)).toEqual(expected(perPage, p));
    }
  });
});
