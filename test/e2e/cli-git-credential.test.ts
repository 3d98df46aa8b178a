/**
 * git's credentials from the CLI's logins (issue 25: "the first git push fails"): a clone made by `gantry repo clone`
 * over HTTP pushes at once, `gantry auth setup-git` does the same for any clone of a logged-in server, and the helper
 * answers git's credential protocol, saying nothing for a server it has no login for. All through the real programs:
 * gantryd, bin/gantry.js, and git asking with its terminal prompts off (a missing credential fails instead of hanging).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cleanupTmp, killAll, runCli, startGantryd, tmp, type Daemon } from './helpers.js';

const PASSWORD = 'credential-root-password';
let daemon: Daemon;
let configDir: string;
let globalConfig: string;
let rootToken: string;

/** git with no system or user config but `globalConfig`, no prompts, and the CLI's config dir for the helper. */
function git(cwd: string, args: string[]) {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') && !k.startsWith('GANTRY_')) env[k] = v;
  const r = spawnSync('git', ['-c', 'user.name=Tess', '-c', 'user.email=tess@example.com', ...args], {
    cwd, encoding: 'utf8',
    env: { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: globalConfig, GIT_TERMINAL_PROMPT: '0', GANTRY_CONFIG_DIR: configDir },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  daemon = await startGantryd(['--port', '0', '--data-dir', tmp(), '--root-password', PASSWORD]);
  configDir = tmp('gantry-cfg-');
  globalConfig = join(tmp('gantry-git-'), 'gitconfig');
  writeFileSync(globalConfig, '');
  const login = await runCli(['login', '--url', daemon.url, '--username', 'root', '--password', PASSWORD], { configDir });
  expect(login.code, login.stderr).toBe(0);
  rootToken = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).profiles.default?.token
    ?? Object.values(JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).profiles as Record<string, { token: string }>)[0]!.token;
  expect((await runCli(['project', 'create', 'cred'], { configDir })).code).toBe(0);
});

afterAll(async () => {
  await daemon?.stop();
  killAll();
  cleanupTmp();
});

describe('git credentials from the CLI', () => {
  it('a clone made by `gantry repo clone` over HTTP pushes at once, with no prompt and no token in its config', async () => {
    const work = tmp('gantry-clone-');
    const clone = await runCli(['repo', 'clone', 'root/cred', 'c', '--http'], {
      configDir, cwd: work, env: { GIT_CONFIG_GLOBAL: globalConfig, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' },
    });
    expect(clone.code, clone.stderr).toBe(0);
    const dir = join(work, 'c');
    const config = readFileSync(join(dir, '.git', 'config'), 'utf8');
    expect(config).toContain('auth git-credential');
    expect(config).not.toContain(rootToken);
    writeFileSync(join(dir, 'README.md'), 'pushed at once\n');
    expect(git(dir, ['add', 'README.md']).code).toBe(0);
    expect(git(dir, ['commit', '-q', '-m', 'first']).code).toBe(0);
    const push = git(dir, ['push', '-q', 'origin', 'HEAD:master']);
    expect(push.code, push.stderr).toBe(0);
    const file = await api(daemon.url, 'GET', '/projects/root%2Fcred/repository/files?file_path=README.md&ref=master', rootToken);
    expect(Buffer.from(file.body.content, 'base64').toString()).toBe('pushed at once\n');
  });

  it('without the helper git cannot clone a private project; `gantry auth setup-git` registers it globally and clone and push go through', async () => {
    const project = (await api(daemon.url, 'GET', '/projects/root%2Fcred', rootToken)).body;
    const work = tmp('gantry-plain-');
    // a private project: without a credential, git can neither clone nor push
    const refused = git(work, ['clone', '-q', project.http_url_to_repo, 'p']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/could not read Username|terminal prompts disabled|Authentication failed/);

    const setup = await runCli(['auth', 'setup-git'], { configDir, env: { GIT_CONFIG_GLOBAL: globalConfig, GIT_CONFIG_NOSYSTEM: '1' } });
    expect(setup.code, setup.stderr).toBe(0);
    const origin = new URL(daemon.url).origin;
    expect(setup.stderr).toContain(origin);
    expect(readFileSync(globalConfig, 'utf8')).toContain(`[credential "${origin}"]`);
    const cloned = git(work, ['clone', '-q', project.http_url_to_repo, 'p']);
    expect(cloned.code, cloned.stderr).toBe(0);
    const dir = join(work, 'p');
    writeFileSync(join(dir, 'b.txt'), 'b\n');
    git(dir, ['add', 'b.txt']);
    git(dir, ['commit', '-q', '-m', 'b']);
    const pushed = git(dir, ['push', '-q', 'origin', 'HEAD:topic']);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect((await api(daemon.url, 'GET', '/projects/root%2Fcred/repository/branches/topic', rootToken)).status).toBe(200);
    // run twice: still one helper, not two
    expect((await runCli(['auth', 'setup-git'], { configDir, env: { GIT_CONFIG_GLOBAL: globalConfig, GIT_CONFIG_NOSYSTEM: '1' } })).code).toBe(0);
    expect(readFileSync(globalConfig, 'utf8').match(/auth git-credential/g)).toHaveLength(1);
  });

  it('answers git\'s credential protocol for the logged-in server only', async () => {
    const u = new URL(daemon.url);
    const get = await runCli(['auth', 'git-credential', 'get'], { configDir, input: `protocol=http\nhost=${u.host}\npath=root/cred.git\n\n` });
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toBe(`protocol=http\nhost=${u.host}\nusername=root\npassword=${rootToken}\n`);
    const other = await runCli(['auth', 'git-credential', 'get'], { configDir, input: 'protocol=https\nhost=example.com\n\n' });
    expect(other).toMatchObject({ code: 0, stdout: '' });
    const store = await runCli(['auth', 'git-credential', 'store'], { configDir, input: `protocol=http\nhost=${u.host}\nusername=x\npassword=y\n\n` });
    expect(store).toMatchObject({ code: 0, stdout: '' });
  });
});
