/**
 * `gantry api` against a real daemon: GET with placeholders filled from -R and from a real clone, -X with -f/-F
 * (typed values, @file, lists), -H, --input, --paginate joining pages, --include, --jq, raw output when piped, the
 * runner API and /oauth reachable, exit code 1 with the body on stderr for 4xx.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFields, requestTarget } from '../../cli/api-request.js';
import { clientEnv, gitOk, tempDir } from '../helpers/git.js';
import { fakeIO, ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
const dirs: string[] = [];
const gitEnv = (): Record<string, string> => Object.fromEntries(Object.entries(clientEnv()).filter(([k, v]) => !k.startsWith('GANTRY_') && v !== undefined)) as Record<string, string>;
const api = (args: string[], opts: { cwd?: string; input?: string } = {}) => f.cli(['api', ...args], { cwd: opts.cwd ?? tempDir('gantry-not-a-clone-'), env: gitEnv(), input: opts.input });

beforeAll(async () => {
  f = await startCliFixture();
  expect((await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` })).code).toBe(0);
  expect((await f.cli(['project', 'create', 'scripts'])).code).toBe(0);
});

afterAll(async () => {
  await f?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('gantry api', () => {
  it('GETs a path under /api/v3 and prints the JSON as it came when piped', async () => {
    const r = await api(['user']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().username).toBe('root');
    expect(r.stdout).not.toContain('\n  '); // not re-indented: passed through
    expect(r.stdout.endsWith('}\n')).toBe(true); // and ended with one newline, as jq and gh do
    const abs = await api(['/api/v3/user']);
    expect(abs.json().username).toBe('root');
  });

  it('creates with -X POST, -f strings and -F typed values (@file, lists); :id from -R', async () => {
    const dir = tempDir('gantry-api-files-');
    dirs.push(dir);
    writeFileSync(join(dir, 'body.md'), 'From a *file*\n');
    const r = await api(['-X', 'POST', 'projects/:id/issues', '-R', 'root/scripts', '-f', 'title=Flaky', '-F', 'confidential=true', '-F', `description=@${join(dir, 'body.md')}`, '-f', 'labels=ci,flaky']);
    expect(r.code, r.stderr).toBe(0);
    const issue = r.json();
    expect(issue).toMatchObject({ title: 'Flaky', confidential: true, description: 'From a *file*\n' });
    expect(issue.labels.sort()).toEqual(['ci', 'flaky']);
    // fields without -X mean POST (as gh api)
    const implicit = await api(['projects/root%2Fscripts/issues', '-f', 'title=Second']);
    expect(implicit.json().iid).toBe(2);
    const fields = await parseFields(fakeIO({}), ['a=1'], ['n=3', 'b=false', 'z=null', 'l[]=x', 'l[]=2']);
    expect(fields).toEqual({ a: '1', n: 3, b: false, z: null, l: ['x', 2] });
  });

  it('fills :id, :fullpath and :branch from the clone it runs in', async () => {
    const clone = tempDir('gantry-api-clone-');
    dirs.push(clone);
    await gitOk(clone, ['init', '-q', '-b', 'topic']);
    await gitOk(clone, ['remote', 'add', 'origin', `${f.url}/root/scripts.git`]);
    const r = await api(['projects/:id', '--jq', '.path_with_namespace'], { cwd: clone });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('root/scripts\n');
    expect(requestTarget('projects/:id/repository/branches/:branch?x=1', { id: 'root%2Fscripts', branch: 'topic' }, f.url))
      .toMatchObject({ path: '/api/v3/projects/root%2Fscripts/repository/branches/topic' });
    const outside = await api(['projects/:id']);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('-R <namespace/path>');
  });

  it('--paginate follows X-Next-Page and joins the pages into one array; --jq filters it', async () => {
    for (let i = 0; i < 3; i++) expect((await api(['-X', 'POST', 'projects/root%2Fscripts/labels', '-f', `name=l${i}`, '-f', 'color=#ff0000'])).code).toBe(0);
    const one = await api(['projects/root%2Fscripts/labels?per_page=2']);
    expect(one.json()).toHaveLength(2);
    const all = await api(['projects/root%2Fscripts/labels', '-f', 'per_page=2', '--paginate']);
    expect(all.code, all.stderr).toBe(0);
    const names = all.json().map((l: { name: string }) => l.name);
    expect(names.filter((n: string) => /^l\d$/.test(n)).sort()).toEqual(['l0', 'l1', 'l2']);
    expect(names.length).toBeGreaterThanOrEqual(4); // ci and flaky from the issue, too
    const jq = await api(['projects/root%2Fscripts/labels', '-f', 'per_page=2', '--paginate', '--jq', 'map(.name) | sort | .[0]']);
    expect(jq.stdout).toBe('ci\n');
    const bad = await api(['user', '--jq', '.[']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('cannot compile the jq expression');
  });

  it('--include prints the status line and headers; -H sends headers; --silent prints no body', async () => {
    const r = await api(['projects/root%2Fscripts/labels', '-i', '-H', 'X-Request-Id: from-test']);
    expect(r.stdout).toMatch(/^HTTP\/1\.1 200 OK\n/);
    expect(r.stdout).toMatch(/^X-Total: \d+$/m);
    expect(r.stdout).toMatch(/^Link: /m);
    const silent = await api(['user', '--silent']);
    expect(silent.code).toBe(0);
    expect(silent.stdout).toBe('');
  });

  it('sends a raw body with --input (a file or stdin)', async () => {
    const r = await api(['-X', 'PUT', 'projects/root%2Fscripts', '--input', '-'], { input: '{"description":"via stdin"}' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().description).toBe('via stdin');
  });

  it('reaches the runner API and /oauth', async () => {
    const runner = await api(['-X', 'POST', '/ci/api/v1/builds/register', '-f', 'token=not-a-runner']);
    expect(runner.code).toBe(1);
    expect(runner.stderr).toContain('HTTP 403'); // the runner API's answer to a wrong token (under /api/v3 it would be 404)
    const runners = await api(['-X', 'POST', '/ci/api/v1/runners/register', '-f', 'token=wrong']);
    expect(runners.stderr).toContain('HTTP 403');
    for (const p of ['/oauth/token', '/ci/api/v1/builds/register']) expect(requestTarget(p, {}, f.url).path).toBe(p);
    expect(requestTarget(`${f.url}/oauth/authorize?x=1`, {}, f.url)).toMatchObject({ path: '/oauth/authorize' });
  });

  it('exits 1 on 4xx with the body on stderr and a hint', async () => {
    const r = await api(['projects/nobody%2Fnothing']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('{"message":"404 Project Not Found"}');
    expect(r.stderr).toContain('gantry: HTTP 404 "404 Project Not Found"');
    expect(r.stderr).toContain('hint:');
    const usage = await api(['user', '-f', 'oops']);
    expect(usage.code).toBe(2);
  });
});
