/** Issues authorization: every caller on private, internal and public projects; confidential issues; issues disabled. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ACTORS, expectedStatus, insertIssue, type Actor } from '../helpers/collaboration.js';

let s: TestServer;
let cast: Cast;
const projects: Record<number, number> = {};
const issues: Record<number, { id: number; confidential: number }> = {};

const as = (a: Actor): TestUser | null => (a === 'anonymous' ? null : cast[a]);

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'iz');
  for (const vis of [0, 10, 20]) {
    const p = await makeProject(s, cast.owner, `authz-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    projects[vis] = p.id;
    issues[vis] = {
      id: (await insertIssue(s.ctx, p.id, { title: 'Open one', authorId: cast.owner.id })).id,
      confidential: (await insertIssue(s.ctx, p.id, { title: 'Secret', authorId: cast.owner.id, confidential: true })).id,
    };
  }
});
afterAll(async () => s.close());

describe.each([0, 10, 20])('visibility %i', (vis) => {
  it.each(ACTORS)('GET list and issue as %s', async (actor) => {
    const list = await s.api('GET', `/projects/${projects[vis]}/issues`, as(actor));
    expect(list.status).toBe(expectedStatus(actor, vis, 10, 200, true));
    const one = await s.api('GET', `/projects/${projects[vis]}/issues/${issues[vis]!.id}`, as(actor));
    expect(one.status).toBe(expectedStatus(actor, vis, 10, 200, true));
    if (list.status !== 200) return;
    // confidential: reporters and up, the author (owner) and admins
    const seesSecret = ['reporter', 'developer', 'master', 'owner', 'admin'].includes(actor);
    expect(list.body.some((i: { title: string }) => i.title === 'Secret')).toBe(seesSecret);
    expect(list.headers['x-total']).toBe(seesSecret ? '2' : '1');
    const secret = await s.api('GET', `/projects/${projects[vis]}/issues/${issues[vis]!.confidential}`, as(actor));
    expect(secret.status).toBe(seesSecret ? 200 : 404);
  });

  it.each(ACTORS)('POST issue as %s (guests and visible non-members create; labels dropped below reporter)', async (actor) => {
    const r = await s.api('POST', `/projects/${projects[vis]}/issues`, as(actor), { title: `by ${actor}`, labels: `l-${actor}` });
    expect(r.status).toBe(expectedStatus(actor, vis, 10, 201, true));
    if (r.status === 201) {
      const admin = ['reporter', 'developer', 'master', 'owner', 'admin'].includes(actor);
      expect(r.body.labels).toEqual(admin ? [`l-${actor}`] : []);
    }
  });

  it.each(ACTORS)('PUT someone else\'s issue as %s (reporters and up)', async (actor) => {
    const r = await s.api('PUT', `/projects/${projects[vis]}/issues/${issues[vis]!.id}`, as(actor), { description: `edited by ${actor}` });
    expect(r.status).toBe(expectedStatus(actor, vis, 20, 200, false));
  });

  it.each(ACTORS)('DELETE as %s (owners and admins; 404 otherwise)', async (actor) => {
    const { id } = await insertIssue(s.ctx, projects[vis]!, { title: 'Delete me', authorId: cast.developer.id });
    const r = await s.api('DELETE', `/projects/${projects[vis]}/issues/${id}`, as(actor));
    const ok = actor === 'owner' || actor === 'admin';
    expect(r.status).toBe(actor === 'anonymous' ? 401 : ok ? 200 : 404);
  });
});

describe('authors and assignees', () => {
  it('a guest reads and edits a confidential issue they authored or are assigned', async () => {
    const p = projects[0]!;
    const own = await insertIssue(s.ctx, p, { title: 'Mine', authorId: cast.guest.id, confidential: true });
    const assigned = await insertIssue(s.ctx, p, { title: 'Assigned', authorId: cast.owner.id, assigneeId: cast.guest.id, confidential: true });
    const list = await s.api('GET', `/projects/${p}/issues?per_page=100`, cast.guest);
    const titles = list.body.map((i: { title: string }) => i.title);
    expect(titles).toEqual(expect.arrayContaining(['Mine', 'Assigned']));
    expect(titles).not.toContain('Secret');
    expect(Number(list.headers['x-total'])).toBe(list.body.length);
    expect((await s.api('PUT', `/projects/${p}/issues/${own.id}`, cast.guest, { title: 'Mine 2' })).status).toBe(200);
    expect((await s.api('PUT', `/projects/${p}/issues/${assigned.id}`, cast.guest, { state_event: 'close' })).body.state).toBe('closed');
    // a guest's labels/assignee/milestone are dropped silently, as 8.x
    const r = await s.api('PUT', `/projects/${p}/issues/${own.id}`, cast.guest, { labels: 'nope', assignee_id: cast.owner.id });
    expect(r.body).toMatchObject({ labels: [], assignee: null });
    // the caller's list across projects hides confidential issues of others
    const mine = await s.api('GET', '/issues?per_page=100', cast.guest);
    expect(mine.body.map((i: { title: string }) => i.title)).toContain('Mine 2');
    expect(mine.body.every((i: { author: { id: number } }) => i.author.id === cast.guest.id)).toBe(true);
  });
});

describe('issues disabled', () => {
  it('answers 403 to those who see the project and 404 to the others; hides the issues from GET /issues', async () => {
    const p = await makeProject(s, cast.owner, 'no-issues', { visibility: 20 });
    await addCastMembers(s.ctx, cast, p.id);
    await s.api('POST', `/projects/${p.id}/issues`, cast.owner, { title: 'Before the switch' });
    const off = await s.api('PUT', `/projects/${p.id}`, cast.owner, { issues_enabled: false });
    expect(off.status).toBe(200);
    expect(off.body.open_issues_count).toBeUndefined();
    for (const u of [cast.owner, cast.developer, cast.nonMember, cast.admin]) {
      expect((await s.api('GET', `/projects/${p.id}/issues`, u)).status).toBe(403);
      expect((await s.api('POST', `/projects/${p.id}/issues`, u, { title: 'x' })).status).toBe(403);
    }
    const priv = await makeProject(s, cast.owner, 'no-issues-private', { visibility: 0, extra: { issues_enabled: false } });
    expect((await s.api('GET', `/projects/${priv.id}/issues`, cast.nonMember)).status).toBe(404);
    const mine = await s.api('GET', '/issues?per_page=100', cast.owner);
    expect(mine.body.some((i: { title: string }) => i.title === 'Before the switch')).toBe(false);
    expect(Number(mine.headers['x-total'])).toBe(mine.body.length);
  });
});
