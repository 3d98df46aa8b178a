import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setEventNotePresenter } from '../../daemon/api/entities/events.js';
import { recordEvent, type EventInput } from '../../daemon/services/events.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMember, makeProject } from '../helpers/fixtures.js';

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
  const ev = (e: Omit<EventInput, 'projectId'>) => recordEvent(s.ctx.db, { projectId, ...e });
  ev({ authorId: alice.id, action: 'pushed', data: { before: ZERO, after: SHA, ref: 'refs/heads/master', total_commits_count: 1, commits: [] } });
  ev({ authorId: alice.id, action: 'pushed', data: { before: SHA, after: SHA.replace(/a/g, 'b'), ref: 'refs/heads/master' } });
  ev({ authorId: alice.id, action: 'pushed', data: { before: SHA, after: ZERO, ref: 'refs/heads/gone' } });
  ev({ authorId: alice.id, action: 'created', targetId: 7, targetType: 'Issue', targetTitle: 'Bug' });
  ev({ authorId: alice.id, action: 'closed', targetId: 7, targetType: 'Issue', targetTitle: 'Bug' });
  ev({ authorId: alice.id, action: 'reopened', targetId: 7, targetType: 'Issue', targetTitle: 'Bug' });
  ev({ authorId: alice.id, action: 'merged', targetId: 3, targetType: 'MergeRequest', targetTitle: 'Feature' });
  ev({ authorId: bob.id, action: 'commented', targetId: 11, targetType: 'Note', targetTitle: 'Bug', noteId: 11 });
  ev({ authorId: bob.id, action: 'joined' });
  ev({ authorId: bob.id, action: 'left' });
  ev({ authorId: alice.id, action: 'destroyed', targetType: 'Milestone', targetTitle: 'v1' });
  ev({ authorId: alice.id, action: 'updated', targetId: 1, targetType: 'WikiPage::Meta', targetTitle: 'home' });
  ev({ authorId: null, action: 'expired' });
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
  it('shows the note of comment events once a note presenter is installed', async () => {
    setEventNotePresenter((_ctx, noteIds) => new Map(noteIds.map((id) => [id, {
      id, body: 'looks good', attachment: null, author: { id: bob.id, name: 'bob', username: 'bob', state: 'active', avatar_url: null, web_url: 'http://gantry.test/bob' },
      created_at: '2016-09-22T15:20:06.081Z', updated_at: '2016-09-22T15:20:06.081Z', system: false, noteable_id: 7, noteable_type: 'Issue',
      upvote: false, downvote: false,
    }])));
    const r = await s.api('GET', `/projects/${projectId}/events?per_page=100`, alice);
    const comment = r.body.find((e: { action_name: string }) => e.action_name === 'commented on');
    expect(comment.note).toMatchObject({ id: 11, body: 'looks good', noteable_type: 'Issue', author: { username: 'bob' } });
    expect(r.body.filter((e: { note?: unknown }) => e.note).length).toBe(1);
  });
  it('needs read access: 404 for outsiders of a private project, 200 for a guest, 401 anonymous', async () => {
    expect((await s.api('GET', `/projects/${projectId}/events`, bob)).body).toEqual({ message: '404 Project Not Found' });
    addMember(s.ctx, { type: 'Project', id: projectId }, bob.id, 10);
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
    addMember(s.ctx, { type: 'Project', id: pub }, reporter.id, 20);
    const open = await s.api('POST', `/projects/${pub}/issues`, alice, { title: 'Open issue' });
    const secret = await s.api('POST', `/projects/${pub}/issues`, alice, { title: 'Secret issue', confidential: true });
    const own = await s.api('POST', `/projects/${pub}/issues`, carol, { title: "Carol's secret", confidential: true });
    expect([open.status, secret.status, own.status]).toEqual([201, 201, 201]);
    expect((await s.api('POST', `/projects/${pub}/issues/${secret.body.id}/notes`, alice, { body: 'a comment on the secret' })).status).toBe(201);
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
    s.ctx.db.$client.prepare(`UPDATE projects SET issues_enabled = 0 WHERE id = ?`).run(pub);
    try {
      expect((await titles(alice)).titles).not.toContain('Open issue');
    } finally {
      s.ctx.db.$client.prepare(`UPDATE projects SET issues_enabled = 1 WHERE id = ?`).run(pub);
    }
    expect((await titles(alice)).titles).toContain('Open issue');
  });
});
