/**
 * The writing half of the web pages (issue 24 item 2): every form refuses a POST without the session's CSRF token
 * (nothing changes), and each write goes through the API's services and policy: success is a 303 to the object's
 * page and shows through the API, a 4xx-worthy error is the form again with the message (escaped), 404/403 pages
 * where the API answers them. Also the dashboard (/, /dashboard/*) and the profile pages (keys, tokens).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { buildNamed, pipelinesOf, pushFiles } from '../helpers/ci.js';
import { browse, CookieJar, csrfOf } from '../helpers/oauth.js';
import { generateKeyPair } from '../helpers/ssh-keys.js';

let s: TestServer;
let cast: Cast;
let priv: { id: number; path_with_namespace: string };
let other: { id: number; path_with_namespace: string };
let base: string;
const sessions = new Map<string, { jar: CookieJar; csrf: string }>();

/** A signed-in browser of a cast member (once), with the CSRF token of its session. */
async function as(who: keyof Cast): Promise<{ jar: CookieJar; csrf: string }> {
  const known = sessions.get(who);
  if (known) return known;
  const user = cast[who];
  const jar = new CookieJar();
  const form = await browse(s, jar, 'GET', '/users/sign_in');
  const r = await browse(s, jar, 'POST', '/users/sign_in', { login: user.username, password: who === 'admin' ? 'rootpassword123' : 'password123', authenticity_token: csrfOf(form.body) });
  if (r.statusCode !== 303) throw new Error(`sign-in of ${who} failed: ${r.statusCode}`);
  const home = await browse(s, jar, 'GET', '/profile');
  const session = { jar, csrf: csrfOf(home.body) };
  sessions.set(who, session);
  return session;
}

/** POST a form as `who` with their CSRF token (unless the fields carry one). */
async function post(who: keyof Cast, url: string, fields: Record<string, string> = {}) {
  const { jar, csrf } = await as(who);
  return browse(s, jar, 'POST', url, { authenticity_token: csrf, ...fields });
}

async function get(who: keyof Cast | null, url: string) {
  if (!who) return s.app.inject({ method: 'GET', url });
  const { jar } = await as(who);
  return browse(s, jar, 'GET', url);
}

const issueCount = async () => Number((await s.api('GET', `/projects/${priv.id}/issues?state=all&per_page=1`, cast.owner)).headers['x-total']);

beforeAll(async () => {
  s = await startTestServer({ signinMaxFailures: '1000' });
  cast = await makeCast(s, 'FORM');
  priv = await makeProject(s, cast.owner, 'writable');
  other = await makeProject(s, cast.nonMember, 'elsewhere');
  await addCastMembers(s.ctx, cast, priv.id);
  base = `/${priv.path_with_namespace}`;
  await pushFiles(s.ctx, priv.id, cast.owner.id, {
    'README.md': '# Forms\n',
    '.gitlab-ci.yml': 'test:\n  script: ["echo hi"]\ndeploy:\n  stage: deploy\n  script: ["echo deploy"]\n  when: manual\n',
  });
  await pushFiles(s.ctx, priv.id, cast.owner.id, { 'feature.txt': 'a feature\n' }, { branch: 'feature', from: 'master' });
  await pushFiles(s.ctx, priv.id, cast.owner.id, { 'second.txt': 'another\n' }, { branch: 'second', from: 'master' });
}, 60_000);
afterAll(async () => {
  await s?.close();
});

