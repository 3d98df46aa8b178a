/**
 * `gantry member` (projects and groups, by user name and role name) and the password commands (`user create
 * --password-stdin`, `user password`) against a real daemon: what the API then holds, exit codes and hints.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessLevel } from '../../cli/commands/members.js';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let rootToken: string;
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${f.url}/api/v3${path}`, {
    method, headers: { 'private-token': rootToken, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json().catch(() => null) };
};

beforeAll(async () => {
  f = await startCliFixture();
  expect((await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` })).code).toBe(0);
  rootToken = JSON.parse(readFileSync(join(f.configDir, 'config.json'), 'utf8')).profiles.default.token;
  expect((await f.cli(['project', 'create', 'team-app'])).code).toBe(0);
  expect((await f.cli(['group', 'create', 'crew'])).code).toBe(0);
});
afterAll(async () => {
  await f?.close();
});

describe('user create --password-stdin and user password', () => {
  it('creates a user with the password from stdin; it signs in with it', async () => {
    const r = await f.cli(['user', 'create', '--username', 'alice', '--email', 'alice@example.com', '--name', 'Alice', '--password-stdin'], { input: 'alice-first-pass\n' });
    expect(r.code, r.stderr).toBe(0);
    const session = await fetch(`${f.url}/api/v3/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'alice', password: 'alice-first-pass' }) });
    expect(session.status).toBe(201);
  });

  it('changes a user\'s password by name; the old one stops working', async () => {
    const r = await f.cli(['user', 'password', 'alice', '--password-stdin'], { input: 'alice-second-pass\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Changed the password of alice');
    const login = (password: string) => fetch(`${f.url}/api/v3/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'alice', password }) });
    expect((await login('alice-first-pass')).status).toBe(401);
    expect((await login('alice-second-pass')).status).toBe(201);
  });

  it('asks for the password where none is given; too short a password is the API\'s 400', async () => {
    const none = await f.cli(['user', 'password', 'alice']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--password-stdin');
    const both = await f.cli(['user', 'create', '--username', 'x1', '--email', 'x1@example.com', '--name', 'X', '--password', 'abcdefgh', '--password-stdin'], { input: 'p\n' });
    expect(both.code).toBe(2);
    const short = await f.cli(['user', 'password', 'alice', '--password-stdin'], { input: 'short\n' });
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/HTTP 400|too short|8/);
    const nobody = await f.cli(['user', 'password', 'nobody-here', '--password-stdin'], { input: 'whatever-long\n' });
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('no user named nobody-here');
  });
});

describe('gantry member', () => {
  it('maps role names to access levels and refuses others', () => {
    expect(['guest', 'reporter', 'Developer', 'master', 'owner', '30'].map(accessLevel)).toEqual([10, 20, 30, 40, 50, 30]);
    expect(() => accessLevel('admin')).toThrow(/unknown role "admin"/);
    expect(() => accessLevel('35')).toThrow(/unknown role/);
  });

  it('adds, lists, changes and removes a project member by name and role', async () => {
    const add = await f.cli(['member', 'add', 'root/team-app', 'alice', 'developer']);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stderr).toContain('alice is now developer of root/team-app');
    const members = (await api('GET', '/projects/root%2Fteam-app/members')).body as Array<{ username: string; access_level: number }>;
    expect(members.find((m) => m.username === 'alice')?.access_level).toBe(30);
    const list = await f.cli(['member', 'list', 'root/team-app']);
    expect(list.stdout).toMatch(/alice\s+Alice\s+developer/);
    expect((await f.cli(['member', 'edit', 'root/team-app', 'alice', 'master', '--expires', '2099-01-31'])).code).toBe(0);
    const edited = (await api('GET', '/projects/root%2Fteam-app/members')).body.find((m: { username: string }) => m.username === 'alice');
    expect(edited).toMatchObject({ access_level: 40, expires_at: '2099-01-31' });
    const json = await f.cli(['member', 'list', 'root/team-app', '--json']);
    expect(json.json().map((m: { username: string }) => m.username)).toContain('alice');
    expect((await f.cli(['member', 'remove', 'root/team-app', 'alice'])).code).toBe(0);
    expect((await api('GET', '/projects/root%2Fteam-app/members')).body.some((m: { username: string }) => m.username === 'alice')).toBe(false);
  });

  it('works on a group with --group; says what is wrong otherwise', async () => {
    expect((await f.cli(['member', 'add', '--group', 'crew', 'alice', 'reporter'])).code).toBe(0);
    expect((await api('GET', '/groups/crew/members')).body.find((m: { username: string }) => m.username === 'alice')?.access_level).toBe(20);
    const badRole = await f.cli(['member', 'add', 'root/team-app', 'alice', 'boss']);
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('give one of guest, reporter, developer, master, owner');
    const noProject = await f.cli(['member', 'list'], { cwd: f.dataDir });
    expect(noProject.code).toBe(2);
    const again = await f.cli(['member', 'add', '--group', 'crew', 'alice', 'reporter']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Member already exists');
  });
});
