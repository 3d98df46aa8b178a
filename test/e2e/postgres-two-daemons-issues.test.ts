/**
 * Issues across two gantryd processes on one PostgreSQL database (issue 22, item 7: "write through one, read through
 * the other, for every room"): create, edit, close and reopen, labels, milestones, notes, award emoji, todos,
 * subscriptions and move, each written through one daemon and read through the other at once; the response cache
 * and the read caches of a daemon never answer what the other daemon's write changed.
 * Runs when GANTRY_TEST_DATABASE_URL is set (npm test's PostgreSQL pass); needs the build (npm test builds first).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { api, type Daemon } from './helpers.js';
import { startDaemonPair, type DaemonPair } from './database.js';

const PASSWORD = 'two-daemons-issues-root-password';

describe.skipIf(!TEST_DATABASE_URL)('issues across two gantryd processes', () => {
  let pair: DaemonPair | undefined;
  let a: Daemon;
  let b: Daemon;
  let root: string;
  let erin: { id: number; token: string };
  let project: number;
  let other: number;
  let issue: { id: number; iid: number };
  const why = (r: { status: number; body: unknown }) => `${r.status} ${JSON.stringify(r.body)}\nA: ${a.stderr().slice(-2000)}\nB: ${b.stderr().slice(-2000)}`;

  beforeAll(async () => {
    pair = await startDaemonPair(TEST_DATABASE_URL!, PASSWORD);
    ({ a, b } = pair);
    root = (await api(a.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
    const user = await api(a.url, 'POST', '/users', root, { username: 'erin', email: 'erin@example.com', name: 'Erin', password: 'erinpassword1' });
    expect(user.status).toBe(201);
    erin = { id: user.body.id, token: (await api(b.url, 'POST', '/session', null, { login: 'erin', password: 'erinpassword1' })).body.private_token };
    project = (await api(a.url, 'POST', '/projects', root, { name: 'tracker' })).body.id;
    other = (await api(b.url, 'POST', '/projects', root, { name: 'elsewhere' })).body.id;
    for (const id of [project, other]) expect((await api(a.url, 'POST', `/projects/${id}/members`, root, { user_id: erin.id, access_level: 30 })).status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    if (pair) expect(await pair.stop()).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
  }, 60_000);

  it('an issue created through A, listed through B (whose cached list of it is never stale), edited through B, read through A', async () => {
    // B answers the list twice (the second from its response cache) before A writes
    for (let i = 0; i < 2; i++) expect((await api(b.url, 'GET', `/projects/${project}/issues`, root)).body).toEqual([]);
    const made = await api(a.url, 'POST', `/projects/${project}/issues`, root, { title: 'Broken build', description: 'It fails', assignee_id: erin.id });
    expect(made.status, why(made)).toBe(201);
    issue = { id: made.body.id, iid: made.body.iid };
    expect(made.body.iid).toBe(1);
    // the assignment made a todo for Erin, listed through B
    const todos = await api(b.url, 'GET', '/todos', erin.token);
    expect(todos.body.map((t: { target: { id: number }; action_name: string }) => [t.target.id, t.action_name])).toEqual([[issue.id, 'assigned']]);
    const listed = await api(b.url, 'GET', `/projects/${project}/issues`, root);
    expect(listed.body.map((x: { id: number }) => x.id)).toEqual([issue.id]);
    expect(listed.headers.get('x-total')).toBe('1');

    const edited = await api(b.url, 'PUT', `/projects/${project}/issues/${issue.id}`, root, { title: 'Broken build on master', description: 'It fails on master' });
    expect(edited.status, why(edited)).toBe(200);
    expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body)
      .toMatchObject({ title: 'Broken build on master', description: 'It fails on master', assignee: { id: erin.id } });
    // the next issue through B gets the next iid: the counter is in the database, not in a daemon
    const second = await api(b.url, 'POST', `/projects/${project}/issues`, root, { title: 'Second' });
    expect(second.body.iid).toBe(2);
  });

  it('closed through A and reopened through B; the state filters of each daemon follow at once', async () => {
    // Erin (the assignee, a developer) closes it through A
    expect((await api(a.url, 'PUT', `/projects/${project}/issues/${issue.id}`, erin.token, { state_event: 'close' })).body.state).toBe('closed');
    expect((await api(b.url, 'GET', `/projects/${project}/issues?state=closed`, root)).body.map((x: { id: number }) => x.id)).toEqual([issue.id]);
    expect((await api(b.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.state).toBe('closed');
    expect((await api(b.url, 'PUT', `/projects/${project}/issues/${issue.id}`, root, { state_event: 'reopen' })).body.state).toBe('opened');
    expect((await api(a.url, 'GET', `/projects/${project}/issues?state=closed`, root)).body).toEqual([]);
    expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.state).toBe('opened');
    // closing it through A marked the closer's own todo done (8.13): B lists none pending for Erin
    expect((await api(b.url, 'GET', '/todos', erin.token)).body).toEqual([]);
  });

  it('labels and milestones made through A are used through B and filtered through A', async () => {
    const label = await api(a.url, 'POST', `/projects/${project}/labels`, root, { name: 'bug', color: '#ff0000' });
    expect(label.status, why(label)).toBe(201);
    expect((await api(b.url, 'GET', `/projects/${project}/labels`, root)).body.map((l: { name: string }) => l.name)).toEqual(['bug']);
    const milestone = await api(a.url, 'POST', `/projects/${project}/milestones`, root, { title: 'v1.0' });
    expect(milestone.status, why(milestone)).toBe(201);
    const put = await api(b.url, 'PUT', `/projects/${project}/issues/${issue.id}`, root, { labels: 'bug', milestone_id: milestone.body.id });
    expect(put.status, why(put)).toBe(200);
    expect(put.body).toMatchObject({ labels: ['bug'], milestone: { id: milestone.body.id, title: 'v1.0' } });
    expect((await api(a.url, 'GET', `/projects/${project}/issues?labels=bug`, root)).body.map((x: { id: number }) => x.id)).toEqual([issue.id]);
    expect((await api(a.url, 'GET', `/projects/${project}/milestones/${milestone.body.id}/issues`, root)).body.map((x: { id: number }) => x.id)).toEqual([issue.id]);
    // the label's open issue count, read through A, counts the label set through B
    const counted = (await api(a.url, 'GET', `/projects/${project}/labels`, root)).body[0];
    expect(counted).toMatchObject({ name: 'bug', open_issues_count: 1 });
    // closing the milestone through B is seen through A
    expect((await api(b.url, 'PUT', `/projects/${project}/milestones/${milestone.body.id}`, root, { state_event: 'close' })).body.state).toBe('closed');
    expect((await api(a.url, 'GET', `/projects/${project}/milestones/${milestone.body.id}`, root)).body.state).toBe('closed');
  });

  it('notes written through A are read, edited and deleted through B', async () => {
    const note = await api(a.url, 'POST', `/projects/${project}/issues/${issue.id}/notes`, erin.token, { body: 'I can reproduce it' });
    expect(note.status, why(note)).toBe(201);
    expect((await api(b.url, 'GET', `/projects/${project}/issues/${issue.id}/notes`, root)).body.map((n: { body: string }) => n.body)).toContain('I can reproduce it');
    const edited = await api(b.url, 'PUT', `/projects/${project}/issues/${issue.id}/notes/${note.body.id}`, erin.token, { body: 'I can reproduce it on master' });
    expect(edited.status, why(edited)).toBe(200);
    expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}/notes/${note.body.id}`, root)).body.body).toBe('I can reproduce it on master');
    expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.user_notes_count).toBeGreaterThanOrEqual(1);
    expect((await api(b.url, 'DELETE', `/projects/${project}/issues/${issue.id}/notes/${note.body.id}`, erin.token)).status).toBe(200);
    expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}/notes/${note.body.id}`, root)).status).toBe(404);
  });

  it('award emoji given through A are counted through B; the same award through both at once is given once', async () => {
    const award = await api(a.url, 'POST', `/projects/${project}/issues/${issue.id}/award_emoji`, erin.token, { name: 'thumbsup' });
    expect(award.status, why(award)).toBe(201);
    expect((await api(b.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.upvotes).toBe(1);
    expect((await api(b.url, 'GET', `/projects/${project}/issues/${issue.id}/award_emoji/${award.body.id}`, root)).body).toMatchObject({ name: 'thumbsup', user: { id: erin.id } });
    // the same emoji again through B: GitLab's "has already been taken"
    expect((await api(b.url, 'POST', `/projects/${project}/issues/${issue.id}/award_emoji`, erin.token, { name: 'thumbsup' })).status).toBe(404);
    const [x, y] = await Promise.all([
      api(a.url, 'POST', `/projects/${project}/issues/${issue.id}/award_emoji`, root, { name: 'tada' }),
      api(b.url, 'POST', `/projects/${project}/issues/${issue.id}/award_emoji`, root, { name: 'tada' }),
    ]);
    expect([x.status, y.status].sort(), why(x.status === 201 ? y : x)).toEqual([201, 404]);
    const awards = (await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}/award_emoji`, root)).body as Array<{ name: string }>;
    expect(awards.map((e) => e.name).sort()).toEqual(['tada', 'thumbsup']);
    expect((await api(a.url, 'DELETE', `/projects/${project}/issues/${issue.id}/award_emoji/${award.body.id}`, erin.token)).status).toBe(200);
    expect((await api(b.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.upvotes).toBe(0);
  });

  it('todos made through A (a mention, a todo of one\'s own) are listed and marked done through B', async () => {
    expect((await api(a.url, 'POST', `/projects/${project}/issues/${issue.id}/notes`, root, { body: 'what do you think, @erin?' })).status).toBe(201);
    const todos = await api(b.url, 'GET', '/todos', erin.token);
    const mentioned = todos.body.find((t: { target: { id: number }; action_name: string }) => t.target.id === issue.id && t.action_name === 'mentioned');
    expect(mentioned, JSON.stringify(todos.body)).toBeDefined();
    const own = await api(a.url, 'POST', `/projects/${project}/issues/${issue.id}/todo`, root);
    expect(own.status, why(own)).toBe(201);
    expect((await api(b.url, 'GET', '/todos', root)).body.map((t: { id: number }) => t.id)).toEqual([own.body.id]);
    // the same todo again through B: 304, as 8.13 answers a todo that is already pending
    expect((await api(b.url, 'POST', `/projects/${project}/issues/${issue.id}/todo`, root)).status).toBe(304);
    expect((await api(b.url, 'DELETE', `/todos/${mentioned.id}`, erin.token)).status).toBe(200);
    expect((await api(a.url, 'GET', '/todos', erin.token)).body.map((t: { id: number }) => t.id)).not.toContain(mentioned.id);
    expect((await api(a.url, 'DELETE', '/todos', root)).status).toBe(200);
    expect((await api(b.url, 'GET', '/todos', root)).body).toEqual([]);
  });

  it('a subscription ended through B shows through A, and one made through A shows through B', async () => {
    // the author is subscribed (a participant): ended through B, seen through A
    expect((await api(b.url, 'DELETE', `/projects/${project}/issues/${issue.id}/subscription`, root)).body.subscribed).toBe(false);
    expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.subscribed).toBe(false);
    const sub = await api(a.url, 'POST', `/projects/${project}/issues/${issue.id}/subscription`, root);
    expect(sub.status, why(sub)).toBe(201);
    expect(sub.body.subscribed).toBe(true);
    expect((await api(b.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.subscribed).toBe(true);
    expect((await api(b.url, 'POST', `/projects/${project}/issues/${issue.id}/subscription`, root)).status).toBe(304);
    expect((await api(b.url, 'DELETE', `/projects/${project}/issues/${issue.id}/subscription`, root)).body.subscribed).toBe(false);
    expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.subscribed).toBe(false);
  });

  it('moved through B to another project: closed in its project and open in the other, through A', async () => {
    const moved = await api(b.url, 'POST', `/projects/${project}/issues/${issue.id}/move`, root, { to_project_id: other });
    expect(moved.status, why(moved)).toBe(201);
    expect(moved.body).toMatchObject({ project_id: other, title: 'Broken build on master', state: 'opened' });
    expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.state).toBe('closed');
    const there = await api(a.url, 'GET', `/projects/${other}/issues`, root);
    expect(there.body.map((x: { id: number }) => x.id)).toEqual([moved.body.id]);
    expect((await api(a.url, 'GET', `/projects/${other}/issues/${moved.body.id}`, root)).body.description).toContain('It fails on master');
    // the moved one back into the project it is in, through A, is refused as on one daemon
    expect((await api(a.url, 'POST', `/projects/${other}/issues/${moved.body.id}/move`, root, { to_project_id: other })).status).toBe(400);
  });

  it('a user renamed through B is renamed at once in what A answers about the issues it wrote and was given', async () => {
    // A answers the issue (its assignee Erin) twice, the second from its caches, before B writes
    for (let i = 0; i < 2; i++) expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.assignee).toMatchObject({ name: 'Erin' });
    const put = await api(b.url, 'PUT', `/users/${erin.id}`, root, { name: 'Erin Renamed' });
    expect(put.status, why(put)).toBe(200);
    expect((await api(a.url, 'GET', `/projects/${project}/issues/${issue.id}`, root)).body.assignee).toMatchObject({ id: erin.id, name: 'Erin Renamed' });
    const listed = (await api(a.url, 'GET', `/projects/${project}/issues`, root)).body as Array<{ id: number; assignee: { name: string } | null }>;
    expect(listed.find((x) => x.id === issue.id)?.assignee?.name).toBe('Erin Renamed');
    expect((await api(a.url, 'GET', '/user', erin.token)).body.name).toBe('Erin Renamed');
  });

  it('a project renamed through A is renamed in B\'s answers at once (its cached GET /projects/:id and lists)', async () => {
    for (let i = 0; i < 2; i++) expect((await api(b.url, 'GET', `/projects/${project}`, root)).body.description).toBeFalsy();
    expect((await api(b.url, 'GET', '/projects?search=tracker', root)).body).toHaveLength(1);
    const put = await api(a.url, 'PUT', `/projects/${project}`, root, { name: 'tracker renamed', description: 'issues live here' });
    expect(put.status, why(put)).toBe(200);
    expect((await api(b.url, 'GET', `/projects/${project}`, root)).body).toMatchObject({ name: 'tracker renamed', description: 'issues live here' });
    expect((await api(b.url, 'GET', '/projects?search=renamed', root)).body.map((p: { id: number }) => p.id)).toEqual([project]);
    // a member removed through B loses the project through A at once (access is never cached past a write)
    expect((await api(a.url, 'GET', `/projects/${project}`, erin.token)).status).toBe(200);
    expect((await api(b.url, 'DELETE', `/projects/${project}/members/${erin.id}`, root)).status).toBe(200);
    expect((await api(a.url, 'GET', `/projects/${project}`, erin.token)).status).toBe(404);
    expect((await api(a.url, 'GET', `/projects/${project}/issues`, erin.token)).status).toBe(404);
  });
});
