/** `gantry snippet list|create|show|edit|delete` against a real daemon (HTTP, in this process). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let dir: string;

beforeAll(async () => {
  f = await startCliFixture();
  dir = mkdtempSync(join(tmpdir(), 'gantry-snippet-'));
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  expect((await f.cli(['project', 'create', 'snips', '--snippets'])).code).toBe(0);
  expect((await f.cli(['project', 'create', 'nosnips'])).code).toBe(0);
});
afterAll(async () => {
  await f?.close();
});

describe('gantry snippet', () => {
  it('creates from a file and from stdin, lists, shows the code and the fields, edits and deletes', async () => {
    const file = join(dir, 'deploy.sh');
    writeFileSync(file, '#!/bin/sh\necho deploy\n');
    const created = await f.cli(['snippet', 'create', 'root/snips', file, '--title', 'Deploy script', '--visibility', 'internal', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const s = created.json() as { id: number; file_name: string; web_url: string };
    expect(s.file_name).toBe('deploy.sh');
    expect(created.stderr).toContain(`Created snippet ${s.id} "Deploy script" in root/snips: ${s.web_url}`);
    expect(s.web_url).toMatch(new RegExp(`/root/snips/snippets/${s.id}$`));

    const piped = await f.cli(['snippet', 'create', 'root/snips', '-t', 'Pods', '-n', 'pods.txt'], { input: 'pod-a Running\n' });
    expect(piped.code, piped.stderr).toBe(0);
    const noName = await f.cli(['snippet', 'create', 'root/snips', '-', '-t', 'Nameless'], { input: 'x\n' });
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain('add --file-name');
    const empty = await f.cli(['snippet', 'create', 'root/snips', '-t', 'Empty', '-n', 'e.txt'], { input: '  \n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('stdin is empty');

    const list = await f.cli(['snippet', 'list', 'root/snips']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/Pods\s+pods\.txt\s+root/);
    expect(list.stdout).toMatch(/Deploy script\s+deploy\.sh\s+root/);
    expect((await f.cli(['snippet', 'list', 'root/snips', '--json'])).json()).toHaveLength(2);

    const code = await f.cli(['snippet', 'show', 'root/snips', String(s.id)]);
    expect(code.code, code.stderr).toBe(0);
    expect(code.stdout).toBe('#!/bin/sh\necho deploy\n');
    const info = await f.cli(['snippet', 'show', 'root/snips', String(s.id), '--info']);
    expect(info.stdout).toMatch(/title:\s+Deploy script/);
    expect(info.stdout).toContain(s.web_url);

    const edited = await f.cli(['snippet', 'edit', 'root/snips', String(s.id), '--title', 'Deploy', '-f', '-'], { input: 'echo v2\n' });
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stderr).toBe(`Updated snippet ${s.id} "Deploy".\n`);
    expect((await f.cli(['snippet', 'show', 'root/snips', String(s.id)])).stdout).toBe('echo v2\n');
    const nothing = await f.cli(['snippet', 'edit', 'root/snips', String(s.id)]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('nothing to change');
    const badName = await f.cli(['snippet', 'edit', 'root/snips', String(s.id), '-n', 'no spaces.sh']);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toContain("can contain only letters, digits, '_', '-', '@' and '.'");

    const unconfirmed = await f.cli(['snippet', 'delete', 'root/snips', String(s.id)]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('add --yes');
    const deleted = await f.cli(['snippet', 'delete', 'root/snips', String(s.id), '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const gone = await f.cli(['snippet', 'show', 'root/snips', String(s.id)]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('404');
  });

  it('says what the server refused: snippets off in the project (403), a bad visibility before calling it', async () => {
    const off = await f.cli(['snippet', 'list', 'root/nosnips']);
    expect(off.code).toBe(1);
    expect(off.stderr).toContain('403');
    const bad = await f.cli(['snippet', 'create', 'root/snips', '-', '-t', 'x', '-n', 'x.txt', '--visibility', 'secret'], { input: 'x\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('use private, internal or public');
  });

  it('is completed as a noun with its verbs', async () => {
    const nouns = await f.cli(['__complete', '--', 'snip']);
    expect(nouns.stdout.split('\n')).toContain('snippet');
    const verbs = await f.cli(['__complete', '--', 'snippet', '']);
    expect(verbs.stdout.split('\n')).toEqual(expect.arrayContaining(['list', 'create', 'show', 'edit', 'delete']));
  });
});
