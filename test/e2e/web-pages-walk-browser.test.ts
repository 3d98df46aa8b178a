/**
 * The web pages of a populated instance in Chromium (issue 24, brief pp): the real gantryd, the real gantry-runner and
 * Debian's chromium through playwright-core.
 * - Every page (project, code, commits, compare, branches, tags, issues, merge requests with their commits, changes and
 *   pipelines, milestones, labels, pipelines, builds) walked as the owner, a reporter, a non-member and anonymously:
 *   each answers what the API answers that caller (200, 403, 404; anonymous: 200 on the public project as 8.13's
 *   anonymous_rules, the sign-in page on the private one), and shows what the API lists.
 * - A build's trace followed live in its page while gantry-runner runs it, and the pipeline page's status changing,
 *   both without a reload.
 * - XSS cases (a note with <script>, javascript: links, onerror=, a data-URI SVG) inert: no dialog, no request to the
 *   injected host, no CSP report.
 * With GANTRY_SCREENSHOTS=1 it writes the pages' screenshots under docs/screenshots/ (desktop and phone width).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { api, cleanEnv, cleanupTmp, eventually, killAll, ROOT, startGantryd, startRunner, tmp, type Daemon, type RunnerProcess } from './helpers.js';
import { dataDirArgs, dropDatabases } from './database.js';

const ROOT_PASSWORD = 'rootpassword123';
const RUNNERS_TOKEN = 'web-walk-registration-token-0123456789';
const SCREENSHOTS = process.env.GANTRY_SCREENSHOTS === '1';
const CI_YML = 'trace:\n  script:\n    - echo start-of-trace\n    - sleep 4\n    - echo middle-of-trace\n    - sleep 4\n    - echo end-of-trace\n';

type Who = 'owner' | 'reporter' | 'outsider' | 'anonymous';
let daemon: Daemon;
let browser: Browser;
let runner: RunnerProcess | undefined;
const tokens: Record<Exclude<Who, 'anonymous'>, string> = { owner: '', reporter: '', outsider: '' };
const logins: Record<Exclude<Who, 'anonymous'>, string> = { owner: 'alice', reporter: 'bob', outsider: 'carol' };
const contexts = new Map<Who, BrowserContext>();
type Project = { id: number; web_url: string; path_with_namespace: string };
let priv: Project;
let pub: Project;
/** Per project: [web path suffix, API path] pairs, each page beside the API call that answers the same question. */
const pairs = new Map<number, [string, string][]>();
let buildId: number;
let pipelineId: number;
let issueUrl: string;
let mrUrl: string;

const call = (token: string | null, method: string, path: string, body?: unknown) => api(daemon.url, method, path, token, body);

