/**
 * The web pages (issue 24): the session sign-in at /users/sign_in and sign-out, every web_url the API prints answering
 * 200 to someone who may read it, 404/403 pages exactly where the API answers them, anonymous browsers sent to sign
 * in (public code excepted), PRIVATE-TOKEN ignored, hostile titles and Markdown escaped or sanitized, the CSP header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeGroupAsync, makeProject, type Cast } from '../helpers/fixtures.js';
import { buildsOf, pipelinesOf, pushFiles } from '../helpers/ci.js';
import { browse, CookieJar, csrfOf } from '../helpers/oauth.js';
import { pageReader, signIn as signInAs } from '../helpers/web.js';

let s: TestServer;
let cast: Cast;
let priv: { id: number; path_with_namespace: string; web_url: string };
let pub: { id: number; path_with_namespace: string; web_url: string };
let issue: { iid: number; web_url: string };
let mr: { iid: number; web_url: string };
let pipelineId: number;
let buildId: number;
let groupUrl: string;

const HOSTILE_TITLE = '<script>alert("title")</script> Broken & "quoted"';
const HOSTILE_BODY = [
  '**bold** and a task list:', '', '- [x] done', '- [ ] todo', '',
  'See #1 and !1, ask @PAGEowner.', '',
  '<script>alert("body")</script>', '', '<img src="x" onerror="alert(1)">', '', '[click](javascript:alert(1))', '',
  '<a href="data:image/svg+xml;base64,PHN2Zz4=">svg</a>', '', '```js', 'const x = 1;', '```',
].join('\n');

const signIn = (user: TestUser | { username: string }, password = 'password123') => signInAs(s, user, password);
let page: ReturnType<typeof pageReader<keyof Cast>>;

beforeAll(async () => {
  s = await startTestServer({ signinMaxFailures: '1000' });
  cast = await makeCast(s, 'PAGE');
  page = pageReader(s, cast, (who) => (who === 'admin' ? 'rootpassword123' : 'password123'));
  for (const u of Object.values(cast)) if (u !== s.root) await s.api('PUT', `/users/${u.id}`, s.root, { password: 'password123' });
  priv = (await makeProject(s, cast.owner, 'secret-app')) as typeof priv;
  pub = (await makeProject(s, cast.owner, 'open-app', { visibility: 20 })) as typeof pub;
  await addCastMembers(s.ctx, cast, priv.id);
  await pushFiles(s.ctx, priv.id, cast.owner.id, {
    'README.md': '# Hello <b onclick="x()">there</b>\n\nA **readme** with `code`.\n',
    'src/main.ts': 'export const answer = 42;\nconsole.log("<script>");\n',
    '.gitlab-ci.yml': 'test:\n  script: ["echo hi"]\n',
  });
  await pushFiles(s.ctx, priv.id, cast.owner.id, { 'feature.txt': 'new\n' }, { branch: 'feature' });
  await pushFiles(s.ctx, pub.id, cast.owner.id, { 'README.md': 'Public readme\n' });
  const i = await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: HOSTILE_TITLE, description: HOSTILE_BODY });
  issue = i.body;
  await s.api('POST', `/projects/${priv.id}/issues/${i.body.id}/notes`, cast.reporter, { body: 'a note with <script>alert("note")</script> and _emphasis_' });
  const m = await s.api('POST', `/projects/${priv.id}/merge_requests`, cast.owner, { title: 'Add <feature>', source_branch: 'feature', target_branch: 'master' });
  mr = m.body;
  const [pipeline] = await pipelinesOf(s.ctx, priv.id);
  pipelineId = pipeline!.id;
  buildId = (await buildsOf(s.ctx, pipelineId))[0]!.id;
  const gid = await makeGroupAsync(s.ctx, 'pagegroup', { owner: cast.owner, visibility: 20 });
  groupUrl = (await s.api('GET', `/groups/${gid}`, cast.owner)).body.web_url;
}, 60_000);
afterAll(async () => {
  await s?.close();
});

describe('sign-in and sign-out', () => {
  it('the form carries a CSRF token; a good password starts a session (HttpOnly cookie) and goes to redirect_to', async () => {
    const jar = new CookieJar();
    const form = await browse(s, jar, 'GET', '/users/sign_in?redirect_to=/somewhere');
    expect(form.statusCode).toBe(200);
    expect(form.headers['content-type']).toBe('text/html; charset=utf-8');
    const r = await browse(s, jar, 'POST', '/users/sign_in', { login: cast.guest.username, password: 'password123', authenticity_token: csrfOf(form.body), redirect_to: '/somewhere' });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe('/somewhere');
    expect(String(r.headers['set-cookie'])).toMatch(/gantry_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
  });

  it('refuses a wrong password (401), a missing or wrong CSRF token (422) and an off-site redirect_to', async () => {
    const jar = new CookieJar();
    const form = await browse(s, jar, 'GET', '/users/sign_in');
    const bad = await browse(s, jar, 'POST', '/users/sign_in', { login: cast.guest.username, password: 'nope', authenticity_token: csrfOf(form.body) });
    expect(bad.statusCode).toBe(401);
    expect(jar.get('gantry_session')).toBeUndefined();
    const forged = await browse(s, jar, 'POST', '/users/sign_in', { login: cast.guest.username, password: 'password123', authenticity_token: 'forged' });
    expect(forged.statusCode).toBe(422);
    expect(jar.get('gantry_session')).toBeUndefined();
    const away = await browse(s, jar, 'POST', '/users/sign_in', { login: cast.guest.username, password: 'password123', authenticity_token: csrfOf(form.body), redirect_to: '//evil.test/x' });
    expect(away.headers.location).toBe('/');
  });

  it('signing out ends the session on the server: the old cookie reads nothing private any more', async () => {
    const jar = await signIn(cast.reporter);
    const cookie = jar.header();
    expect((await s.app.inject({ method: 'GET', url: `/${priv.path_with_namespace}/issues`, headers: { cookie } })).statusCode).toBe(200);
    const home = await s.app.inject({ method: 'GET', url: `/${priv.path_with_namespace}`, headers: { cookie } });
    const forged = await browse(s, jar, 'POST', '/users/sign_out', { authenticity_token: 'forged' });
    expect(forged.statusCode).toBe(422);
    const out = await browse(s, jar, 'POST', '/users/sign_out', { authenticity_token: csrfOf(home.body) });
    expect(out.statusCode).toBe(303);
    const after = await s.app.inject({ method: 'GET', url: `/${priv.path_with_namespace}/issues`, headers: { cookie } });
    expect(after.statusCode).toBe(302);
    expect(after.headers.location).toMatch(/^\/users\/sign_in\?redirect_to=/);
  });
});

describe('every web_url the API prints', () => {
  it('answers 200 with the strict CSP to the owner and a reporter', async () => {
    const user = (await s.api('GET', `/users/${cast.owner.id}`, cast.owner)).body.web_url as string;
    const urls = [
      priv.web_url, issue.web_url, mr.web_url, user, groupUrl, `${priv.web_url}/issues`, `${priv.web_url}/merge_requests`,
      `${priv.web_url}/pipelines`, `${priv.web_url}/pipelines/${pipelineId}`, `${priv.web_url}/builds/${buildId}`,
      `${priv.web_url}/tree/master`, `${priv.web_url}/tree/master/src`, `${priv.web_url}/blob/master/src/main.ts`, `${priv.web_url}/commits/master`,
      `/u/${cast.owner.username}`,
    ];
    for (const who of ['owner', 'reporter'] as const) {
      for (const url of urls) {
        const r = await page(url, who);
        expect([url, who, r.statusCode]).toEqual([url, who, 200]);
        expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(r.headers['content-security-policy']).toContain("default-src 'none'");
        expect(r.headers['content-security-policy']).not.toContain('unsafe-inline');
        // (no script but the one file of the live pages: the pipeline and its build are still pending here)
        expect(r.body.replace('<script src="/-/assets/live.js" defer></script>', '')).not.toMatch(/<script/i);
      }
    }
  });

  it('shows what the API shows: the README rendered, the file highlighted with line anchors, the raw file as text', async () => {
    const home = await page(priv.web_url, 'reporter');
    expect(home.body).toContain('<strong>readme</strong>');
    expect(home.body).not.toContain('onclick');
    const blob = await page(`${priv.web_url}/blob/master/src/main.ts`, 'reporter');
    expect(blob.body).toContain('id="L2"');
    expect(blob.body).toContain('href="#L2"');
    expect(blob.body).toContain('hljs-');
    expect(blob.body).toContain('&lt;script&gt;');
    const raw = await page(`${priv.web_url}/raw/master/src/main.ts`, 'reporter');
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(raw.body).toBe('export const answer = 42;\nconsole.log("<script>");\n');
    const commits = await page(`${priv.web_url}/commits/master`, 'reporter');
    const sha = /\/commit\/([0-9a-f]{40})/.exec(commits.body)![1]!;
    const commit = await page(`${priv.web_url}/commit/${sha}`, 'reporter');
    expect(commit.statusCode).toBe(200);
    expect(commit.body).toContain('class="diff"');
  });

  it('the MR page shows its changes; the pipeline page its builds; the build page its trace', async () => {
    const m = await page(mr.web_url, 'reporter');
    expect(m.body).toContain('feature.txt');
    expect(m.body).toContain('Add &lt;feature&gt;');
    const p = await page(`${priv.web_url}/pipelines/${pipelineId}`, 'reporter');
    expect(p.body).toContain(`/builds/${buildId}`);
  });
});

describe('escaping and sanitizing', () => {
  it('a hostile issue title, description and note never reach the page as markup', async () => {
    const r = await page(issue.web_url, 'owner');
    expect(r.statusCode).toBe(200);
    expect(r.body).not.toMatch(/<script/i);
    expect(r.body).toContain('&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt; Broken &amp; &quot;quoted&quot;');
    expect(r.body).not.toMatch(/onerror/i);
    expect(r.body).not.toMatch(/href="javascript:/i);
    expect(r.body).not.toMatch(/<a[^>]*javascript/i);
    expect(r.body).not.toMatch(/href="data:/i);
    expect(r.body).toContain('<strong>bold</strong>');
    expect(r.body).toContain('<em>emphasis</em>');
    expect(r.body).toMatch(/<input type="checkbox"[^>]*disabled[^>]*checked/);
    expect(r.body).toContain(`href="/${priv.path_with_namespace}/issues/1"`);
    expect(r.body).toContain(`href="/${priv.path_with_namespace}/merge_requests/1"`);
    expect(r.body).toContain('href="/PAGEowner"');
    expect(r.body).toContain('hljs-keyword');
    const list = await page(`${priv.web_url}/issues`, 'owner');
    expect(list.body).not.toMatch(/<script/i);
    expect(list.body).toContain('&lt;script&gt;');
  });
});

describe('lists and refs', () => {
  it('pages lists with ?page= (20 a page), newest first, keeping the state', async () => {
    for (let i = 0; i < 21; i++) await s.api('POST', `/projects/${pub.id}/issues`, cast.owner, { title: `Paged issue ${i}` });
    const first = await page(`${pub.web_url}/issues`, 'owner');
    expect(first.body).toContain('Paged issue 20');
    expect(first.body).not.toContain('Paged issue 0<');
    expect(first.body).toContain('href="?state=opened&amp;page=2"');
    const second = await page(`${pub.web_url}/issues?state=opened&page=2`, 'owner');
    expect(second.body).toContain('Paged issue 0<');
    expect(second.body).not.toContain('Paged issue 20');
    expect(second.body).toContain('Page 2 of 2');
    // a bad page number is page 1, never an error
    expect((await page(`${pub.web_url}/issues?page=-3`, 'owner')).body).toContain('Paged issue 20');
  });

  it('a user\'s page lists their projects 20 a page (?page=)', async () => {
    const u = await s.user('PAGEDOWNER', { projects_limit: 100 });
    for (let i = 0; i < 21; i++) await makeProject(s, u, `paged-${String(i).padStart(2, '0')}`, { visibility: 20 });
    const first = await page(`/${u.username}`, 'owner');
    expect(first.body.match(/href="\/PAGEDOWNER\/paged-\d\d"/g)).toHaveLength(20);
    expect(first.body).toContain('href="?page=2"');
    const second = await page(`/${u.username}?page=2`, 'owner');
    expect(second.body.match(/href="\/PAGEDOWNER\/paged-\d\d"/g)).toHaveLength(1);
    expect(second.body).toContain('Page 2 of 2');
    // past the end: the last page
    expect((await page(`/u/${u.username}?page=9`, 'owner')).body).toContain('Page 2 of 2');
  });

  it('a ref with a slash in it (release/1.0) is told from the path by the refs that exist', async () => {
    await pushFiles(s.ctx, pub.id, cast.owner.id, { 'docs/guide.md': '# Guide\n' }, { branch: 'release/1.0', from: 'master' });
    const tree = await page(`${pub.web_url}/tree/release/1.0/docs`, 'owner');
    expect(tree.statusCode).toBe(200);
    expect(tree.body).toContain(`href="/${pub.path_with_namespace}/blob/release/1.0/docs/guide.md"`);
    const blob = await page(`${pub.web_url}/blob/release/1.0/docs/guide.md`, 'owner');
    expect(blob.body).toContain('<h1>Guide</h1>');
    expect((await page(`${pub.web_url}/blob/release/2.0/docs/guide.md`, 'owner')).statusCode).toBe(404);
    expect((await page(`${pub.web_url}/blob/master/docs/guide.md`, 'owner')).statusCode).toBe(404);
  });

  it('a Markdown image of another site is a link, never loaded', async () => {
    const i = await s.api('POST', `/projects/${pub.id}/issues`, cast.owner, { title: 'pixel', description: '![px](https://tracker.test/p.gif)' });
    const r = await page(i.body.web_url, 'owner');
    expect(r.body).not.toMatch(/<img[^>]*tracker\.test/);
    expect(r.body).toMatch(/<a href="https:\/\/tracker\.test\/p\.gif"[^>]*>px<\/a>/);
  });
});

describe('who sees what', () => {
  it('a non-member gets the 404 page wherever the API answers 404', async () => {
    expect((await s.api('GET', `/projects/${priv.id}`, cast.nonMember)).status).toBe(404);
    for (const url of [priv.web_url, issue.web_url, mr.web_url, `${priv.web_url}/pipelines/${pipelineId}`, `${priv.web_url}/builds/${buildId}`, `${priv.web_url}/blob/master/README.md`, `${priv.web_url}/raw/master/README.md`]) {
      const r = await page(url, 'nonMember');
      expect([url, r.statusCode]).toEqual([url, 404]);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.body).not.toContain('secret-app</h1>');
    }
    // and an absent project, issue or build is the same page
    expect((await page(`${priv.web_url}/issues/999`, 'owner')).statusCode).toBe(404);
    expect((await page(`${priv.web_url}/builds/99999999999`, 'owner')).statusCode).toBe(404);
    expect((await page('/nobody/nothing', 'owner')).statusCode).toBe(404);
  });

  it('a guest gets 403 where the API answers 403 (pipelines, builds, code), 200 for issues', async () => {
    expect((await s.api('GET', `/projects/${priv.id}/pipelines`, cast.guest)).status).toBe(403);
    expect((await page(`${priv.web_url}/pipelines`, 'guest')).statusCode).toBe(403);
    expect((await page(`${priv.web_url}/builds/${buildId}`, 'guest')).statusCode).toBe(403);
    expect((await page(`${priv.web_url}/tree/master`, 'guest')).statusCode).toBe(403);
    expect((await page(issue.web_url, 'guest')).statusCode).toBe(200);
    expect((await page(priv.web_url, 'guest')).statusCode).toBe(200);
  });

  it('an anonymous browser reads a public project (8.13 anonymous_rules), and is sent to sign in for anything else (existing or not)', async () => {
    expect((await page(pub.web_url, null)).statusCode).toBe(200);
    expect((await page(`${pub.web_url}/blob/master/README.md`, null)).statusCode).toBe(200);
    expect((await page(`${pub.web_url}/issues`, null)).statusCode).toBe(200);
    for (const url of [priv.web_url, issue.web_url, '/nobody/nothing', `/u/${cast.owner.username}`]) {
      const r = await page(url, null);
      expect([url, r.statusCode]).toEqual([url, 302]);
      expect(r.headers.location).toBe(`/users/sign_in?${new URLSearchParams({ redirect_to: url.replace(/^https?:\/\/[^/]+/, '') })}`);
    }
  });

  it('pages take cookies only: a PRIVATE-TOKEN, private_token or bearer token signs no one in', async () => {
    const path = `/${priv.path_with_namespace}/issues`;
    for (const r of [
      await s.app.inject({ method: 'GET', url: path, headers: { 'private-token': cast.owner.token } }),
      await s.app.inject({ method: 'GET', url: `${path}?private_token=${cast.owner.token}` }),
      await s.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${cast.owner.token}` } }),
    ]) expect(r.statusCode).toBe(302);
  });

  it('paths under the API and other prefixes are not pages: the JSON 404', async () => {
    for (const url of ['/api/v3/nothing/here/issues', '/api', '/oauth/x/issues', `/${priv.path_with_namespace}.git/issues`]) {
      const r = await s.app.inject({ method: 'GET', url });
      expect([url, r.statusCode]).toEqual([url, 404]);
      expect(r.json()).toEqual({ message: '404 Not Found' });
    }
  });
});

describe('the sign-in throttle', () => {
  it('after too many failed sign-ins: the form again with when to retry (429), not signed in even with the right password', async () => {
    const t = await startTestServer({ signinMaxFailures: '3' });
    try {
      await t.user('hasty');
      const jar = new CookieJar();
      const form = await t.app.inject({ method: 'GET', url: '/users/sign_in' });
      jar.take(form.headers);
      const attempt = async (password: string) => {
        const r = await t.app.inject({
          method: 'POST', url: '/users/sign_in', headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ login: 'hasty', password, authenticity_token: csrfOf(form.body) }).toString(),
        });
        jar.take(r.headers);
        return r;
      };
      for (let i = 0; i < 3; i++) expect((await attempt('wrong-password')).statusCode).toBe(401);
      const r = await attempt('password123');
      expect(r.statusCode).toBe(429);
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      expect(r.body).toMatch(/Too many failed sign-ins for this account\. Try again in \d+ minutes?\./);
      expect(jar.get('gantry_session')).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
