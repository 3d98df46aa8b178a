/** `gantry variable list|set|get|remove` against a real daemon (HTTP, in this process). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

let f: CliFixture;

beforeAll(async () => {
  f = await startCliFixture();
  const login = await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` });
  expect(login.code, login.stderr).toBe(0);
  expect((await f.cli(['project', 'create', 'vars'])).code).toBe(0);
});
afterAll(async () => {
  await f?.close();
});

describe('gantry variable', () => {
  it('sets (creates, then updates), gets, lists with hidden values and removes', async () => {
    const created = await f.cli(['variable', 'set', 'root/vars', 'API_KEY', 'hunter2']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe('Created variable API_KEY in root/vars.\n');
    const updated = await f.cli(['variable', 'set', 'root/vars', 'API_KEY', 'hunter3']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stderr).toBe('Updated variable API_KEY in root/vars.\n');

    const got = await f.cli(['variable', 'get', 'root/vars', 'API_KEY']);
    expect(got.stdout).toBe('hunter3\n');

    const list = await f.cli(['variable', 'list', 'root/vars']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('API_KEY');
    expect(list.stdout).not.toContain('hunter3');
    expect((await f.cli(['variable', 'list', 'root/vars', '--show-values'])).stdout).toContain('hunter3');
    expect((await f.cli(['variable', 'list', 'root/vars', '--json'])).json()).toEqual([{ key: 'API_KEY', value: 'hunter3' }]);

    const removed = await f.cli(['variable', 'remove', 'root/vars', 'API_KEY']);
    expect(removed.code, removed.stderr).toBe(0);
    const missing = await f.cli(['variable', 'get', 'root/vars', 'API_KEY']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404 Variable Not Found');
  });

  it('rejects a bad key before calling the server (exit 2)', async () => {
    const r = await f.cli(['variable', 'set', 'root/vars', 'BAD-KEY', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a valid variable key');
  });
});