async function populate(p: Project, owner: string, opts: { hostile?: boolean } = {}): Promise<void> {
  const file = async (path: string, content: string, branch = 'master', start?: string) =>
    expect((await call(owner, 'POST', `/projects/${p.id}/repository/files`, {
      file_path: path, branch_name: branch, commit_message: `Add ${path}`, content, ...(start ? { start_branch: start } : {}),
    })).status).toBe(201);
  await file('README.md', `# ${p.path_with_namespace}\n\nA **project** to walk. :tada:\n`);
  await file('src/app.ts', 'export const answer = 42;\n');
  expect((await call(owner, 'POST', `/projects/${p.id}/repository/branches`, { branch_name: 'feature', ref: 'master' })).status).toBe(201);
  await file('src/feature.ts', 'export const feature = true;\n', 'feature');
  // a diff whose file name and lines are markup: the merge request's changes must show them as text
  if (opts.hostile) await file('src/<img src=x onerror=alert(6)>.html', '<script>alert(7)</script><img src="http://evil.test/d.png" onerror="alert(8)">\n', 'feature');
  expect((await call(owner, 'POST', `/projects/${p.id}/repository/tags`, { tag_name: 'v1.0', ref: 'master', release_description: 'The **first** one' })).status).toBe(201);
  const milestone = (await call(owner, 'POST', `/projects/${p.id}/milestones`, { title: 'Sprint 1' })).body;
  await call(owner, 'POST', `/projects/${p.id}/labels`, { name: 'bug', color: '#d9534f' });
  const description = opts.hostile
    ? ['Hostile cases:', '', '<script>alert("desc")</script>', '', '<img src="http://evil.test/pixel.png" onerror="alert(1)">', '',
      '[click](javascript:alert(2))', '', '<img src="data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIG9ubG9hZD0iYWxlcnQoMykiLz4=">', '',
      '<a href="data:image/svg+xml,<svg onload=alert(4)>">svg link</a>', '', '![track](http://evil.test/t.gif)'].join('\n')
    : 'Plain issue :bug:';
  const issue = (await call(owner, 'POST', `/projects/${p.id}/issues`, { title: `Issue of ${p.path_with_namespace}`, description, milestone_id: milestone.id, labels: 'bug' })).body;
  await call(owner, 'POST', `/projects/${p.id}/issues/${issue.id}/notes`, { body: opts.hostile ? 'a note <script>alert("note")</script> <b onmouseover="alert(5)">hover</b>' : 'A note' });
  const mr = (await call(owner, 'POST', `/projects/${p.id}/merge_requests`, { title: `MR of ${p.path_with_namespace}`, source_branch: 'feature', target_branch: 'master' })).body;
  if (opts.hostile) [issueUrl, mrUrl] = [issue.web_url, mr.web_url];
  const commits = (await call(owner, 'GET', `/projects/${p.id}/repository/commits`)).body as { id: string }[];
  pairs.set(p.id, [
    ['', `/projects/${p.id}`],
    ['/tree/master/src', `/projects/${p.id}/repository/tree?path=src`],
    ['/blob/master/src/app.ts', `/projects/${p.id}/repository/files?file_path=src/app.ts&ref=master`],
    ['/commits/master', `/projects/${p.id}/repository/commits`],
    [`/commit/${commits[0]!.id}`, `/projects/${p.id}/repository/commits/${commits[0]!.id}`],
    ['/compare/master...feature', `/projects/${p.id}/repository/compare?from=master&to=feature`],
    ['/branches', `/projects/${p.id}/repository/branches`],
    ['/tags', `/projects/${p.id}/repository/tags`],
    ['/issues', `/projects/${p.id}/issues`],
    [`/issues/${issue.iid}`, `/projects/${p.id}/issues/${issue.id}`],
    ['/merge_requests', `/projects/${p.id}/merge_requests`],
    [`/merge_requests/${mr.iid}`, `/projects/${p.id}/merge_requests/${mr.id}`],
    [`/merge_requests/${mr.iid}?view=parallel`, `/projects/${p.id}/merge_requests/${mr.id}/changes`],
    ['/milestones', `/projects/${p.id}/milestones`],
    [`/milestones/${milestone.iid}`, `/projects/${p.id}/milestones/${milestone.id}`],
    ['/labels', `/projects/${p.id}/labels`],
    ['/pipelines', `/projects/${p.id}/pipelines`],
  ]);
}

async function contextOf(who: Who): Promise<BrowserContext> {
  const known = contexts.get(who);
  if (known) return known;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  if (who !== 'anonymous') {
    const page = await context.newPage();
    await page.goto(`${daemon.url}/users/sign_in`);
    await page.getByLabel('Username or email').fill(logins[who]);
    await page.getByLabel('Password').fill('password123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState();
    expect(new URL(page.url()).pathname).not.toBe('/users/sign_in');
    await page.close();
  }
  contexts.set(who, context);
  return context;
}

/** Watch a page for what must never happen: dialogs, requests to the injected host, script errors, CSP reports. */
function watch(page: Page) {
  const problems: string[] = [];
  page.on('dialog', async (d) => { problems.push(`dialog: ${d.message()}`); await d.dismiss(); });
  page.on('request', (r) => { if (r.url().includes('evil.test')) problems.push(`request: ${r.url()}`); });
  page.on('pageerror', (e) => problems.push(`error: ${e.message}`));
  // (a 403/404 page is itself logged as a failed load: that is the answer expected, not a problem)
  page.on('console', (m) => { if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 40[34]/.test(m.text())) problems.push(`console: ${m.text()}`); });
  return problems;
}

beforeAll(async () => {
  const dir = tmp();
  daemon = await startGantryd(['--port', '0', ...(await dataDirArgs(dir)), '--runners-token', RUNNERS_TOKEN], cleanEnv({ GANTRY_ROOT_PASSWORD: ROOT_PASSWORD }));
  const root = (await call(null, 'POST', '/session', { login: 'root', password: ROOT_PASSWORD })).body.private_token;
  for (const who of ['owner', 'reporter', 'outsider'] as const) {
    const name = logins[who];
    expect((await call(root, 'POST', '/users', { username: name, email: `${name}@example.com`, name: name.toUpperCase(), password: 'password123', projects_limit: 10 })).status).toBe(201);
    tokens[who] = (await call(null, 'POST', '/session', { login: name, password: 'password123' })).body.private_token;
  }
  priv = (await call(tokens.owner, 'POST', '/projects', { name: 'looking-glass' })).body;
  pub = (await call(tokens.owner, 'POST', '/projects', { name: 'open-garden', visibility_level: 20 })).body;
  const bob = (await call(tokens.reporter, 'GET', '/user')).body;
  expect((await call(tokens.owner, 'POST', `/projects/${priv.id}/members`, { user_id: bob.id, access_level: 20 })).status).toBe(201);
  await populate(priv, tokens.owner, { hostile: true });
  await populate(pub, tokens.owner);
  // the pipeline whose build the runner will run (no runner yet: it waits, pending)
  expect((await call(tokens.owner, 'POST', `/projects/${priv.id}/repository/files`, { file_path: '.gitlab-ci.yml', branch_name: 'master', commit_message: 'CI', content: CI_YML })).status).toBe(201);
  const pipelines = await eventually('a pipeline', async () => ((await call(tokens.owner, 'GET', `/projects/${priv.id}/pipelines`)).body as { id: number }[])[0]);
  pipelineId = pipelines.id;
  buildId = ((await call(tokens.owner, 'GET', `/projects/${priv.id}/builds`)).body as { id: number; pipeline: { id: number } }[]).find((b) => b.pipeline.id === pipelineId)!.id;
  pairs.get(priv.id)!.push([`/pipelines/${pipelineId}`, `/projects/${priv.id}/pipelines/${pipelineId}`], [`/builds/${buildId}`, `/projects/${priv.id}/builds/${buildId}`]);
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await runner?.stop('SIGKILL');
  await daemon?.stop();
  killAll();
  await dropDatabases();
  cleanupTmp();
});

