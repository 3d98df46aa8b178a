/** POST /projects/:id/issues/:issue_id/move: the spec's rules, system notes, labels and milestone by title, hooks. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeProject } from '../helpers/fixtures.js';
import { addProjectHook, insertLabel, insertMilestone, issueCountsAndRecount, sqlRows } from '../helpers/collaboration.js';

let s: TestServer;
let alice: TestUser;
let rep: TestUser;
let from: { id: number; path_with_namespace: string };
let to: { id: number; path_with_namespace: string };

const rows = (sql: string, ...args: unknown[]) => sqlRows(s.ctx, sql, args);

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { projects_limit: 100 });
  rep = await s.user('rep');
  from = await makeProject(s, alice, 'from');
  to = await makeProject(s, alice, 'to');
  await addMemberAsync(s.ctx, { type: 'Project', id: from.id }, rep.id, 20);
  await addMemberAsync(s.ctx, { type: 'Project', id: to.id }, rep.id, 10);
});
afterAll(async () => s.close());

describe('POST /projects/:id/issues/:issue_id/move', () => {
  it('moves: 201 with the new issue, same-titled label and milestone, notes, old issue closed with moved_to_id', async () => {
    const hook = await addProjectHook(s, to.id, alice, { url: 'http://127.0.0.1:9/h', issues_events: true, push_events: false });
    const oldHook = await addProjectHook(s, from.id, alice, { url: 'http://127.0.0.1:9/h', issues_events: true, push_events: false });
    const m = await insertMilestone(s.ctx, from.id, { title: 'v1' });
    const target = await insertMilestone(s.ctx, to.id, { title: 'v1' });
    await insertLabel(s.ctx, to.id, 'bug');
    const created = await s.api('POST', `/projects/${from.id}/issues`, alice, { title: 'Travel', description: 'desc', labels: 'bug,only-here', milestone_id: m.id, assignee_id: rep.id });
    await s.ctx.data.run(`INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, created_at, updated_at)
      VALUES (?, 'Issue', ?, 'a comment', ?, FALSE, '2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z')`, [from.id, created.body.id, rep.id]);
    const r = await s.api('POST', `/projects/${from.id}/issues/${created.body.id}/move`, alice, { to_project_id: to.id });
    expect(r.status).toBe(201);
    expect((await rows(`SELECT note, author_id, project_id FROM notes WHERE noteable_id = ? AND system = FALSE`, r.body.id))).toEqual([{ note: 'a comment', author_id: rep.id, project_id: to.id }]);
    expect(r.body.user_notes_count).toBe(1);
    expect(r.body).toMatchObject({
      project_id: to.id, iid: 1, title: 'Travel', description: 'desc', state: 'opened', labels: ['bug'], milestone: { id: target.id },
      assignee: { id: rep.id }, author: { id: alice.id },
    });
    expect(r.body.id).not.toBe(created.body.id);
    const old = (await rows(`SELECT state, moved_to_id FROM issues WHERE id = ?`, created.body.id))[0];
    expect(old).toEqual({ state: 'closed', moved_to_id: r.body.id });
    const oldNotes = (await rows(`SELECT note FROM notes WHERE noteable_id = ? AND noteable_type = 'Issue' AND system = TRUE ORDER BY id`, created.body.id)).map((n) => n.note);
    expect(oldNotes).toEqual(expect.arrayContaining([`Moved to ${to.path_with_namespace}#1`, 'Status changed to closed']));
    const newNotes = (await rows(`SELECT note FROM notes WHERE noteable_id = ? AND noteable_type = 'Issue' AND system = TRUE ORDER BY id`, r.body.id)).map((n) => n.note);
    expect(newNotes).toContain(`Moved from ${from.path_with_namespace}#${created.body.iid}`);
    const newHooks = (await rows(`SELECT payload FROM hook_deliveries WHERE hook_id = ?`, hook.body.id)).map((d) => JSON.parse(d.payload));
    expect(newHooks.map((d) => d.object_attributes.action)).toEqual(['open']);
    const oldHooks = (await rows(`SELECT payload FROM hook_deliveries WHERE hook_id = ?`, oldHook.body.id)).map((d) => JSON.parse(d.payload).object_attributes.action);
    expect(oldHooks).toEqual(['open', 'close']);
    // the old issue is still readable, closed
    expect((await s.api('GET', `/projects/${from.id}/issues/${created.body.id}`, alice)).body.state).toBe('closed');
  });

  it('keeps a closed issue closed', async () => {
    const c = await s.api('POST', `/projects/${from.id}/issues`, alice, { title: 'Closed traveller' });
    await s.api('PUT', `/projects/${from.id}/issues/${c.body.id}`, alice, { state_event: 'close' });
    const r = await s.api('POST', `/projects/${from.id}/issues/${c.body.id}/move`, alice, { to_project_id: to.id });
    expect(r.status).toBe(201);
    expect(r.body.state).toBe('closed');
  });

  it('answers 400 for the same project or missing rights, 404 for unknown things, writing nothing', async () => {
    const c = await s.api('POST', `/projects/${from.id}/issues`, alice, { title: 'Stay' });
    const count = async () => (await rows(`SELECT COUNT(*) AS n FROM issues`))[0]!.n;
    const before = await count();
    let r = await s.api('POST', `/projects/${from.id}/issues/${c.body.id}/move`, alice, { to_project_id: from.id });
    expect(r).toMatchObject({ status: 400, body: { message: 'Cannot move issue to project it originates from!' } });
    // rep is reporter in `from` but only guest in `to`
    r = await s.api('POST', `/projects/${from.id}/issues/${c.body.id}/move`, rep, { to_project_id: to.id });
    expect(r).toMatchObject({ status: 400, body: { message: 'Cannot move issue due to insufficient permissions!' } });
    r = await s.api('POST', `/projects/${from.id}/issues/${c.body.id}/move`, alice, {});
    expect(r).toMatchObject({ status: 400, body: { message: '400 (Bad request) "to_project_id" not given' } });
    r = await s.api('POST', `/projects/${from.id}/issues/${c.body.id}/move`, alice, { to_project_id: 999999 });
    expect(r).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    const hidden = await makeProject(s, await s.user('stranger', { projects_limit: 5 }), 'hidden');
    r = await s.api('POST', `/projects/${from.id}/issues/${c.body.id}/move`, alice, { to_project_id: hidden.id });
    expect(r.status).toBe(404);
    r = await s.api('POST', `/projects/${from.id}/issues/999999/move`, alice, { to_project_id: to.id });
    expect(r.status).toBe(404);
    expect((await s.api('POST', `/projects/${from.id}/issues/${c.body.id}/move`, null, { to_project_id: to.id })).status).toBe(401);
    expect(await count()).toBe(before);
    expect((await rows(`SELECT state FROM issues WHERE id = ?`, c.body.id))[0]!.state).toBe('opened');
  });
});

describe('moves at once', () => {
  it('a move and a delete of one issue at once: the move answers 201 or 404, never 500', async () => {
    const c = await s.api('POST', `/projects/${from.id}/issues`, alice, { title: 'race away' });
    const [move, del] = await Promise.all([
      s.api('POST', `/projects/${from.id}/issues/${c.body.id}/move`, alice, { to_project_id: to.id }),
      s.api('DELETE', `/projects/${from.id}/issues/${c.body.id}`, alice),
    ]);
    expect([201, 404]).toContain(move.status);
    expect([200, 404]).toContain(del.status);
  });
});

describe('live issue counts (kept by triggers on both engines)', () => {
  it('equal a recount of the live issues after the writes of this file', async () => {
    const { kept, recount } = await issueCountsAndRecount(s.ctx);
    expect(recount.length).toBeGreaterThan(0);
    expect(kept).toEqual(recount);
  });
});
