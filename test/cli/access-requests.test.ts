/**
 * `gantry access-request list|request|approve|deny` (projects and groups) and `gantry board list` against a real
 * daemon: what the API then holds, the tables printed, exit codes and completion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCaller, loginToken, ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let root: ReturnType<typeof apiCaller>;
const users: Record<string, { id: number; token: string }> = {};

async function makeUser(name: string): Promise<void> {
  const made = await root('POST', '/users', { username: name, email: `${name}@example.com`, name, password: `${name}-password` });
  expect(made.status).toBe(201);
  const session = await fetch(`${f.url}/api/v3/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: name, password: `${name}-password` }) });
  users[name] = { id: made.body.id, token: (await session.json()).private_token };
}

beforeAll(async () => {
  f = await startCliFixture();
  expect((await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` })).code).toBe(0);
  root = apiCaller(f, loginToken(f));
  expect((await root('POST', '/projects', { name: 'open-app', visibility_level: 20 })).status).toBe(201);
  expect((await root('POST', '/groups', { name: 'open-crew', path: 'open-crew', visibility_level: 20 })).status).toBe(201);
  for (const name of ['bob', 'carol', 'dave']) await makeUser(name);
});
afterAll(async () => {
  await f?.close();
});

describe('gantry access-request', () => {
  it('lists the requests to a project, approves one with a role and denies another', async () => {
    for (const name of ['bob', 'carol']) expect((await apiCaller(f, users[name]!.token)('POST', '/projects/root%2Fopen-app/access_requests')).status).toBe(201);
    const list = await f.cli(['access-request', 'list', 'root/open-app']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/username\s+name\s+requested/i);
    expect(list.stdout).toContain('bob');
    expect(list.stdout).toContain('carol');
    const json = await f.cli(['access-request', 'list', 'root/open-app', '--json']);
    expect(json.json().map((r: { username: string }) => r.username)).toEqual(['bob', 'carol']);

    const approve = await f.cli(['access-request', 'approve', 'root/open-app', 'bob', 'reporter']);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stderr).toContain('bob is now reporter of root/open-app');
    expect((await root('GET', `/projects/root%2Fopen-app/members/${users.bob!.id}`)).body.access_level).toBe(20);

    const deny = await f.cli(['access-request', 'deny', 'root/open-app', 'carol']);
    expect(deny.code, deny.stderr).toBe(0);
    expect((await root('GET', '/projects/root%2Fopen-app/access_requests')).body).toEqual([]);
    expect((await root('GET', `/projects/root%2Fopen-app/members/${users.carol!.id}`)).status).toBe(404);
  });

  it('works on groups with --group, defaults to developer, and lets a user ask and withdraw', async () => {
    const asDave = ['--token', users.dave!.token];
    const request = await f.cli(['access-request', 'request', '--group', 'open-crew', ...asDave]);
    expect(request.code, request.stderr).toBe(0);
    expect(request.stderr).toContain('Requested access to open-crew as dave');
    const again = await f.cli(['access-request', 'request', '--group', 'open-crew', ...asDave]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists in source');
    const withdraw = await f.cli(['access-request', 'withdraw', '--group', 'open-crew', 'dave', ...asDave]);
    expect(withdraw.code, withdraw.stderr).toBe(0);
    expect((await root('GET', '/groups/open-crew/access_requests')).body).toEqual([]);

    expect((await f.cli(['access-request', 'request', '--group', 'open-crew', ...asDave])).code).toBe(0);
    const approve = await f.cli(['access-request', 'approve', '--group', 'open-crew', 'dave']);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stderr).toContain('dave is now developer of open-crew');
  });

  it('says what to do next on bad input', async () => {
    const role = await f.cli(['access-request', 'approve', 'root/open-app', 'carol', 'boss']);
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('unknown role "boss"');
    const both = await f.cli(['access-request', 'list', 'root/open-app', '--group', 'open-crew']);
    expect(both.code).toBe(2);
    const none = await f.cli(['access-request', 'approve', 'root/open-app', 'carol']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/404/);
  });
});

describe('gantry board list', () => {
  it("prints the label lists of the project's board by position", async () => {
    const empty = await f.cli(['board', 'list', 'root/open-app']);
    expect(empty.code, empty.stderr).toBe(0);
    const board = (await root('GET', '/projects/root%2Fopen-app/boards')).body[0];
    for (const name of ['Doing', 'Review']) {
      const label = await root('POST', '/projects/root%2Fopen-app/labels', { name, color: '#336699' });
      expect((await root('POST', `/projects/root%2Fopen-app/boards/${board.id}/lists`, { label_id: label.body.id })).status).toBe(201);
    }
    const r = await f.cli(['board', 'list', 'root/open-app']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/position\s+id\s+label\s+color/i);
    expect(r.stdout.indexOf('Doing')).toBeLessThan(r.stdout.indexOf('Review'));
    const json = await f.cli(['board', 'list', 'root/open-app', '--json']);
    expect(json.json()[0].lists.map((l: { label: { name: string } }) => l.label.name)).toEqual(['Doing', 'Review']);
    expect((await f.cli(['board', 'list', 'root/nothing-here'])).code).toBe(1);
  });

  it('completes the new nouns and verbs', async () => {
    const nouns = (await f.cli(['__complete', '--', 'acc'])).stdout;
    expect(nouns).toContain('access-request');
    const verbs = (await f.cli(['__complete', '--', 'access-request', ''])).stdout;
    for (const v of ['list', 'request', 'approve', 'deny']) expect(verbs).toContain(v);
    expect((await f.cli(['__complete', '--', 'board', ''])).stdout).toContain('list');
  });
});