describe('every page as each caller, beside the API', () => {
  for (const who of ['owner', 'reporter', 'outsider', 'anonymous'] as const) {
    it(`as ${who}: each page answers what the API answers`, async () => {
      const page = await (await contextOf(who)).newPage();
      const problems = watch(page);
      const seen: string[] = [];
      for (const p of [priv, pub]) {
        for (const [suffix, apiPath] of pairs.get(p.id)!) {
          const url = `${p.web_url}${suffix}`;
          const res = await page.goto(url);
          const status = res?.status() ?? 0;
          let expected: number;
          if (who === 'anonymous') expected = p.id === pub.id ? 200 : 302;
          else expected = (await call(tokens[who], 'GET', apiPath)).status;
          if (expected === 302) {
            // the sign-in page, coming back to the page afterwards
            expect([url, new URL(page.url()).pathname]).toEqual([url, '/users/sign_in']);
            expect(new URL(page.url()).searchParams.get('redirect_to')).toBe(new URL(url).pathname + new URL(url).search);
          } else {
            expect([url, who, status]).toEqual([url, who, expected]);
          }
          if (status === 200) {
            seen.push(url);
            expect(await page.locator('script:not([src])').count()).toBe(0);
            // one heading of the page (a README's own headings are inside its .md box)
            expect([url, await page.locator('h1:not(.md h1)').count()]).toEqual([url, 1]);
          }
        }
      }
      // what the lists show is what the API lists to that caller
      if (who !== 'anonymous') {
        const visible = (await call(tokens[who], 'GET', `/projects/${pub.id}/issues`)).body as { title: string }[];
        await page.goto(`${pub.web_url}/issues`);
        for (const i of visible) await expect(page.getByRole('link', { name: i.title }).count()).resolves.toBe(1);
      }
      expect(problems).toEqual([]);
      expect(seen.length).toBeGreaterThan(who === 'outsider' || who === 'anonymous' ? 10 : 20);
      await page.close();
    }, 120_000);
  }
});