describe('CSRF', () => {
  it('a POST without the token, with a wrong one, with another session\'s, or without a session is 422 and changes nothing', async () => {
    const before = await issueCount();
    const { jar } = await as('developer');
    const none = await browse(s, jar, 'POST', `${base}/issues`, { title: 'no token' });
    expect(none.statusCode).toBe(422);
    expect(none.body).toContain('The form had expired');
    expect((await browse(s, jar, 'POST', `${base}/issues`, { title: 'wrong', authenticity_token: 'x'.repeat(43) })).statusCode).toBe(422);
    const theirs = (await as('master')).csrf;
    expect((await browse(s, jar, 'POST', `${base}/issues`, { title: 'theirs', authenticity_token: theirs })).statusCode).toBe(422);
    const anonymous = await s.app.inject({ method: 'POST', url: `${base}/issues`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'title=anon' });
    expect(anonymous.statusCode).toBe(422);
    expect(await issueCount()).toBe(before);
    // the same on a profile form and a CI action
    expect((await browse(s, jar, 'POST', '/profile/personal_access_tokens', { name: 'sneaky' })).statusCode).toBe(422);
    expect((await s.api('GET', '/user/personal_access_tokens', cast.developer)).body).toEqual([]);
  });

  it('session cookies are HttpOnly and SameSite=Lax', async () => {
    const jar = new CookieJar();
    const form = await browse(s, jar, 'GET', '/users/sign_in');
    const r = await browse(s, jar, 'POST', '/users/sign_in', { login: cast.guest.username, password: 'password123', authenticity_token: csrfOf(form.body) });
    expect(String(r.headers['set-cookie'])).toMatch(/gantry_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
  });
});

describe('issues', () => {
  it('the new issue form: to those who may create issues; 404 to a non-member; sign-in for anonymous browsers', async () => {
    const form = await get('master', `${base}/issues/new`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="milestone_id"');
    expect(form.body).toContain(`@${cast.developer.username}`);
    const guest = await get('guest', `${base}/issues/new`);
    expect(guest.statusCode).toBe(200);
    expect(guest.body).not.toContain('name="assignee_id"'); // admin_issue only, as the API drops them
    expect((await get('nonMember', `${base}/issues/new`)).statusCode).toBe(404);
    const anon = await get(null, `${base}/issues/new`);
    expect(anon.statusCode).toBe(302);
    expect(anon.headers.location).toMatch(/^\/users\/sign_in/);
    expect((await get('master', `${base}/issues`)).body).toContain(`href="${base}/issues/new"`);
  });

  it('creates an issue with labels, milestone and assignee (master) and goes to it', async () => {
    const milestone = (await s.api('POST', `/projects/${priv.id}/milestones`, cast.master, { title: 'v1' })).body;
    const r = await post('master', `${base}/issues`, {
      title: 'Made in the page', description: 'Some **text**', labels: 'bug, ui', milestone_id: String(milestone.id), assignee_id: String(cast.developer.id),
    });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toMatch(new RegExp(`^${base}/issues/\\d+$`));
    const iid = Number(r.headers.location!.split('/').pop());
    const [issue] = (await s.api('GET', `/projects/${priv.id}/issues?iid[]=${iid}`, cast.owner)).body;
    expect(issue).toMatchObject({ title: 'Made in the page', description: 'Some **text**', labels: ['bug', 'ui'], milestone: { id: milestone.id }, assignee: { id: cast.developer.id } });
    const shown = await get('master', r.headers.location!);
    expect(shown.body).toContain('Made in the page');
    expect(shown.body).toContain('Close issue');
  });

  it('a blank title is the form again (400) with the message and the values kept, escaped; a bad id too', async () => {
    const before = await issueCount();
    const r = await post('developer', `${base}/issues`, { title: '  ', description: '<b>kept</b>' });
    expect(r.statusCode).toBe(400);
    expect(r.body).toContain('id="form-error"');
    expect(r.body).toContain('&quot;title&quot; not given');
    expect(r.body).toContain('&lt;b&gt;kept&lt;/b&gt;');
    expect(r.body).not.toContain('<b>kept</b>');
    const bad = await post('master', `${base}/issues`, { title: 'x', assignee_id: '99999999999' });
    expect(bad.statusCode).toBe(400);
    expect(await issueCount()).toBe(before);
  });

  it('a guest creates an issue (labels dropped, as the API does); a non-member gets the 404 page; a reporter of no issues 403', async () => {
    const r = await post('guest', `${base}/issues`, { title: 'Guest issue', labels: 'sneaky' });
    expect(r.statusCode).toBe(303);
    const iid = Number(r.headers.location!.split('/').pop());
    expect((await s.api('GET', `/projects/${priv.id}/issues?iid[]=${iid}`, cast.owner)).body[0].labels).toEqual([]);
    const outsider = await post('nonMember', `${base}/issues`, { title: 'Outsider' });
    expect(outsider.statusCode).toBe(404);
    expect(outsider.body).toContain('404');
    expect((await post('developer', `/${other.path_with_namespace}/issues`, { title: 'x' })).statusCode).toBe(404);
  });

  it('comments on an issue; a blank comment is the form again (400); a non-member 404', async () => {
    const issue = (await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: 'To comment' })).body;
    const url = `${base}/issues/${issue.iid}`;
    const r = await post('reporter', `${url}/notes`, { body: 'A comment with <script>alert(1)</script>' });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toMatch(new RegExp(`^${url}#note_\\d+$`));
    const notes = (await s.api('GET', `/projects/${priv.id}/issues/${issue.id}/notes`, cast.owner)).body;
    expect(notes.map((n: { body: string }) => n.body)).toContain('A comment with <script>alert(1)</script>');
    const shown = await get('owner', url);
    expect(shown.body).not.toContain('<script>alert(1)');
    const blank = await post('reporter', `${url}/notes`, { body: ' ' });
    expect(blank.statusCode).toBe(400);
    expect(blank.body).toContain('id="note-body"');
    expect((await post('nonMember', `${url}/notes`, { body: 'x' })).statusCode).toBe(404);
    expect((await post('reporter', `${base}/issues/99999/notes`, { body: 'x' })).statusCode).toBe(404);
    expect((await post('reporter', `${base}/issues/99999999999/notes`, { body: 'x' })).statusCode).toBe(404);
  });

  it('closes and reopens an issue (developer, or its author); a guest who is not the author gets 403', async () => {
    const issue = (await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: 'To close' })).body;
    const url = `${base}/issues/${issue.iid}`;
    expect((await post('guest', `${url}/close`)).statusCode).toBe(403);
    expect((await s.api('GET', `/projects/${priv.id}/issues/${issue.id}`, cast.owner)).body.state).toBe('opened');
    const closed = await post('developer', `${url}/close`);
    expect(closed.statusCode).toBe(303);
    expect(closed.headers.location).toBe(url);
    expect((await s.api('GET', `/projects/${priv.id}/issues/${issue.id}`, cast.owner)).body.state).toBe('closed');
    expect((await get('developer', url)).body).toContain('Reopen issue');
    expect((await post('developer', `${url}/reopen`)).statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/issues/${issue.id}`, cast.owner)).body.state).not.toBe('closed');
    const own = (await s.api('POST', `/projects/${priv.id}/issues`, cast.guest, { title: 'Mine' })).body;
    expect((await post('guest', `${base}/issues/${own.iid}/close`)).statusCode).toBe(303);
    expect((await post('nonMember', `${url}/close`)).statusCode).toBe(404);
    // an administrator may, as on the API, without being a member
    expect((await post('admin', `${url}/close`)).statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/issues/${issue.id}`, cast.owner)).body.state).toBe('closed');
  });
});

