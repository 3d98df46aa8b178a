/**
 * `gantry daemon start` remembers its settings (issue 25: "daemon settings are not remembered"): what a start was
 * given goes to <data-dir>/gantry.yml, which gantryd reads at every start, so a plain `gantry daemon start` afterwards
 * runs with the same SSH port; `daemon status` shows the SSH address; and when SSH cannot start (the default port
 * taken) the terminal says so and why, not only the log.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DEFAULT_SSH_PORT } from '../../daemon/config.js';
import { api, cleanupTmp, killAll, runCli, tmp } from './helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) {
    const pidFile = join(dir, 'gantryd.pid');
    if (existsSync(pidFile)) {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
  killAll();
  cleanupTmp();
});

/** A port free right now (bound and released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function setup() {
  const dataDir = tmp();
  dirs.push(dataDir);
  const configDir = tmp('gantry-cfg-');
  // GANTRY_SSH_PORT empty: the helpers switch SSH off through the environment, which would win over the file
  const cli = (...args: string[]) => runCli(args, { configDir, env: { GANTRY_SSH_PORT: '', GANTRY_ROOT_PASSWORD: 'settings-root-pw' }, timeoutMs: 40_000 });
  return { dataDir, cli };
}

it('a plain start after `start --ssh-port N` listens on N again; status shows the SSH address', async () => {
  const { dataDir, cli } = setup();
  const sshPort = await freePort();
  const first = await cli('daemon', 'start', '--port', '0', '--ssh-port', String(sshPort), '--data-dir', dataDir);
  expect(first.code, first.stderr).toBe(0);
  expect(first.stderr).toContain(`git over SSH on 127.0.0.1:${sshPort}`);
  expect(first.stderr).toContain(`Remembered --port 0 --ssh-port ${sshPort} in ${join(dataDir, 'gantry.yml')}`);
  const file = readFileSync(join(dataDir, 'gantry.yml'), 'utf8');
  expect(file).toMatch(new RegExp(`^ssh-port: ${sshPort}$`, 'm'));
  expect(file).toMatch(/^port: 0$/m);
  expect(file).not.toContain('settings-root-pw');

  const status = await cli('daemon', 'status', '--data-dir', dataDir);
  expect(status.stdout).toMatch(new RegExp(`ssh:\\s+127\\.0\\.0\\.1:${sshPort}`));
  const json = JSON.parse((await cli('daemon', 'status', '--data-dir', dataDir, '--json')).stdout);
  expect(json).toMatchObject({ running: true, ssh: `127.0.0.1:${sshPort}` });
  // ssh_url_to_repo names the port the daemon listens on
  const token = (await api(json.url, 'POST', '/session', null, { login: 'root', password: 'settings-root-pw' })).body.private_token;
  const project = (await api(json.url, 'POST', '/projects', token, { name: 'remembered' })).body;
  expect(project.ssh_url_to_repo).toBe(`ssh://git@127.0.0.1:${sshPort}/root/remembered.git`);
  expect((await cli('daemon', 'stop', '--data-dir', dataDir)).code).toBe(0);

  // a comment and another setting written by hand stay when the file is updated
  writeFileSync(join(dataDir, 'gantry.yml'), `# mine\n${readFileSync(join(dataDir, 'gantry.yml'), 'utf8')}log-level: warn\n`);
  const plain = await cli('daemon', 'start', '--data-dir', dataDir, '--json');
  expect(plain.code, plain.stderr).toBe(0);
  expect(plain.stderr).not.toContain('Remembered');
  expect(JSON.parse(plain.stdout)).toMatchObject({ ssh: `127.0.0.1:${sshPort}`, ssh_warning: null });
  expect((await cli('daemon', 'stop', '--data-dir', dataDir)).code).toBe(0);

  const again = await cli('daemon', 'start', '--data-dir', dataDir, '--ssh-port', 'off');
  expect(again.code, again.stderr).toBe(0);
  const updated = readFileSync(join(dataDir, 'gantry.yml'), 'utf8');
  expect(updated).toContain('# mine');
  expect(updated).toMatch(/^ssh-port: off$/m);
  expect(updated).toMatch(/^log-level: warn$/m);
  expect((await cli('daemon', 'status', '--data-dir', dataDir)).stdout).toMatch(/ssh:\s+not running/);
  expect((await cli('daemon', 'stop', '--data-dir', dataDir)).code).toBe(0);
  // stopped: no SSH address left behind
  expect(existsSync(join(dataDir, 'gantryd.ssh'))).toBe(false);
}, 120_000);

it('says on the terminal when SSH could not start and why; a remembered port that is taken ends the start', async () => {
  const { dataDir, cli } = setup();
  // The default port: held here (or by whoever holds it already).
  const holder = createServer();
  await new Promise<void>((resolve) => {
    holder.once('error', () => resolve());
    holder.listen(DEFAULT_SSH_PORT, '127.0.0.1', () => resolve());
  });
  try {
    const start = await cli('daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json');
    expect(start.code, start.stderr).toBe(0);
    expect(start.stderr).toContain(`Warning: gantryd runs without SSH: SSH port ${DEFAULT_SSH_PORT} on 127.0.0.1 is already in use (another gantryd?)`);
    expect(JSON.parse(start.stdout)).toMatchObject({ ssh: null, ssh_warning: expect.stringContaining('--ssh-port') });
    expect((await cli('daemon', 'stop', '--data-dir', dataDir)).code).toBe(0);
  } finally {
    holder.close();
  }

  // remembered (given) and taken: the start fails and says which port and what to do
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  try {
    writeFileSync(join(dataDir, 'gantry.yml'), `ssh-port: ${(taken.address() as AddressInfo).port}\n`);
    const fails = await cli('daemon', 'start', '--port', '0', '--data-dir', dataDir);
    expect(fails.code).not.toBe(0);
    expect(fails.stderr).toContain(`SSH port ${(taken.address() as AddressInfo).port} on 127.0.0.1 is already in use`);
  } finally {
    taken.close();
  }

  // a bad value in the file: the start fails naming the file and the key
  writeFileSync(join(dataDir, 'gantry.yml'), 'ssh-port: twenty\n');
  const bad = await cli('daemon', 'start', '--data-dir', dataDir);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain(`${join(dataDir, 'gantry.yml')}: key "ssh-port": invalid SSH port "twenty"`);
}, 120_000);
