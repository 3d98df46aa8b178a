/**
 * `gantry system-hook list|add|test|remove` and `gantry service show|set|remove` against a real daemon (HTTP, in this
 * process, with its own delivery worker), with deliveries to a real receiver; errors and hints; completion.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';
import { startReceiver, waitUntil, type HookReceiver } from '../helpers/hook-receiver.js';

let f: CliFixture;
let rootToken: string;
let recv: HookReceiver;
let userToken: string;

async function rootApi(method: string, path: string, body?: unknown) {
  const res = await fetch(`${f.url}/api/v3${path}`, {
    method, headers: { 'private-token': rootToken, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  rootToken = JSON.parse(readFileSync(join(f.configDir, 'config.json'), 'utf8')).profiles.default.token;
  recv = await startReceiver();
  expect((await rootApi('POST', '/users', { username: 'plain', email: 'plain@example.com', name: 'Plain', password: 'password123' })).status).toBe(201);
  userToken = (await rootApi('POST', '/session', { login: 'plain', password: 'password123' })).body.private_token;
});
afterAll(async () => {
  await recv?.stop();
  await f?.close();
});

describe('gantry system-hook', () => {
  let id: number;

  it('adds a hook (pushes on by default), lists it, and never shows the secret', async () => {
    const r = await f.cli(['system-hook', 'add', `${recv.url}/sys`, '--secret-token', 'sys-s3cret', '--tag-push-events']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^Added system hook \d+\.\n$/);
    expect(r.stdout).toMatch(/^events:\s+system,push,tag-push$/m);
    expect(r.stdout + r.stderr).not.toContain('sys-s3cret');
    id = Number(/^id:\s+(\d+)$/m.exec(r.stdout)![1]);
    const table = await f.cli(['system-hooks', 'ls']);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+URL\s+EVENTS\s+SSL VERIFY\s+CREATED$/);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(new RegExp(`^${id}\\s+http://127\\.0\\.0\\.1:\\d+/sys\\s+system,push,tag-push\\s+yes\\s+`));
    const json = await f.cli(['system-hook', 'list', '--json']);
    expect(json.json()).toEqual((await rootApi('GET', '/hooks')).body);
  });

  it('test sends the sample event, which the receiver gets with the System Hook header and the secret', async () => {
    const r = await f.cli(['system-hook', 'test', String(id)]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ event_name: 'project_create', name: 'Ruby' });
    await waitUntil(() => recv.to('/sys').some((q) => q.json().name === 'Ruby'), 'the test delivery');
    const req = recv.to('/sys').find((q) => q.json().name === 'Ruby')!;
    expect(req.headers['x-gitlab-event']).toBe('System Hook');
    expect(req.headers['x-gitlab-token']).toBe('sys-s3cret');
    // and real events: a project made with the CLI
    expect((await f.cli(['project', 'create', 'watched'])).code).toBe(0);
    await waitUntil(() => recv.to('/sys').some((q) => q.json().event_name === 'project_create' && q.json().path === 'watched'), 'project_create');
  });

  it('refuses non-admins with a plain message, and wrong usage with exit 2', async () => {
    const r = await f.cli(['system-hook', 'list'], { env: { GANTRY_TOKEN: userToken } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^gantry: system hooks are for administrators only\nhint: sign in as an administrator/);
    expect((await f.cli(['system-hook', 'add', 'ftp://x.example/y'])).code).toBe(2);
    expect((await f.cli(['system-hook', 'test', 'abc'])).code).toBe(2);
    expect((await f.cli(['system-hook', 'remove', String(id)])).code).toBe(2); // needs --yes without a terminal
    const missing = await f.cli(['system-hook', 'test', '99999']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^gantry: 404 Not found/);
  });

  it('removes a hook', async () => {
    const r = await f.cli(['system-hook', 'rm', String(id), '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`Removed system hook ${id} (${recv.url}/sys).\n`);
    const none = await f.cli(['system-hook', 'list']);
    expect(none.stderr).toBe('No system hooks found.\n');
    expect((await f.cli(['system-hook', 'delete', String(id), '--yes'])).code).toBe(1);
  });
});

describe('gantry service', () => {
  beforeAll(async () => {
    expect((await f.cli(['project', 'create', 'chatty'])).code).toBe(0);
  });

  it('shows slack before it is set up: inactive, with the default settings', async () => {
    const r = await f.cli(['service', 'show', 'root/chatty', 'slack']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^service:\s+Slack$/m);
    expect(r.stdout).toMatch(/^active:\s+no$/m);
    expect(r.stdout).toMatch(/^notify only broken builds:\s+yes$/m);
  });

  it('sets it up; its messages reach the webhook', async () => {
    const r = await f.cli([
      'service', 'set', 'root/chatty', 'slack', '--webhook', `${recv.url}/slack`, '--channel', '#dev', '--username', 'gantry',
      '--event-channel', 'issue=#issues', '--no-push-events', '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('Slack is active on root/chatty.\n');
    expect(r.json()).toMatchObject({
      active: true, push_events: false, issues_events: true,
      properties: { webhook: `${recv.url}/slack`, channel: '#dev', username: 'gantry', issue_channel: '#issues' },
    });
    const project = (await rootApi('GET', '/projects/root%2Fchatty')).body as { id: number };
    expect((await rootApi('POST', `/projects/${project.id}/issues`, { title: 'Hello chat' })).status).toBe(201);
    await waitUntil(() => recv.to('/slack').length === 1, 'the Slack message');
    expect(recv.to('/slack')[0]!.json()).toMatchObject({ text: expect.stringContaining('Issue opened by root'), channel: '#issues', username: 'gantry' });
  });

  it('reports wrong usage and refusals', async () => {
    const unknown = await f.cli(['service', 'show', 'root/chatty', 'hipchat']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown service "hipchat"');
    expect((await f.cli(['service', 'set', 'root/chatty', 'slack'])).code).toBe(2); // --webhook is required
    expect((await f.cli(['service', 'set', 'root/chatty', 'slack', '--webhook', 'nope'])).code).toBe(2);
    expect((await f.cli(['service', 'set', 'root/chatty', 'slack', '--webhook', 'https://x.example/h', '--event-channel', 'lunch=#food'])).code).toBe(2);
    const stranger = await f.cli(['service', 'show', 'root/chatty', 'slack'], { env: { GANTRY_TOKEN: userToken } });
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toContain('404 Project Not Found');
  });

  it('removes it: inactive and emptied', async () => {
    expect((await f.cli(['service', 'remove', 'root/chatty', 'slack'])).code).toBe(2); // needs --yes without a terminal
    const r = await f.cli(['service', 'rm', 'root/chatty', 'slack', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('Deactivated slack on root/chatty.\n');
    const shown = await f.cli(['service', 'show', 'root/chatty', 'slack', '--json']);
    expect(shown.json()).toMatchObject({ active: false, properties: { webhook: null, channel: null } });
  });

  it('completes the new nouns and their verbs', async () => {
    const nouns = (await f.cli(['__complete', '--', 's'])).stdout.split('\n');
    expect(nouns).toEqual(expect.arrayContaining(['system-hook', 'service']));
    expect((await f.cli(['__complete', '--', 'system-hook', ''])).stdout.split('\n')).toEqual(expect.arrayContaining(['list', 'add', 'test', 'remove']));
    expect((await f.cli(['__complete', '--', 'service', ''])).stdout.split('\n')).toEqual(expect.arrayContaining(['show', 'set', 'remove']));
  });
});
