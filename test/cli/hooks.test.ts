/** `gantry hook list|add|remove` against a real daemon (HTTP, in this process), and a delivery to a real receiver. */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';
import { commitFiles, git, repoUrl, workTree } from '../helpers/git.js';
import { startReceiver, waitUntil, type HookReceiver } from '../helpers/hook-receiver.js';

let f: CliFixture;
let rootToken: string;
let recv: HookReceiver;
const dirs: string[] = [];

/** Call the API as root (for fixtures the CLI does not create). */
async function rootApi(method: string, path: string, body?: unknown, token = rootToken) {
  const res = await fetch(`${f.url}/api/v3${path}`, {
    method, headers: { 'private-token': token, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  rootToken = JSON.parse(readFileSync(join(f.configDir, 'config.json'), 'utf8')).profiles.default.token;
  expect((await f.cli(['project', 'create', 'hooked'])).code).toBe(0);
  recv = await startReceiver();
});
afterAll(async () => {
  await recv?.stop();
  await f?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('gantry hook', () => {
  let pushHook: number;
  let tagHook: number;

  it('adds a push hook by default, with a secret token that is never shown', async () => {
    const r = await f.cli(['hook', 'add', 'root/hooked', `${recv.url}/push`, '--secret-token', 'cli-s3cret']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^Added hook \d+ to root\/hooked\.\n$/);
    expect(r.stdout).toMatch(/^url:\s+http:\/\/127\.0\.0\.1:\d+\/push$/m);
    expect(r.stdout).toMatch(/^events:\s+push$/m);
    expect(r.stdout).toMatch(/^ssl verify:\s+yes$/m);
    expect(r.stdout + r.stderr).not.toContain('cli-s3cret');
    pushHook = Number(/^id:\s+(\d+)$/m.exec(r.stdout)![1]);
  });

  it('sets the event switches and SSL verification from flags (--json)', async () => {
    const r = await f.cli([
      'hook', 'add', 'root/hooked', `${recv.url}/tags`, '--no-push-events', '--tag-push-events', '--pipeline-events', '--merge-requests-events',
      '--no-ssl-verification', '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({
      url: `${recv.url}/tags`, push_events: false, tag_push_events: true, pipeline_events: true, merge_requests_events: true, issues_events: false,
      note_events: false, build_events: false, wiki_page_events: false, enable_ssl_verification: false,
    });
    tagHook = r.json().id;
  });

  it('lists hooks as a table, as JSON, and by page', async () => {
    const table = await f.cli(['hook', 'list', 'root/hooked']);
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+URL\s+EVENTS\s+SSL VERIFY\s+CREATED$/);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(new RegExp(`^${pushHook}\\s+http://127\\.0\\.0\\.1:\\d+/push\\s+push\\s+yes\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d$`));
    expect(rows[1]).toMatch(new RegExp(`^${tagHook}\\s+\\S+/tags\\s+tag-push,merge-requests,pipeline\\s+no\\s+`));

    const json = await f.cli(['hooks', 'ls', 'root/hooked', '--json']);
    expect(json.json()).toEqual((await rootApi('GET', '/projects/root%2Fhooked/hooks')).body);
    const page = await f.cli(['hook', 'list', 'root/hooked', '--per-page', '1', '--json']);
    expect(page.json().map((h: { id: number }) => h.id)).toEqual([pushHook]);
    expect(page.stderr).toBe('Showing 1 of 2; use --all for every page, or --page 2.\n');
  });

  it('the hooks it adds get deliveries with the secret token after a push', async () => {
    const work = await workTree();
    dirs.push(work);
    const sha = await commitFiles(work, { 'README.md': 'hi\n' }, 'Hello');
    const r = await git(work, ['push', repoUrl(f.url, 'root/hooked', { username: 'root', password: rootToken }), 'master']);
    expect(r.code, r.stderr).toBe(0);
    await waitUntil(() => recv.to('/push').length === 1, 'the push delivery');
    const [req] = recv.to('/push');
    expect(req.headers['x-gitlab-event']).toBe('Push Hook');
    expect(req.headers['x-gitlab-token']).toBe('cli-s3cret');
    expect(req.json()).toMatchObject({ object_kind: 'push', after: sha });
    expect(recv.to('/tags')).toEqual([]);
  });

  it('removes a hook; removing it again is not an error', async () => {
    const r = await f.cli(['hook', 'remove', 'root/hooked', String(tagHook)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`Removed hook ${tagHook} (${recv.url}/tags).\n`);
    const again = await f.cli(['hook', 'rm', 'root/hooked', String(tagHook)]);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(`No hook ${tagHook} in root/hooked; nothing to remove.\n`);
    const left = await f.cli(['hook', 'list', 'root/hooked', '--json']);
    expect(left.json().map((h: { id: number }) => h.id)).toEqual([pushHook]);
    const json = await f.cli(['hook', 'delete', 'root/hooked', String(pushHook), '--json']);
    expect(json.json()).toMatchObject({ id: pushHook, push_events: true });
    const none = await f.cli(['hook', 'list', 'root/hooked']);
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe('No hooks found.\n');
  });

  it('reports wrong usage (exit 2) and API errors with hints (exit 1)', async () => {
    expect((await f.cli(['hook', 'add', 'root/hooked'])).code).toBe(2);
    const notUrl = await f.cli(['hook', 'add', 'root/hooked', 'ftp://example.com/x']);
    expect(notUrl.code).toBe(2);
    expect(notUrl.stderr).toContain('is not an http:// or https:// URL');
    expect((await f.cli(['hook', 'remove', 'root/hooked', 'abc'])).code).toBe(2);
    const invalid = await f.cli(['hook', 'add', 'root/hooked', 'http://:80/x']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^gantry: Invalid url given\n/);
    const missing = await f.cli(['hook', 'list', 'root/nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('gantry: 404 Project Not Found\nhint: check the id or path (namespace/name) and that your account can see it\n');

    // A developer may not manage hooks (403); a stranger does not see the private project (404).
    const dev = await rootApi('POST', '/users', { username: 'dev', email: 'dev@example.com', name: 'Dev', password: 'password123' });
    expect(dev.status).toBe(201);
    const devToken = (await rootApi('POST', '/session', { login: 'dev', password: 'password123' })).body.private_token as string;
    const stranger = await f.cli(['hook', 'list', 'root/hooked'], { env: { GANTRY_TOKEN: devToken } });
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toContain('404 Project Not Found');
    const project = (await rootApi('GET', '/projects/root%2Fhooked')).body as { id: number };
    expect((await rootApi('POST', `/projects/${project.id}/members`, { user_id: dev.body.id, access_level: 30 })).status).toBe(201);
    const developer = await f.cli(['hook', 'add', 'root/hooked', `${recv.url}/dev`], { env: { GANTRY_TOKEN: devToken } });
    expect(developer.code).toBe(1);
    expect(developer.stderr).toMatch(/^gantry: 403 Forbidden\nhint: your account is not allowed/);
  });

  it('documents the flags in --help', async () => {
    const help = await f.cli(['hook', 'add', '--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--push-events', '--no-push-events', '--tag-push-events', '--issues-events', '--merge-requests-events', '--note-events',
      '--build-events', '--pipeline-events', '--wiki-page-events', '--secret-token <token>', '--no-ssl-verification', '--json']) {
      expect(help.stdout).toContain(flag);
    }
  });
});
