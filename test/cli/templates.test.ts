/** `gantry template list|show` and `gantry mr versions` against a real daemon (HTTP, in this process). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
});
afterAll(async () => {
  await f?.close();
});

describe('gantry template', () => {
  it('lists gitignore names and prints one text alone, ready for a file', async () => {
    const list = await f.cli(['template', 'list', 'gitignore']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^Ruby\s*$/m);
    const show = await f.cli(['template', 'show', 'gitignore', 'Ruby']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('*.gem\n');
    expect(show.stdout).not.toContain('"content"');
    const json = (await f.cli(['templates', 'show', 'gitlab-ci', 'Ruby', '--json'])).json();
    expect(json).toMatchObject({ name: 'Ruby', content: expect.stringMatching(/^# This file is a template,/) });
    const cpp = await f.cli(['template', 'show', 'gitignore', 'C++']);
    expect(cpp.code, cpp.stderr).toBe(0);
  });

  it('prints a license with the holder filled in, and lists the popular ones', async () => {
    const mit = await f.cli(['template', 'show', 'license', 'mit', '--fullname', 'ACME Inc.']);
    expect(mit.code, mit.stderr).toBe(0);
    expect(mit.stdout).toContain(`Copyright (c) ${new Date().getUTCFullYear()} ACME Inc.`);
    const popular = await f.cli(['template', 'list', 'license', '--popular', '--json']);
    expect(popular.json().map((l: { key: string }) => l.key)).toEqual(['apache-2.0', 'gpl-3.0', 'mit']);
  });

  it('explains an unknown kind (usage, exit 2) and an unknown name (404, exit 1)', async () => {
    const kind = await f.cli(['template', 'list', 'dockerfile']);
    expect(kind.code).toBe(2);
    expect(kind.stderr).toContain('use gitignore, gitlab-ci or license');
    const name = await f.cli(['template', 'show', 'gitignore', 'Nope']);
    expect(name.code).toBe(1);
    expect(name.stderr).toContain('404 gitignore Not Found');
  });
});

describe('gantry mr versions', () => {
  it('lists the versions of a merge request, newest first', async () => {
    expect((await f.cli(['project', 'create', 'vers'])).code).toBe(0);
    expect((await f.cli(['file', 'put', 'root/vers', 'README.md', '--branch', 'master', '--content', 'hi\n'])).code).toBe(0);
    expect((await f.cli(['branch', 'create', 'root/vers', 'topic', '--ref', 'master'])).code).toBe(0);
    expect((await f.cli(['file', 'put', 'root/vers', 'a.txt', '--branch', 'topic', '--content', 'a\n'])).code).toBe(0);
    const mr = await f.cli(['mr', 'create', 'root/vers', '--source-branch', 'topic', '--title', 'Topic']);
    expect(mr.code, mr.stderr).toBe(0);
    expect((await f.cli(['file', 'put', 'root/vers', 'b.txt', '--branch', 'topic', '--content', 'b\n'])).code).toBe(0);
    const versions = await f.cli(['mr', 'versions', 'root/vers', '1']);
    expect(versions.code, versions.stderr).toBe(0);
    expect(versions.stdout).toMatch(/^VERSION\s+HEAD\s+BASE\s+STATE\s+FILES\s+CREATED/);
    expect(versions.stdout.trim().split('\n')).toHaveLength(3);
    const json = (await f.cli(['mr', 'versions', 'root/vers', '1', '--json'])).json();
    expect(json.map((v: { real_size: string }) => v.real_size)).toEqual(['2', '1']);
  });
});