describe('hostile content in Chromium', () => {
  it('a note with <script>, javascript: links, onerror=, a data-URI SVG: nothing runs, nothing is requested from the injected host', async () => {
    const page = await (await contextOf('owner')).newPage();
    const problems = watch(page);
    await page.goto(issueUrl);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Issue of');
    await expect(page.locator('.note-body b').textContent()).resolves.toBe('hover');
    await page.locator('.note-body b').hover();
    for (const link of await page.locator('.description a').all()) {
      const href = (await link.getAttribute('href')) ?? '';
      expect(href).not.toMatch(/^\s*(javascript|data):/i);
    }
    expect(await page.locator('script').count()).toBe(0);
    expect(await page.locator('[onerror], [onload], [onmouseover]').count()).toBe(0);
    expect(await page.locator('img[src^="data:"], svg').count()).toBe(0);
    await page.waitForTimeout(300);
    expect(problems).toEqual([]);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/screenshots/web-issue-hostile.png'), fullPage: true });
    await page.close();
  });

  it('a diff (diff2html) whose file name and lines are <script> and onerror= shows them as text, inline and side by side', async () => {
    const page = await (await contextOf('owner')).newPage();
    const problems = watch(page);
    for (const url of [mrUrl, `${mrUrl}?view=parallel`]) {
      await page.goto(url);
      expect((await page.locator('.diff-file h3').allTextContents()).some((t) => t.startsWith('src/<img src=x onerror=alert(6)>.html (new file)'))).toBe(true);
      await expect(page.locator('table.diff td.line').allTextContents()).resolves.toContain('<script>alert(7)</script><img src="http://evil.test/d.png" onerror="alert(8)">');
      expect(await page.locator('script').count()).toBe(0);
      expect(await page.locator('main img, [onerror], [onload]').count()).toBe(0);
    }
    await page.waitForTimeout(300);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('live pages while gantry-runner runs the build', () => {
  it('the build page follows the trace and the pipeline page its statuses, without a reload', async () => {
    const context = await contextOf('reporter');
    const buildPage = await context.newPage();
    const pipelinePage = await context.newPage();
    const problems = [...watch(buildPage), ...watch(pipelinePage)];
    await buildPage.goto(`${priv.web_url}/builds/${buildId}`);
    await pipelinePage.goto(`${priv.web_url}/pipelines/${pipelineId}`);
    await expect(buildPage.locator('[data-status-of="build"]').textContent()).resolves.toBe('pending');
    await expect(pipelinePage.locator('[data-status-of="pipeline"]').textContent()).resolves.toBe('pending');
    // marks that a reload would wipe
    await buildPage.evaluate(() => { (window as unknown as { stayed: number }).stayed = 1; });
    await pipelinePage.evaluate(() => { (window as unknown as { stayed: number }).stayed = 1; });

    runner = await startRunner(daemon.url, RUNNERS_TOKEN, { description: 'web-walk-runner' });
    // the middle of the trace arrives while the build still runs
    await buildPage.waitForFunction(() => document.querySelector('pre.trace')?.textContent?.includes('middle-of-trace'), undefined, { timeout: 60_000 });
    expect(await buildPage.locator('pre.trace').textContent()).not.toContain('end-of-trace');
    expect((await call(tokens.reporter, 'GET', `/projects/${priv.id}/builds/${buildId}`)).body.status).toBe('running');
    await expect(buildPage.locator('[data-status-of="build"]').textContent()).resolves.toBe('running');
    await pipelinePage.waitForFunction(() => document.querySelector('[data-status-of="pipeline"]')?.textContent === 'running', undefined, { timeout: 30_000 });
    if (SCREENSHOTS) await buildPage.screenshot({ path: join(ROOT, 'docs/screenshots/web-build-live.png') });
    // then the end, and the final status
    await buildPage.waitForFunction(() => document.querySelector('[data-status-of="build"]')?.textContent === 'success', undefined, { timeout: 60_000 });
    await expect(buildPage.locator('pre.trace').textContent()).resolves.toContain('end-of-trace');
    await expect(buildPage.locator('#live-state').textContent()).resolves.toContain('finished: success');
    await pipelinePage.waitForFunction(() => document.querySelector('[data-status-of="pipeline"]')?.textContent === 'success', undefined, { timeout: 30_000 });
    await expect(pipelinePage.locator(`[data-status-of="build-${buildId}"]`).textContent()).resolves.toBe('success');
    expect(await buildPage.evaluate(() => (window as unknown as { stayed?: number }).stayed)).toBe(1);
    expect(await pipelinePage.evaluate(() => (window as unknown as { stayed?: number }).stayed)).toBe(1);
    // what the page shows is the API's trace
    const trace = await fetch(`${daemon.url}/api/v3/projects/${priv.id}/builds/${buildId}/trace`, { headers: { 'private-token': tokens.reporter } }).then((r) => r.text());
    expect(trace).toContain('end-of-trace');
    expect(problems).toEqual([]);
    if (SCREENSHOTS) await pipelinePage.screenshot({ path: join(ROOT, 'docs/screenshots/web-pipeline.png') });
    await buildPage.close();
    await pipelinePage.close();
  }, 150_000);
});

describe('screenshots', () => {
  it.skipIf(!SCREENSHOTS)('writes the main pages at desktop and phone width (GANTRY_SCREENSHOTS=1)', async () => {
    const shots: [string, string, boolean][] = [
      ['web-project', pub.web_url, true], ['web-merge-request', `${mrUrl}?view=parallel`, false], ['web-compare', `${priv.web_url}/compare/master...feature`, false],
      ['web-branches', `${priv.web_url}/branches`, false], ['web-milestone', `${priv.web_url}/milestones/1`, false], ['web-tree', `${priv.web_url}/tree/master`, true],
    ];
    const context = await contextOf('owner');
    for (const [name, url, phone] of shots) {
      const page = await context.newPage();
      await page.goto(url);
      await page.screenshot({ path: join(ROOT, `docs/screenshots/${name}.png`), fullPage: true });
      if (phone) {
        await page.setViewportSize({ width: 390, height: 844 });
        await page.screenshot({ path: join(ROOT, `docs/screenshots/${name}-phone.png`), fullPage: true });
        // readable at phone width: nothing wider than the screen but the code and diff boxes, which scroll
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(wide).toBeLessThanOrEqual(390);
      }
      await page.close();
    }
  }, 60_000);
});