describe('merge requests', () => {
  let mrIid: number;

  it('the new merge request form lists the branches; a reporter gets 403 (create_merge_request)', async () => {
    const form = await get('developer', `${base}/merge_requests/new`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('<option value="feature"');
    expect((await get('reporter', `${base}/merge_requests/new`)).statusCode).toBe(403);
    expect((await post('reporter', `${base}/merge_requests`, { source_branch: 'feature', target_branch: 'master', title: 'x' })).statusCode).toBe(403);
  });

  it('creates a merge request from a branch; the same again is the form with the API\'s conflict; a blank title 400', async () => {
    const r = await post('developer', `${base}/merge_requests`, { source_branch: 'feature', target_branch: 'master', title: 'Add the feature', description: 'Please' });
    expect(r.statusCode).toBe(303);
    mrIid = Number(r.headers.location!.split('/').pop());
    expect(r.headers.location).toBe(`${base}/merge_requests/${mrIid}`);
    const [mr] = (await s.api('GET', `/projects/${priv.id}/merge_requests?iid[]=${mrIid}`, cast.owner)).body;
    expect(mr).toMatchObject({ title: 'Add the feature', source_branch: 'feature', target_branch: 'master', state: 'opened', author: { id: cast.developer.id } });
    const again = await post('developer', `${base}/merge_requests`, { source_branch: 'feature', target_branch: 'master', title: 'Twice' });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('id="form-error"');
    expect(again.body).toContain('value="Twice"');
    const blank = await post('developer', `${base}/merge_requests`, { source_branch: 'second', target_branch: 'master', title: '' });
    expect(blank.statusCode).toBe(400);
  });

  it('comments, closes and reopens a merge request', async () => {
    const url = `${base}/merge_requests/${mrIid}`;
    const note = await post('reporter', `${url}/notes`, { body: 'Looks good' });
    expect(note.statusCode).toBe(303);
    const [mr] = (await s.api('GET', `/projects/${priv.id}/merge_requests?iid[]=${mrIid}`, cast.owner)).body;
    expect((await s.api('GET', `/projects/${priv.id}/merge_requests/${mr.id}/notes`, cast.owner)).body.map((n: { body: string }) => n.body)).toContain('Looks good');
    expect((await post('reporter', `${url}/close`)).statusCode).toBe(403);
    expect((await post('developer', `${url}/close`)).statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/merge_requests/${mr.id}`, cast.owner)).body.state).toBe('closed');
    expect((await post('developer', `${url}/reopen`)).statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/merge_requests/${mr.id}`, cast.owner)).body.state).toBe('reopened');
  });

  it('merges: a developer may not merge into the protected master (403 page); a stale sha is refused (409); a master merges', async () => {
    const url = `${base}/merge_requests/${mrIid}`;
    const page = await get('master', url);
    expect(page.body).toContain(`action="${url}/merge"`);
    expect((await get('developer', url)).body).not.toContain(`action="${url}/merge"`);
    expect((await post('developer', `${url}/merge`)).statusCode).toBe(403);
    const stale = await post('master', `${url}/merge`, { sha: '0'.repeat(40) });
    expect(stale.statusCode).toBe(409);
    expect(stale.body).toContain('SHA does not match HEAD of source branch');
    const sha = /name="sha" value="([0-9a-f]{40})"/.exec(page.body)![1]!;
    const merged = await post('master', `${url}/merge`, { sha });
    expect(merged.statusCode).toBe(303);
    const [mr] = (await s.api('GET', `/projects/${priv.id}/merge_requests?iid[]=${mrIid}`, cast.owner)).body;
    expect(mr.state).toBe('merged');
    expect((await post('master', `${url}/merge`)).statusCode).toBe(406); // the API's answer to a merge request that is not open
  });

  it('merge when the pipeline succeeds while the head pipeline runs, and its cancel', async () => {
    await pushFiles(s.ctx, priv.id, cast.owner.id, { 'auto.txt': 'auto\n' }, { branch: 'auto', from: 'master' });
    const mr = (await s.api('POST', `/projects/${priv.id}/merge_requests`, cast.master, { source_branch: 'auto', target_branch: 'master', title: 'Auto' })).body;
    const url = `${base}/merge_requests/${mr.iid}`;
    const page = await get('master', url);
    expect(page.body).toContain('name="merge_when_build_succeeds"');
    const r = await post('master', `${url}/merge`, { merge_when_build_succeeds: 'true' });
    expect(r.statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/merge_requests/${mr.id}`, cast.owner)).body).toMatchObject({ state: 'opened', merge_when_build_succeeds: true });
    expect((await get('master', url)).body).toContain('Cancel automatic merge');
    expect((await post('master', `${url}/cancel_merge_when_build_succeeds`)).statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/merge_requests/${mr.id}`, cast.owner)).body.merge_when_build_succeeds).toBe(false);
  });
});

