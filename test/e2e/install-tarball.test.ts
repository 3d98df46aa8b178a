/**
 * The second way to install (issue 25, item 2b): `npm pack` makes a tarball that carries the build, and
 * `npm install -g --prefix <empty prefix> <tarball>` puts gantryd, gantry and gantry-runner on PATH with no build and no
 * install-scripts notice about gantry itself. Then, from an empty directory with only that prefix's bin and the
 * tools (node, git, sh, bash, ssh) on PATH: the README's quick start (gantryd), `gantry login`, `gantry project create`, a push
 * over HTTP, `gantry-runner register` / `run` running a one-job pipeline, then an SSH key, a clone and a push over SSH.
 *
 * The pack runs in a copy of the work tree (its files, node_modules linked), so its build does not rewrite the dist/
 * that other tests run meanwhile. Dependencies come from npm's cache (the registry when they are not there).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { onPostgres } from '../helpers/app.js';
import { api, cleanupTmp, eventually, killAll, ROOT, runProgram as run, startProgram, tmp } from './helpers.js';

const PASSWORD = 'tarball-root-password';
const RUNNERS_TOKEN = 'tarball-runners-token';

afterAll(() => {
  killAll();
  cleanupTmp();
});

/** The full path of a program on the test's own PATH. */
function which(name: string): string {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${name} is not on PATH`);
  return r.stdout.trim();
}

// Packaging is the same whatever the database: run once, in the SQLite pass (the installed gantryd runs on SQLite).
it.skipIf(onPostgres)('npm pack, npm install -g into an empty prefix, then the quick start, a push and a pipeline from that prefix alone', async () => {
  // 1. A copy of the work tree (tracked and new files, not ignored ones), then `npm pack` there: prepack builds.
  const source = tmp('gantry-pack-src-');
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  expect(listed.status, listed.stderr).toBe(0);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (file === 'node_modules' || !existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(source, file)), { recursive: true });
    cpSync(join(ROOT, file), join(source, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'));
  const npm = which('npm');
  const hostEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GANTRY_') && !k.startsWith('npm_')) hostEnv[k] = v;
  const packDir = tmp('gantry-pack-out-');
  const packed = await run(npm, ['pack', '--pack-destination', packDir], { cwd: source, env: hostEnv, timeoutMs: 240_000 });
  expect(packed.code, packed.stderr).toBe(0);
  const tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz'))!);
  // the source tree's package.json is back as it was (prepare included: a clone still builds on npm install)
  expect(readFileSync(join(source, 'package.json'), 'utf8')).toBe(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  expect(existsSync(join(source, 'package.json.packing'))).toBe(false);

  // 2. Install it globally into an empty prefix: no build runs, and npm says nothing about gantry's own scripts.
  const prefix = tmp('gantry-prefix-');
  const installed = await run(npm, ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    cwd: packDir, env: hostEnv, timeoutMs: 240_000,
  });
  expect(installed.code, installed.stderr).toBe(0);
  expect(installed.stdout + installed.stderr).not.toMatch(/gantry@[\d.]+ \(prepare/);
  const pkgDir = join(prefix, 'lib', 'node_modules', 'gantry');
  const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  expect(manifest.scripts.prepare).toBeUndefined();
  expect(existsSync(join(pkgDir, 'dist', 'daemon', 'gantryd.mjs'))).toBe(true);
  // no TypeScript sources, no compiled module tree: only the bundles and what they read at run time
  expect(existsSync(join(pkgDir, 'daemon'))).toBe(false);
  expect(existsSync(join(pkgDir, 'dist', 'daemon', 'main.js'))).toBe(false);
  for (const program of ['gantryd', 'gantry', 'gantry-runner']) expect(existsSync(join(prefix, 'bin', program))).toBe(true);

  // 3. A PATH with the prefix's bin and the tools only; an empty working directory and home.
  const tools = tmp('gantry-tools-');
  for (const tool of ['node', 'git', 'sh', 'bash', 'ssh', 'ssh-keygen']) symlinkSync(tool === 'node' ? process.execPath : which(tool), join(tools, tool));
  const home = tmp('gantry-home-');
  const work = tmp('gantry-empty-');
  const sshDir = join(home, '.ssh');
  mkdirSync(sshDir, { mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    PATH: `${join(prefix, 'bin')}:${tools}`, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0',
    GANTRY_CONFIG_DIR: join(home, '.config', 'gantry'),
    GIT_SSH_COMMAND: `ssh -i ${join(sshDir, 'id_ed25519')} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
  };
  const dataDir = join(home, 'data');
  const daemon = startProgram('gantryd', [
    '--port', '0', '--ssh-port', '0', '--data-dir', dataDir, '--root-password', PASSWORD, '--runners-token', RUNNERS_TOKEN, '--log-level', 'warn',
  ], { cwd: work, env });
  const url = await eventually('gantryd listening', async () => /^gantryd listening on (\S+)$/m.exec(daemon.output())?.[1], 30_000, daemon.output);
  await eventually('gantryd ssh listening', async () => /^gantryd ssh listening on \S+$/m.test(daemon.output()), 10_000, daemon.output);

  const login = await run('gantry', ['login', '--url', url, '--username', 'root', '--password', PASSWORD], { cwd: work, env });
  expect(login.code, login.stderr).toBe(0);
  const created = await run('gantry', ['project', 'create', 'hello', '--json'], { cwd: work, env });
  expect(created.code, created.stderr).toBe(0);
  const project = JSON.parse(created.stdout) as { id: number; http_url_to_repo: string };
  const token = (await api(url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token as string;

  // 4. A push over HTTP (git's credentials from the CLI's login) of a one-job pipeline.
  const setup = await run('gantry', ['auth', 'setup-git'], { cwd: work, env });
  expect(setup.code, setup.stderr).toBe(0);
  const repo = join(work, 'hello');
  mkdirSync(repo);
  writeFileSync(join(repo, '.gitlab-ci.yml'), 'hello:\n  script:\n    - echo hello from the tarball\n');
  const git = (args: string[]) => run('git', ['-c', 'user.name=Tess', '-c', 'user.email=tess@example.com', ...args], { cwd: repo, env });
  for (const args of [['init', '-q', '-b', 'master'], ['add', '.gitlab-ci.yml'], ['commit', '-q', '-m', 'ci'], ['push', '-q', project.http_url_to_repo, 'master']]) {
    const r = await git(args);
    expect(r.code, `git ${args.join(' ')}: ${r.stderr}`).toBe(0);
  }

  // 5. The runner from the prefix takes the build and the pipeline succeeds.
  const registered = await run('gantry-runner', ['register', '--url', url, '--registration-token', RUNNERS_TOKEN, '--description', 'tarball'], { cwd: work, env });
  expect(registered.code, registered.stderr).toBe(0);
  const runner = startProgram('gantry-runner', ['run', '--builds-dir', join(home, 'builds')], { cwd: work, env });
  const pipeline = await eventually('the pipeline succeeds', async () => {
    const r = await api(url, 'GET', `/projects/${project.id}/pipelines`, token);
    const p = (r.body as Array<{ status: string }>)[0];
    if (p && p.status !== 'pending' && p.status !== 'running') return p;
    return undefined;
  }, 60_000, () => `${runner.output()}\n${daemon.output()}`);
  const builds = (await api(url, 'GET', `/projects/${project.id}/builds`, token)).body as Array<{ id: number }>;
  const trace = String((await api(url, 'GET', `/projects/${project.id}/builds/${builds[0]!.id}/trace`, token)).body);
  expect(pipeline.status, trace).toBe('success');
  expect(trace).toContain('hello from the tarball');

  // 6. Over SSH: a key added with the CLI, a clone by `gantry repo clone --ssh`, a push that moves the branch.
  const keygen = await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(sshDir, 'id_ed25519')], { cwd: work, env });
  expect(keygen.code, keygen.stderr).toBe(0);
  const added = await run('gantry', ['ssh-key', 'add', join(sshDir, 'id_ed25519.pub')], { cwd: work, env });
  expect(added.code, added.stderr).toBe(0);
  const sshClone = await run('gantry', ['repo', 'clone', 'root/hello', 'over-ssh', '--ssh'], { cwd: work, env, timeoutMs: 60_000 });
  expect(sshClone.code, sshClone.stderr).toBe(0);
  const overSsh = join(work, 'over-ssh');
  writeFileSync(join(overSsh, 'README.md'), '# pushed over SSH\n');
  for (const args of [['add', 'README.md'], ['commit', '-q', '-m', 'over ssh'], ['push', '-q', 'origin', 'master']]) {
    const r = await run('git', ['-c', 'user.name=Tess', '-c', 'user.email=tess@example.com', ...args], { cwd: overSsh, env, timeoutMs: 60_000 });
    expect(r.code, `git ${args.join(' ')}: ${r.stderr}`).toBe(0);
  }
  const branch = (await api(url, 'GET', `/projects/${project.id}/repository/branches/master`, token)).body as { commit: { message: string } };
  expect(branch.commit.message.trim()).toBe('over ssh');

  expect(await runner.stop()).toBe(0);
  expect(await daemon.stop()).toBe(0);
}, 600_000);
