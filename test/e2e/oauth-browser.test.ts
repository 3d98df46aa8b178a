/**
 * The OAuth authorization code flow in a real browser: the real daemon process, headless Chromium (Debian's, driven
 * by playwright-core) and a small HTTP listener standing in for the client's redirect URI. Authorize -> sign-in page ->
 * consent -> redirect with the code, traded for a token; Deny; a wrong password; a forged CSRF token; an unknown
 * client_id. With GANTRY_SCREENSHOTS=1 it writes docs/screenshots/oauth-sign-in.png and oauth-consent.png.
 */
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { api, cleanEnv, cleanupTmp, killAll, ROOT, startGantryd, tmp, type Daemon } from './helpers.js';
import { dataDirArgs, dropDatabases } from './database.js';

const ROOT_PASSWORD = 'rootpassword123';
const SCREENSHOTS = process.env.GANTRY_SCREENSHOTS === '1';
let daemon: Daemon;
let browser: Browser;
let listener: Server;
let callback: string;
const received: URL[] = [];
let app: { application_id: string; secret: string };

beforeAll(async () => {
  daemon = await startGantryd(['--port', '0', ...(await dataDirArgs(tmp()))], cleanEnv({ GANTRY_ROOT_PASSWORD: ROOT_PASSWORD }));
  listener = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/callback') received.push(url); // not the browser's /favicon.ico
    res.writeHead(200, { 'content-type': 'text/plain' }).end('client received the answer');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as { port: number }).port;
  callback = `http://127.0.0.1:${port}/callback`;
  const root = (await api(daemon.url, 'POST', '/session', null, { login: 'root', password: ROOT_PASSWORD })).body.private_token;
  // alice authorizes the application (later requests of hers would skip the consent page); bob and carol do not
  for (const [username, name] of [['alice', 'Alice Liddell'], ['bob', 'Bob'], ['carol', 'Carol']]) {
    expect((await api(daemon.url, 'POST', '/users', root, { username, email: `${username}@example.com`, name, password: 'password123' })).status).toBe(201);
  }
  const alice = (await api(daemon.url, 'POST', '/session', null, { login: 'alice', password: 'password123' })).body.private_token;
  const created = await api(daemon.url, 'POST', '/applications', alice, { name: 'Acme Deploy Dashboard', redirect_uri: callback });
  expect(created.status).toBe(201);
  app = created.body;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => listener?.close(resolve));
  await daemon?.stop();
  killAll();
  await dropDatabases();
  cleanupTmp();
});

const authorizeUrl = (extra: Record<string, string> = {}) =>
  `${daemon.url}/oauth/authorize?${new URLSearchParams({ client_id: app.application_id, redirect_uri: callback, response_type: 'code', state: 'e2e-state', ...extra })}`;

/** A fresh browser window (no cookies) at desktop size. */
async function freshPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  return context.newPage();
}

async function signIn(page: Page, username = 'alice', password = 'password123') {
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState();
}

describe('the authorization code flow in Chromium', () => {
  it('authorize -> sign-in page -> consent -> redirect with code and state; the code trades for a working token', async () => {
    const page = await freshPage();
    await page.goto(authorizeUrl());
    await expect(page.getByRole('heading', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
    expect(await page.textContent('main')).toContain('Acme Deploy Dashboard');
    // the stylesheet applied: a centered card
    const card = await page.locator('main.card').boundingBox();
    expect(Math.abs(card!.x + card!.width / 2 - 640)).toBeLessThan(2);
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/screenshots/oauth-sign-in.png') });

    await signIn(page);
    await expect(page.getByRole('heading', { name: /Authorize Acme Deploy Dashboard/ }).isVisible()).resolves.toBe(true);
    expect(await page.textContent('main')).toContain('@alice');
    if (SCREENSHOTS) await page.screenshot({ path: join(ROOT, 'docs/screenshots/oauth-consent.png') });

    const before = received.length;
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL((u) => u.href.startsWith(callback));
    expect(received.length).toBe(before + 1);
    const answer = received.at(-1)!;
    expect(answer.searchParams.get('state')).toBe('e2e-state');
    const code = answer.searchParams.get('code')!;
    expect(code).toMatch(/^[0-9a-f]{64}$/);

    const token = await fetch(`${daemon.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: callback }),
    });
    expect(token.status).toBe(200);
    const t = (await token.json()) as { access_token: string };
    const me = await fetch(`${daemon.url}/api/v3/user`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(((await me.json()) as { username: string }).username).toBe('alice');
    await page.context().close();
  });

  it('Deny sends the browser back with error=access_denied and the state', async () => {
    const page = await freshPage();
    await page.goto(authorizeUrl({ state: 'deny-state' }));
    await signIn(page, 'bob');
    const before = received.length;
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((u) => u.href.startsWith(callback));
    expect(received.length).toBe(before + 1);
    const answer = received.at(-1)!;
    expect(answer.searchParams.get('error')).toBe('access_denied');
    expect(answer.searchParams.get('state')).toBe('deny-state');
    expect(answer.searchParams.get('code')).toBeNull();
    await page.context().close();
  });

  it('a wrong password shows the sign-in page again with the error; nothing reaches the client', async () => {
    const page = await freshPage();
    await page.goto(authorizeUrl());
    const before = received.length;
    await signIn(page, 'alice', 'not-the-password');
    expect(await page.getByRole('alert').textContent()).toContain('Invalid username, email or password');
    expect(await page.getByLabel('Username or email').inputValue()).toBe('alice');
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    expect(page.url().startsWith(daemon.url)).toBe(true);
    expect(received.length).toBe(before);
    await page.context().close();
  });

  it('a forged CSRF token on the consent form: 422 page, no code, no redirect', async () => {
    const page = await freshPage();
    await page.goto(authorizeUrl());
    await signIn(page, 'carol');
    await page.locator('form.actions input[name="authenticity_token"]').evaluate((el) => { (el as HTMLInputElement).value = 'forged-token'; });
    const before = received.length;
    const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/oauth/authorize') && r.request().method() === 'POST'), page.getByRole('button', { name: 'Authorize' }).click()]);
    expect(response.status()).toBe(422);
    expect(await page.getByRole('heading').first().textContent()).toBe('The form has expired');
    expect(page.url().startsWith(daemon.url)).toBe(true);
    expect(received.length).toBe(before);
    await page.context().close();
  });

  it('an unknown client_id: an error page on the daemon, never a redirect', async () => {
    const page = await freshPage();
    const before = received.length;
    const response = await page.goto(authorizeUrl({ client_id: 'no-such-client' }));
    expect(response!.status()).toBe(400);
    expect(await page.getByRole('heading').first().textContent()).toBe('Unknown application');
    expect(page.url().startsWith(`${daemon.url}/oauth/authorize`)).toBe(true);
    expect(received.length).toBe(before);
    await page.context().close();
  });
});
