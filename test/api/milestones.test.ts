/**
 * Milestones (reference 2.6): list with state and iid filters, get, create, update with state_event close/activate,
 * the issues of a milestone, iid per project, 8.x error bodies, and the authorization matrix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ACTORS, expectedStatus, insertIssue, insertMilestone, setIssueMilestone, projectEventsOf, sqlValue, type Actor } from '../helpers/collaboration.js';

let s: TestServer;
let cast: Cast;

const who = (a: Actor): TestUser | null => (a === 'anonymous' ? null : cast[a]);
const milestoneCount = (projectId: number) =>
  sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM milestones WHERE project_id = ?`, [projectId]);
const milestoneRow = (id: number) => s.ctx.data.get<Record<string, unknown>>(`SELECT * FROM milestones WHERE id = ?`, [id]);

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'ms');
});
afterAll(async () => { await s.close(); });

function expectMilestoneShape(m: Record<string, unknown>) {
  expect(Object.keys(m).sort()).toEqual(['created_at', 'description', 'due_date', 'id', 'iid', 'project_id', 'state', 'title', 'updated_at']);
  for (const k of ['id', 'iid', 'project_id']) expect(Number.isInteger(m[k])).toBe(true);
  for (const k of ['title', 'description', 'created_at', 'updated_at']) expect(typeof m[k]).toBe('string');
  expect(['active', 'closed']).toContain(m.state);
  expect(m.due_date === null || /^\d{4}-\d{2}-\d{2}$/.test(String(m.due_date))).toBe(true);
  expect(String(m.created_at)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
}

describe('POST /projects/:id/milestones', () => {
  let p: { id: number };
  let q: { id: number };
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, 'ms-create');
    q = await makeProject(s, cast.owner, 'ms-create-2');
    await addCastMembers(s.ctx, cast, p.id);
  });

  it('creates a milestone: 201, state active, iid counting per project', async () => {
    const r = await s.api('POST', `/projects/${p.id}/milestones`, cast.master, { title: 'v1.0', description: 'First', due_date: '2030-01-31' });
    expect(r.status).toBe(201);
    expectMilestoneShape(r.body);
    expect(r.body).toMatchObject({ iid: 1, project_id: p.id, title: 'v1.0', description: 'First', state: 'active', due_date: '2030-01-31' });
    const second = await s.api('POST', `/projects/${p.id}/milestones`, cast.master, { title: 'v2.0' });
    expect(second.body).toMatchObject({ iid: 2, description: '', due_date: null });
    const other = await s.api('POST', `/projects/${q.id}/milestones`, cast.owner, { title: 'v1.0' });
    expect(other.status).toBe(201);
    expect(other.body.iid).toBe(1);
  });

  it('two creates at once: one title answers one 201 and one 400 (has already been taken); two titles both 201 with iids in sequence', async () => {
    const same = await Promise.all([0, 1].map(() => s.api('POST', `/projects/${q.id}/milestones`, cast.owner, { title: 'raced' })));
    expect(same.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(same.find((r) => r.status === 400)!.body).toEqual({ message: 'Failed to create milestone {:title=>["has already been taken"]}' });
    const two = await Promise.all(['raced-a', 'raced-b'].map((title) => s.api('POST', `/projects/${q.id}/milestones`, cast.owner, { title })));
    expect(two.map((r) => r.status)).toEqual([201, 201]);
    const iids = two.map((r) => r.body.iid as number).sort();
    expect(iids[1]! - iids[0]!).toBe(1);
  });

  it('records a created event shown as "opened" on the project events', async () => {
    const ev = { body: await projectEventsOf(s, p.id, cast.master) };
    expect(ev.body.find((e: { target_title: string }) => e.target_title === 'v1.0'))
      .toMatchObject({ action_name: 'opened', target_type: 'Milestone', author_id: cast.master.id });
  });

  it('400 "title" not given (missing or blank), nothing written', async () => {
    const before = await milestoneCount(p.id);
    for (const body of [{}, { title: '' }, { description: 'no title' }, undefined]) {
      const r = await s.api('POST', `/projects/${p.id}/milestones`, cast.master, body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: '400 (Bad request) "title" not given' });
    }
    expect(await milestoneCount(p.id)).toBe(before);
  });

  it('400 Failed to create milestone for a duplicate title (as 8.x), nothing written', async () => {
    const before = await milestoneCount(p.id);
    const r = await s.api('POST', `/projects/${p.id}/milestones`, cast.master, { title: 'v1.0' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Failed to create milestone {:title=>["has already been taken"]}' });
    expect(await milestoneCount(p.id)).toBe(before);
  });

  it('400 for a bad due_date, a too long title or a 1 MB description, nothing written', async () => {
    const before = await milestoneCount(p.id);
    for (const due_date of ['tomorrow', '2030-02-30', '2030-1-1', '2030-01-01T00:00:00Z']) {
      const r = await s.api('POST', `/projects/${p.id}/milestones`, cast.master, { title: `d ${due_date}`, due_date });
      expect(r.status, due_date).toBe(400);
      expect(r.body).toEqual({ message: 'Failed to create milestone {:due_date=>["is invalid"]}' });
    }
    const long = await s.api('POST', `/projects/${p.id}/milestones`, cast.master, { title: 't'.repeat(256) });
    expect(long.status).toBe(400);
    expect(long.body.message).toContain(':title=>["is too long (maximum is 255 characters)"]');
    const big = await s.api('POST', `/projects/${p.id}/milestones`, cast.master, { title: 'big', description: 'x'.repeat(1024 * 1024) });
    expect(big.status).toBe(400);
    expect(big.body.message).toContain(':description=>');
    expect(await milestoneCount(p.id)).toBe(before);
  });

  it('keeps unicode titles and descriptions intact', async () => {
    const r = await s.api('POST', `/projects/${p.id}/milestones`, cast.master, { title: 'Версия 3 🚀', description: '多言語 "quoted"' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ title: 'Версия 3 🚀', description: '多言語 "quoted"' });
    const got = await s.api('GET', `/projects/${p.id}/milestones/${r.body.id}`, cast.guest);
    expect(got.body.title).toBe('Версия 3 🚀');
  });
});

describe('GET /projects/:id/milestones', () => {
  let p: { id: number };
  const ms: { id: number; iid: number }[] = [];
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, 'ms-list', { visibility: 10 });
    await addCastMembers(s.ctx, cast, p.id);
    ms.push(await insertMilestone(s.ctx, p.id, { title: 'one' }));
    ms.push(await insertMilestone(s.ctx, p.id, { title: 'two', state: 'closed' }));
    ms.push(await insertMilestone(s.ctx, p.id, { title: 'three', dueDate: '2031-05-06' }));
  });

  it('lists every milestone, newest first', async () => {
    const r = await s.api('GET', `/projects/${p.id}/milestones`, cast.guest);
    expect(r.status).toBe(200);
    r.body.forEach(expectMilestoneShape);
    expect(r.body.map((m: { title: string }) => m.title)).toEqual(['three', 'two', 'one']);
    expect(r.body[0].due_date).toBe('2031-05-06');
  });

  it('filters by state active or closed; any other state lists all', async () => {
    const active = await s.api('GET', `/projects/${p.id}/milestones?state=active`, cast.guest);
    expect(active.body.map((m: { title: string }) => m.title)).toEqual(['three', 'one']);
    const closed = await s.api('GET', `/projects/${p.id}/milestones?state=closed`, cast.guest);
    expect(closed.body.map((m: { title: string }) => m.title)).toEqual(['two']);
    const all = await s.api('GET', `/projects/${p.id}/milestones?state=whatever`, cast.guest);
    expect(all.body).toHaveLength(3);
  });

  it('filters by iid, one or several', async () => {
    const one = await s.api('GET', `/projects/${p.id}/milestones?iid=2`, cast.guest);
    expect(one.body.map((m: { id: number }) => m.id)).toEqual([ms[1]!.id]);
    const two = await s.api('GET', `/projects/${p.id}/milestones?iid[]=1&iid[]=3`, cast.guest);
    expect(two.body.map((m: { id: number }) => m.id)).toEqual([ms[2]!.id, ms[0]!.id]);
    const none = await s.api('GET', `/projects/${p.id}/milestones?iid=99`, cast.guest);
    expect(none.body).toEqual([]);
    expect(none.headers['x-total']).toBe('0');
  });

  it('400 for a non-integer iid', async () => {
    const r = await s.api('GET', `/projects/${p.id}/milestones?iid=abc`, cast.guest);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/iid/);
  });

  it('paginates with every header', async () => {
    const r = await s.api('GET', `/projects/${p.id}/milestones?per_page=2`, cast.guest);
    expect(r.body.map((m: { title: string }) => m.title)).toEqual(['three', 'two']);
    expect(r.headers).toMatchObject({ 'x-total': '3', 'x-total-pages': '2', 'x-per-page': '2', 'x-page': '1', 'x-next-page': '2', 'x-prev-page': '' });
    expect(String(r.headers.link)).toMatch(/rel="next".*rel="first".*rel="last"/);
  });
});

describe('GET /projects/:id/milestones/:milestone_id', () => {
  it('answers the milestone; 404 Not found when absent, of another project or not a number', async () => {
    const p = await makeProject(s, cast.owner, 'ms-get');
    const q = await makeProject(s, cast.owner, 'ms-get-other');
    const m = await insertMilestone(s.ctx, p.id, { title: 'here' });
    const foreign = await insertMilestone(s.ctx, q.id, { title: 'there' });
    const r = await s.api('GET', `/projects/${p.id}/milestones/${m.id}`, cast.owner);
    expect(r.status).toBe(200);
    expectMilestoneShape(r.body);
    expect(r.body).toMatchObject({ id: m.id, iid: 1, title: 'here' });
    for (const id of [999999, foreign.id, 'abc']) {
      const miss = await s.api('GET', `/projects/${p.id}/milestones/${id}`, cast.owner);
      expect(miss.status).toBe(404);
      expect(miss.body).toEqual({ message: '404 Not found' });
    }
  });
});

describe('PUT /projects/:id/milestones/:milestone_id', () => {
  let p: { id: number };
  let m: { id: number };
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, 'ms-update');
    await addCastMembers(s.ctx, cast, p.id);
    m = await insertMilestone(s.ctx, p.id, { title: 'edit me', description: 'old' });
    await insertMilestone(s.ctx, p.id, { title: 'taken' });
  });

  it('updates title, description and due_date; blank values are ignored (8.x)', async () => {
    const r = await s.api('PUT', `/projects/${p.id}/milestones/${m.id}`, cast.master, { title: 'edited', description: '', due_date: '2032-12-31' });
    expect(r.status).toBe(200);
    expectMilestoneShape(r.body);
    expect(r.body).toMatchObject({ id: m.id, title: 'edited', description: 'old', due_date: '2032-12-31', state: 'active' });
  });

  it('closes and activates with state_event, recording closed and reopened events', async () => {
    const closed = await s.api('PUT', `/projects/${p.id}/milestones/${m.id}`, cast.master, { state_event: 'close' });
    expect(closed.status).toBe(200);
    expect(closed.body.state).toBe('closed');
    const again = await s.api('PUT', `/projects/${p.id}/milestones/${m.id}`, cast.master, { state_event: 'close' });
    expect(again.body.state).toBe('closed');
    const active = await s.api('PUT', `/projects/${p.id}/milestones/${m.id}`, cast.master, { state_event: 'activate' });
    expect(active.body.state).toBe('active');
    const ev = { body: await projectEventsOf(s, p.id, cast.master) };
    const mine = ev.body.filter((e: { target_id: number; target_type: string }) => e.target_type === 'Milestone' && e.target_id === m.id);
    expect(mine.map((e: { action_name: string }) => e.action_name)).toEqual(['opened', 'closed']);
  });

  it('400 for an unknown state_event, a duplicate title or a bad date; nothing changes', async () => {
    const before = (await milestoneRow(m.id));
    const bad = await s.api('PUT', `/projects/${p.id}/milestones/${m.id}`, cast.master, { state_event: 'reopen', title: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Failed to update milestone {:state_event=>["is invalid"]}' });
    const dup = await s.api('PUT', `/projects/${p.id}/milestones/${m.id}`, cast.master, { title: 'taken', state_event: 'close' });
    expect(dup.status).toBe(400);
    expect(dup.body).toEqual({ message: 'Failed to update milestone {:title=>["has already been taken"]}' });
    const date = await s.api('PUT', `/projects/${p.id}/milestones/${m.id}`, cast.master, { due_date: '31/12/2030' });
    expect(date.status).toBe(400);
    const big = await s.api('PUT', `/projects/${p.id}/milestones/${m.id}`, cast.master, { description: 'x'.repeat(1024 * 1024) });
    expect(big.status).toBe(400);
    expect((await milestoneRow(m.id))).toEqual(before);
  });

  it('404 Not found for an absent milestone', async () => {
    const r = await s.api('PUT', `/projects/${p.id}/milestones/999999`, cast.master, { title: 'x' });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 Not found' });
  });
});

describe('GET /projects/:id/milestones/:milestone_id/issues', () => {
  let p: { id: number };
  let m: { id: number };
  const issue: Record<string, { id: number; iid: number }> = {};
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, 'ms-issues', { visibility: 20 });
    await addCastMembers(s.ctx, cast, p.id);
    m = await insertMilestone(s.ctx, p.id, { title: 'with issues' });
    const other = await insertMilestone(s.ctx, p.id, { title: 'other' });
    issue.open = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id, title: 'open one' });
    issue.closed = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id, title: 'closed one', state: 'closed' });
    issue.secret = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id, title: 'secret', confidential: true });
    issue.guestSecret = await insertIssue(s.ctx, p.id, { authorId: cast.guest.id, title: 'guest secret', confidential: true });
    issue.elsewhere = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id, title: 'other milestone' });
    issue.none = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id, title: 'no milestone' });
    for (const k of ['open', 'closed', 'secret', 'guestSecret']) await setIssueMilestone(s.ctx, issue[k]!.id, m.id);
    await setIssueMilestone(s.ctx, issue.elsewhere.id, other.id);
  });

  const titles = (body: { title: string }[]) => body.map((i) => i.title);

  it('lists the issues of the milestone in every state with the Issue entity (reporters see confidential ones)', async () => {
    const r = await s.api('GET', `/projects/${p.id}/milestones/${m.id}/issues`, cast.reporter);
    expect(r.status).toBe(200);
    expect(titles(r.body).sort()).toEqual(['closed one', 'guest secret', 'open one', 'secret']);
    const open = r.body.find((i: { title: string }) => i.title === 'open one');
    expect(open).toMatchObject({ id: issue.open!.id, iid: issue.open!.iid, project_id: p.id, state: 'opened', labels: [] });
    expect(open.milestone).toMatchObject({ id: m.id, title: 'with issues', state: 'active' });
    expect(r.headers['x-total']).toBe('4');
  });

  it('hides confidential issues from guests (but not their own) and from non-members', async () => {
    const g = await s.api('GET', `/projects/${p.id}/milestones/${m.id}/issues`, cast.guest);
    expect(titles(g.body).sort()).toEqual(['closed one', 'guest secret', 'open one']);
    expect(g.headers['x-total']).toBe('3');
    const n = await s.api('GET', `/projects/${p.id}/milestones/${m.id}/issues`, cast.nonMember);
    expect(titles(n.body).sort()).toEqual(['closed one', 'open one']);
  });

  it('paginates', async () => {
    const r = await s.api('GET', `/projects/${p.id}/milestones/${m.id}/issues?per_page=3&page=2`, cast.owner);
    expect(r.body).toHaveLength(1);
    expect(r.headers).toMatchObject({ 'x-total': '4', 'x-total-pages': '2', 'x-page': '2', 'x-prev-page': '1', 'x-next-page': '' });
  });

  it('404 Not found for an absent milestone', async () => {
    const r = await s.api('GET', `/projects/${p.id}/milestones/999999/issues`, cast.owner);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 Not found' });
  });
});

describe('milestones when issues and merge requests are both disabled', () => {
  it('answers 403 (read_milestone is removed, as 8.x)', async () => {
    const p = await makeProject(s, cast.owner, 'ms-off', { extra: { issues_enabled: false, merge_requests_enabled: false } });
    expect((await s.api('GET', `/projects/${p.id}/milestones`, cast.owner)).status).toBe(403);
    expect((await s.api('POST', `/projects/${p.id}/milestones`, cast.owner, { title: 'x' })).status).toBe(403);
  });
});

describe.each([0, 10, 20])('authorization on a project of visibility %i', (vis) => {
  let p: { id: number };
  let m: { id: number };
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, `ms-authz-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    m = await insertMilestone(s.ctx, p.id, { title: 'fixed' });
  });

  it.each(ACTORS)('reads (list, get, issues) as %s', async (a) => {
    const want = expectedStatus(a, vis, 10, 200, true);
    expect((await s.api('GET', `/projects/${p.id}/milestones`, who(a))).status).toBe(want);
    expect((await s.api('GET', `/projects/${p.id}/milestones/${m.id}`, who(a))).status).toBe(want);
    expect((await s.api('GET', `/projects/${p.id}/milestones/${m.id}/issues`, who(a))).status).toBe(want);
  });

  it.each(ACTORS)('creates and updates as %s (masters and up); a refused write changes nothing', async (a) => {
    const before = await milestoneCount(p.id);
    const created = await s.api('POST', `/projects/${p.id}/milestones`, who(a), { title: `by ${a}` });
    const want = expectedStatus(a, vis, 40, 201);
    expect(created.status).toBe(want);
    if (want !== 201) expect(await milestoneCount(p.id)).toBe(before);
    const row = (await milestoneRow(m.id));
    const updated = await s.api('PUT', `/projects/${p.id}/milestones/${m.id}`, who(a), { description: `edited by ${a}` });
    expect(updated.status).toBe(expectedStatus(a, vis, 40, 200));
    if (updated.status !== 200) expect((await milestoneRow(m.id))).toEqual(row);
  });

  it('the 401 and 404 bodies', async () => {
    expect((await s.api('GET', `/projects/${p.id}/milestones`, null)).body).toEqual({ message: '401 Unauthorized' });
    if (vis === 0) expect((await s.api('POST', `/projects/${p.id}/milestones`, cast.nonMember, { title: 'x' })).body).toEqual({ message: '404 Project Not Found' });
  });
});
