/** `gantry environment list|create|delete` and `gantry deployment list` against a real daemon (HTTP, in this process). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCaller, loginToken, ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;

/** Calls the API as root. */
let rootApi: ReturnType<typeof apiCaller>;

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  rootApi = apiCaller(f, loginToken(f));
  expect((await f.cli(['project', 'create', 'shop'])).code).toBe(0);
});
afterAll(async () => {
  await f?.close();
});

describe('gantry environment', () => {
  it('creates, lists (table and --json) and deletes environments', async () => {
    const created = await f.cli(['environment', 'create', 'root/shop', 'staging', '--external-url', 'https://staging.example.com']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toMatch(/^Created environment \d+ "staging" in root\/shop\.\n$/);
    const list = await f.cli(['environment', 'list', 'root/shop']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/staging\s+https:\/\/staging\.example\.com/);
    const json = (await f.cli(['environment', 'list', 'root/shop', '--json'])).json();
    expect(json).toEqual([expect.objectContaining({ name: 'staging', external_url: 'https://staging.example.com' })]);

    const taken = await f.cli(['environment', 'create', 'root/shop', 'staging']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('has already been taken');

    const refused = await f.cli(['environment', 'delete', 'root/shop', String(json[0].id)]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    const removed = await f.cli(['environment', 'delete', 'root/shop', String(json[0].id), '--yes']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toBe(`Deleted environment ${json[0].id} "staging" from root/shop.\n`);
    expect((await f.cli(['environment', 'list', 'root/shop', '--json'])).json()).toEqual([]);
  });

  it('rejects a bad name before calling the server (exit 2)', async () => {
    const r = await f.cli(['environment', 'create', 'root/shop', 'a|b']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a valid environment name');
  });
});

describe('gantry deployment', () => {
  it('lists the deployment a successful environment build recorded', async () => {
    const project = (await rootApi('GET', '/projects/root%2Fshop')).body;
    const reg = await rootApi('POST', '/ci/api/v1/runners/register', { token: project.runners_token, description: 'cli deployer' });
    expect(reg.status).toBe(201);
    const file = await rootApi('POST', `/projects/${project.id}/repository/files`, {
      file_path: '.gitlab-ci.yml', branch_name: 'master', commit_message: 'ci', content: 'deploy:\n  script: echo deploy\n  environment: production\n',
    });
    expect(file.status).toBe(201);
    const claimed = await rootApi('POST', '/ci/api/v1/builds/register', { token: reg.body.token });
    expect(claimed.status).toBe(201);
    expect((await rootApi('PUT', `/ci/api/v1/builds/${claimed.body.id}`, { token: reg.body.token, state: 'success' })).status).toBe(200);

    const list = await f.cli(['deployment', 'list', 'root/shop']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^1\\s+production\\s+master\\s+[0-9a-f]{8}\\s+${claimed.body.id} deploy\\s+root\\s`, 'm'));
    const json = (await f.cli(['deployments', 'ls', 'root/shop', '--json'])).json();
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({ iid: 1, ref: 'master', environment: { name: 'production' }, deployable: { id: claimed.body.id, status: 'success' } });
  });

  it('appears in completion with its verbs', async () => {
    const nouns = (await f.cli(['__complete', '--', ''])).stdout;
    expect(nouns).toContain('environment');
    expect(nouns).toContain('deployment');
    expect((await f.cli(['__complete', '--', 'environment', ''])).stdout.split('\n')).toEqual(expect.arrayContaining(['list', 'create', 'delete']));
  });
});
