/** Issues API: shapes, filters, pagination, writes with their notes/events/todos/hooks, and bad input. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeGroupAsync, makeProject } from '../helpers/fixtures.js';
import { addProjectHook, insertIssue, insertMilestone, issueCountsAndRecount, projectEventsOf, sqlRows, sqlValue } from '../helpers/collaboration.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let project: { id: number; path_with_namespace: string };

const rows = (sql: string, ...args: unknown[]) => sqlRows(s.ctx, sql, args);
const count = async (sql: string, ...args: unknown[]) => (await sqlValue(s.ctx, sql, args))!;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { projects_limit: 100 });
  bob = await s.user('bob');
  project = await makeProject(s, alice, 'tracker');
  await addMemberAsync(s.ctx, { type: 'Project', id: project.id }, bob.id, 30);
});
afterAll(async () => s.close());

function expectIssueShape(i: Record<string, unknown>): void {
  expect(i).toMatchObject({
    id: expect.any(Number), iid: expect.any(Number), project_id: project.id, title: expect.any(String), state: expect.stringMatching(/^(opened|closed)$/),
    created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/), updated_at: expect.any(String), labels: expect.any(Array),
    subscribed: expect.any(Boolean), user_notes_count: expect.any(Number), upvotes: expect.any(Number), downvotes: expect.any(Number),
    confidential: expect.any(Boolean), web_url: expect.stringContaining('/issues/'),
  });
  expect(i.author).toMatchObject({ id: expect.any(Number), username: expect.any(String), name: expect.any(String), state: 'active', web_url: expect.any(String) });
}

describe('POST /projects/:id/issues', () => {
  it('creates an issue with labels on the fly, a milestone, an assignee and a due date (201)', async () => {
    const m = await insertMilestone(s.ctx, project.id, { title: 'v1.0' });
    const r = await s.api('POST', `/projects/${project.id}/issues`, alice, {
      title: 'First', description: 'Hello @bob', labels: 'bug, ui', milestone_id: m.id, assignee_id: bob.id, due_date: '2030-01-31',
    });
    expect(r.status).toBe(201);
    expectIssueShape(r.body);
    expect(r.body).toMatchObject({
      iid: 1, title: 'First', description: 'Hello @bob', state: 'opened', labels: ['bug', 'ui'], due_date: '2030-01-31', confidential: false,
      assignee: { id: bob.id, username: 'bob' }, author: { id: alice.id }, subscribed: true, user_notes_count: 0,
      web_url: `http://gantry.test/${project.path_with_namespace}/issues/1`,
    });
    expect(r.body.milestone).toMatchObject({ id: m.id, title: 'v1.0', state: 'active' });
    expect((await count(`SELECT COUNT(*) AS n FROM labels WHERE project_id = ? AND title IN ('bug','ui') AND color = '#428BCA'`, project.id))).toBe(2);
    // assigned todo for bob (the mention of the assignee gives no second pending todo)
    expect((await rows(`SELECT action FROM todos WHERE user_id = ? AND target_id = ?`, bob.id, r.body.id)).map((t) => t.action)).toContain('assigned');
    const events = { body: await projectEventsOf(s, project.id, alice) };
    expect(events.body[0]).toMatchObject({ action_name: 'opened', target_type: 'Issue', target_id: r.body.id, target_title: 'First' });
  });

  it('counts iid per project and ignores created_at for non-owners, applies it for owners', async () => {
    const a = await s.api('POST', `/projects/${project.id}/issues`, bob, { title: 'Second', created_at: '2001-02-03T04:05:06Z' });
    expect(a.status).toBe(201);
    expect(a.body.iid).toBe(2);
    expect(a.body.created_at).not.toBe('2001-02-03T04:05:06.000Z');
    const b = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'Third', created_at: '2001-02-03T04:05:06Z' });
    expect(b.body.created_at).toBe('2001-02-03T04:05:06.000Z');
    const other = await makeProject(s, alice, 'other-tracker');
    const c = await s.api('POST', `/projects/${other.id}/issues`, alice, { title: 'Elsewhere' });
    expect(c.body.iid).toBe(1);
  });

  it('answers 400 "title" not given, and the validation body for bad values, writing nothing', async () => {
    const before = await count(`SELECT COUNT(*) AS n FROM issues`);
    const labelsBefore = await count(`SELECT COUNT(*) AS n FROM labels`);
    let r = await s.api('POST', `/projects/${project.id}/issues`, alice, {});
    expect(r).toMatchObject({ status: 400, body: { message: '400 (Bad request) "title" not given' } });
    r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: '  ' });
    expect(r.status).toBe(400);
    r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'x', due_date: '2030-02-31', labels: 'new-one' });
    expect(r).toMatchObject({ status: 400, body: { message: { due_date: ['is invalid'] } } });
    r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'x'.repeat(256) });
    expect(r.body.message.title[0]).toMatch(/too long/);
    r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'x', labels: 'fine,bad?label' });
    expect(r.status).toBe(400);
    expect(r.body.message.labels).toHaveProperty('bad?label');
    r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'x', assignee_id: 999999, labels: 'another' });
    expect(r).toMatchObject({ status: 400, body: { message: { assignee_id: ['is invalid'] } } });
    r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'x', assignee_id: 'abc' });
    expect(r.status).toBe(400);
    expect((await count(`SELECT COUNT(*) AS n FROM issues`))).toBe(before);
    expect((await count(`SELECT COUNT(*) AS n FROM labels`))).toBe(labelsBefore);
  });

  it('refuses a 1 MB description with 400 and stores nothing', async () => {
    const before = await count(`SELECT COUNT(*) AS n FROM issues`);
    const r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'Big', description: 'a'.repeat(1024 * 1024) });
    expect(r.status).toBe(400);
    expect(r.body.message.description[0]).toMatch(/too long/);
    expect((await count(`SELECT COUNT(*) AS n FROM issues`))).toBe(before);
  });

  it('creates a confidential issue; a later change writes the confidentiality note; mentions give todos', async () => {
    const carol = await s.user('carol');
    await addMemberAsync(s.ctx, { type: 'Project', id: project.id }, carol.id, 20);
    const r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'Hush', confidential: true, description: 'ping @carol and @nobody' });
    expect(r.status).toBe(201);
    expect(r.body.confidential).toBe(true);
    expect((await rows(`SELECT action FROM todos WHERE user_id = ? AND target_id = ?`, carol.id, r.body.id))).toEqual([{ action: 'mentioned' }]);
    const u = await s.api('PUT', `/projects/${project.id}/issues/${r.body.id}`, alice, { confidential: false });
    expect(u.body.confidential).toBe(false);
    expect((await rows(`SELECT note FROM notes WHERE noteable_id = ? AND system = TRUE`, r.body.id))).toEqual([{ note: 'Made the issue visible' }]);
  });

  it('silently sets an unknown milestone to none (8.x)', async () => {
    const r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'No such milestone', milestone_id: 424242 });
    expect(r.status).toBe(201);
    expect(r.body.milestone).toBeNull();
  });
});

describe('GET /projects/:id/issues/:issue_id', () => {
  it('answers the issue, 404 `Not found` for an unknown or foreign id', async () => {
    const { id } = await insertIssue(s.ctx, project.id, { title: 'Direct', authorId: alice.id });
    const r = await s.api('GET', `/projects/${project.id}/issues/${id}`, bob);
    expect(r.status).toBe(200);
    expectIssueShape(r.body);
    expect(r.body.subscribed).toBe(false);
    expect((await s.api('GET', `/projects/${project.id}/issues/999999`, bob))).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect((await s.api('GET', `/projects/${project.id}/issues/abc`, bob)).status).toBe(404);
    expect((await s.api('GET', `/projects/999999/issues/${id}`, bob))).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    const other = await makeProject(s, alice, 'other2');
    expect((await s.api('GET', `/projects/${other.id}/issues/${id}`, alice)).status).toBe(404);
    expect((await s.api('GET', `/projects/${project.id}/issues/${id}`, null)).status).toBe(401);
  });
});

describe('GET lists', () => {
  let p: { id: number; path_with_namespace: string };
  beforeAll(async () => {
    p = await makeProject(s, alice, 'listing');
    const m = await insertMilestone(s.ctx, p.id, { title: 'M1' });
    for (let n = 1; n <= 5; n++) {
      const r = await s.api('POST', `/projects/${p.id}/issues`, alice, {
        title: `L${n}`, labels: n % 2 ? 'odd' : 'even', ...(n <= 2 ? { milestone_id: m.id } : {}), created_at: `2020-01-0${n}T00:00:00Z`,
      });
      expect(r.status).toBe(201);
    }
    const third = (await s.api('GET', `/projects/${p.id}/issues?iid=3`, alice)).body[0];
    await s.api('PUT', `/projects/${p.id}/issues/${third.id}`, alice, { state_event: 'close' });
  });

  it('lists newest first with pagination headers', async () => {
    const r = await s.api('GET', `/projects/${p.id}/issues?per_page=2`, alice);
    expect(r.status).toBe(200);
    expect(r.body.map((i: { title: string }) => i.title)).toEqual(['L5', 'L4']);
    expect(r.headers).toMatchObject({ 'x-total': '5', 'x-total-pages': '3', 'x-per-page': '2', 'x-page': '1', 'x-next-page': '2', 'x-prev-page': '' });
    expect(String(r.headers.link)).toContain('rel="next"');
    const last = await s.api('GET', `/projects/${p.id}/issues?per_page=2&page=3`, alice);
    expect(last.body.map((i: { title: string }) => i.title)).toEqual(['L1']);
    const beyond = await s.api('GET', `/projects/${p.id}/issues?per_page=2&page=9`, alice);
    expect(beyond.body).toEqual([]);
    const asc = await s.api('GET', `/projects/${p.id}/issues?sort=asc&per_page=4&page=1`, alice);
    expect(asc.body.map((i: { title: string }) => i.title)).toEqual(['L1', 'L2', 'L3', 'L4']);
    const ascLast = await s.api('GET', `/projects/${p.id}/issues?sort=asc&per_page=2&page=2`, alice);
    expect(ascLast.body.map((i: { title: string }) => i.title)).toEqual(['L3', 'L4']);
  });

  it('filters by state, labels (any), milestone, iid and orders by updated_at', async () => {
    const titles = async (q: string) => (await s.api('GET', `/projects/${p.id}/issues?${q}`, alice)).body.map((i: { title: string }) => i.title);
    expect(await titles('state=closed')).toEqual(['L3']);
    expect(await titles('state=opened')).toEqual(['L5', 'L4', 'L2', 'L1']);
    expect(await titles('state=bogus')).toHaveLength(5);
    expect(await titles('labels=even')).toEqual(['L4', 'L2']);
    expect(await titles('labels=even,odd')).toHaveLength(5);
    expect(await titles('labels=nosuchlabel')).toEqual([]);
    expect(await titles('milestone=M1')).toEqual(['L2', 'L1']);
    expect(await titles('milestone=none-such')).toEqual([]);
    expect(await titles('iid=4')).toEqual(['L4']);
    expect(await titles('iid[]=4&iid[]=5')).toEqual(['L5', 'L4']);
    expect((await titles('order_by=updated_at'))[0]).toBe('L3');
    expect(await titles('order_by=bogus&sort=bogus')).toEqual(['L5', 'L4', 'L3', 'L2', 'L1']);
  });

  it('GET /issues lists the caller\'s authored issues with any-label filter', async () => {
    const r = await s.api('GET', '/issues?labels=even&per_page=100', alice);
    expect(r.status).toBe(200);
    expect(r.body.map((i: { title: string }) => i.title)).toEqual(['L4', 'L2']);
    const mine = await s.api('GET', '/issues', bob);
    expect(mine.body.every((i: { author: { id: number } }) => i.author.id === bob.id)).toBe(true);
    expect(mine.headers['x-total']).toBe(String(mine.body.length));
    expect((await s.api('GET', '/issues', null)).status).toBe(401);
    // an admin's own issues in a project with issues switched off are left out, X-Total included
    const off = await makeProject(s, s.root, 'root-off');
    await s.api('POST', `/projects/${off.id}/issues`, s.root, { title: 'root issue' });
    expect((await s.api('GET', '/issues', s.root)).headers['x-total']).toBe('1');
    await s.api('PUT', `/projects/${off.id}`, s.root, { issues_enabled: false });
    const rootList = await s.api('GET', '/issues', s.root);
    expect(rootList.body).toEqual([]);
    expect(rootList.headers['x-total']).toBe('0');
  });

  it('GET /groups/:id/issues needs ALL labels, and hides what the caller cannot read', async () => {
    const owner = await s.user('grpowner', { projects_limit: 10 });
    const gid = await makeGroupAsync(s.ctx, 'grp', { owner });
    const gp = await makeProject(s, owner, 'gproj', { namespaceId: gid });
    await s.api('POST', `/projects/${gp.id}/issues`, owner, { title: 'both', labels: 'a,b' });
    await s.api('POST', `/projects/${gp.id}/issues`, owner, { title: 'only a', labels: 'a' });
    const titles = async (q: string, as: TestUser = owner) => (await s.api('GET', `/groups/${gid}/issues?${q}`, as)).body.map((i: { title: string }) => i.title);
    expect(await titles('labels=a,b')).toEqual(['both']);
    expect(await titles('labels=a')).toEqual(['only a', 'both']);
    expect(await titles('')).toEqual(['only a', 'both']);
    expect((await s.api('GET', `/groups/${gid}/issues`, bob)).status).toBe(404);
    expect((await s.api('GET', `/groups/999999/issues`, owner))).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
  });

  it('ignores the parameters a list does not declare (milestone[] on /issues, iid[] on a group were 500; found by the fuzzer)', async () => {
    const all = await s.api('GET', '/issues?per_page=100', alice);
    const odd = await s.api('GET', '/issues?per_page=100&milestone[]=a&milestone[]=b&iid[]=x', alice);
    expect(odd.status).toBe(200);
    expect(odd.body).toEqual(all.body);
    const gid = await makeGroupAsync(s.ctx, 'grp-odd', { owner: alice });
    const gp = await makeProject(s, alice, 'gproj-odd', { namespaceId: gid });
    await s.api('POST', `/projects/${gp.id}/issues`, alice, { title: 'in the group' });
    const group = await s.api('GET', `/groups/${gid}/issues?iid[]=a&iid[]=b`, alice);
    expect(group.status).toBe(200);
    expect(group.body.map((i: { title: string }) => i.title)).toEqual(['in the group']);
  });
});

describe('PUT /projects/:id/issues/:issue_id', () => {
  it('updates fields with system notes, closes and reopens with events, todos done and hooks', async () => {
    const hook = await addProjectHook(s, project.id, alice, { url: 'http://127.0.0.1:9/hook', issues_events: true, push_events: false });
    expect(hook.status).toBe(201);
    const created = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'Edit me', labels: 'old' });
    const id = created.body.id;
    const m = await insertMilestone(s.ctx, project.id, { title: 'v2' });
    let r = await s.api('PUT', `/projects/${project.id}/issues/${id}`, alice, {
      title: 'Edited', assignee_id: bob.id, milestone_id: m.id, labels: 'new', due_date: '2031-05-06', description: 'cc @bob',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ title: 'Edited', assignee: { id: bob.id }, milestone: { id: m.id }, labels: ['new'], due_date: '2031-05-06' });
    const notes = (await rows(`SELECT note FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ? AND system = TRUE ORDER BY id`, id)).map((n) => n.note);
    expect(notes).toEqual(expect.arrayContaining(['Changed title: **Edit me** → **Edited**', 'Reassigned to @bob', `Milestone changed to %${m.iid}`]));
    expect(notes.some((n) => /^Added ~\d+ and removed ~\d+ labels$/.test(n))).toBe(true);
    expect((await rows(`SELECT action, state FROM todos WHERE user_id = ? AND target_id = ?`, bob.id, id))).toEqual([{ action: 'assigned', state: 'pending' }]);

    // bob closes: his todo is done, a closed event and a close hook
    r = await s.api('PUT', `/projects/${project.id}/issues/${id}`, bob, { state_event: 'close' });
    expect(r.body.state).toBe('closed');
    expect((await rows(`SELECT state FROM todos WHERE user_id = ? AND target_id = ?`, bob.id, id))).toEqual([{ state: 'done' }]);
    r = await s.api('PUT', `/projects/${project.id}/issues/${id}`, bob, { state_event: 'reopen' });
    expect(r.body.state).toBe('opened');
    const events = await projectEventsOf(s, project.id, alice);
    expect(events.slice(0, 2).map((e: { action_name: string }) => e.action_name)).toEqual(['opened', 'closed']);
    const states = (await rows(`SELECT note FROM notes WHERE noteable_id = ? AND system = TRUE AND note LIKE 'Status%' ORDER BY id`, id)).map((n) => n.note);
    expect(states).toEqual(['Status changed to closed', 'Status changed to reopened']);

    const deliveries = (await rows(`SELECT payload FROM hook_deliveries WHERE hook_id = ? ORDER BY id`, hook.body.id)).map((d) => JSON.parse(d.payload));
    expect(deliveries.map((d) => d.object_attributes.action)).toEqual(['open', 'update', 'close', 'reopen']);
    const upd = deliveries[1];
    expect(upd).toMatchObject({
      object_kind: 'issue', user: { username: 'alice', name: 'alice' },
      project: { path_with_namespace: project.path_with_namespace, web_url: expect.any(String) },
      repository: { name: 'tracker', url: expect.any(String), homepage: expect.any(String) },
      object_attributes: { id, iid: created.body.iid, title: 'Edited', assignee_id: bob.id, state: 'opened', url: `http://gantry.test/${project.path_with_namespace}/issues/${created.body.iid}` },
      assignee: { username: 'bob' },
    });
    expect(upd.labels.map((l: { title: string }) => l.title)).toEqual(['new']);
    expect(deliveries[2].user.username).toBe('bob');
  });

  it('clears labels with labels= and writes nothing on bad input', async () => {
    const c = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'Labelled', labels: 'x1' });
    let r = await s.api('PUT', `/projects/${project.id}/issues/${c.body.id}`, alice, { labels: '' });
    expect(r.body.labels).toEqual([]);
    const before = await rows(`SELECT * FROM issues WHERE id = ?`, c.body.id);
    const notesBefore = await count(`SELECT COUNT(*) AS n FROM notes`);
    r = await s.api('PUT', `/projects/${project.id}/issues/${c.body.id}`, alice, { title: 'New title', state_event: 'explode' });
    expect(r).toMatchObject({ status: 400, body: { message: { state_event: ['is invalid'] } } });
    r = await s.api('PUT', `/projects/${project.id}/issues/${c.body.id}`, alice, { title: 'New', description: 'd'.repeat(1024 * 1024) });
    expect(r.status).toBe(400);
    expect((await rows(`SELECT * FROM issues WHERE id = ?`, c.body.id))).toEqual(before);
    expect((await count(`SELECT COUNT(*) AS n FROM notes`))).toBe(notesBefore);
  });

  it('applies updated_at for owners only', async () => {
    const c = await s.api('POST', `/projects/${project.id}/issues`, bob, { title: 'Timed' });
    let r = await s.api('PUT', `/projects/${project.id}/issues/${c.body.id}`, bob, { title: 'Timed 2', updated_at: '2002-01-01T00:00:00Z' });
    expect(r.body.updated_at).not.toBe('2002-01-01T00:00:00.000Z');
    r = await s.api('PUT', `/projects/${project.id}/issues/${c.body.id}`, alice, { title: 'Timed 3', updated_at: '2002-01-01T00:00:00Z' });
    expect(r.body.updated_at).toBe('2002-01-01T00:00:00.000Z');
  });
});

describe('DELETE, subscription and todo', () => {
  it('soft deletes for owners (200), 404 for others and for absent issues', async () => {
    const c = await s.api('POST', `/projects/${project.id}/issues`, bob, { title: 'Doomed' });
    expect((await s.api('DELETE', `/projects/${project.id}/issues/${c.body.id}`, bob))).toMatchObject({ status: 404 });
    const r = await s.api('DELETE', `/projects/${project.id}/issues/${c.body.id}`, alice);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: c.body.id, title: 'Doomed', deleted_at: expect.any(String) });
    expect((await s.api('GET', `/projects/${project.id}/issues/${c.body.id}`, alice)).status).toBe(404);
    expect((await s.api('DELETE', `/projects/${project.id}/issues/${c.body.id}`, alice)).status).toBe(404);
    expect((await s.api('DELETE', `/projects/${project.id}/issues/999999`, alice)).status).toBe(404);
    const list = await s.api('GET', `/projects/${project.id}/issues?per_page=100`, alice);
    expect(list.body.some((i: { id: number }) => i.id === c.body.id)).toBe(false);
    // the iid stays taken
    const next = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'After' });
    expect(next.body.iid).toBe(c.body.iid + 1);
  });

  it('subscribes (201/304) and unsubscribes (200/304)', async () => {
    const c = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'Watch' });
    const path = `/projects/${project.id}/issues/${c.body.id}/subscription`;
    let r = await s.api('POST', path, bob);
    expect(r.status).toBe(201);
    expect(r.body.subscribed).toBe(true);
    r = await s.api('POST', path, bob);
    expect(r.status).toBe(304);
    expect(r.text).toBe('');
    r = await s.api('DELETE', path, bob);
    expect(r.status).toBe(200);
    expect(r.body.subscribed).toBe(false);
    expect((await s.api('DELETE', path, bob)).status).toBe(304);
    // the author is subscribed implicitly
    expect((await s.api('POST', path, alice)).status).toBe(304);
    expect((await s.api('POST', `/projects/${project.id}/issues/999999/subscription`, bob)).status).toBe(404);
  });

  it('marks a todo (201), 304 when one is pending', async () => {
    const c = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'Todo me' });
    const path = `/projects/${project.id}/issues/${c.body.id}/todo`;
    const r = await s.api('POST', path, bob);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ action_name: 'marked', target_type: 'Issue', state: 'pending', target: { id: c.body.id } });
    expect((await s.api('POST', path, bob)).status).toBe(304);
    expect((await s.api('POST', `/projects/${project.id}/issues/999999/todo`, bob)).status).toBe(404);
  });

  it('open_issues_count on projects counts open, live issues', async () => {
    const p = await makeProject(s, alice, 'counted');
    const a = await s.api('POST', `/projects/${p.id}/issues`, alice, { title: 'one' });
    await s.api('POST', `/projects/${p.id}/issues`, alice, { title: 'two' });
    const c = await s.api('POST', `/projects/${p.id}/issues`, alice, { title: 'three' });
    await s.api('PUT', `/projects/${p.id}/issues/${a.body.id}`, alice, { state_event: 'close' });
    await s.api('DELETE', `/projects/${p.id}/issues/${c.body.id}`, alice);
    expect((await s.api('GET', `/projects/${p.id}`, alice)).body.open_issues_count).toBe(1);
  });
});

describe('writes at once (two requests, or two daemons, racing)', () => {
  it('two creates in one project: both 201, with the next two iids', async () => {
    const rs = await Promise.all(['race one', 'race two'].map((title) => s.api('POST', `/projects/${project.id}/issues`, alice, { title })));
    expect(rs.map((r) => r.status)).toEqual([201, 201]);
    const iids = rs.map((r) => r.body.iid as number).sort((a, b) => a - b);
    expect(iids[1]! - iids[0]!).toBe(1);
  });

  it('two closes of one issue: both 200 closed, one state note, one closed event', async () => {
    const c = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'close me twice' });
    const rs = await Promise.all([0, 1].map(() => s.api('PUT', `/projects/${project.id}/issues/${c.body.id}`, alice, { state_event: 'close' })));
    expect(rs.map((r) => [r.status, r.body.state])).toEqual([[200, 'closed'], [200, 'closed']]);
    expect(await count(`SELECT COUNT(*) AS n FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ? AND note LIKE 'Status changed%'`, c.body.id)).toBe(1);
    expect(await count(`SELECT COUNT(*) AS n FROM events WHERE target_type = 'Issue' AND target_id = ? AND action = 'closed'`, c.body.id)).toBe(1);
  });

  it('an update and a delete at once: the update answers 200 or 404, never 500; the issue ends deleted', async () => {
    const c = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'doomed' });
    const [upd, del] = await Promise.all([
      s.api('PUT', `/projects/${project.id}/issues/${c.body.id}`, alice, { title: 'renamed', state_event: 'close' }),
      s.api('DELETE', `/projects/${project.id}/issues/${c.body.id}`, alice),
    ]);
    expect([200, 404]).toContain(upd.status);
    expect(del.status).toBe(200);
    expect((await s.api('GET', `/projects/${project.id}/issues/${c.body.id}`, alice)).status).toBe(404);
  });

  it('two deletes of one issue: one 200, one 404', async () => {
    const c = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'deleted twice' });
    const rs = await Promise.all([0, 1].map(() => s.api('DELETE', `/projects/${project.id}/issues/${c.body.id}`, alice)));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 404]);
  });

  it('two todo marks at once: one 201, one 304, one pending todo', async () => {
    const c = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'mark me' });
    const rs = await Promise.all([0, 1].map(() => s.api('POST', `/projects/${project.id}/issues/${c.body.id}/todo`, bob)));
    expect(rs.map((r) => r.status).sort()).toEqual([201, 304]);
    expect(await count(`SELECT COUNT(*) AS n FROM todos WHERE user_id = ? AND target_id = ? AND state = 'pending'`, bob.id, c.body.id)).toBe(1);
  });
});

describe('values one engine refuses', () => {
  it('a NUL in an issue title or a note: 400 and nothing written on PostgreSQL, stored on SQLite', async () => {
    const before = await count(`SELECT COUNT(*) AS n FROM issues`);
    const r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'a\u0000b' });
    if (onPostgres) {
      expect(r).toMatchObject({ status: 400, body: { message: '400 (Bad request) text must not contain NUL (\\u0000) characters' } });
      expect(await count(`SELECT COUNT(*) AS n FROM issues`)).toBe(before);
    } else {
      expect(r.status).toBe(201);
    }
    const target = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'commented' });
    const note = await s.api('POST', `/projects/${project.id}/issues/${target.body.id}/notes`, alice, { body: 'x\u0000y' });
    expect(note.status).toBe(onPostgres ? 400 : 201);
  });

  it('ids past the integer columns: 404 (or an empty list), never 500', async () => {
    const big = '99999999999';
    expect((await s.api('GET', `/projects/${project.id}/issues/${big}`, alice)).status).toBe(404);
    expect((await s.api('GET', `/projects/${project.id}/issues/${big}/notes`, alice)).status).toBe(404);
    expect((await s.api('GET', `/projects/${project.id}/milestones/${big}`, alice)).status).toBe(404);
    expect((await s.api('POST', `/projects/${project.id}/labels/${big}/subscription`, alice)).status).toBe(404);
    expect((await s.api('GET', `/projects/${project.id}/issues?iid[]=${big}`, alice)).body).toEqual([]);
    expect((await s.api('DELETE', `/todos/${big}`, alice)).status).toBe(404);
    expect((await s.api('GET', `/todos?project_id=${big}`, alice)).body).toEqual([]);
    const c = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'assigned far', assignee_id: Number(big) });
    expect(c.status).toBe(400);
  });
});

describe('live issue counts (kept by triggers on both engines)', () => {
  it('issue_counts equals a recount of the live issues after every write of this file', async () => {
    const { kept, recount } = await issueCountsAndRecount(s.ctx);
    expect(recount.length).toBeGreaterThan(3);
    expect(kept).toEqual(recount);
  });
});
