/**
 * Notes on issues (reference 2.5): list, get, create, update and delete, with shapes, every documented error,
 * pagination, the author/master rules, the authorization matrix on private, internal and public projects and on a
 * confidential issue, the 1 MB refusal, the commented event and the note webhook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSystemNote } from '../../daemon/services/collaboration/notes.js';
import { startHookDeliveryWorker, type HookDeliveryWorker } from '../../daemon/services/hooks/deliveries.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { ACTORS, addProjectHook, expectedStatus, insertIssue, issueCountsAndRecount, sqlRows, sqlValue, type Actor } from '../helpers/collaboration.js';
import { addCastMembers, addMemberAsync, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { startReceiver, waitUntil, type HookReceiver } from '../helpers/hook-receiver.js';

let s: TestServer;
let cast: Cast;
let projects: Record<number, { id: number; path_with_namespace: string }>;
let pid: number;
let issueId: number;

const userOf = (a: Actor): TestUser | null => (a === 'anonymous' ? null : cast[a as keyof Cast]);
const count = async (sql: string, ...args: unknown[]) => (await sqlValue(s.ctx, sql, args))!;
const notesOf = (id: number) => count(`SELECT count(*) AS n FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ?`, id);
const notesUrl = (projectId: number, issue: number) => `/projects/${projectId}/issues/${issue}/notes`;

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'n');
  projects = {};
  for (const vis of [0, 10, 20]) {
    const p = await makeProject(s, cast.owner, `notes-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    projects[vis] = p;
  }
  pid = projects[0]!.id;
  issueId = (await insertIssue(s.ctx, pid, { title: 'Crash on start', authorId: cast.guest.id })).id;
});
afterAll(async () => { await s.close(); });

describe('POST /projects/:id/issues/:issue_id/notes', () => {
  it('creates a note: 201 with the Note shape', async () => {
    const r = await s.api('POST', notesUrl(pid, issueId), cast.developer, { body: 'Seen it too' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number), body: 'Seen it too', attachment: null,
      author: { id: cast.developer.id, username: cast.developer.username, name: cast.developer.username, state: 'active', avatar_url: expect.toSatisfy((v: unknown) => v === null || typeof v === 'string'), web_url: `http://gantry.test/${cast.developer.username}` },
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/), updated_at: r.body.created_at, system: false,
      noteable_id: issueId, noteable_type: 'Issue', upvote: false, downvote: false,
    });
  });
  it('400 "body" not given for a missing or blank body, nothing stored', async () => {
    const before = await notesOf(issueId);
    for (const payload of [{}, { body: '' }, { body: '   ' }, undefined]) {
      const r = await s.api('POST', notesUrl(pid, issueId), cast.developer, payload);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: '400 (Bad request) "body" not given' });
    }
    expect(await notesOf(issueId)).toBe(before);
  });
  it('refuses a 1 MB note with 400 and stores nothing (no note, event or delivery)', async () => {
    const before = [await notesOf(issueId), await count('SELECT count(*) AS n FROM events'), await count('SELECT count(*) AS n FROM hook_deliveries')];
    const r = await s.api('POST', notesUrl(pid, issueId), cast.developer, { body: 'x'.repeat(1024 * 1024) });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: { note: ['is too long (maximum is 1000000 characters)'] } });
    expect([await notesOf(issueId), await count('SELECT count(*) AS n FROM events'), await count('SELECT count(*) AS n FROM hook_deliveries')]).toEqual(before);
  });
  it('accepts a note of exactly the maximum length', async () => {
    const r = await s.api('POST', notesUrl(pid, issueId), cast.developer, { body: 'y'.repeat(1_000_000) });
    expect(r.status).toBe(201);
    expect(r.body.body.length).toBe(1_000_000);
    await s.api('DELETE', `${notesUrl(pid, issueId)}/${r.body.id}`, cast.developer);
  });
  it('404 `404 Not found` for an unknown or foreign issue, 404 Project for an unknown project', async () => {
    expect((await s.api('POST', notesUrl(pid, 999999), cast.developer, { body: 'x' })).body).toEqual({ message: '404 Not found' });
    const other = (await insertIssue(s.ctx, projects[20]!.id)).id;
    expect((await s.api('POST', notesUrl(pid, other), cast.developer, { body: 'x' })).body).toEqual({ message: '404 Not found' });
    expect((await s.api('POST', notesUrl(pid, 'abc' as unknown as number), cast.developer, { body: 'x' })).status).toBe(404);
    expect((await s.api('POST', notesUrl(999999, issueId), cast.developer, { body: 'x' })).body).toEqual({ message: '404 Project Not Found' });
  });
  it('created_at is applied for the owner and admins, ignored for others, 400 when invalid', async () => {
    const at = '2016-03-04T05:06:07.000Z';
    const owner = await s.api('POST', notesUrl(pid, issueId), cast.owner, { body: 'backdated', created_at: at });
    expect(owner.status).toBe(201);
    expect(owner.body.created_at).toBe(at);
    const admin = await s.api('POST', notesUrl(pid, issueId), cast.admin, { body: 'backdated', created_at: '2016-03-04T06:06:07+01:00' });
    expect(admin.body.created_at).toBe(at);
    const dev = await s.api('POST', notesUrl(pid, issueId), cast.master, { body: 'not backdated', created_at: at });
    expect(dev.status).toBe(201);
    expect(dev.body.created_at).not.toBe(at);
    const bad = await s.api('POST', notesUrl(pid, issueId), cast.owner, { body: 'x', created_at: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: { created_at: ['is invalid'] } });
  });
  it('a body that is only an emoji awards it instead (8.x), once; the author gets a plain note', async () => {
    const issue = (await insertIssue(s.ctx, pid, { authorId: cast.reporter.id })).id;
    const r = await s.api('POST', notesUrl(pid, issue), cast.developer, { body: ':+1:' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number), name: 'thumbsup', user: expect.objectContaining({ id: cast.developer.id }), created_at: expect.any(String),
      updated_at: expect.any(String), awardable_id: issue, awardable_type: 'Issue',
    });
    expect(await notesOf(issue)).toBe(0);
    const again = await s.api('POST', notesUrl(pid, issue), cast.developer, { body: ':thumbsup:' });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Note {:name=>["has already been taken"]} Not Found' });
    const own = await s.api('POST', notesUrl(pid, issue), cast.reporter, { body: ':+1:' });
    expect(own.status).toBe(201);
    expect(own.body).toMatchObject({ body: ':+1:', noteable_type: 'Issue' });
    const unknown = await s.api('POST', notesUrl(pid, issue), cast.developer, { body: ':not_an_emoji_name:' });
    expect(unknown.body.body).toBe(':not_an_emoji_name:');
  });
  it('touches the issue updated_at and records a `commented on` event with the note', async () => {
    const issue = (await insertIssue(s.ctx, pid, { title: 'Touch me' })).id;
    await s.ctx.data.run(`UPDATE issues SET updated_at = '2015-01-01T00:00:00.000Z' WHERE id = ?`, [issue]);
    const r = await s.api('POST', notesUrl(pid, issue), cast.guest, { body: 'me too' });
    const updated = (await sqlValue<string>(s.ctx, 'SELECT updated_at FROM issues WHERE id = ?', [issue]))!;
    expect(updated > '2015-01-01T00:00:00.000Z').toBe(true);
    const stored = await sqlRows(s.ctx, `SELECT action, target_type, target_title, author_id, note_id FROM events WHERE target_type = 'Note' AND target_id = ?`, [r.body.id]);
    expect(stored).toEqual([{ action: 'commented', target_type: 'Note', target_title: 'Touch me', author_id: cast.guest.id, note_id: r.body.id }]);
    const ev = await s.api('GET', `/projects/${pid}/events`, cast.guest);
    const comment = ev.body.find((e: { action_name: string; target_id: number }) => e.action_name === 'commented on' && e.target_id === r.body.id);
    expect(comment).toMatchObject({ target_type: 'Note', target_title: 'Touch me', author_id: cast.guest.id, author_username: cast.guest.username });
    expect(comment.note).toEqual(r.body);
  });
  it('a mention in a note gives the mentioned user a `mentioned` todo with the note id', async () => {
    const issue = (await insertIssue(s.ctx, pid, { title: 'Mention' })).id;
    const r = await s.api('POST', notesUrl(pid, issue), cast.developer, { body: `@${cast.reporter.username} please look, and @nosuchuser` });
    expect(r.status).toBe(201);
    const todos = await sqlRows(s.ctx, `SELECT user_id, action, note_id FROM todos WHERE target_type = 'Issue' AND target_id = ?`, [issue]);
    expect(todos).toEqual([{ user_id: cast.reporter.id, action: 'mentioned', note_id: r.body.id }]);
  });
});

describe('GET /projects/:id/issues/:issue_id/notes', () => {
  let issue: number;
  beforeAll(async () => {
    issue = (await insertIssue(s.ctx, pid, { title: 'Paged' })).id;
    for (let i = 1; i <= 4; i++) await s.api('POST', notesUrl(pid, issue), cast.guest, { body: `note ${i}` });
    await createSystemNote(s.ctx.data, { projectId: pid, noteableType: 'Issue', noteableId: issue, authorId: cast.master.id, body: 'Status changed to closed' });
  });
  it('lists notes in database order, system notes included', async () => {
    const r = await s.api('GET', notesUrl(pid, issue), cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body.map((n: { body: string }) => n.body)).toEqual(['note 1', 'note 2', 'note 3', 'note 4', 'Status changed to closed']);
    expect(r.body.map((n: { system: boolean }) => n.system)).toEqual([false, false, false, false, true]);
    expect(r.body[4].author.id).toBe(cast.master.id);
    expect(r.headers).toMatchObject({ 'x-total': '5', 'x-total-pages': '1', 'x-page': '1', 'x-per-page': '20', 'x-next-page': '', 'x-prev-page': '' });
  });
  it('paginates with the X-* and Link headers', async () => {
    const r = await s.api('GET', `${notesUrl(pid, issue)}?per_page=2&page=2`, cast.reporter);
    expect(r.body.map((n: { body: string }) => n.body)).toEqual(['note 3', 'note 4']);
    expect(r.headers).toMatchObject({ 'x-total': '5', 'x-total-pages': '3', 'x-page': '2', 'x-per-page': '2', 'x-next-page': '3', 'x-prev-page': '1' });
    expect(String(r.headers.link)).toContain('rel="next"');
    expect(String(r.headers.link)).toContain(`/api/v3/projects/${pid}/issues/${issue}/notes?id=${pid}&issue_id=${issue}&page=3&per_page=2>; rel="next"`);
    const past = await s.api('GET', `${notesUrl(pid, issue)}?per_page=2&page=9`, cast.reporter);
    expect(past.body).toEqual([]);
    const empty = await s.api('GET', notesUrl(pid, (await insertIssue(s.ctx, pid)).id), cast.reporter);
    expect(empty.body).toEqual([]);
    expect(empty.headers).toMatchObject({ 'x-total': '0', 'x-total-pages': '0', 'x-page': '1' });
  });
  it('GET one note; 404 `404 Note Not Found` for an unknown note or one of another issue', async () => {
    const list = await s.api('GET', notesUrl(pid, issue), cast.reporter);
    const one = await s.api('GET', `${notesUrl(pid, issue)}/${list.body[0].id}`, cast.reporter);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(list.body[0]);
    expect((await s.api('GET', `${notesUrl(pid, issue)}/999999`, cast.reporter)).body).toEqual({ message: '404 Note Not Found' });
    expect((await s.api('GET', `${notesUrl(pid, issueId)}/${list.body[0].id}`, cast.reporter)).body).toEqual({ message: '404 Note Not Found' });
    expect((await s.api('GET', `${notesUrl(pid, 999999)}/${list.body[0].id}`, cast.reporter)).body).toEqual({ message: '404 Not found' });
  });
});

describe('with the issues API', () => {
  it('closing, reassigning and relabelling an issue write system notes; user_notes_count counts user notes only', async () => {
    const created = await s.api('POST', `/projects/${pid}/issues`, cast.reporter, { title: 'Via the API' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await s.api('POST', notesUrl(pid, id), cast.guest, { body: 'first' });
    expect((await s.api('PUT', `/projects/${pid}/issues/${id}`, cast.reporter, { state_event: 'close', assignee_id: cast.developer.id })).status).toBe(200);
    const notes = (await s.api('GET', notesUrl(pid, id), cast.reporter)).body as { body: string; system: boolean }[];
    expect(notes[0]).toMatchObject({ body: 'first', system: false });
    const system = notes.filter((n) => n.system).map((n) => n.body);
    expect(system).toEqual(expect.arrayContaining(['Status changed to closed', `Reassigned to @${cast.developer.username}`]));
    expect((await s.api('GET', `/projects/${pid}/issues/${id}`, cast.reporter)).body.user_notes_count).toBe(1);
  });
  // GET /projects/:id/events belongs to the events room, SQLite-only until it is ported
  it('comment events of a page show the notes of every issue, and none for a deleted note or issue', async () => {
    const p = projects[20]!.id;
    const made: { id: number; issue: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const issue = (await insertIssue(s.ctx, p, { title: `E${i}` })).id;
      made.push({ id: (await s.api('POST', notesUrl(p, issue), cast.developer, { body: `c${i}` })).body.id, issue });
    }
    await s.api('DELETE', `${notesUrl(p, made[1]!.issue)}/${made[1]!.id}`, cast.developer);
    await s.ctx.data.run(`UPDATE issues SET deleted_at = '2016-01-01T00:00:00.000Z' WHERE id = ?`, [made[2]!.issue]);
    const ev = (await s.api('GET', `/projects/${p}/events?per_page=100`, cast.nonMember)).body as { target_id: number; note?: { body: string } }[];
    const noteOf = (id: number) => ev.find((e) => e.target_id === id)?.note?.body;
    expect([noteOf(made[0]!.id), noteOf(made[1]!.id), noteOf(made[2]!.id)]).toEqual(['c0', undefined, undefined]);
  });
});

describe('PUT and DELETE /projects/:id/issues/:issue_id/notes/:note_id', () => {
  let issue: number;
  const note = async (as: TestUser, body = 'original') => (await s.api('POST', notesUrl(pid, issue), as, { body })).body.id as number;
  beforeAll(async () => { issue = (await insertIssue(s.ctx, pid, { authorId: cast.guest.id })).id; });

  it('the author edits their own note: 200 with the new body and updated_at', async () => {
    const id = await note(cast.guest);
    const r = await s.api('PUT', `${notesUrl(pid, issue)}/${id}`, cast.guest, { body: 'edited' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, body: 'edited', system: false, author: { id: cast.guest.id } });
    expect(r.body.updated_at >= r.body.created_at).toBe(true);
    expect(await sqlValue(s.ctx, 'SELECT updated_by_id FROM notes WHERE id = ?', [id])).toBe(cast.guest.id);
  });
  it('others below master get 403; masters, owners and admins may edit', async () => {
    const id = await note(cast.guest);
    for (const who of [cast.reporter, cast.developer]) {
      const r = await s.api('PUT', `${notesUrl(pid, issue)}/${id}`, who, { body: 'hijack' });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ message: '403 Forbidden' });
    }
    for (const who of [cast.master, cast.owner, cast.admin]) {
      expect((await s.api('PUT', `${notesUrl(pid, issue)}/${id}`, who, { body: `by ${who.username}` })).status).toBe(200);
    }
    expect((await s.api('GET', `${notesUrl(pid, issue)}/${id}`, cast.guest)).body.body).toBe('by root');
  });
  it('400 for a missing body, 404 for an unknown note, 400 for a system note (not changed)', async () => {
    const id = await note(cast.guest);
    expect((await s.api('PUT', `${notesUrl(pid, issue)}/${id}`, cast.guest, {})).body).toEqual({ message: '400 (Bad request) "body" not given' });
    expect((await s.api('PUT', `${notesUrl(pid, issue)}/999999`, cast.guest, { body: 'x' })).body).toEqual({ message: '404 Not found' });
    const sys = await createSystemNote(s.ctx.data, { projectId: pid, noteableType: 'Issue', noteableId: issue, authorId: cast.master.id, body: 'Milestone removed' });
    const r = await s.api('PUT', `${notesUrl(pid, issue)}/${sys.id}`, cast.master, { body: 'rewritten' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: { note: ['system notes cannot be edited'] } });
    expect((await s.api('GET', `${notesUrl(pid, issue)}/${sys.id}`, cast.master)).body.body).toBe('Milestone removed');
  });
  it('refuses a 1 MB edit with 400 and keeps the old body', async () => {
    const id = await note(cast.guest, 'keep me');
    const r = await s.api('PUT', `${notesUrl(pid, issue)}/${id}`, cast.guest, { body: 'z'.repeat(1024 * 1024) });
    expect(r.status).toBe(400);
    expect((await s.api('GET', `${notesUrl(pid, issue)}/${id}`, cast.guest)).body.body).toBe('keep me');
  });
  it('DELETE: the author or a master, 200 with the deleted Note; 403 for others; 404 after', async () => {
    const id = await note(cast.developer, 'to go');
    const denied = await s.api('DELETE', `${notesUrl(pid, issue)}/${id}`, cast.reporter);
    expect(denied.status).toBe(403);
    const r = await s.api('DELETE', `${notesUrl(pid, issue)}/${id}`, cast.developer);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, body: 'to go', noteable_id: issue, noteable_type: 'Issue' });
    expect((await s.api('GET', `${notesUrl(pid, issue)}/${id}`, cast.developer)).body).toEqual({ message: '404 Note Not Found' });
    expect((await s.api('DELETE', `${notesUrl(pid, issue)}/${id}`, cast.developer)).body).toEqual({ message: '404 Not found' });
    const other = await note(cast.guest);
    expect((await s.api('DELETE', `${notesUrl(pid, issue)}/${other}`, cast.master)).status).toBe(200);
  });
  it('deleting a note removes its award emoji', async () => {
    const id = await note(cast.guest);
    expect((await s.api('POST', `${notesUrl(pid, issue)}/${id}/award_emoji`, cast.reporter, { name: 'tada' })).status).toBe(201);
    await s.api('DELETE', `${notesUrl(pid, issue)}/${id}`, cast.guest);
    expect(await count(`SELECT count(*) AS n FROM award_emoji WHERE awardable_type = 'Note' AND awardable_id = ?`, id)).toBe(0);
  });
});

describe('authorization matrix', () => {
  const issues: Record<number, number> = {};
  beforeAll(async () => { for (const vis of [0, 10, 20]) issues[vis] = (await insertIssue(s.ctx, projects[vis]!.id, { authorId: cast.owner.id })).id; });

  for (const vis of [0, 10, 20]) {
    it(`reads and writes on a ${['private', '', 'internal', '', 'public'][vis / 5]} project`, async () => {
      const p = projects[vis]!.id;
      for (const actor of ACTORS) {
        const who = userOf(actor);
        const list = await s.api('GET', notesUrl(p, issues[vis]!), who);
        expect([actor, list.status]).toEqual([actor, expectedStatus(actor, vis, 10, 200, true)]);
        const post = await s.api('POST', notesUrl(p, issues[vis]!), who, { body: `from ${actor}` });
        expect([actor, post.status]).toEqual([actor, expectedStatus(actor, vis, 10, 201, true)]);
        if (post.status === 201) {
          const one = await s.api('GET', `${notesUrl(p, issues[vis]!)}/${post.body.id}`, who);
          expect(one.status).toBe(200);
          // the author edits and deletes their own note whatever their level
          expect((await s.api('PUT', `${notesUrl(p, issues[vis]!)}/${post.body.id}`, who, { body: 'edited' })).status).toBe(200);
          expect((await s.api('DELETE', `${notesUrl(p, issues[vis]!)}/${post.body.id}`, who)).status).toBe(200);
        }
      }
    });
  }

  it('editing and deleting others\' notes needs master or more (admin_note)', async () => {
    const p = projects[20]!.id;
    const issue = issues[20]!;
    const id = (await s.api('POST', notesUrl(p, issue), cast.guest, { body: 'mine' })).body.id;
    const expectations: [Actor, number][] = [
      ['nonMember', 403], ['external', 403], ['reporter', 403], ['developer', 403], ['master', 200], ['owner', 200], ['admin', 200],
    ];
    for (const [actor, status] of expectations) {
      expect([actor, (await s.api('PUT', `${notesUrl(p, issue)}/${id}`, userOf(actor), { body: actor })).status]).toEqual([actor, status]);
    }
    expect((await s.api('DELETE', `${notesUrl(p, issue)}/${id}`, cast.developer)).status).toBe(403);
    expect((await s.api('DELETE', `${notesUrl(p, issue)}/${id}`, cast.master)).status).toBe(200);
  });

  it('a confidential issue: only its author, assignee, reporters and up and admins read or write its notes', async () => {
    const p = projects[20]!.id;
    const assignee = await s.user('nassignee');
    const issue = (await insertIssue(s.ctx, p, { confidential: true, authorId: cast.guest.id, assigneeId: assignee.id })).id;
    let secret = (await s.api('POST', notesUrl(p, issue), cast.master, { body: 'secret' })).body.id;
    const other = await s.user('nguest2');
    await addMemberAsync(s.ctx, { type: 'Project', id: p }, other.id, 10);
    const cases: [TestUser, number][] = [
      [cast.nonMember, 404], [cast.external, 404], [other, 404], [cast.guest, 200], [assignee, 200], [cast.reporter, 200], [cast.admin, 200], [cast.master, 200],
    ];
    for (const [who, status] of cases) {
      const list = await s.api('GET', notesUrl(p, issue), who);
      expect([who.username, list.status]).toEqual([who.username, status]);
      if (status === 404) expect(list.body).toEqual({ message: '404 Not found' });
      expect([who.username, (await s.api('GET', `${notesUrl(p, issue)}/${secret}`, who)).status]).toEqual([who.username, status]);
      expect([who.username, (await s.api('POST', notesUrl(p, issue), who, { body: 'hi' })).status]).toEqual([who.username, status === 200 ? 201 : 404]);
      expect([who.username, (await s.api('DELETE', `${notesUrl(p, issue)}/${secret}`, who)).status])
        .toEqual([who.username, status === 404 ? 404 : who === cast.master || who === cast.admin ? 200 : 403]);
      if (who === cast.admin) secret = (await s.api('POST', notesUrl(p, issue), cast.master, { body: 'secret again' })).body.id;
    }
  });

  it('comment events on a confidential issue are shown (with the note) only to those who may read it', async () => {
    const p = projects[20]!.id;
    const issue = (await insertIssue(s.ctx, p, { confidential: true, authorId: cast.reporter.id })).id;
    const note = (await s.api('POST', notesUrl(p, issue), cast.reporter, { body: 'hidden note' })).body;
    const find = (body: { note?: { id: number }; target_id: number }[]) => body.find((e) => e.target_id === note.id);
    expect(find((await s.api('GET', `/projects/${p}/events?per_page=100`, cast.reporter)).body)!.note).toMatchObject({ id: note.id });
    // the whole event is left out: its target_title is the confidential issue's title (policy visibleEventsSql)
    expect(find((await s.api('GET', `/projects/${p}/events?per_page=100`, cast.nonMember)).body)).toBeUndefined();
  });

  it('issues disabled on the project: 404 for the notes of its issues', async () => {
    const p = await makeProject(s, cast.owner, 'no-issues', { visibility: 20, extra: { issues_enabled: false } });
    const issue = (await insertIssue(s.ctx, p.id)).id;
    expect((await s.api('GET', notesUrl(p.id, issue), cast.owner)).status).toBe(404);
    expect((await s.api('POST', notesUrl(p.id, issue), cast.owner, { body: 'x' })).status).toBe(404);
  });
});

// The delivery worker belongs to the hooks room (its port is another's); what this room queues is checked on both engines above.
describe('note webhook', () => {
  let recv: HookReceiver;
  let worker: HookDeliveryWorker;
  beforeAll(async () => {
    recv = await startReceiver();
    worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: 20, maxAttempts: 2, timeoutMs: 2000, concurrency: 1, log: () => undefined });
  });
  afterAll(async () => { await worker.stop(); await recv.stop(); });

  it('delivers the 8.x note payload with the issue, only to hooks with note_events', async () => {
    const p = projects[10]!;
    expect((await s.api('POST', `/projects/${p.id}/hooks`, cast.owner, { url: `${recv.url}/notes`, note_events: true, push_events: false })).status).toBe(201);
    expect((await s.api('POST', `/projects/${p.id}/hooks`, cast.owner, { url: `${recv.url}/other`, issues_events: true })).status).toBe(201);
    const issue = await insertIssue(s.ctx, p.id, { title: 'Hooked issue', authorId: cast.owner.id });
    const note = (await s.api('POST', notesUrl(p.id, issue.id), cast.developer, { body: 'hook me' })).body;
    await waitUntil(() => recv.to('/notes').length >= 1, 'the note hook delivery');
    const req = recv.to('/notes')[0]!;
    expect(req.headers['x-gitlab-event']).toBe('Note Hook');
    const body = req.json();
    expect(body).toMatchObject({
      object_kind: 'note',
      user: { name: cast.developer.username, username: cast.developer.username },
      project_id: p.id,
      project: { path_with_namespace: p.path_with_namespace, web_url: `http://gantry.test/${p.path_with_namespace}`, visibility_level: 10 },
      repository: { name: 'notes-10', homepage: `http://gantry.test/${p.path_with_namespace}` },
      object_attributes: {
        id: note.id, note: 'hook me', noteable_type: 'Issue', noteable_id: issue.id, author_id: cast.developer.id, project_id: p.id, system: false,
        url: `http://gantry.test/${p.path_with_namespace}/issues/${issue.iid}#note_${note.id}`,
      },
      issue: { id: issue.id, iid: issue.iid, title: 'Hooked issue', project_id: p.id, state: 'opened', author_id: cast.owner.id },
    });
    expect(recv.to('/other')).toEqual([]);
  });
});

describe('notes at once, and what a note queues', () => {
  it('a note on an issue deleted meanwhile: 404, nothing written', async () => {
    const issue = (await insertIssue(s.ctx, pid, { title: 'Going away', authorId: cast.guest.id })).id;
    const [note, del] = await Promise.all([
      s.api('POST', notesUrl(pid, issue), cast.reporter, { body: 'last words' }),
      s.api('DELETE', `/projects/${pid}/issues/${issue}`, cast.owner),
    ]);
    expect(del.status).toBe(200);
    expect([201, 404]).toContain(note.status);
    if (note.status === 404) expect(await notesOf(issue)).toBe(0);
    // once the issue is gone, always 404
    expect((await s.api('POST', notesUrl(pid, issue), cast.reporter, { body: 'too late' })).status).toBe(404);
  });

  it('two deletes of one note at once: one 200, one 404', async () => {
    const issue = (await insertIssue(s.ctx, pid, { authorId: cast.guest.id })).id;
    const id = (await s.api('POST', notesUrl(pid, issue), cast.master, { body: 'twice' })).body.id;
    const rs = await Promise.all([0, 1].map(() => s.api('DELETE', `${notesUrl(pid, issue)}/${id}`, cast.master)));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 404]);
  });

  it('the same emoji-only note twice at once: one award (201), one 404 with 8.x\'s message', async () => {
    const issue = (await insertIssue(s.ctx, pid, { authorId: cast.guest.id })).id;
    const rs = await Promise.all([0, 1].map(() => s.api('POST', notesUrl(pid, issue), cast.reporter, { body: ':tada:' })));
    expect(rs.map((r) => r.status).sort()).toEqual([201, 404]);
    expect(rs.find((r) => r.status === 404)!.body).toEqual({ message: '404 Note {:name=>["has already been taken"]} Not Found' });
    expect(await count(`SELECT COUNT(*) AS n FROM award_emoji WHERE awardable_type = 'Issue' AND awardable_id = ? AND name = 'tada'`, issue)).toBe(1);
  });

  it('queues the 8.x note payload for the hooks with note_events only', async () => {
    const p = await makeProject(s, cast.owner, 'notes-queued', { visibility: 0 });
    const noteHook = await addProjectHook(s, p.id, cast.owner, { url: 'http://127.0.0.1:9/notes', note_events: true, push_events: false });
    const otherHook = await addProjectHook(s, p.id, cast.owner, { url: 'http://127.0.0.1:9/other', issues_events: true });
    const issue = await insertIssue(s.ctx, p.id, { title: 'Queued', authorId: cast.owner.id });
    const r = await s.api('POST', notesUrl(p.id, issue.id), cast.owner, { body: 'hooked' });
    expect(r.status).toBe(201);
    const payloads = (await sqlRows(s.ctx, `SELECT payload FROM hook_deliveries WHERE hook_id = ?`, [noteHook.body.id])).map((d) => JSON.parse(d.payload as string));
    expect(payloads).toHaveLength(1);
    expect(payloads[0]).toMatchObject({
      object_kind: 'note', project_id: p.id, user: { username: cast.owner.username },
      object_attributes: { id: r.body.id, note: 'hooked', noteable_type: 'Issue', url: expect.stringMatching(new RegExp(`/issues/${issue.iid}#note_${r.body.id}$`)) },
      issue: { id: issue.id, iid: issue.iid, title: 'Queued' },
    });
    expect(await count(`SELECT COUNT(*) AS n FROM hook_deliveries WHERE hook_id = ?`, otherHook.body.id)).toBe(0);
  });
});

describe('live issue counts (kept by triggers on both engines)', () => {
  it('equal a recount of the live issues after the writes of this file', async () => {
    const { kept, recount } = await issueCountsAndRecount(s.ctx);
    expect(recount.length).toBeGreaterThan(0);
    expect(kept).toEqual(recount);
  });
});
