/** `gantry runner update|remove|enable|disable` against a real daemon (HTTP, in this process). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCaller, loginToken, ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;
let runner: { id: number; token: string };

/** Calls the API as root. */
let rootApi: ReturnType<typeof apiCaller>;

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  rootApi = apiCaller(f, loginToken(f));
  expect((await f.cli(['project', 'create', 'rone'])).code).toBe(0);
  expect((await f.cli(['project', 'create', 'rtwo'])).code).toBe(0);
  const p = await rootApi('GET', '/projects/root%2Frone');
  const reg = await rootApi('POST', '/ci/api/v1/runners/register', { token: p.body.runners_token, description: 'cli runner' });
  expect(reg.status).toBe(201);
  runner = reg.body;
});
afterAll(async () => {
  await f?.close();
});

describe('gantry runner', () => {
  it('update changes the given fields and prints the details (--json too)', async () => {
    const r = await f.cli(['runner', 'update', String(runner.id), '--description', 'renamed', '--paused', '--tag-list', 'docker,linux', '--no-run-untagged', '--locked']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`Updated runner ${runner.id} (renamed).\n`);
    expect(r.stdout).toMatch(/^active:\s+no$/m);
    expect(r.stdout).toMatch(/^tags:\s+docker, linux$/m);
    const j = await f.cli(['runner', 'update', String(runner.id), '--active', '--no-locked', '--json']);
    expect(j.code, j.stderr).toBe(0);
    expect(j.json()).toMatchObject({ id: runner.id, description: 'renamed', active: true, locked: false, run_untagged: false, tag_list: ['docker', 'linux'] });
    const none = await f.cli(['runner', 'update', String(runner.id)]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('nothing to change');
    expect((await f.cli(['runner', 'update', String(runner.id), '--active', '--paused'])).code).not.toBe(0);
  });

  it('enable and disable a runner for another project', async () => {
    const e = await f.cli(['runner', 'enable', 'root/rtwo', String(runner.id)]);
    expect(e.code, e.stderr).toBe(0);
    expect(e.stderr).toBe(`Enabled runner ${runner.id} (renamed) for root/rtwo.\n`);
    const again = await f.cli(['runner', 'enable', 'root/rtwo', String(runner.id)]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('Runner was already enabled for this project');
    const d = await f.cli(['runner', 'disable', 'root/rtwo', String(runner.id), '--json']);
    expect(d.code, d.stderr).toBe(0);
    expect(d.json()).toEqual({ id: runner.id, description: 'renamed', active: true, is_shared: false, name: null });
    const last = await f.cli(['runner', 'disable', 'root/rone', String(runner.id)]);
    expect(last.code).not.toBe(0);
    expect(last.stderr).toContain('Please remove the runner instead');
  });

  it('remove deletes the runner; its token stops working', async () => {
    const r = await f.cli(['runner', 'remove', String(runner.id)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`Removed runner ${runner.id} (renamed).\n`);
    expect((await rootApi('POST', '/ci/api/v1/builds/register', { token: runner.token })).status).toBe(403);
    const gone = await f.cli(['runner', 'show', String(runner.id)]);
    expect(gone.code).not.toBe(0);
  });
});
