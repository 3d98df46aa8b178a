/**
 * `gantry login --web` end to end: the built daemon and CLI as real processes, the browser step done by headless
 * Chromium (playwright-core, /usr/bin/chromium): the CLI prints the authorize URL (--no-browser), the browser signs
 * in and authorizes, the CLI's loopback listener receives the code and trades it. Then `gantry project list` works
 * with the stored token, again after the expiry is forced in the profile (a refresh), and a token revoked through
 * /oauth/revoke makes the CLI say to sign in again. Needs `npm run build`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupTmp, killAll, ROOT, runCli, startGantryd, tmp, type Daemon } from './helpers.js';
import { dataDirArgs, dropDatabases } from './database.js';

const PASSWORD = 'e2e-oauth-cli-password';
let daemon: Daemon;
let browser: Browser;
let configDir: string;
const configPath = () => join(configDir, 'config.json');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const config = () => JSON.parse(readFileSync(configPath(), 'utf8'));
const cli = (args: string[]) => runCli(args, { configDir });

/** `gantry login --web --no-browser` as a process: the URL it prints, and how it ends. */
function startLogin(args: string[]) {
  const proc = spawn(process.execPath, [join(ROOT, 'bin', 'gantry.js'), 'login', '--web', '--no-browser', ...args], {
    env: cleanEnv({ GANTRY_CONFIG_DIR: configDir }), stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
  const url = new Promise<string>((resolve, reject) => {
    proc.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const m = /^(http\S+)$/m.exec(stdout);
      if (m) resolve(m[1]!);
    });
    proc.on('exit', () => reject(new Error(`login exited without a URL\nstdout: ${stdout}\nstderr: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { url, exited, stdout: () => stdout, stderr: () => stderr };
}

beforeAll(async () => {
  daemon = await startGantryd(['--port', '0', ...(await dataDirArgs(tmp())), '--root-password', PASSWORD]);
  configDir = tmp('gantry-e2e-cfg-');
  browser = await launchChromium();
  // A project to list (made with the password login of another profile).
  const admin = await runCli(['login', '--url', daemon.url, '--username', 'root', '--password-stdin', '--profile', 'admin'], { configDir, input: `${PASSWORD}\n` });
  expect(admin.code, admin.stderr).toBe(0);
  expect((await cli(['--profile', 'admin', 'project', 'create', 'oauth-site'])).code).toBe(0);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  killAll();
  await dropDatabases();
  cleanupTmp();
});

describe('gantry login --web with a real browser', () => {
  it('prints the URL, the browser signs in and authorizes, the tokens land in the profile (never printed)', async () => {
    const login = startLogin(['--url', daemon.url, '--profile', 'web']);
    const url = new URL(await login.url);
    expect(url.origin).toBe(daemon.url);
    expect(url.pathname).toBe('/oauth/authorize');
    expect(login.stderr()).toContain('Open this URL in a browser to sign in');

    const page = await browser.newPage();
    try {
      await page.goto(url.toString());
      await page.getByLabel('Username or email').fill('root');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Authorize' }).click();
      await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
      await expect(page.getByRole('heading', { name: 'Signed in' }).isVisible()).resolves.toBe(true);
      expect(await page.textContent('main')).toContain('as root');
    } finally {
      await page.close();
    }
    expect(await login.exited).toBe(0);
    expect(login.stderr()).toContain('Waiting for the browser sign-in...');
    expect(login.stderr()).toContain(`Logged in to ${daemon.url} as root with the browser (profile "web"`);

    const p = config().profiles.web;
    expect(config().active).toBe('web');
    expect(p).toMatchObject({ url: daemon.url, username: 'root', tokenKind: 'oauth' });
    expect(p.refreshToken).toEqual(expect.any(String));
    expect(Date.parse(p.tokenExpiresAt)).toBeGreaterThan(Date.now() + 7000_000);
    expect(statSync(configPath()).mode & 0o777).toBe(0o600);
    expect(login.stdout() + login.stderr()).not.toContain(p.token);
    expect(login.stdout() + login.stderr()).not.toContain(p.refreshToken);
    // The daemon's log has no token or code either.
    expect(daemon.stdout() + daemon.stderr()).not.toContain(p.token);
  });

  it('gantry project list works with the stored token; auth status says OAuth', async () => {
    const list = await cli(['project', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('root/oauth-site');
    const status = await cli(['auth', 'status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ user: 'root', token_kind: 'oauth', profile: 'web' });
  });

  it('gantry repo clone over HTTP sends the OAuth token as oauth2:<token> (a private project)', async () => {
    const dir = join(tmp('gantry-e2e-clone-'), 'site');
    const clone = await cli(['repo', 'clone', 'root/oauth-site', dir, '--http']);
    expect(clone.code, clone.stderr).toBe(0);
    expect(statSync(join(dir, '.git')).isDirectory()).toBe(true);
    expect(readFileSync(join(dir, '.git', 'config'), 'utf8')).not.toContain(config().profiles.web.token);
    // Without the token git is refused: the clone above was authenticated by it.
    const anonymous = spawnSync('git', ['clone', '--', `${daemon.url}/root/oauth-site.git`, join(tmp(), 'anon')], { env: cleanEnv({ GIT_TERMINAL_PROMPT: '0' }), encoding: 'utf8' });
    expect(anonymous.status).not.toBe(0);
  });

  it('after the expiry is forced in the profile, the CLI refreshes and still works', async () => {
    const c = config();
    const old = { ...c.profiles.web };
    c.profiles.web.tokenExpiresAt = new Date(Date.now() - 60_000).toISOString();
    writeFileSync(configPath(), JSON.stringify(c));
    const list = await cli(['project', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('root/oauth-site');
    const p = config().profiles.web;
    expect(p.token).not.toBe(old.token);
    expect(p.refreshToken).not.toBe(old.refreshToken);
    expect(Date.parse(p.tokenExpiresAt)).toBeGreaterThan(Date.now());
    // The old access token was rotated out.
    const before = await fetch(`${daemon.url}/api/v3/user`, { headers: { authorization: `Bearer ${old.token}` } });
    expect(before.status).toBe(401);
  });

  it('a token revoked through /oauth/revoke: the CLI says to log in again with the browser', async () => {
    const p = config().profiles.web;
    const revoked = await fetch(`${daemon.url}/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: p.token, client_id: 'gantry-cli' }),
    });
    expect(revoked.status).toBe(200);
    const list = await cli(['project', 'list']);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain(`gantry: your sign-in to ${daemon.url} has expired or was revoked`);
    expect(list.stderr).toContain(`hint: run \`gantry login --web --url ${daemon.url}\` to sign in again`);
  });
});