describe('edit forms (title, description, labels, milestone, assignee)', () => {
  const apiIssue = async (id: number) => (await s.api('GET', `/projects/${priv.id}/issues/${id}`, cast.owner)).body;

  it('the issue edit form: filled in for those the API lets update (selects for reporters and up); 403, 404 and sign-in as the API', async () => {
    const milestone = (await s.api('POST', `/projects/${priv.id}/milestones`, cast.master, { title: 'edit-ms' })).body;
    const issue = (await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, {
      title: 'To <edit>', description: 'Old text', labels: 'alpha', milestone_id: milestone.id, assignee_id: cast.developer.id,
    })).body;
    const url = `${base}/issues/${issue.iid}`;
    const form = await get('reporter', `${url}/edit`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain(`action="${url}/edit"`);
    expect(form.body).toContain('value="To &lt;edit&gt;"');
    expect(form.body).toContain('>Old text</textarea>');
    expect(form.body).toContain('name="labels" type="text" value="alpha"');
    expect(form.body).toContain(`<option value="${milestone.id}" selected>edit-ms</option>`);
    expect(form.body).toContain(`<option value="${cast.developer.id}" selected>`);
    expect(form.body).toContain('name="authenticity_token"');
    expect((await get('reporter', url)).body).toContain(`href="${url}/edit"`);
    // a guest who is not the author may not update it (the API's 403), and has no link
    expect((await get('guest', `${url}/edit`)).statusCode).toBe(403);
    expect((await get('guest', url)).body).not.toContain(`href="${url}/edit"`);
    expect((await get('nonMember', `${url}/edit`)).statusCode).toBe(404);
    expect((await get('reporter', `${base}/issues/99999/edit`)).statusCode).toBe(404);
    expect((await get('reporter', `${base}/issues/99999999999/edit`)).statusCode).toBe(404);
    const anon = await get(null, `${url}/edit`);
    expect(anon.statusCode).toBe(302);
    expect(anon.headers.location).toMatch(/^\/users\/sign_in/);
    // a guest's own issue: title and description only (labels, milestone and assignee are admin_issue's, as the API)
    const own = (await s.api('POST', `/projects/${priv.id}/issues`, cast.guest, { title: 'Guest own' })).body;
    const guestForm = await get('guest', `${base}/issues/${own.iid}/edit`);
    expect(guestForm.statusCode).toBe(200);
    expect(guestForm.body).not.toContain('name="assignee_id"');
  });

  it('saves an issue through the API\'s service (what GET shows after), then removes its labels, milestone and assignee', async () => {
    const milestone = (await s.api('POST', `/projects/${priv.id}/milestones`, cast.master, { title: 'save-ms' })).body;
    const issue = (await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: 'Before' })).body;
    const url = `${base}/issues/${issue.iid}`;
    const r = await post('reporter', `${url}/edit`, {
      title: 'After', description: 'New **text**', labels: 'beta, gamma', milestone_id: String(milestone.id), assignee_id: String(cast.master.id),
    });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe(url);
    expect(await apiIssue(issue.id)).toMatchObject({
      title: 'After', description: 'New **text**', labels: ['beta', 'gamma'], milestone: { id: milestone.id }, assignee: { id: cast.master.id },
    });
    const notes = (await s.api('GET', `/projects/${priv.id}/issues/${issue.id}/notes`, cast.owner)).body.map((n: { body: string }) => n.body);
    expect(notes).toContain('Changed title: **Before** → **After**');
    expect(notes).toContain(`Reassigned to @${cast.master.username}`);
    const shown = await get('reporter', url);
    expect(shown.body).toContain('<strong>text</strong>');
    expect(shown.body).toContain(`<dt>Milestone</dt><dd><a href="${base}/milestones/${milestone.iid}">save-ms</a></dd>`);
    expect(shown.body).toContain('<dt>Labels</dt><dd><span class="label">beta</span> <span class="label">gamma</span> </dd>');
    const cleared = await post('reporter', `${url}/edit`, { title: 'After', description: '', labels: '', milestone_id: '', assignee_id: '' });
    expect(cleared.statusCode).toBe(303);
    expect(await apiIssue(issue.id)).toMatchObject({ title: 'After', description: '', labels: [], milestone: null, assignee: null });
  });

  it('a refused save is the form again with the API\'s message and status, the values kept (escaped), nothing changed', async () => {
    const issue = (await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: 'Kept', labels: 'keep' })).body;
    const url = `${base}/issues/${issue.iid}`;
    const blank = await post('reporter', `${url}/edit`, { title: '  ', description: '<b>draft</b>', labels: 'x' });
    expect(blank.statusCode).toBe(400);
    expect(blank.body).toContain('id="form-error"');
    expect(blank.body).toContain('title can&#39;t be blank');
    expect(blank.body).toContain('&lt;b&gt;draft&lt;/b&gt;');
    expect(blank.body).not.toContain('<b>draft</b>');
    const long = await post('reporter', `${url}/edit`, { title: 'x'.repeat(256) });
    expect(long.statusCode).toBe(400);
    expect(long.body).toContain('title is too long (maximum is 255 characters)');
    const badId = await post('reporter', `${url}/edit`, { title: 'Kept', assignee_id: '99999999999' });
    expect(badId.statusCode).toBe(400);
    expect(badId.body).toContain('assignee is invalid');
    const noUser = await post('reporter', `${url}/edit`, { title: 'Kept', assignee_id: '2000000000' });
    expect(noUser.statusCode).toBe(400);
    expect(noUser.body).toContain('assignee id is invalid');
    expect(await apiIssue(issue.id)).toMatchObject({ title: 'Kept', labels: ['keep'], assignee: null });
  });

  it('CSRF: without the session\'s token 422 and nothing changes; 404 to a non-member, 403 to a guest who is not the author; a guest\'s labels are dropped', async () => {
    const issue = (await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: 'Guarded' })).body;
    const url = `${base}/issues/${issue.iid}`;
    const { jar } = await as('reporter');
    const forged = await browse(s, jar, 'POST', `${url}/edit`, { title: 'Forged' });
    expect(forged.statusCode).toBe(422);
    expect((await browse(s, jar, 'POST', `${url}/edit`, { title: 'Forged', authenticity_token: (await as('master')).csrf })).statusCode).toBe(422);
    expect((await post('nonMember', `${url}/edit`, { title: 'Outsider' })).statusCode).toBe(404);
    expect((await post('guest', `${url}/edit`, { title: 'Guest' })).statusCode).toBe(403);
    expect((await post('reporter', `/${other.path_with_namespace}/issues/1/edit`, { title: 'x' })).statusCode).toBe(404);
    expect((await apiIssue(issue.id)).title).toBe('Guarded');
    // the author, a guest: the title changes, the labels are dropped (admin_issue only), as PUT does
    const own = (await s.api('POST', `/projects/${priv.id}/issues`, cast.guest, { title: 'Guest own 2' })).body;
    expect((await post('guest', `${base}/issues/${own.iid}/edit`, { title: 'Renamed by its author', labels: 'sneaky' })).statusCode).toBe(303);
    expect(await apiIssue(own.id)).toMatchObject({ title: 'Renamed by its author', labels: [] });
    // an administrator may, as on the API, without being a member
    expect((await post('admin', `${url}/edit`, { title: 'By the admin' })).statusCode).toBe(303);
    expect((await apiIssue(issue.id)).title).toBe('By the admin');
  });

  it('the merge request edit form saves title, description, labels, milestone and assignee; 403 to a reporter, 404 to a non-member', async () => {
    await pushFiles(s.ctx, priv.id, cast.owner.id, { 'edit.txt': 'edit\n' }, { branch: 'to-edit', from: 'master' });
    const mr = (await s.api('POST', `/projects/${priv.id}/merge_requests`, cast.master, { source_branch: 'to-edit', target_branch: 'master', title: 'MR before' })).body;
    const milestone = (await s.api('POST', `/projects/${priv.id}/milestones`, cast.master, { title: 'mr-ms' })).body;
    const url = `${base}/merge_requests/${mr.iid}`;
    const form = await get('developer', `${url}/edit`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('value="MR before"');
    expect(form.body).toContain('name="milestone_id"');
    expect((await get('developer', url)).body).toContain(`href="${url}/edit"`);
    expect((await get('reporter', `${url}/edit`)).statusCode).toBe(403);
    expect((await post('reporter', `${url}/edit`, { title: 'Reporter' })).statusCode).toBe(403);
    expect((await get('nonMember', `${url}/edit`)).statusCode).toBe(404);
    expect((await post('nonMember', `${url}/edit`, { title: 'x' })).statusCode).toBe(404);
    const { jar } = await as('developer');
    expect((await browse(s, jar, 'POST', `${url}/edit`, { title: 'Forged' })).statusCode).toBe(422);
    const blank = await post('developer', `${url}/edit`, { title: '' });
    expect(blank.statusCode).toBe(400);
    expect(blank.body).toContain('id="form-error"');
    const r = await post('developer', `${url}/edit`, {
      title: 'MR after', description: 'Why', labels: 'review', milestone_id: String(milestone.id), assignee_id: String(cast.master.id),
    });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe(url);
    expect((await s.api('GET', `/projects/${priv.id}/merge_requests/${mr.id}`, cast.owner)).body).toMatchObject({
      title: 'MR after', description: 'Why', labels: ['review'], milestone: { id: milestone.id }, assignee: { id: cast.master.id }, state: 'opened',
    });
    // (closed again: the dashboard test below takes the newest open merge request of the project)
    await s.api('PUT', `/projects/${priv.id}/merge_requests/${mr.id}`, cast.owner, { state_event: 'close' });
  });
});

