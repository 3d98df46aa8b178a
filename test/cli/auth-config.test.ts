/**
 * `gantry auth status` for each token kind (private from a password login, personal access token, GANTRY_TOKEN, a
 * refused token, a server that does not answer), interactive `gantry login` on a terminal, `gantry config`
 * get/set/list and its effect, `gantry alias`, and `gantry browse` URLs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main.js';
import { browseUrl } from '../../cli/commands/browse.js';
import { expandAlias, splitWords } from '../../cli/settings-file.js';
import { fakeIO, ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let rootToken: string;
const config = () => JSON.parse(readFileSync(join(f.configDir, 'config.json'), 'utf8'));

beforeAll(async () => {
  f = await startCliFixture();
  expect((await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` })).code).toBe(0);
  rootToken = config().profiles.default.token;
  expect((await f.cli(['project', 'create', 'site'])).code).toBe(0);
});

afterAll(async () => {
  await f?.close();
});

describe('gantry auth status', () => {
  it('a password login: private token, the user, the server answering', async () => {
    expect(config().profiles.default.tokenKind).toBe('private');
    const r = await f.cli(['auth', 'status']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^server: +http:\/\/127\.0\.0\.1:\d+ \(answers, \d+ ms\)$/m);
    expect(r.stdout).toMatch(/^user: +root \(administrator\)$/m);
    expect(r.stdout).toContain('private token');
    expect(r.stdout).toContain('from profile default');
  });

  it('a personal access token: its kind and expiry', async () => {
    const created = await f.cli(['api', '-X', 'POST', 'user/personal_access_tokens', '-f', 'name=ci', '-f', 'expires_at=2999-01-01']);
    expect(created.code, created.stderr).toBe(0);
    const pat = created.json().token as string;
    const r = await f.cli(['auth', 'status', '--json'], { env: { GANTRY_URL: f.url, GANTRY_TOKEN: pat } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ user: 'root', token_kind: 'personal', token_source: 'GANTRY_TOKEN', token_expires: '2999-01-01', answers: true });
    // saved by `login --token`, the kind is recorded in the profile
    expect((await f.cli(['login', '--url', f.url, '--token', pat, '--profile', 'pat'])).code).toBe(0);
    expect(config().profiles.pat.tokenKind).toBe('personal');
    expect((await f.cli(['profile', 'use', 'default'])).code).toBe(0);
  });

  it('a refused token and a server that does not answer: exit 1 with a hint', async () => {
    const refused = await f.cli(['auth', 'status'], { env: { GANTRY_URL: f.url, GANTRY_TOKEN: 'x'.repeat(20) } });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^user: +none$/m);
    expect(refused.stderr).toContain('refused the token');
    expect(refused.stderr).toContain('hint: log in again');
    const down = await f.cli(['auth', 'status', '--json'], { env: { GANTRY_URL: 'http://127.0.0.1:9', GANTRY_TOKEN: rootToken } });
    expect(down.code).toBe(1);
    expect(down.json()).toMatchObject({ answers: false, user: null });
    expect(down.stderr).toContain('cannot reach');
  });
});

describe('gantry login on a terminal', () => {
  it('asks for the URL and the method, then the token', async () => {
    const stdin = Object.assign(new PassThrough(), { setRawMode: () => undefined, isTTY: true });
    const io = Object.assign(fakeIO({ GANTRY_CONFIG_DIR: f.configDir }), { stdin: stdin as unknown as NodeJS.ReadStream, stdinIsTTY: true, stderrIsTTY: true });
    const done = run(['node', 'gantry', 'login', '--profile', 'asked'], io);
    const answers = [`${f.url}\n`, '2\n', `${rootToken}\n`];
    for (const a of answers) {
      await new Promise((r) => setTimeout(r, 150));
      stdin.write(a);
    }
    expect(await done, io.stderr).toBe(0);
    expect(config().profiles.asked).toMatchObject({ url: f.url, username: 'root', tokenKind: 'private' });
    expect((await f.cli(['profile', 'use', 'default'])).code).toBe(0);
  });
});

describe('gantry config and alias', () => {
  it('sets, gets and lists settings per profile and globally', async () => {
    expect((await f.cli(['config', 'set', 'editor', 'nano -w'])).code).toBe(0);
    expect((await f.cli(['config', 'get', 'editor'])).stdout).toBe('nano -w\n');
    expect((await f.cli(['config', 'set', 'pager', 'cat', '--global'])).code).toBe(0);
    const list = await f.cli(['config', 'list', '--json']);
    expect(list.json()).toEqual(expect.arrayContaining([
      { key: 'editor', value: 'nano -w', source: 'profile default' },
      { key: 'pager', value: 'cat', source: 'global' },
      { key: 'output', value: null, source: 'default' },
    ]));
    expect(config().profiles.default.settings).toEqual({ editor: 'nano -w' });
    const bad = await f.cli(['config', 'set', 'output', 'yaml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('output must be table, json');
    const unknown = await f.cli(['config', 'get', 'colour']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('hint: the settings are editor, pager, browser, color, output');
  });

  it('output json makes list commands print JSON', async () => {
    expect((await f.cli(['config', 'set', 'output', 'json'])).code).toBe(0);
    const r = await f.cli(['project', 'list']);
    expect(r.json()[0].path_with_namespace).toBe('root/site');
    expect((await f.cli(['config', 'unset', 'output'])).code).toBe(0);
    expect((await f.cli(['project', 'list'])).stdout).toMatch(/^ID/);
  });

  it('aliases expand, with $1 and the rest appended; commands cannot be shadowed', async () => {
    expect((await f.cli(['alias', 'set', 'pl', 'project list --json'])).code).toBe(0);
    const r = await f.cli(['pl']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()[0].path_with_namespace).toBe('root/site');
    expect((await f.cli(['alias', 'set', 'iss', 'issue list $1 --state opened'])).code).toBe(0);
    expect((await f.cli(['iss', 'root/site', '--json'])).json()).toEqual([]);
    expect((await f.cli(['alias', 'list'])).stdout).toContain('project list --json');
    const shadow = await f.cli(['alias', 'set', 'issue', 'mr list']);
    expect(shadow.code).toBe(2);
    const nonsense = await f.cli(['alias', 'set', 'x', 'frobnicate now']);
    expect(nonsense.code).toBe(2);
    expect((await f.cli(['alias', 'delete', 'pl'])).code).toBe(0);
    expect((await f.cli(['pl'])).code).toBe(2);
    expect(splitWords(`mr list --title "a b" 'c d'`)).toEqual(['mr', 'list', '--title', 'a b', 'c d']);
    expect(expandAlias(['node', 'gantry', 'co', '3', '-b', 'x'], 2, { co: 'mr checkout $1' })).toEqual(['node', 'gantry', 'mr', 'checkout', '3', '-b', 'x']);
  });
});

describe('gantry browse', () => {
  it('prints the URL when not on a terminal', async () => {
    const r = await f.cli(['browse', '-R', 'root/site']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${f.url}/root/site\n`);
    expect((await f.cli(['browse', '-R', 'root/site', 'src/app.ts:42', '-b', 'dev'])).stdout).toBe(`${f.url}/root/site/blob/dev/src/app.ts#L42\n`);
    const outside = await f.cli(['browse'], { cwd: '/' });
    expect(outside.code).toBe(2);
  });

  it('builds the URLs of issues, merge requests, pipelines and files', () => {
    const w = 'http://h/root/a';
    expect(browseUrl(w, 'master', '12', {})).toBe(`${w}/issues/12`);
    expect(browseUrl(w, 'master', '#12', {})).toBe(`${w}/issues/12`);
    expect(browseUrl(w, 'master', '!3', {})).toBe(`${w}/merge_requests/3`);
    expect(browseUrl(w, 'master', undefined, { mr: '3' })).toBe(`${w}/merge_requests/3`);
    expect(browseUrl(w, 'master', undefined, { pipeline: '7' })).toBe(`${w}/pipelines/7`);
    expect(browseUrl(w, 'main', 'docs/read me.md', {})).toBe(`${w}/blob/main/docs/read%20me.md`);
    expect(browseUrl(w, 'main', undefined, { settings: true })).toBe(`${w}/edit`);
    expect(() => browseUrl(w, 'main', 'a.txt', { issue: '1' })).toThrow(/one thing/);
  });
});
