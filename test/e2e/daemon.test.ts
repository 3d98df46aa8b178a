/** gantryd as a real process: ready line, health, CLI round trip, SIGTERM, restart, first-start password, start failures. */
import { createServer, type Server } from 'node:net';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { api, cleanupTmp, killAll, lines, runCli, runGantryd, startGantryd, tmp } from './helpers.js';
import { databaseUrlOf, dataDirArgs, dropDatabases } from './database.js';

const PASSWORD = 'e2e-root-password';

afterAll(async () => {
  killAll();
  await dropDatabases();
  cleanupTmp();
});

describe('gantryd process', () => {
  it('prints the ready line, answers /-/health, works with the CLI, stops on SIGTERM and keeps its data', async () => {
    const dataDir = tmp();
    const configDir = tmp('gantry-cfg-');
    const daemon = await startGantryd(['--port', '0', ...(await dataDirArgs(dataDir)), '--root-password', PASSWORD]);
    expect(daemon.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(daemon.stdout()).not.toMatch(/password/); // a given root password is never printed

    const health = await api(daemon.url, 'GET', '/-/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });

    const login = await runCli(['login', '--url', daemon.url, '--username', 'root', '--password', PASSWORD], { configDir });
    expect(login.stderr).toContain('Logged in to');
    expect(login.code).toBe(0);
    expect(statSync(join(configDir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);

    const project = await runCli(['project', 'create', 'e2e-app', '--description', 'made by the e2e test', '--json'], { configDir });
    expect(project.code, project.stderr).toBe(0);
    const created = JSON.parse(project.stdout);
    expect(created).toMatchObject({ path_with_namespace: 'root/e2e-app', description: 'made by the e2e test' });
    expect(typeof created.id).toBe('number');

    const group = await runCli(['group', 'create', 'E2E Group', '--path', 'e2e-group', '--json'], { configDir });
    expect(group.code, group.stderr).toBe(0);
    expect(JSON.parse(group.stdout)).toMatchObject({ name: 'E2E Group', path: 'e2e-group' });

    const listed = await runCli(['project', 'list', '--json'], { configDir });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).map((p: { id: number }) => p.id)).toContain(created.id);
    const groups = await runCli(['group', 'list', '--json'], { configDir });
    expect(groups.code, groups.stderr).toBe(0);
    expect(JSON.parse(groups.stdout).map((g: { path: string }) => g.path)).toContain('e2e-group');
    // addressed by namespace/path: the CLI URL-encodes the slash
    const shown = await runCli(['project', 'show', 'root/e2e-app', '--json'], { configDir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout).id).toBe(created.id);

    expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const again = await startGantryd(['--port', '0', ...(await dataDirArgs(dataDir))]);
    try {
      expect(again.stdout()).not.toMatch(/created user root/);
      // the saved profile points at the old port: pass the new URL, the token still works
      const relisted = await runCli(['project', 'list', '--json'], { configDir, env: { GANTRY_URL: again.url, GANTRY_TOKEN: JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).profiles.default.token } });
      expect(relisted.code, relisted.stderr).toBe(0);
      expect(JSON.parse(relisted.stdout)).toEqual([expect.objectContaining({ id: created.id, path_with_namespace: 'root/e2e-app' })]);
      const session = await api(again.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
      expect(session.status).toBe(201);
      const groupShown = await api(again.url, 'GET', '/groups/e2e-group', session.body.private_token);
      expect(groupShown.status).toBe(200);
      expect(groupShown.body.name).toBe('E2E Group');
    } finally {
      expect(await again.stop()).toEqual({ code: 0, signal: null });
    }
  });

  it('on first start without a root password, prints a generated one once and keeps it in initial_root_password (0600)', async () => {
    const dataDir = tmp();
    const daemon = await startGantryd(['--port', '0', ...(await dataDirArgs(dataDir))]);
    const printed = /created user root with password (\S+)/.exec(daemon.stdout())?.[1];
    expect(printed).toBeTruthy();
    const file = join(dataDir, 'initial_root_password');
    expect(readFileSync(file, 'utf8').trim()).toBe(printed);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const session = await api(daemon.url, 'POST', '/session', null, { login: 'root', password: printed });
    expect(session.status).toBe(201);
    expect(typeof session.body.private_token).toBe('string');
    expect(await daemon.stop()).toEqual({ code: 0, signal: null });

    const again = await startGantryd(['--port', '0', ...(await dataDirArgs(dataDir))]);
    expect(again.stdout()).not.toMatch(/password/);
    expect(await again.stop()).toEqual({ code: 0, signal: null });
  });

  describe('start failures: one clear line on stderr, non-zero exit, no stack trace', () => {
    const expectOneLine = (r: { code: number | null; stderr: string; stdout: string }, pattern: RegExp) => {
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(lines(r.stderr), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(/^gantryd: /);
      expect(r.stderr).toMatch(pattern);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).not.toMatch(/listening/);
    };

    it('port already in use', async () => {
      const server: Server = createServer();
      await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
      const port = (server.address() as { port: number }).port;
      try {
        const r = await runGantryd(['--port', String(port), ...(await dataDirArgs(tmp())), '--root-password', PASSWORD]);
        expectOneLine(r, new RegExp(`port ${port} .*already in use`));
      } finally {
        server.close();
      }
    });

    it('unusable data dir (a path below a regular file, which fails for root too)', async () => {
      const file = join(tmp(), 'not-a-dir');
      writeFileSync(file, 'x');
      const r = await runGantryd(['--port', '0', ...(await dataDirArgs(join(file, 'sub'))), '--root-password', PASSWORD]);
      expectOneLine(r, /cannot use data dir .*not-a-dir\/sub/);
    });

    it('database schema newer than the code', async () => {
      const dataDir = tmp();
      const daemon = await startGantryd(['--port', '0', ...(await dataDirArgs(dataDir)), '--root-password', PASSWORD]);
      expect((await daemon.stop()).code).toBe(0);
      const url = await databaseUrlOf(dataDir);
      if (!url) {
        const db = new Database(join(dataDir, 'gantry.db'));
        db.pragma('user_version = 999');
        db.close();
      } else {
        // PostgreSQL keeps the applied migrations in schema_migrations
        const pg = (await import('pg')).default;
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from the future', now())`);
        await client.end();
      }
      const r = await runGantryd(['--port', '0', ...(await dataDirArgs(dataDir))]);
      expectOneLine(r, /schema \(version 999\) is newer/);
    });

    it('invalid port', async () => {
      const r = await runGantryd(['--port', 'abc', ...(await dataDirArgs(tmp()))]);
      expectOneLine(r, /invalid port "abc"/);
    });
  });
});
