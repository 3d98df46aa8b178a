/**
 * The current project from the clone: inside a real git clone whose remote is a Gantry project, every command that
 * takes a project takes it from the remote when none is given; -R/--repo overrides it; outside a clone the error says
 * what to do.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientEnv, gitOk, tempDir } from '../helpers/git.js';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let clone: string;
let outside: string;
const dirs: string[] = [];
const gitEnv = (): Record<string, string> => Object.fromEntries(Object.entries(clientEnv()).filter(([k, v]) => !k.startsWith('GANTRY_') && v !== undefined)) as Record<string, string>;
const cli = (args: string[], cwd: string) => f.cli(args, { cwd, env: gitEnv() });

beforeAll(async () => {
  f = await startCliFixture();
  expect((await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` })).code).toBe(0);
  for (const name of ['alpha', 'beta']) expect((await f.cli(['project', 'create', name])).code).toBe(0);
  expect((await f.cli(['issue', 'create', 'root/alpha', '--title', 'Alpha bug'])).code).toBe(0);
  expect((await f.cli(['issue', 'create', 'root/beta', '--title', 'Beta bug'])).code).toBe(0);
  clone = tempDir('gantry-current-clone-');
  outside = tempDir('gantry-not-a-clone-');
  dirs.push(clone, outside);
  await gitOk(clone, ['init', '-q']);
  await gitOk(clone, ['remote', 'add', 'origin', `${f.url}/root/alpha.git`]);
  await gitOk(clone, ['remote', 'add', 'elsewhere', 'https://example.com/other/thing.git']);
});

afterAll(async () => {
  await f?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the project of the clone', () => {
  it('lists the clone project\'s issues, pipelines and labels without naming it', async () => {
    const issues = await cli(['issue', 'list', '--json'], clone);
    expect(issues.code, issues.stderr).toBe(0);
    expect(issues.json().map((i: { title: string }) => i.title)).toEqual(['Alpha bug']);
    const pipelines = await cli(['pipeline', 'list', '--json'], clone);
    expect(pipelines.code, pipelines.stderr).toBe(0);
    expect(pipelines.json()).toEqual([]);
    const labels = await cli(['label', 'list', '--json'], clone);
    expect(labels.code, labels.stderr).toBe(0);
  });

  it('takes the later arguments in their places when the project is left out', async () => {
    const shown = await cli(['issue', 'show', '1'], clone);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('Alpha bug');
    const named = await cli(['issue', 'show', 'root/beta', '1'], clone);
    expect(named.stdout).toContain('Beta bug');
  });

  it('-R/--repo overrides the clone', async () => {
    const r = await cli(['issue', 'list', '-R', 'root/beta', '--json'], clone);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().map((i: { title: string }) => i.title)).toEqual(['Beta bug']);
    const shown = await cli(['issue', 'show', '--repo', 'root/beta', '1'], outside);
    expect(shown.stdout).toContain('Beta bug');
    const twice = await cli(['issue', 'show', '-R', 'root/beta', 'root/alpha', '1'], clone);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('given twice');
  });

  it('outside a clone: a command that needs a project says how to name one; issue list lists your own', async () => {
    const r = await cli(['pipeline', 'list'], outside);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a clone of a project on this server');
    expect(r.stderr).toContain('-R <namespace/path>');
    const mine = await cli(['issue', 'list', '--json'], outside);
    expect(mine.code, mine.stderr).toBe(0);
    expect(mine.json()).toHaveLength(2);
    const missing = await cli(['issue', 'show'], clone);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing <issue>');
  });

  it('--group is another scope: nothing is inferred', async () => {
    const r = await cli(['issue', 'list', '--group', 'root', '--json'], clone);
    // root is a user namespace, not a group: the API answers 404, which proves no project was added to the request
    expect(r.stderr).not.toContain('give a project or --group');
  });
});
