/** `gantry trigger list|create|remove|run` against a real daemon (HTTP, in this process). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  expect((await f.cli(['project', 'create', 'trig'])).code).toBe(0);
  const put = await f.cli(['file', 'put', 'root/trig', '.gitlab-ci.yml', '--branch', 'master', '--content', 'deploy:\n  script: echo "$DEPLOY_TO"\n  only: [triggers]\n']);
  expect(put.code, put.stderr).toBe(0);
  expect((await f.cli(['project', 'create', 'bare'])).code).toBe(0);
});
afterAll(async () => {
  await f?.close();
});

describe('gantry trigger', () => {
  it('creates (token on stdout), lists and removes triggers', async () => {
    const created = await f.cli(['trigger', 'create', 'root/bare']);
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^[0-9a-f]{30}$/);
    expect(created.stderr).toContain(`gantry trigger run root/bare --ref <branch> --trigger-token ${token}`);

    const list = await f.cli(['trigger', 'list', 'root/bare']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(token);
    expect(list.stdout).toContain('never');
    const json = (await f.cli(['trigger', 'list', 'root/bare', '--json'])).json();
    expect(json).toEqual([expect.objectContaining({ token, last_used: null, deleted_at: null })]);

    const refused = await f.cli(['trigger', 'remove', 'root/bare', token]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('add --yes');
    const removed = await f.cli(['trigger', 'remove', 'root/bare', token, '--yes']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toBe(`Removed trigger ${token} from root/bare.\n`);
    expect((await f.cli(['trigger', 'list', 'root/bare', '--json'])).json()).toEqual([]);
    const again = await f.cli(['trigger', 'remove', 'root/bare', token, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('404 Trigger Not Found');
  });

  it('runs a pipeline with variables, creating a trigger when the project has none, then reusing it', async () => {
    const first = await f.cli(['trigger', 'run', 'root/trig', '--ref', 'master', '--var', 'DEPLOY_TO=staging', '--var', 'MODE=a=b']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/Created trigger [0-9a-f]{30} on root\/trig/);
    expect(first.stdout).toMatch(/^Pipeline #\d+ \(pending\) on master at [0-9a-f]{8}, trigger request #\d+\n$/);
    const pipelineId = Number(/#(\d+)/.exec(first.stdout)![1]);
    expect(first.stderr).toContain(`Follow it: gantry pipeline watch root/trig ${pipelineId}`);
    const shown = await f.cli(['pipeline', 'show', 'root/trig', String(pipelineId), '--json']);
    expect(shown.code, shown.stderr).toBe(0);

    const triggers = (await f.cli(['trigger', 'list', 'root/trig', '--json'])).json();
    expect(triggers).toHaveLength(1);
    expect(triggers[0].last_used).toEqual(expect.any(String));

    // the default ref is the default branch; the existing trigger is reused; --json prints the trigger request
    const second = await f.cli(['trigger', 'run', 'root/trig', '--var', 'DEPLOY_TO=prod', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toBe('');
    expect(second.json()).toMatchObject({ variables: { DEPLOY_TO: 'prod' }, pipeline: { ref: 'master', status: 'pending' } });
    expect((await f.cli(['trigger', 'list', 'root/trig', '--json'])).json()).toHaveLength(1);

    const withToken = await f.cli(['trigger', 'run', 'root/trig', '--ref', 'master', '--trigger-token', triggers[0].token, '--json']);
    expect(withToken.code, withToken.stderr).toBe(0);
    expect(withToken.json().variables).toBeNull();
  });

  it('says what went wrong: a bad --var, an unknown token, a ref with nothing to build', async () => {
    const badVar = await f.cli(['trigger', 'run', 'root/trig', '--ref', 'master', '--var', 'NOEQUALS']);
    expect(badVar.code).toBe(2);
    expect(badVar.stderr).toContain('expected KEY=VALUE');
    const unknown = await f.cli(['trigger', 'run', 'root/trig', '--ref', 'master', '--trigger-token', 'abcdef0123']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('404');
    const noBuilds = await f.cli(['trigger', 'run', 'root/trig', '--ref', 'no-such-branch']);
    expect(noBuilds.code).toBe(1);
    expect(noBuilds.stderr).toContain('No builds created');
  });

  it('completes the noun, its verbs and the run flags', async () => {
    const complete = async (...words: string[]) => (await f.cli(['__complete', '--', ...words])).stdout.split('\n').filter(Boolean);
    expect(await complete('tri')).toContain('trigger');
    expect(await complete('trigger', '')).toEqual(expect.arrayContaining(['list', 'create', 'remove', 'run']));
    expect(await complete('trigger', 'run', '--')).toEqual(expect.arrayContaining(['--ref', '--var', '--trigger-token']));
  });
});
