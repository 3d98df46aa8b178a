/**
 * `gantryd backup <dir>` and a restore, end to end (README "Backup and restore"): a daemon with data (a project, an
 * issue, a pushed commit) is backed up while it runs and keeps taking writes; a new daemon started on a copy of the
 * backup serves the same data through the API and git. The backup is of SQLite (the database is copied by SQLite's
 * online backup); on PostgreSQL the database is pg_dump's job and `gantryd backup` copies the files only, which the
 * last test checks.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { api, cleanEnv, cleanupTmp, killAll, runGantryd, startGantryd, tmp } from './helpers.js';

const PASSWORD = 'backup-root-password';

afterAll(() => {
  killAll();
  cleanupTmp();
});

function git(cwd: string, args: string[]) {
  const r = spawnSync('git', ['-c', 'user.name=Tess', '-c', 'user.email=tess@example.com', ...args], {
    cwd, encoding: 'utf8', env: { ...cleanEnv(), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' },
  });
  expect(r.status, `git ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** The clone URL with the token as the password. */
const withToken = (httpUrl: string, token: string) => httpUrl.replace('://', `://root:${token}@`);

it('backs up a running SQLite daemon and a new daemon on the restored copy serves the same data', async () => {
  const dataDir = tmp();
  // on SQLite whatever engine the suite runs on: this is the SQLite backup
  const env = cleanEnv({ GANTRY_DATABASE_URL: '' });
  const a = await startGantryd(['--port', '0', '--data-dir', dataDir, '--root-password', PASSWORD], env);
  const token = (await api(a.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token as string;
  const project = (await api(a.url, 'POST', '/projects', token, { name: 'kept' })).body;
  const issue = (await api(a.url, 'POST', `/projects/${project.id}/issues`, token, { title: 'survives the restore' })).body;
  const work = tmp('gantry-backup-work-');
  git(work, ['init', '-q', '-b', 'master']);
  writeFileSync(join(work, 'README.md'), 'backed up\n');
  git(work, ['add', 'README.md']);
  git(work, ['commit', '-q', '-m', 'first']);
  git(work, ['push', '-q', withToken(project.http_url_to_repo, token), 'master']);
  const sha = git(work, ['rev-parse', 'HEAD']).trim();

  // refusals first: a target inside the data dir, a target that is not empty, a data dir that is not one
  const inside = await runGantryd(['backup', join(dataDir, 'b'), '--data-dir', dataDir], env);
  expect(inside.code).toBe(1);
  expect(inside.stderr).toContain(`is inside the data directory ${dataDir}`);
  const busy = tmp('gantry-backup-busy-');
  writeFileSync(join(busy, 'x'), 'x');
  const notEmpty = await runGantryd(['backup', busy, '--data-dir', dataDir], env);
  expect(notEmpty.code).toBe(1);
  expect(notEmpty.stderr).toContain(`${busy} already exists and is not an empty directory`);
  const notData = await runGantryd(['backup', join(tmp(), 'b'), '--data-dir', tmp()], env);
  expect(notData.code).toBe(1);
  expect(notData.stderr).toContain('has no SQLite database (gantry.db)');

  const backupDir = join(tmp('gantry-backup-'), 'b');
  const made = await runGantryd(['backup', backupDir, '--data-dir', dataDir], env);
  expect(made.code, made.stderr).toBe(0);
  expect(made.stdout).toMatch(/the SQLite database, 1 repositories, \d+ files/);
  expect(existsSync(join(backupDir, 'gantry.db'))).toBe(true);
  expect(statSync(join(backupDir, 'secret_key')).mode & 0o777).toBe(0o600);
  for (const skipped of ['gantry.db-wal', 'run', 'gantryd.pid']) expect(existsSync(join(backupDir, skipped))).toBe(false);

  // the daemon goes on; what is written after the backup is not in it
  await api(a.url, 'POST', `/projects/${project.id}/issues`, token, { title: 'after the backup' });
  expect(await a.stop()).toEqual({ code: 0, signal: null });

  const restored = tmp('gantry-restored-');
  cpSync(backupDir, restored, { recursive: true, verbatimSymlinks: true });
  const b = await startGantryd(['--port', '0', '--data-dir', restored], env);
  try {
    // the same token signs in: the users and their tokens came back
    const again = await api(b.url, 'GET', `/projects/${project.id}`, token);
    expect(again.status).toBe(200);
    expect(again.body.path_with_namespace).toBe('root/kept');
    const issues = (await api(b.url, 'GET', `/projects/${project.id}/issues`, token)).body as Array<{ id: number; title: string }>;
    expect(issues.map((i) => i.title)).toEqual(['survives the restore']);
    expect(issues[0]!.id).toBe(issue.id);
    const file = await api(b.url, 'GET', `/projects/${project.id}/repository/files?file_path=README.md&ref=master`, token);
    expect(Buffer.from(file.body.content, 'base64').toString()).toBe('backed up\n');
    // git: a clone of the restored repository has the commit, and a push goes through
    const cloneDir = join(tmp('gantry-restored-clone-'), 'c');
    const restoredUrl = (await api(b.url, 'GET', `/projects/${project.id}`, token)).body.http_url_to_repo as string;
    mkdirSync(cloneDir);
    git(cloneDir, ['clone', '-q', withToken(restoredUrl, token), '.']);
    expect(git(cloneDir, ['rev-parse', 'HEAD']).trim()).toBe(sha);
    writeFileSync(join(cloneDir, 'more.txt'), 'more\n');
    git(cloneDir, ['add', 'more.txt']);
    git(cloneDir, ['commit', '-q', '-m', 'after restore']);
    git(cloneDir, ['push', '-q', 'origin', 'master']);
    expect((await api(b.url, 'GET', `/projects/${project.id}/repository/commits`, token)).body).toHaveLength(2);
  } finally {
    expect(await b.stop()).toEqual({ code: 0, signal: null });
  }
}, 120_000);

it('on PostgreSQL copies the files only and says to keep the pg_dump with them', async () => {
  const dataDir = tmp();
  mkdirSync(join(dataDir, 'uploads', 'p'), { recursive: true });
  writeFileSync(join(dataDir, 'uploads', 'p', 'f.txt'), 'upload\n');
  writeFileSync(join(dataDir, 'secret_key'), 'k', { mode: 0o600 });
  const backupDir = join(tmp('gantry-backup-pg-'), 'b');
  const made = await runGantryd(['backup', backupDir, '--data-dir', dataDir, '--database-url', 'postgres://gantry@127.0.0.1:1/gantry'], cleanEnv());
  expect(made.code, made.stderr).toBe(0);
  expect(made.stdout).toContain('The database is PostgreSQL and was not copied');
  expect(readFileSync(join(backupDir, 'uploads', 'p', 'f.txt'), 'utf8')).toBe('upload\n');
  expect(existsSync(join(backupDir, 'gantry.db'))).toBe(false);
});
