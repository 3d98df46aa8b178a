/**
 * The writing half of the web pages in a real browser (issue 24 item 2): the real daemon and headless Chromium (Debian's,
 * through playwright-core). Each write is done by filling and clicking the page, then checked through the API: add an
 * SSH key, create a personal access token (shown once, working on the API) and revoke it, create an issue, comment,
 * close, reopen and edit it (title, description, labels, assignee), create a merge request from a branch, set it to merge when the pipeline succeeds and cancel
 * that, merge it; cancel, play and retry builds and a pipeline. No script runs in any page (the CSP allows none).
 * With GANTRY_SCREENSHOTS=1 it writes docs/screenshots/web-new-merge-request.png, web-merge-request-merge.png,
 * web-issue-edit.png and web-dashboard.png.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { api, cleanEnv, cleanupTmp, killAll, ROOT, startGantryd, tmp, type Daemon } from './helpers.js';
import { generateKeyPair } from '../helpers/ssh-keys.js';

const ROOT_PASSWORD = 'rootpassword123';
const SCREENSHOTS = process.env.GANTRY_SCREENSHOTS === '1';
let daemon: Daemon;
let browser: Browser;
let alice: string;
let project: { id: number; web_url: string; path_with_namespace: string };

const CI = 'test:\n  script: ["echo test"]\ndeploy:\n  stage: deploy\n  script: ["echo deploy"]\n  when: manual\n';

beforeAll(async () => {
  daemon = await startGantryd(['--port', '0', '--data-dir', tmp()], cleanEnv({ GANTRY_ROOT_PASSWORD: ROOT_PASSWORD }));
  const root = (await api(daemon.url, 'POST', '/session', null, { login: 'root', password: ROOT_PASSWORD })).body.private_token;
  expect((await api(daemon.url, 'POST', '/users', root, { username: 'alice', email: 'alice@example.com', name: 'Alice Liddell', password: 'password123' })).status).toBe(201);
  alice = (await api(daemon.url, 'POST', '/session', null, { login: 'alice', password: 'password123' })).body.private_token;
  project = (await api(daemon.url, 'POST', '/projects', alice, { name: 'looking-glass' })).body;
  const file = (path: string, branch: string, content: string) =>
    api(daemon.url, 'POST', `/projects/${project.id}/repository/files`, alice, { file_path: path, branch_name: branch, commit_message: `Add ${path}`, content });
  expect((await file('.gitlab-ci.yml', 'master', CI)).status).toBe(201);
  expect((await api(daemon.url, 'POST', `/projects/${project.id}/repository/branches`, alice, { branch_name: 'mirror', ref: 'master' })).status).toBe(201);
  expect((await file('mirror.txt', 'mirror', 'through the glass\n')).status).toBe(201);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  killAll();
  cleanupTmp();
});

const get = async (path: string, token = alice) => (await api(daemon.url, 'GET', path, token)).body;

/** Click a submit button and wait for the page it leads to. */
async function submit(page: Page, name: string | RegExp): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name, exact: typeof name === 'string' }).first().click()]);
}

