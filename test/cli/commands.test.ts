/** The CLI's commands against a real daemon (HTTP on a free port, in this process): output, JSON, exit codes, hints. */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let rootToken: string;
beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  rootToken = JSON.parse(readFileSync(join(f.configDir, 'config.json'), 'utf8')).profiles.default.token;
});
afterAll(async () => {
  await f.close();
});

describe('login, profiles and connection errors', () => {
  it('stores the token privately in the config dir', async () => {
    expect(statSync(join(f.configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(f.configDir).mode & 0o777).toBe(0o700);
    const list = await f.cli(['profile', 'list', '--json']);
    expect(list.json()).toEqual([{ name: 'default', url: f.url, username: 'root', active: true }]);
    expect(list.stdout).not.toContain(rootToken);
  });

  it('refuses a wrong password with a hint and exit code 1', async () => {
    const r = await f.cli(['login', '--url', f.url, '--username', 'root', '--password', 'wrong-password', '--profile', 'x']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('gantry: wrong user name or password');
    expect(r.stderr).toContain('initial_root_password');
  });

  it('needs a way to log in: usage errors exit 2', async () => {
    expect((await f.cli(['login', '--url', f.url])).code).toBe(2);
    const noPassword = await f.cli(['login', '--url', f.url, '--username', 'root']);
    expect(noPassword.code).toBe(2);
    expect(noPassword.stderr).toContain('--password-stdin');
    const unknown = await f.cli(['project', 'list', '--profile', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no profile named "nope"');
    expect((await f.cli(['project', 'frobnicate'])).code).toBe(2);
    expect((await f.cli(['project', 'list', '--bogus'])).code).toBe(2);
  });

  it('saves a second profile from a token, switches and logs out', async () => {
    const bad = await f.cli(['login', '--url', f.url, '--token', 'not-a-token', '--profile', 'second']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('refused this token');
    const ok = await f.cli(['login', '--url', `${f.url}/`, '--token', rootToken, '--profile', 'second']);
    expect(ok.code, ok.stderr).toBe(0);
    const list = (await f.cli(['profile', 'list', '--json'])).json();
    expect(list.map((p: { name: string; active: boolean }) => [p.name, p.active])).toEqual([['default', false], ['second', true]]);
    expect((await f.cli(['profile', 'use', 'default'])).code).toBe(0);
    expect((await f.cli(['logout', '--profile', 'second'])).code).toBe(0);
    expect((await f.cli(['profile', 'list', '--json'])).json()).toHaveLength(1);
    expect((await f.cli(['profile', 'use', 'second'])).code).toBe(1);
  });

  it('maps 401 and unreachable servers to messages with a next step', async () => {
    const r = await f.cli(['project', 'list'], { env: { GANTRY_TOKEN: 'revoked-token' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`gantry: 401 Unauthorized\nhint: your token for ${f.url} is missing, wrong or revoked: run \`gantry login --url ${f.url}\`\n`);
    const down = await f.cli(['project', 'list', '--url', 'http://127.0.0.1:1', '--token', 'x']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/gantry: cannot reach http:\/\/127\.0\.0\.1:1: connection refused\nhint: is gantryd running there\?/);
    const nobody = await f.cli(['project', 'list'], { env: { GANTRY_CONFIG_DIR: join(f.dataDir, 'no-config') } });
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('not logged in');
    // a profile's token is never sent to another server
    const other = await f.cli(['project', 'list', '--url', 'http://127.0.0.1:1']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('no token for http://127.0.0.1:1');
  });
});

describe('gantry project', () => {
  let groupPath: string;
  beforeAll(async () => {
    groupPath = 'cli-team';
    const g = await f.cli(['group', 'create', 'CLI Team', '--json']);
    expect(g.code, g.stderr).toBe(0);
    expect(g.json().path).toBe(groupPath);
  });

  it('creates (personal and in a group), shows by path and id, lists as a table and as JSON', async () => {
    const created = await f.cli(['project', 'create', 'alpha', '--description', 'first one', '--visibility', 'internal']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toMatch(/^Created project root\/alpha \(id \d+\)\.\n$/);
    expect(created.stdout).toMatch(/^path:\s+root\/alpha$/m);
    expect(created.stdout).toMatch(/^visibility:\s+internal$/m);

    const inGroup = await f.cli(['project', 'create', 'beta', '--namespace', groupPath, '--json']);
    expect(inGroup.code, inGroup.stderr).toBe(0);
    expect(inGroup.json().path_with_namespace).toBe(`${groupPath}/beta`);

    const shown = await f.cli(['project', 'show', 'root/alpha', '--json']);
    expect(shown.json()).toMatchObject({ name: 'alpha', description: 'first one', visibility_level: 10 });
    const byId = await f.cli(['project', 'show', String(shown.json().id), '--json']);
    expect(byId.json().path_with_namespace).toBe('root/alpha');

    const table = await f.cli(['project', 'list']);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+PATH\s+VISIBILITY\s+STARS\s+ARCHIVED\s+LAST ACTIVITY\s+DESCRIPTION$/);
    expect(rows.some((r) => /^\d+\s+root\/alpha\s+internal\s+0\s+no\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+first one$/.test(r))).toBe(true);
    // the columns line up: every row has PATH where the header has it
    const pathCol = header.indexOf('PATH');
    for (const r of rows) expect(r[pathCol - 1]).toBe(' ');

    const json = await f.cli(['project', 'list', '--json']);
    expect(json.json().map((p: { path_with_namespace: string }) => p.path_with_namespace)).toEqual(expect.arrayContaining(['root/alpha', `${groupPath}/beta`]));

    const missing = await f.cli(['project', 'show', 'root/nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('gantry: 404 Project Not Found\nhint: check the id or path (namespace/name) and that your account can see it\n');
    expect((await f.cli(['project', 'create', 'x', '--visibility', 'secret'])).code).toBe(2);
    const dup = await f.cli(['project', 'create', 'alpha']);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/^gantry: .*(taken|exists)/i);
  });

  it('pages: one page with a note, or every page with --all', async () => {
    for (const n of ['p1', 'p2', 'p3']) expect((await f.cli(['project', 'create', n])).code).toBe(0);
    const one = await f.cli(['project', 'list', '--owned', '--per-page', '2', '--json']);
    expect(one.json()).toHaveLength(2);
    expect(one.stderr).toMatch(/^Showing 2 of \d+; use --all for every page, or --page 2\.\n$/);
    const all = await f.cli(['project', 'list', '--owned', '--per-page', '2', '--all', '--json']);
    expect(all.stderr).toBe('');
    const owned = all.json();
    expect(owned.length).toBeGreaterThanOrEqual(4);
    expect(new Set(owned.map((p: { id: number }) => p.id)).size).toBe(owned.length);
    const page2 = await f.cli(['project', 'list', '--owned', '--per-page', '2', '--page', '2', '--json']);
    expect(page2.json().map((p: { id: number }) => p.id)).toEqual(owned.slice(2, 4).map((p: { id: number }) => p.id));
    expect((await f.cli(['project', 'list', '--owned', '--starred'])).code).toBe(2);
    expect((await f.cli(['project', 'list', '--page', '0'])).code).toBe(2);
  });

  it('updates, stars, archives, forks and deletes', async () => {
    expect((await f.cli(['project', 'update', 'root/alpha'])).code).toBe(2);
    const updated = await f.cli(['project', 'update', 'root/alpha', '--description', 'changed', '--no-wiki', '--json']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.json()).toMatchObject({ description: 'changed', wiki_enabled: false });

    const star = await f.cli(['project', 'star', 'root/alpha']);
    expect(star.code, star.stderr).toBe(0);
    expect(star.stderr).toMatch(/^Starred root\/alpha \(stars: 1/);
    const again = await f.cli(['project', 'star', 'root/alpha']);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('Project root/alpha is already starred.\n');
    expect((await f.cli(['project', 'list', '--starred', '--json'])).json().map((p: { name: string }) => p.name)).toEqual(['alpha']);
    expect((await f.cli(['project', 'unstar', 'root/alpha'])).stderr).toMatch(/^Unstarred root\/alpha \(stars: 0/);

    expect((await f.cli(['project', 'archive', 'root/alpha'])).code).toBe(0);
    expect((await f.cli(['project', 'show', 'root/alpha', '--json'])).json().archived).toBe(true);
    expect((await f.cli(['project', 'list', '--archived', '--json'])).json().map((p: { name: string }) => p.name)).toEqual(['alpha']);
    expect((await f.cli(['project', 'unarchive', 'root/alpha'])).code).toBe(0);
    expect((await f.cli(['project', 'show', 'root/alpha', '--json'])).json().archived).toBe(false);

    const fork = await f.cli(['project', 'fork', 'root/alpha', '--namespace', 'cli-team', '--json']);
    expect(fork.code, fork.stderr).toBe(0);
    expect(fork.json()).toMatchObject({ path_with_namespace: 'cli-team/alpha', forked_from_project: expect.objectContaining({ path_with_namespace: 'root/alpha' }) });

    const noYes = await f.cli(['project', 'delete', 'cli-team/alpha']);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toContain('add --yes');
    const del = await f.cli(['project', 'delete', 'cli-team/alpha', '--yes']);
    expect(del.code, del.stderr).toBe(0);
    expect((await f.cli(['project', 'show', 'cli-team/alpha'])).code).toBe(1);
  });
});

describe('gantry group, user, settings', () => {
  it('lists and shows groups with their projects', async () => {
    const list = await f.cli(['group', 'list']);
    expect(list.stdout).toMatch(/^ID\s+PATH\s+NAME\s+VISIBILITY\s+DESCRIPTION\n\d+\s+cli-team\s+CLI Team/);
    const shown = await f.cli(['group', 'show', 'cli-team']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^path:\s+cli-team$/m);
    expect(shown.stdout).toMatch(/cli-team\/beta/);
    expect((await f.cli(['group', 'show', 'cli-team', '--json'])).json()).toMatchObject({ path: 'cli-team', projects: [expect.objectContaining({ name: 'beta' })] });
    expect((await f.cli(['group', 'list', '--search', 'zzz', '--json'])).json()).toEqual([]);
    const empty = await f.cli(['group', 'list', '--search', 'zzz']);
    expect(empty.stdout).toBe('');
    expect(empty.stderr).toBe('No groups found.\n');
  });

  it('creates and lists users', async () => {
    const created = await f.cli(['user', 'create', '--username', 'carol', '--email', 'carol@example.com', '--name', 'Carol', '--password', 'carol-pass-1', '--can-create-group', '--json']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json()).toMatchObject({ username: 'carol', can_create_group: true, is_admin: false });
    expect((await f.cli(['user', 'create', '--username', 'dave'])).code).toBe(2);
    const list = await f.cli(['user', 'list']);
    expect(list.stdout).toMatch(/^ID\s+USERNAME\s+NAME\s+STATE\s+ADMIN\s+EMAIL$/m);
    expect(list.stdout).toMatch(/^\d+\s+carol\s+Carol\s+active\s+no\s+carol@example\.com$/m);
    const dup = await f.cli(['user', 'create', '--username', 'carol', '--email', 'c2@example.com', '--name', 'C', '--password', 'carol-pass-1']);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/^gantry: .*(taken|exists)/i);

    // carol is not an administrator: settings answer 403 with a hint
    const login = await f.cli(['login', '--url', f.url, '--username', 'carol', '--password', 'carol-pass-1', '--profile', 'carol']);
    expect(login.code, login.stderr).toBe(0);
    const forbidden = await f.cli(['settings', 'get', '--profile', 'carol']);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toBe('gantry: 403 Forbidden\nhint: your account is not allowed to do this; ask an administrator or the owner\n');
    expect((await f.cli(['user', 'show', '--profile', 'carol', '--json'])).json().username).toBe('carol');
    expect((await f.cli(['profile', 'use', 'default'])).code).toBe(0);
  });

  it('reads and changes settings with typed values', async () => {
    const table = await f.cli(['settings', 'get']);
    expect(table.stdout).toMatch(/^SETTING\s+VALUE$/m);
    expect(table.stdout).toMatch(/^signup_enabled\s+true$/m);
    expect((await f.cli(['settings', 'get', 'default_projects_limit'])).stdout).toBe('10\n');
    expect((await f.cli(['settings', 'get', 'nope'])).code).toBe(2);

    const set = await f.cli(['settings', 'set', 'signup_enabled=false', 'default_projects_limit=15', 'domain_whitelist=example.com,example.org']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toBe('Set signup_enabled = false\nSet default_projects_limit = 15\nSet domain_whitelist = example.com, example.org\n');
    const all = (await f.cli(['settings', 'get', '--json'])).json();
    expect(all).toMatchObject({ signup_enabled: false, default_projects_limit: 15, domain_whitelist: ['example.com', 'example.org'] });
    expect((await f.cli(['settings', 'get', 'signup_enabled'])).stdout).toBe('false\n');

    expect((await f.cli(['settings', 'set', 'signup_enabled=maybe'])).code).toBe(2);
    expect((await f.cli(['settings', 'set', 'default_projects_limit=lots'])).code).toBe(2);
    expect((await f.cli(['settings', 'set', 'no_such_setting=1'])).code).toBe(2);
    expect((await f.cli(['settings', 'set', 'justakey'])).code).toBe(2);
    const bad = await f.cli(['settings', 'set', 'default_branch_protection=7']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^gantry: .*default_branch_protection/);
  });
});
