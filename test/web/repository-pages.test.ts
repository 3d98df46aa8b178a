/**
 * The pages of brief pp (issue 24 items 1, 2, 4): branches, tags, compare, milestones, labels; diffs inline and side by
 * side with line anchors; the merge request's commits and pipelines; anonymous readers of a public project (8.13
 * anonymous_rules) and the 404/403/sign-in answers where the API refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { pipelinesOf, pushFiles } from '../helpers/ci.js';
import { pageReader } from '../helpers/web.js';
import { commitTo } from '../helpers/repository.js';

let s: TestServer;
let cast: Cast;
let page: ReturnType<typeof pageReader<keyof Cast>>;
let priv: { id: number; path_with_namespace: string; web_url: string };
let pub: { id: number; path_with_namespace: string; web_url: string };
let mr: { iid: number; web_url: string };
let pubMr: { iid: number; web_url: string };
let secretIssue: { iid: number; web_url: string };
let openIssue: { iid: number; web_url: string };
let milestoneIid: number;
let pubPipeline: number;

const OLD = 'line one\nline two\nline three\nline four\n';
const NEW = 'line one\nline 2 changed\nline three\nline four\nline five <b>\n';

beforeAll(async () => {
  s = await startTestServer({ signinMaxFailures: '1000' });
  cast = await makeCast(s, 'REPO');
  for (const u of Object.values(cast)) if (u !== s.root) await s.api('PUT', `/users/${u.id}`, s.root, { password: 'password123' });
  page = pageReader(s, cast, (who) => (who === 'admin' ? 'rootpassword123' : 'password123'));
  priv = (await makeProject(s, cast.owner, 'repo-app')) as typeof priv;
  await addCastMembers(s.ctx, cast, priv.id);
  await pushFiles(s.ctx, priv.id, cast.owner.id, { 'notes.txt': OLD, '.gitlab-ci.yml': 'test:\n  script: ["echo hi"]\n' }, { message: 'First commit' });
  await pushFiles(s.ctx, priv.id, cast.owner.id, { 'notes.txt': NEW, 'added.md': '# Added\n' }, { branch: 'feature/x', from: 'master', message: 'Change the notes' });
  expect((await s.api('POST', `/projects/${priv.id}/repository/tags`, cast.owner, { tag_name: 'v1.0', ref: 'master', message: 'First release', release_description: 'Release **notes** <script>x()</script>' })).status).toBe(201);
  expect((await s.api('PUT', `/projects/${priv.id}/repository/branches/master/protect`, cast.owner, {})).status).toBe(200);
  const m = await s.api('POST', `/projects/${priv.id}/merge_requests`, cast.owner, { title: 'Notes change', source_branch: 'feature/x', target_branch: 'master' });
  mr = m.body;
  const ms = await s.api('POST', `/projects/${priv.id}/milestones`, cast.owner, { title: 'Sprint <1>', description: 'The **first** sprint', due_date: '2026-12-31' });
  milestoneIid = ms.body.iid;
  await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: 'Open work', milestone_id: ms.body.id });
  await s.api('POST', `/projects/${priv.id}/issues`, cast.owner, { title: 'Hidden work', milestone_id: ms.body.id, confidential: true });
  await s.api('POST', `/projects/${priv.id}/labels`, cast.owner, { name: 'bug <x>', color: '#d9534f', description: 'Something is broken' });

  pub = (await makeProject(s, cast.owner, 'open-repo', { visibility: 20 })) as typeof pub;
  await pushFiles(s.ctx, pub.id, cast.owner.id, { 'README.md': 'Public\n', '.gitlab-ci.yml': 'test:\n  script: ["echo hi"]\n' });
  await pushFiles(s.ctx, pub.id, cast.owner.id, { 'README.md': 'Public, changed\n' }, { branch: 'topic', from: 'master' });
  pubMr = (await s.api('POST', `/projects/${pub.id}/merge_requests`, cast.owner, { title: 'Public change', source_branch: 'topic', target_branch: 'master' })).body;
  openIssue = (await s.api('POST', `/projects/${pub.id}/issues`, cast.owner, { title: 'Anyone reads this' })).body;
  secretIssue = (await s.api('POST', `/projects/${pub.id}/issues`, cast.owner, { title: 'Only members read this', confidential: true })).body;
  pubPipeline = (await pipelinesOf(s.ctx, pub.id))[0]!.id;
}, 60_000);
afterAll(async () => {
  await s?.close();
});

describe('branches and tags', () => {
  it('lists the branches with default and protected marks and a compare link, as GET .../repository/branches', async () => {
    const api = await s.api('GET', `/projects/${priv.id}/repository/branches`, cast.reporter);
    const r = await page(`${priv.web_url}/branches`, 'reporter');
    expect(r.statusCode).toBe(200);
    for (const b of api.body as { name: string; commit: { id: string } }[]) {
      expect(r.body).toContain(`href="/${priv.path_with_namespace}/tree/${b.name}"`);
      expect(r.body).toContain(b.commit.id.slice(0, 8));
    }
    expect(r.body).toMatch(/master<\/a> <span class="status">default<\/span> <span class="status">protected<\/span>/);
    expect(r.body).toContain(`href="/${priv.path_with_namespace}/compare/master...feature/x"`);
  });

  it('lists the tags with their message and release notes, sanitized', async () => {
    const r = await page(`${priv.web_url}/tags`, 'reporter');
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain(`href="/${priv.path_with_namespace}/tree/v1.0"`);
    expect(r.body).toContain('First release');
    expect(r.body).toContain('Release <strong>notes</strong>');
    expect(r.body).not.toMatch(/<script/i);
  });

  it('a guest gets 403 (no download_code, as the API), a non-member 404, anonymous is sent to sign in', async () => {
    expect((await s.api('GET', `/projects/${priv.id}/repository/branches`, cast.guest)).status).toBe(403);
    for (const suffix of ['branches', 'tags', 'compare/master...feature/x']) {
      expect((await page(`${priv.web_url}/${suffix}`, 'guest')).statusCode).toBe(403);
      expect((await page(`${priv.web_url}/${suffix}`, 'nonMember')).statusCode).toBe(404);
      expect((await page(`${priv.web_url}/${suffix}`, null)).statusCode).toBe(302);
    }
  });
});

describe('compare and diffs', () => {
  it('shows the commits and the changes of from...to (a ref with a slash in it), as GET .../repository/compare', async () => {
    const api = await s.api('GET', `/projects/${priv.id}/repository/compare?from=master&to=feature/x`, cast.reporter);
    const r = await page(`${priv.web_url}/compare/master...feature/x`, 'reporter');
    expect(r.statusCode).toBe(200);
    for (const c of api.body.commits as { id: string; title: string }[]) {
      expect(r.body).toContain(`href="/${priv.path_with_namespace}/commit/${c.id}"`);
      expect(r.body).toContain(c.title);
    }
    expect(r.body).toContain(`Changes (${api.body.diffs.length} files)`);
    expect(r.body).toContain('added.md');
    expect(r.body).toContain('line <ins>2 changed</ins>'); // the changed words marked (diff2html)
    expect(r.body).toContain('line five &lt;b&gt;');
  });

  it('pages long commit lists 40 at a time (?commits_page=), on the comparison and on the merge request', async () => {
    // 42 commits written to the repository, then the 43rd pushed (processed as a push of the branch): the pages read git
    for (let i = 1; i < 43; i++) await commitTo(s.ctx, priv.id, 'many', { 'many.txt': `${i}\n` }, { from: 'master', message: `Many ${i}` });
    await pushFiles(s.ctx, priv.id, cast.owner.id, { 'many.txt': '43\n' }, { branch: 'many', message: 'Many 43' });
    const many = (await s.api('POST', `/projects/${priv.id}/merge_requests`, cast.owner, { title: 'Many commits', source_branch: 'many', target_branch: 'master' })).body;
    const commitLinks = (body: string) => (body.match(/<ol class="list commits">([\s\S]*?)<\/ol>/)?.[1].match(/\/commit\/[0-9a-f]{40}/g) ?? []).length;
    for (const url of [`${priv.web_url}/compare/master...many`, `${priv.web_url}/merge_requests/${many.iid}`]) {
      const first = await page(url, 'reporter');
      expect(first.statusCode).toBe(200);
      expect(first.body).toMatch(/43 commits|Commits \(43\)/);
      expect(commitLinks(first.body)).toBe(40);
      expect(first.body).toContain('href="?commits_page=2"');
      const second = await page(`${url}?commits_page=2`, 'reporter');
      expect(commitLinks(second.body)).toBe(3);
      const shas = (body: string) => body.match(/<ol class="list commits">([\s\S]*?)<\/ol>/)![1].match(/\/commit\/[0-9a-f]{40}/g)!;
      expect(new Set([...shas(first.body), ...shas(second.body)]).size).toBe(43);
      expect(second.body).toContain('href="?commits_page=1"');
    }
  });

  it('inline: each line has its old/new numbers and a GitLab line anchor (sha1 of the path)_old_new', async () => {
    const r = await page(`${priv.web_url}/compare/master...feature/x`, 'reporter');
    const anchor = '83348d283c1ba0b3b4d55fdc04c39a165b933125'; // sha1('notes.txt')
    expect(r.body).toContain(`<section class="diff-file" id="${anchor}">`);
    expect(r.body).toMatch(new RegExp(`<tr class="del" id="${anchor}_2_0"><td class="ln"><a href="#${anchor}_2_0">2</a></td><td class="ln"></td><td class="line" data-sign="-">line <del>two</del></td></tr>`));
    expect(r.body).toMatch(new RegExp(`<tr class="add" id="${anchor}_0_2"><td class="ln"></td><td class="ln"><a href="#${anchor}_0_2">2</a></td><td class="line" data-sign="\\+">line <ins>2 changed</ins></td></tr>`));
    expect(r.body).toContain(`id="${anchor}_3_3"`);
    expect(r.body).toContain('<a href="?view=parallel">Side-by-side</a>');
    expect(r.body).toMatch(/<a href="\?view=inline" aria-current="page">Inline<\/a>/);
  });

  it('side by side (?view=parallel): a removed line beside the line that replaced it, added lines beside an empty cell', async () => {
    const r = await page(`${priv.web_url}/compare/master...feature/x?view=parallel`, 'reporter');
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('<table class="diff parallel">');
    expect(r.body).toMatch(/<td class="line del" id="[0-9a-f]{40}_2_0">line <del>two<\/del><\/td><td class="ln"><a href="#[0-9a-f]{40}_0_2">2<\/a><\/td><td class="line add" id="[0-9a-f]{40}_0_2">line <ins>2 changed<\/ins><\/td>/);
    expect(r.body).toMatch(/<td class="ln empty"><\/td><td class="line empty"><\/td><td class="ln"><a href="#[0-9a-f]{40}_0_5">5<\/a><\/td><td class="line add"/);
    expect(r.body).toMatch(/<a href="\?view=parallel" aria-current="page">Side-by-side<\/a>/);
  });

  it('the commit page and the merge request page take the same views', async () => {
    const commits = await page(`${priv.web_url}/commits/feature/x`, 'reporter');
    const sha = /\/commit\/([0-9a-f]{40})/.exec(commits.body)![1]!;
    expect((await page(`${priv.web_url}/commit/${sha}?view=parallel`, 'reporter')).body).toContain('<table class="diff parallel">');
    expect((await page(`${mr.web_url}?view=parallel`, 'reporter')).body).toContain('<table class="diff parallel">');
    expect((await page(mr.web_url, 'reporter')).body).toContain('<table class="diff">');
  });

  it('the same ref twice, an unknown ref, or no ... at all: a page saying so, or the 404 page', async () => {
    expect((await page(`${priv.web_url}/compare/master...master`, 'reporter')).body).toContain('nothing to compare');
    expect((await page(`${priv.web_url}/compare/master...nope`, 'reporter')).statusCode).toBe(404);
    expect((await page(`${priv.web_url}/compare/master`, 'reporter')).statusCode).toBe(404);
    expect((await page(`${priv.web_url}/compare/...master`, 'reporter')).statusCode).toBe(404);
  });

  it('the compare form sends to the comparison', async () => {
    const form = await page(`${priv.web_url}/compare`, 'reporter');
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain(`<form method="get" action="/${priv.path_with_namespace}/compare"`);
    const go = await page(`${priv.web_url}/compare?from=master&to=feature/x`, 'reporter');
    expect(go.statusCode).toBe(302);
    expect(go.headers.location).toBe(`/${priv.path_with_namespace}/compare/master...feature/x`);
  });
});

describe('the merge request page', () => {
  it('lists its commits (GET .../commits) and its pipelines, with a table of contents', async () => {
    const commits = await s.api('GET', `/projects/${priv.id}/merge_requests/${(await s.api('GET', `/projects/${priv.id}/merge_requests?iid=${mr.iid}`, cast.owner)).body[0].id}/commits`, cast.reporter);
    const r = await page(mr.web_url, 'reporter');
    expect(r.body).toContain(`<a href="#commits-title">Commits (${commits.body.length})</a>`);
    for (const c of commits.body as { id: string }[]) expect(r.body).toContain(`href="/${priv.path_with_namespace}/commit/${c.id}"`);
    const pipelines = (await pipelinesOf(s.ctx, priv.id)).filter((p) => p.ref === 'feature/x');
    expect(pipelines.length).toBeGreaterThan(0);
    expect(r.body).toContain(`<h2 id="pipelines-title">Pipelines (${pipelines.length})</h2>`);
    for (const p of pipelines) expect(r.body).toContain(`href="/${priv.path_with_namespace}/pipelines/${p.id}"`);
  });

  it('a push to the source branch shows in the changes at once (a new diff version, never the kept changes of the old)', async () => {
    expect((await page(mr.web_url, 'reporter')).body).not.toContain('late-file.txt');
    await pushFiles(s.ctx, priv.id, cast.owner.id, { 'late-file.txt': 'late\n' }, { branch: 'feature/x', message: 'A late change' });
    const after = await page(mr.web_url, 'reporter');
    expect(after.body).toContain('late-file.txt');
    expect(after.body).toContain('A late change');
  });

  it('a guest reads the merge request but not its pipelines (read_pipeline is reporter and up)', async () => {
    const r = await page(mr.web_url, 'guest');
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('Commits (');
    expect(r.body).not.toContain('pipelines-title');
  });
});

describe('milestones and labels', () => {
  it('lists milestones by state and pages them', async () => {
    const r = await page(`${priv.web_url}/milestones`, 'guest');
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain(`href="/${priv.path_with_namespace}/milestones/${milestoneIid}">Sprint &lt;1&gt;</a>`);
    expect(r.body).toContain('due 2026-12-31');
    expect((await page(`${priv.web_url}/milestones?state=closed`, 'guest')).body).toContain('No milestones here.');
  });

  it('one milestone: its description and the issues GET .../milestones/:id/issues lists for the reader', async () => {
    const asGuest = await page(`${priv.web_url}/milestones/${milestoneIid}`, 'guest');
    expect(asGuest.statusCode).toBe(200);
    expect(asGuest.body).toContain('The <strong>first</strong> sprint');
    expect(asGuest.body).toContain('Open work');
    expect(asGuest.body).not.toContain('Hidden work');
    expect(asGuest.body).toContain('1 issue<');
    const asReporter = await page(`${priv.web_url}/milestones/${milestoneIid}`, 'reporter');
    expect(asReporter.body).toContain('Hidden work');
    expect(asReporter.body).toContain('2 issues<');
    expect((await page(`${priv.web_url}/milestones/999`, 'reporter')).statusCode).toBe(404);
    expect((await page(`${priv.web_url}/milestones/99999999999`, 'reporter')).statusCode).toBe(404);
    expect((await page(`${priv.web_url}/milestones/${milestoneIid}`, 'nonMember')).statusCode).toBe(404);
  });

  it('lists labels with a colour swatch of our own origin (no inline style under the CSP)', async () => {
    const r = await page(`${priv.web_url}/labels`, 'guest');
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('<span class="label">bug &lt;x&gt;</span>');
    expect(r.body).toContain('Something is broken');
    expect(r.body).toContain('src="/-/assets/swatch/d9534f.svg"');
    expect(r.body).not.toContain('style=');
    const swatch = await s.app.inject({ method: 'GET', url: '/-/assets/swatch/d9534f.svg' });
    expect(swatch.statusCode).toBe(200);
    expect(swatch.headers['content-type']).toBe('image/svg+xml');
    expect(swatch.body).toContain('fill="#d9534f"');
    expect((await s.app.inject({ method: 'GET', url: '/-/assets/swatch/zz"><script>.svg' })).statusCode).toBe(404);
    expect((await page(`${priv.web_url}/labels`, 'nonMember')).statusCode).toBe(404);
  });

  it('milestones and labels follow the features: both issues and merge requests off is a 403 (as the API)', async () => {
    const p = (await makeProject(s, cast.owner, 'no-tracker', { extra: { issues_enabled: false, merge_requests_enabled: false } })) as typeof priv;
    expect((await s.api('GET', `/projects/${p.id}/labels`, cast.owner)).status).toBe(403);
    expect((await page(`${p.web_url}/labels`, 'owner')).statusCode).toBe(403);
    expect((await page(`${p.web_url}/milestones`, 'owner')).statusCode).toBe(403);
  });
});

describe('anonymous readers of a public project (8.13 anonymous_rules)', () => {
  it('read its issues (not the confidential ones), merge requests, pipelines and builds', async () => {
    const list = await page(`${pub.web_url}/issues`, null);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('Anyone reads this');
    expect(list.body).not.toContain('Only members read this');
    expect((await page(openIssue.web_url, null)).statusCode).toBe(200);
    expect((await page(secretIssue.web_url, null)).statusCode).toBe(404);
    expect((await page(secretIssue.web_url, 'nonMember')).statusCode).toBe(404);
    expect((await page(secretIssue.web_url, 'owner')).statusCode).toBe(200);
    const m = await page(pubMr.web_url, null);
    expect(m.statusCode).toBe(200);
    expect(m.body).toContain('Public change');
    expect(m.body).toContain('Public<ins>, changed</ins>');
    expect((await page(`${pub.web_url}/merge_requests`, null)).body).toContain('Public change');
    expect((await page(`${pub.web_url}/pipelines`, null)).body).toContain(`/pipelines/${pubPipeline}`);
    const pipeline = await page(`${pub.web_url}/pipelines/${pubPipeline}`, null);
    expect(pipeline.statusCode).toBe(200);
    const build = /\/builds\/(\d+)/.exec(pipeline.body)![1]!;
    expect((await page(`${pub.web_url}/builds/${build}`, null)).statusCode).toBe(200);
    for (const suffix of ['branches', 'tags', 'milestones', 'labels', 'compare/master...topic']) expect((await page(`${pub.web_url}/${suffix}`, null)).statusCode).toBe(200);
  });

  it('builds that are not public: the build page sends an anonymous reader to sign in', async () => {
    expect((await s.api('PUT', `/projects/${pub.id}`, cast.owner, { public_builds: false })).status).toBe(200);
    try {
      const build = /\/builds\/(\d+)/.exec((await page(`${pub.web_url}/pipelines/${pubPipeline}`, null)).body)![1]!;
      const r = await page(`${pub.web_url}/builds/${build}`, null);
      expect(r.statusCode).toBe(302);
      expect(r.headers.location).toMatch(/^\/users\/sign_in\?redirect_to=/);
    } finally {
      await s.api('PUT', `/projects/${pub.id}`, cast.owner, { public_builds: true });
    }
  });

  it('an internal or private project is never read anonymously', async () => {
    const internal = (await makeProject(s, cast.owner, 'inside', { visibility: 10 })) as typeof priv;
    for (const url of [internal.web_url, `${internal.web_url}/issues`, `${priv.web_url}/merge_requests`, `${priv.web_url}/milestones`]) {
      expect([url, (await page(url, null)).statusCode]).toEqual([url, 302]);
    }
  });
});

describe('a big folder', () => {
  it('lists 200 entries a page (?page=), on the tree page and the project page', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 205; i++) files[`many/f${String(i).padStart(3, '0')}.txt`] = `${i}\n`;
    await pushFiles(s.ctx, pub.id, cast.owner.id, files, { branch: 'big', from: 'master' });
    const first = await page(`${pub.web_url}/tree/big/many`, 'owner');
    expect(first.body.match(/<tr><td class="blob">/g)).toHaveLength(200);
    expect(first.body).toContain('Page 1 of 2');
    expect(first.body).toContain('f199.txt');
    expect(first.body).not.toContain('f200.txt');
    const second = await page(`${pub.web_url}/tree/big/many?page=2`, 'owner');
    expect(second.body.match(/<tr><td class="blob">/g)).toHaveLength(5);
    expect(second.body).toContain('f204.txt');
  }, 120_000);
});
