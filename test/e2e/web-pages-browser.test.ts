/**
 * The web pages in a real browser (issue 24): the real daemon process and headless Chromium (Debian's, driven by
 * playwright-core). Sign in at /users/sign_in, open an issue whose title and Markdown carry script, see the Markdown
 * rendered and the hostile parts inert (no dialog, no request to the injected host, no CSP violation reported), follow
 * the project nav to the code, and sign out. With GANTRY_SCREENSHOTS=1 it writes docs/screenshots/web-issue.png and
 * web-blob.png.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { api, cleanEnv, cleanupTmp, killAll, ROOT, startGantryd, tmp, type Daemon } from './helpers.js';

const ROOT_PASSWORD = 'rootpassword123';
const SCREENSHOTS = process.env.GANTRY_SCREENSHOTS === '1';
let daemon: Daemon;
let browser: Browser;
let project: { id: number; web_url: string; path_with_namespace: string };
let issueUrl: string;

beforeAll(async () => {
  daemon = await startGantryd(['--port', '0', '--data-dir', tmp()], cleanEnv({ GANTRY_ROOT_PASSWORD: ROOT_PASSWORD }));
  const root = (await api(daemon.url, 'POST', '/session', null, { login: 'root', password: ROOT_PASSWORD })).body.private_token;
  expect((await api(daemon.url, 'POST', '/users', root, { username: 'alice', email: 'alice@example.com', name: 'Alice Liddell', password: 'password123' })).status).toBe(201);
  const alice = (await api(daemon.url, 'POST', '/session', null, { login: 'alice', password: 'password123' })).body.private_token;
  project = (await api(daemon.url, 'POST', '/projects', alice, { name: 'wonderland' })).body;
  const file = await api(daemon.url, 'POST', `/projects/${project.id}/repository/files`, alice, {
    file_path: 'src/rabbit.ts', branch_name: 'master', commit_message: 'Add the rabbit', content: 'export function late(): boolean {\n  return true;\n}\n',
  });
  expect(file.status).toBe(201);
  const issue = await api(daemon.url, 'POST', `/projects/${project.id}/issues`, alice, {
    title: 'Tea party <script>alert("title")</script>',
    description: [
      '## Guests', '', '- [x] the **Hatter**', '- [ ] the Dormouse', '', 'See #1 and ask @alice.', '',
      '<img src="http://evil.test/x.png" onerror="alert(1)">', '', '[late](javascript:alert(2))', '',
      '<script>alert(3)</script>', '', '| who | seat |', '| --- | --- |', '| Alice | left |',
    ].join('\n'),
  });
  expect(issue.status).toBe(201);
  issueUrl = issue.body.web_url;
  await api(daemon.url, 'POST', `/projects/${project.id}/issues/${issue.body.id}/notes`, alice, { body: 'Why is a raven like a _writing-desk_?' });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  killAll();
  cleanupTmp();
});

describe('the web pages in Chromium', () => {
  it('sign in, read an issue with rendered Markdown, nothing injected runs, no CSP errors; the code page; sign out', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    const problems: string[] = [];
    const dialogs: string[] = [];
    const requested: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
    page.on('request', (r) => requested.push(r.url()));

    // a private issue: first the sign-in page, which comes back to the issue
    await page.goto(issueUrl);
    expect(new URL(page.url()).pathname).toBe('/users/sign_in');
    await page.getByLabel('Username or email').fill('alice');
    await page.getByLabel('Password').fill('password123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState();
    expect(page.url()).toBe(issueUrl);

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Tea party <script>alert("title")</script>');
    await expect(page.locator('.description strong').textContent()).resolves.toBe('Hatter');
    await expect(page.locator('.description h2').textContent()).resolves.toBe('Guests');
    await expect(page.locator('.description table td').first().textContent()).resolves.toBe('Alice');
    await expect(page.locator('.description input[type=checkbox]:checked').count()).resolves.toBe(1);
    await expect(page.locator('.description a.gfm-issue').getAttribute('href')).resolves.toBe(`/${project.path_with_namespace}/issues/1`);
    await expect(page.locator('.note-body em').textContent()).resolves.toBe('writing-desk');
    expect(await page.locator('script').count()).toBe(0);
    expect(await page.locator('[onerror]').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    // the stylesheet applied (the header is dark), and the page is signed in
    const header = await page.locator('header.site').evaluate((e) => getComputedStyle(e).backgroundColor);
    expect(header).toBe('rgb(31, 41, 55)');
    await expect(page.locator('header.site').textContent()).resolves.toContain('@alice');
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/screenshots/web-issue.png'), fullPage: true });

    // the nav to the files, a file highlighted with line anchors
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Files' }).click();
    await page.getByRole('link', { name: 'src' }).click();
    await page.getByRole('link', { name: 'rabbit.ts' }).click();
    await page.waitForLoadState();
    await expect(page.locator('#L2 .line').textContent()).resolves.toBe('  return true;');
    expect(await page.locator('.hljs-keyword').count()).toBeGreaterThan(0);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/screenshots/web-blob.png') });

    expect(dialogs).toEqual([]);
    expect(requested.filter((u) => u.includes('evil.test'))).toEqual([]);
    expect(problems).toEqual([]);

    // sign out: back to the sign-in page, and the issue asks for it again
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForLoadState();
    expect(new URL(page.url()).pathname).toBe('/users/sign_in');
    await page.goto(issueUrl);
    expect(new URL(page.url()).pathname).toBe('/users/sign_in');
    await context.close();
  });
});
