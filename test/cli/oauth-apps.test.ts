/**
 * `gantry oauth-app create|list|delete` against a real daemon: the secret printed once with its warning, several
 * redirect URIs, scopes, the list without secrets, delete with confirmation, the server's refusals (a relative
 * redirect URI, an unknown scope, a user when user_oauth_applications is off) shown with what to do next.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
const alice = ['--profile', 'alice'];

beforeAll(async () => {
  f = await startCliFixture();
  expect((await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` })).code).toBe(0);
  const made = await f.cli(['api', '-X', 'POST', 'users', '-f', 'email=alice@example.com', '-f', 'username=alice', '-f', 'name=Alice', '-f', 'password=alice-password']);
  expect(made.code, made.stderr).toBe(0);
  const login = await f.cli(['login', '--url', f.url, '--username', 'alice', '--password-stdin', '--profile', 'alice'], { input: 'alice-password\n' });
  expect(login.code, login.stderr).toBe(0);
  expect((await f.cli(['profile', 'use', 'default'])).code).toBe(0);
});

afterAll(async () => {
  await f?.close();
});

describe('gantry oauth-app', () => {
  let created: { id: number; application_id: string; secret: string };

  it('create: the application id and the secret, shown once with a warning', async () => {
    const r = await f.cli(['oauth-app', 'create', '--name', 'Review bot', '--redirect-uri', 'https://bot.example.com/cb', '--redirect-uri', 'http://localhost:4000/cb', '--scopes', 'api']);
    expect(r.code, r.stderr).toBe(0);
    const secret = /^secret: +([0-9a-f]{64})$/m.exec(r.stdout)?.[1];
    const appId = /^application id: +(\S+)$/m.exec(r.stdout)?.[1];
    const id = Number(/^id: +(\d+)$/m.exec(r.stdout)?.[1]);
    expect(secret).toBeDefined();
    expect(appId).toBeDefined();
    expect(id).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/^name: +Review bot$/m);
    expect(r.stdout).toMatch(/^redirect uris: +https:\/\/bot\.example\.com\/cb http:\/\/localhost:4000\/cb$/m);
    expect(r.stderr).toContain('Registered OAuth application "Review bot"');
    expect(r.stderr).toContain('The secret is shown only now');
    created = { id, application_id: appId!, secret: secret! };
  });

  it('create --json: the API answer with the secret', async () => {
    const r = await f.cli(['oauth-app', 'create', '--name', 'Script', '--redirect-uri', 'urn:ietf:wg:oauth:2.0:oob', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ application_name: 'Script', callback_url: 'urn:ietf:wg:oauth:2.0:oob', secret: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('list: the applications without their secrets; --json too', async () => {
    const r = await f.cli(['oauth-app', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ID +APPLICATION ID \(CLIENT_ID\) +NAME +REDIRECT URIS$/m);
    expect(r.stdout).toContain(created.application_id);
    expect(r.stdout).toContain('Review bot');
    expect(r.stdout).not.toContain(created.secret);
    const json = await f.cli(['oauth-apps', 'ls', '--json']);
    const apps = json.json() as Array<Record<string, unknown>>;
    expect(apps.map((a) => a.application_name)).toEqual(expect.arrayContaining(['Review bot', 'Script']));
    expect(apps.every((a) => a.secret === undefined)).toBe(true);
  });

  it('create refused by the server: the validation message and a hint', async () => {
    const relative = await f.cli(['oauth-app', 'create', '--name', 'Bad', '--redirect-uri', '/cb']);
    expect(relative.code).toBe(1);
    expect(relative.stderr).toContain('redirect_uri: must be an absolute URI.');
    expect(relative.stderr).toContain('hint: check the values you passed');
    const scope = await f.cli(['oauth-app', 'create', '--name', 'Bad', '--redirect-uri', 'https://x.example.com/cb', '--scopes', 'api,sudo']);
    expect(scope.code).toBe(1);
    expect(scope.stderr).toContain('scopes: are not known: sudo');
    const missing = await f.cli(['oauth-app', 'create', '--name', 'No uri']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '--redirect-uri <uri>' not specified");
  });

  it('delete: asks for --yes off a terminal, then deletes; the id must be a number', async () => {
    const unconfirmed = await f.cli(['oauth-app', 'delete', String(created.id)]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('hint: add --yes');
    expect((await f.cli(['oauth-app', 'delete', 'abc', '--yes'])).code).toBe(2);
    const r = await f.cli(['oauth-app', 'delete', String(created.id), '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Deleted OAuth application ${created.id}`);
    expect((await f.cli(['oauth-app', 'list'])).stdout).not.toContain(created.application_id);
    const again = await f.cli(['oauth-app', 'delete', String(created.id), '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('hint: check the id');
  });

  it('a user: allowed while user_oauth_applications is on, refused (403, with a hint) when it is off', async () => {
    const own = await f.cli([...alice, 'oauth-app', 'create', '--name', 'Alice app', '--redirect-uri', 'https://alice.example.com/cb']);
    expect(own.code, own.stderr).toBe(0);
    const list = await f.cli([...alice, 'oauth-app', 'list', '--json']);
    expect((list.json() as Array<{ application_name: string }>).map((a) => a.application_name)).toEqual(['Alice app']);
    expect((await f.cli(['api', '-X', 'PUT', 'application/settings', '-F', 'user_oauth_applications=false'])).code).toBe(0);
    const refused = await f.cli([...alice, 'oauth-app', 'create', '--name', 'Again', '--redirect-uri', 'https://alice.example.com/cb']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('only by administrators');
    expect(refused.stderr).toContain('hint: your account is not allowed to do this');
    expect((await f.cli(['api', '-X', 'PUT', 'application/settings', '-F', 'user_oauth_applications=true'])).code).toBe(0);
  });

  it('the noun is listed in the help and completes its verbs', async () => {
    expect((await f.cli(['--help'])).stdout).toMatch(/oauth-app\|oauth-apps +register, list and delete OAuth applications/);
    const verbs = (await f.cli(['__complete', '--', 'oauth-app', ''])).stdout.split('\n').filter(Boolean);
    expect(verbs).toEqual(expect.arrayContaining(['create', 'list', 'delete']));
  });
});
