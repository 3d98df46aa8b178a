/**
 * `gantry daemon start|status|logs|stop` against the real gantryd, in the background; on the PostgreSQL pass the CLI
 * passes GANTRY_DATABASE_URL (a fresh database per data dir) on to the daemon it starts.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, cleanupTmp, killAll, runCli, tmp } from './helpers.js';
import { databaseUrlOf, dropDatabases } from './database.js';

/** The environment that gives a daemon started by the CLI on `dataDir` the database of the test pass's engine. */
async function engineEnv(dataDir: string): Promise<Record<string, string>> {
  const url = await databaseUrlOf(dataDir);
  return url ? { GANTRY_DATABASE_URL: url } : {};
}

const dirs: string[] = [];
afterAll(async () => {
  // never leave a background daemon behind, whatever failed
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
  await dropDatabases();
  cleanupTmp();
});

describe('gantry daemon', () => {
  it('starts in the background, reports status and logs, refuses a second start, stops', async () => {
    const dataDir = tmp();
    dirs.push(dataDir);
    const configDir = tmp('gantry-cfg-');
    const env = await engineEnv(dataDir);
    const cli = (...args: string[]) => runCli(args, { configDir, env });

    // --ssh-port passes through to gantryd (0: a free port, announced in the log)
    const start = await cli('daemon', 'start', '--port', '0', '--ssh-port', '0', '--data-dir', dataDir, '--json');
    expect(start.code, start.stderr).toBe(0);
    const started = JSON.parse(start.stdout);
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(started.pid).toEqual(expect.any(Number));
    expect(started.log_file).toBe(join(dataDir, 'gantryd.log'));
    // first start: the generated root password is shown once, and matches initial_root_password
    expect(started.root_password).toBe(readFileSync(join(dataDir, 'initial_root_password'), 'utf8').trim());
    expect(readFileSync(join(dataDir, 'gantryd.pid'), 'utf8').trim()).toBe(String(started.pid));
    expect(statSync(join(dataDir, 'gantryd.log')).mode & 0o777).toBe(0o600);
    expect((await api(started.url, 'GET', '/-/health')).status).toBe(200);

    const status = await cli('daemon', 'status', '--data-dir', dataDir, '--json');
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, healthy: true, pid: started.pid, url: started.url });
    const human = await cli('daemon', 'status', '--data-dir', dataDir);
    expect(human.stdout).toMatch(/status:\s+running/);
    expect(human.stdout).toContain(started.url);

    const login = await cli('login', '--url', started.url, '--username', 'root', '--password', started.root_password);
    expect(login.code, login.stderr).toBe(0);
    const me = await cli('user', 'show', '--json');
    expect(JSON.parse(me.stdout).username).toBe('root');

    const logs = await cli('daemon', 'logs', '--data-dir', dataDir, '-n', '50');
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain(`gantryd listening on ${started.url}`);
    // the URL's line first, the SSH line right after it
    expect(logs.stdout).toMatch(new RegExp(`gantryd listening on ${started.url}\\ngantryd ssh listening on 127\\.0\\.0\\.1:\\d+\\n`));

    const twice = await cli('daemon', 'start', '--port', '0', '--data-dir', dataDir);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`gantryd is already running (pid ${started.pid}`);

    const stop = await cli('daemon', 'stop', '--data-dir', dataDir);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stderr).toMatch(/stopped/);
    expect(existsSync(join(dataDir, 'gantryd.pid'))).toBe(false);
    await expect(fetch(`${started.url}/-/health`)).rejects.toThrow();

    const stopped = await cli('daemon', 'status', '--data-dir', dataDir, '--json');
    expect(stopped.code).toBe(3);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ running: false, pid: null });
    const again = await cli('daemon', 'stop', '--data-dir', dataDir);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('not running');

    // a second start on the same data dir: same data, no new password
    const restart = await cli('daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json');
    expect(restart.code, restart.stderr).toBe(0);
    const restarted = JSON.parse(restart.stdout);
    expect(restarted.root_password).toBeNull();
    const session = await api(restarted.url, 'POST', '/session', null, { login: 'root', password: started.root_password });
    expect(session.status).toBe(201);
    expect((await cli('daemon', 'stop', '--data-dir', dataDir)).code).toBe(0);
  });

  it('reports a daemon that cannot start with its own message and leaves no pid file', async () => {
    const dataDir = tmp();
    dirs.push(dataDir);
    const server: Server = createServer();
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const port = (server.address() as { port: number }).port;
    try {
      const r = await runCli(['daemon', 'start', '--port', String(port), '--data-dir', dataDir, '--root-password', 'e2e-root-password'], { configDir: tmp(), env: await engineEnv(dataDir) });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`gantry: gantryd did not start \\(exit code 1\\): port ${port} on 127.0.0.1 is already in use`));
      expect(r.stderr).toContain(`hint: its log is ${join(dataDir, 'gantryd.log')}`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(join(dataDir, 'gantryd.pid'))).toBe(false);
    } finally {
      server.close();
    }
  });

  it('refuses a data dir it cannot create, before spawning anything', async () => {
    const file = join(tmp(), 'a-file');
    writeFileSync(file, 'x');
    const r = await runCli(['daemon', 'start', '--port', '0', '--data-dir', join(file, 'sub')], { configDir: tmp() });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`gantry: cannot use data dir ${join(file, 'sub')}: ENOTDIR\nhint: choose a writable directory with --data-dir\n`);
  });
});