describe('the page forms in Chromium', () => {
  it('does each write through the pages, and the API shows it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    const base = new URL(project.web_url).pathname;

    await page.goto(`${daemon.url}/users/sign_in`);
    await page.getByLabel('Username or email').fill('alice');
    await page.getByLabel('Password').fill('password123');
    await submit(page, 'Sign in');
    // the dashboard lists the project
    expect(new URL(page.url()).pathname).toBe('/');
    await expect(page.getByRole('link', { name: /looking-glass/ }).count()).resolves.toBe(1);

    // an SSH key
    const pair = generateKeyPair('ed25519');
    await page.goto(`${daemon.url}/profile/keys`);
    await page.getByLabel(/^Key/).fill(pair.publicKey);
    await page.getByLabel('Title').fill('my laptop');
    await submit(page, 'Add key');
    expect((await get('/user/keys')).map((k: { title: string }) => k.title)).toEqual(['my laptop']);
    await expect(page.locator('body').textContent()).resolves.toContain(pair.md5);

    // a personal access token: shown once, works, then revoked
    await page.goto(`${daemon.url}/profile/personal_access_tokens`);
    await page.getByLabel('Name').fill('deploy script');
    await submit(page, 'Create token');
    const token = await page.locator('#created-token').inputValue();
    expect((await get('/user', token)).username).toBe('alice');
    await page.goto(`${daemon.url}/profile/personal_access_tokens`);
    expect(await page.content()).not.toContain(token);
    await submit(page, 'Revoke');
    expect((await api(daemon.url, 'GET', '/user', token)).status).toBe(401);

    // an issue: create, comment, close, reopen
    await page.goto(`${daemon.url}${base}/issues`);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'New issue' }).click()]);
    await page.getByLabel('Title').fill('The Jabberwock <b>returns</b>');
    await page.getByLabel(/^Description/).fill('Beware the **Jubjub** bird');
    await page.getByLabel(/^Labels/).fill('danger, poem');
    await submit(page, 'Submit issue');
    const [issue] = await get(`/projects/${project.id}/issues`);
    expect(issue).toMatchObject({ title: 'The Jabberwock <b>returns</b>', description: 'Beware the **Jubjub** bird', labels: ['danger', 'poem'], state: 'opened' });
    expect(new URL(page.url()).pathname).toBe(`${base}/issues/${issue.iid}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('The Jabberwock <b>returns</b>');
    await page.getByRole('textbox', { name: 'Comment' }).fill('Callooh! Callay!');
    await submit(page, 'Comment');
    expect((await get(`/projects/${project.id}/issues/${issue.id}/notes`)).map((n: { body: string }) => n.body)).toContain('Callooh! Callay!');
    await expect(page.locator('.note-body').last().textContent()).resolves.toContain('Callooh! Callay!');
    await submit(page, 'Close issue');
    expect((await get(`/projects/${project.id}/issues/${issue.id}`)).state).toBe('closed');
    await submit(page, 'Reopen issue');
    expect((await get(`/projects/${project.id}/issues/${issue.id}`)).state).not.toBe('closed');

    // edit it: title, description, labels, assignee through the edit form
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Edit issue' }).click()]);
    expect(new URL(page.url()).pathname).toBe(`${base}/issues/${issue.iid}/edit`);
    await expect(page.getByLabel('Title').inputValue()).resolves.toBe('The Jabberwock <b>returns</b>');
    await page.getByLabel('Title').fill('The Jabberwock is slain');
    await page.getByLabel(/^Description/).fill('One, two! And through and through');
    await page.getByLabel(/^Labels/).fill('poem');
    await page.getByLabel('Assignee').selectOption({ label: 'Alice Liddell (@alice)' });
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/screenshots/web-issue-edit.png'), fullPage: true });
    await submit(page, 'Save changes');
    expect(new URL(page.url()).pathname).toBe(`${base}/issues/${issue.iid}`);
    expect(await get(`/projects/${project.id}/issues/${issue.id}`)).toMatchObject({
      title: 'The Jabberwock is slain', description: 'One, two! And through and through', labels: ['poem'], assignee: { username: 'alice' },
    });
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('The Jabberwock is slain');

    // a merge request from the branch: merge when the pipeline succeeds (its pipeline waits: no runner), cancel, merge
    await page.goto(`${daemon.url}${base}/merge_requests`);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'New merge request' }).click()]);
    await page.getByLabel('Source branch').selectOption('mirror');
    await page.getByLabel('Target branch').selectOption('master');
    await page.getByLabel('Title').fill('Through the mirror');
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/screenshots/web-new-merge-request.png'), fullPage: true });
    await submit(page, 'Submit merge request');
    const [mr] = await get(`/projects/${project.id}/merge_requests`);
    expect(mr).toMatchObject({ title: 'Through the mirror', source_branch: 'mirror', target_branch: 'master', state: 'opened' });
    await page.getByRole('textbox', { name: 'Comment' }).fill('Curiouser and curiouser');
    await submit(page, 'Comment');
    expect((await get(`/projects/${project.id}/merge_requests/${mr.id}/notes`)).map((n: { body: string }) => n.body)).toContain('Curiouser and curiouser');
    expect(await page.getByLabel('Merge when the pipeline succeeds').isChecked()).toBe(true);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/screenshots/web-merge-request-merge.png'), fullPage: true });
    await submit(page, 'Merge');
    expect((await get(`/projects/${project.id}/merge_requests/${mr.id}`)).merge_when_build_succeeds).toBe(true);
    await submit(page, 'Cancel automatic merge');
    expect((await get(`/projects/${project.id}/merge_requests/${mr.id}`)).merge_when_build_succeeds).toBe(false);
    await submit(page, 'Close merge request');
    expect((await get(`/projects/${project.id}/merge_requests/${mr.id}`)).state).toBe('closed');
    await submit(page, 'Reopen merge request');
    await page.getByLabel('Merge when the pipeline succeeds').uncheck();
    await submit(page, 'Merge');
    expect((await get(`/projects/${project.id}/merge_requests/${mr.id}`)).state).toBe('merged');

    // builds and the pipeline of master's first commit
    const pipelines = await get(`/projects/${project.id}/pipelines`);
    const pipeline = pipelines[pipelines.length - 1];
    const all = await get(`/projects/${project.id}/builds?per_page=100`);
    const test = all.find((b: { name: string; pipeline: { id: number } }) => b.name === 'test' && b.pipeline.id === pipeline.id);
    const deploy = all.find((b: { name: string; pipeline: { id: number } }) => b.name === 'deploy' && b.pipeline.id === pipeline.id);
    await page.goto(`${daemon.url}${base}/builds/${test.id}`);
    await submit(page, 'Cancel');
    expect((await get(`/projects/${project.id}/builds/${test.id}`)).status).toBe('canceled');
    await submit(page, 'Retry');
    const retriedId = Number(new URL(page.url()).pathname.split('/').pop());
    expect(retriedId).toBeGreaterThan(test.id);
    expect((await get(`/projects/${project.id}/builds/${retriedId}`)).status).toBe('pending');
    await submit(page, 'Cancel');
    await page.goto(`${daemon.url}${base}/pipelines/${pipeline.id}`);
    await submit(page, 'Play deploy');
    expect((await get(`/projects/${project.id}/builds/${deploy.id}`)).status).toBe('pending');
    await page.goto(`${daemon.url}${base}/pipelines/${pipeline.id}`);
    await submit(page, 'Cancel running');
    expect((await get(`/projects/${project.id}/pipelines/${pipeline.id}`)).status).toBe('canceled');
    await submit(page, 'Retry failed builds');
    expect((await get(`/projects/${project.id}/pipelines/${pipeline.id}`)).status).toBe('pending');

    // no inline script anywhere; a running pipeline's page loads the one live script file (pipeline updates)
    expect(await page.locator('script:not([src])').count()).toBe(0);
    for (const src of await page.locator('script[src]').evaluateAll((els) => els.map((e) => e.getAttribute('src')))) expect(src).toBe('/-/assets/live.js');
    await page.goto(`${daemon.url}/dashboard/issues?scope=authored`);
    await expect(page.getByRole('link', { name: 'The Jabberwock is slain' }).count()).resolves.toBe(1);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/screenshots/web-dashboard.png'), fullPage: true });
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);
});