describe('builds and pipelines', () => {
  it('cancel, retry and play a build; retry and cancel a pipeline; a reporter gets 403, another project\'s build 404', async () => {
    const [pipeline] = await pipelinesOf(s.ctx, priv.id);
    const test = await buildNamed(s.ctx, pipeline!.id, 'test');
    const buildUrl = `${base}/builds/${test.id}`;
    expect((await get('developer', buildUrl)).body).toContain(`action="${buildUrl}/cancel"`);
    expect((await get('reporter', buildUrl)).body).not.toContain(`action="${buildUrl}/cancel"`);
    expect((await post('reporter', `${buildUrl}/cancel`)).statusCode).toBe(403);
    const canceled = await post('developer', `${buildUrl}/cancel`);
    expect(canceled.statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/builds/${test.id}`, cast.owner)).body.status).toBe('canceled');
    const retried = await post('developer', `${buildUrl}/retry`);
    expect(retried.statusCode).toBe(303);
    const newId = Number(retried.headers.location!.split('/').pop());
    expect(newId).toBeGreaterThan(test.id);
    expect((await s.api('GET', `/projects/${priv.id}/builds/${newId}`, cast.owner)).body).toMatchObject({ name: 'test', status: 'pending' });
    const unplayable = await post('developer', `${base}/builds/${newId}/play`);
    expect(unplayable.statusCode).toBe(400);
    expect(unplayable.body).toContain('Unplayable Build');
    expect((await post('developer', `${base}/builds/99999999/cancel`)).statusCode).toBe(404);

    const pipelineUrl = `${base}/pipelines/${pipeline!.id}`;
    expect((await get('developer', pipelineUrl)).body).toContain(`action="${pipelineUrl}/cancel"`);
    expect((await post('reporter', `${pipelineUrl}/cancel`)).statusCode).toBe(403);
    expect((await post('developer', `${pipelineUrl}/cancel`)).statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/pipelines/${pipeline!.id}`, cast.owner)).body.status).toBe('canceled');
    expect((await post('developer', `${pipelineUrl}/retry`)).statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/pipelines/${pipeline!.id}`, cast.owner)).body.status).toBe('pending');
  });

  it('plays a manual job from the pipeline page', async () => {
    await pushFiles(s.ctx, priv.id, cast.owner.id, { 'manual.txt': 'm\n' }, { branch: 'manual', from: 'master' });
    const pipeline = (await pipelinesOf(s.ctx, priv.id)).at(-1)!;
    const test = await buildNamed(s.ctx, pipeline.id, 'test');
    await s.api('POST', `/projects/${priv.id}/builds/${test.id}/cancel`, cast.owner);
    // the manual job waits in skipped once the first stage is done
    const deploy = await buildNamed(s.ctx, pipeline.id, 'deploy');
    const pageBody = (await get('developer', `${base}/pipelines/${pipeline.id}`)).body;
    expect(deploy.status).toBe('skipped');
    expect(pageBody).toContain(`action="${base}/builds/${deploy.id}/play"`);
    const played = await post('developer', `${base}/builds/${deploy.id}/play`);
    expect(played.statusCode).toBe(303);
    expect((await s.api('GET', `/projects/${priv.id}/builds/${deploy.id}`, cast.owner)).body.status).toBe('pending');
  });
});

describe('profile', () => {
  it('shows the account; anonymous browsers are sent to sign in', async () => {
    const r = await get('developer', '/profile');
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain(cast.developer.username);
    expect((await get(null, '/profile')).statusCode).toBe(302);
    expect((await get(null, '/profile/keys')).statusCode).toBe(302);
    for (const url of ['/dashboard/todos', '/dashboard/issues', '/dashboard/merge_requests', '/profile/personal_access_tokens']) {
      expect((await get(null, url)).headers.location).toBe(`/users/sign_in?redirect_to=${encodeURIComponent(url)}`);
    }
  });

  it('adds an SSH key (it shows in GET /user/keys), refuses a bad one with the message (400), deletes it; another user\'s key is 404', async () => {
    const pair = generateKeyPair('ed25519');
    const r = await post('developer', '/profile/keys', { title: 'laptop', key: pair.publicKey });
    expect(r.statusCode).toBe(303);
    const keys = (await s.api('GET', '/user/keys', cast.developer)).body;
    expect(keys.map((k: { title: string }) => k.title)).toEqual(['laptop']);
    expect((await get('developer', '/profile/keys')).body).toContain(pair.md5);
    const bad = await post('developer', '/profile/keys', { title: '<i>t</i>', key: 'ssh-rsa not-a-key' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="form-error"');
    expect(bad.body).toContain('value="&lt;i&gt;t&lt;/i&gt;"');
    const twice = await post('master', '/profile/keys', { title: 'same', key: pair.publicKey });
    expect(twice.statusCode).toBe(400);
    expect(twice.body).toContain('has already been taken');
    expect((await post('master', `/profile/keys/${keys[0].id}/delete`)).statusCode).toBe(404);
    expect((await post('developer', `/profile/keys/${keys[0].id}/delete`)).statusCode).toBe(303);
    expect((await s.api('GET', '/user/keys', cast.developer)).body).toEqual([]);
  });

  it('creates a personal access token shown once (it works on the API), revokes it (it stops working); bad input is 400', async () => {
    const r = await post('reporter', '/profile/personal_access_tokens', { name: 'ci token', expires_at: '' });
    expect(r.statusCode).toBe(201);
    expect(r.headers['cache-control']).toBe('no-store');
    const token = /id="created-token" type="text" readonly value="([^"]+)"/.exec(r.body)![1]!;
    expect((await s.api('GET', '/user', token)).body.username).toBe(cast.reporter.username);
    const list = await get('reporter', '/profile/personal_access_tokens');
    expect(list.body).toContain('ci token');
    expect(list.body).not.toContain(token);
    const [row] = (await s.api('GET', '/user/personal_access_tokens', cast.reporter)).body;
    expect((await post('master', `/profile/personal_access_tokens/${row.id}/revoke`)).statusCode).toBe(404);
    expect((await post('reporter', `/profile/personal_access_tokens/${row.id}/revoke`)).statusCode).toBe(303);
    expect((await s.api('GET', '/user', token)).status).toBe(401);
    const blank = await post('reporter', '/profile/personal_access_tokens', { name: ' ' });
    expect(blank.statusCode).toBe(400);
    const date = await post('reporter', '/profile/personal_access_tokens', { name: 'x', expires_at: 'soon' });
    expect(date.statusCode).toBe(400);
    expect(date.body).toContain('expires_at');
    expect((await s.api('GET', '/user/personal_access_tokens', cast.reporter)).body).toHaveLength(1);
  });
});

describe('dashboard', () => {
  it('/ sends anonymous browsers to sign in, and shows a member their projects', async () => {
    const anon = await get(null, '/');
    expect(anon.statusCode).toBe(302);
    expect(anon.headers.location).toMatch(/^\/users\/sign_in/);
    for (const url of ['/', '/dashboard', '/dashboard/projects']) {
      const r = await get('guest', url);
      expect(r.statusCode).toBe(200);
      expect(r.body).toContain(`href="/${priv.path_with_namespace}"`);
      expect(r.body).not.toContain(other.path_with_namespace);
    }
  });

  it('issues and merge requests assigned to you or created by you, only where you may still read them', async () => {
    const mine = (await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: 'Assigned to the reporter', assignee_id: cast.reporter.id })).body;
    const assigned = await get('reporter', '/dashboard/issues');
    expect(assigned.body).toContain('Assigned to the reporter');
    expect(assigned.body).toContain(`href="${base}/issues/${mine.iid}"`);
    const authored = await get('guest', '/dashboard/issues?scope=authored&state=all');
    expect(authored.body).toContain('Guest issue');
    expect(authored.body).not.toContain('Assigned to the reporter');
    await s.api('PUT', `/projects/${priv.id}/merge_requests/${(await s.api('GET', `/projects/${priv.id}/merge_requests?state=opened`, cast.owner)).body[0].id}`, cast.owner, { assignee_id: cast.developer.id });
    const mrs = await get('developer', '/dashboard/merge_requests');
    expect(mrs.statusCode).toBe(200);
    expect(mrs.body).toContain('Auto');
    const created = await get('developer', '/dashboard/merge_requests?scope=authored&state=merged');
    expect(created.body).toContain('Add the feature');
    expect((await get('nonMember', '/dashboard/merge_requests?scope=authored&state=all')).body).toContain('No merge requests here.');
  });

  it('todos: listed, marked done through the form (gone from the API\'s pending list); another user\'s todo is 404', async () => {
    await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: 'Todo for the master', assignee_id: cast.master.id });
    const page = await get('master', '/dashboard/todos');
    expect(page.body).toContain('Todo for the master');
    const [todo] = (await s.api('GET', '/todos', cast.master)).body;
    expect((await post('developer', `/dashboard/todos/${todo.id}/done`)).statusCode).toBe(404);
    expect((await post('master', `/dashboard/todos/${todo.id}/done`)).statusCode).toBe(303);
    expect((await s.api('GET', '/todos', cast.master)).body.map((t: { id: number }) => t.id)).not.toContain(todo.id);
    expect((await get('master', '/dashboard/todos?state=done')).body).toContain('Todo for the master');
  });
});

