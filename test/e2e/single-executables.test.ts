/**
 * The third way to install (issue 25, item 2c): `npm run package` (scripts/build-sea.mjs) makes single-file
 * executables of gantryd, gantry and gantry-runner with Node's `--build-sea`. They run here in an empty directory with
 * a PATH that holds no node (symlinks to git, ssh and a shell's tools only) and no node_modules anywhere near: the
 * README's quick start (gantryd), `gantry login`, `gantry project create`, `gantry ssh-key add`, `gantry repo clone`
 * over SSH and over HTTP, a push each way (the HTTP one through git's credential helper, which is the gantry
 * executable itself; both through gantryd's pre-receive hook, which is the gantryd executable itself), and both
 * pipelines run to success by the executable gantry-runner; then `gantry daemon start`, `status` and `stop`.
 *
 * The executables are built once, into a folder of the test's own (not dist/sea), with the first Node that can
 * (the running one, or a Node 26 where this machine and CI keep one); without any, the test is skipped and says why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/app.js';
import { api, cleanupTmp, eventually, killAll, ROOT, runProgram as run, startProgram, tmp } from './helpers.js';
// @ts-expect-error -- a plain ES module script without types
import { seaNode } from '../../scripts/build-sea.mjs';

const PASSWORD = 'sea-root-password';
const RUNNERS_TOKEN = 'sea-runners-token';
const node = (seaNode as () => string | null)();

afterAll(() => {
  killAll();
  cleanupTmp();
});

/** The full path of a program on the test's own PATH, or null. */
function which(name: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

// What the programs, git's hooks and a build's shell script call: git, ssh and a shell with its usual tools. No node.
const TOOLS = ['git', 'ssh', 'ssh-keygen', 'sh', 'bash', 'cat', 'env', 'ls', 'mkdir', 'rm', 'cp', 'mv', 'chmod', 'echo', 'printf',
  'test', 'head', 'tail', 'tr', 'sed', 'grep', 'uname', 'id', 'dirname', 'basename', 'unzip', 'sleep', 'true', 'false'];

// Packaging is the same whatever the database: run once, in the SQLite pass (the executables' gantryd runs on SQLite).
describe.skipIf(onPostgres || !node || process.platform !== 'linux' || process.arch !== 'x64')(
  `single-file executables (built with ${node ?? 'no Node with --build-sea: install Node 26 (/opt/node/n26 or ~/.cache/gantry-ci/node-26) to run this'})`,
  () => {
    it('run with no node on PATH: the quick start, a clone and a push over SSH and HTTP, and the pipelines by the executable runner', async () => {
      // 1. Build them (once) into a folder of the test's own.
      expect(existsSync(join(ROOT, 'dist/daemon/main.js')), 'run `npm run build` first').toBe(true);
      const bin = tmp('gantry-sea-bin-');
      const built = await run(process.execPath, [join(ROOT, 'scripts/build-sea.mjs')], {
        cwd: ROOT, env: { ...process.env, GANTRY_SEA_OUT: bin }, timeoutMs: 400_000,
      });
      expect(built.code, built.stderr).toBe(0);
      expect(readdirSync(bin).sort()).toEqual(['gantry', 'gantry-runner', 'gantryd']);
      for (const program of readdirSync(bin)) expect(statSync(join(bin, program)).mode & 0o111).not.toBe(0);

      // 2. A PATH with the executables and the tools only; an empty working directory and home.
      const tools = tmp('gantry-sea-tools-');
      for (const tool of TOOLS) {
        const path = which(tool);
        if (path) symlinkSync(path, join(tools, tool));
      }
      const home = tmp('gantry-sea-home-');
      const work = tmp('gantry-sea-empty-');
      const sshDir = join(home, '.ssh');
      mkdirSync(sshDir, { mode: 0o700 });
      const env: NodeJS.ProcessEnv = {
        PATH: `${bin}:${tools}`, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0',
        GANTRY_CONFIG_DIR: join(home, '.config', 'gantry'),
        GIT_SSH_COMMAND: `ssh -i ${join(sshDir, 'id_ed25519')} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
        GIT_AUTHOR_NAME: 'Tess', GIT_AUTHOR_EMAIL: 'tess@example.com', GIT_COMMITTER_NAME: 'Tess', GIT_COMMITTER_EMAIL: 'tess@example.com',
      };
      expect((await run('sh', ['-c', 'command -v node || echo none'], { cwd: work, env })).stdout.trim()).toBe('none');
      const version = await run('gantry', ['--version'], { cwd: work, env });
      expect(version.code, version.stderr).toBe(0);
      expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);

      // 3. The quick start: gantryd in the foreground, HTTP and SSH on free ports.
      const dataDir = join(home, 'data');
      const daemon = startProgram('gantryd', [
        '--port', '0', '--ssh-port', '0', '--data-dir', dataDir, '--root-password', PASSWORD, '--runners-token', RUNNERS_TOKEN, '--log-level', 'warn',
      ], { cwd: work, env });
      const url = await eventually('gantryd listening', async () => /^gantryd listening on (\S+)$/m.exec(daemon.output())?.[1], 60_000, daemon.output);
      await eventually('gantryd ssh listening', async () => /^gantryd ssh listening on \S+$/m.test(daemon.output()), 10_000, daemon.output);
      // the files it reads beside its code were unpacked into the home's cache, once
      expect(readdirSync(join(home, '.cache', 'gantry')).filter((d) => d.startsWith('sea-')).length).toBeGreaterThan(0);

      const login = await run('gantry', ['login', '--url', url, '--username', 'root', '--password', PASSWORD], { cwd: work, env });
      expect(login.code, login.stderr).toBe(0);
      const created = await run('gantry', ['project', 'create', 'hello', '--json'], { cwd: work, env });
      expect(created.code, created.stderr).toBe(0);
      const project = JSON.parse(created.stdout) as { id: number; path_with_namespace: string };
      const token = (await api(url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token as string;
      // what the programs read from the unpacked files: stylesheets, SPDX's license texts, jq (WebAssembly)
      for (const asset of ['/-/assets/web.css', '/oauth/assets/oauth.css']) {
        const res = await fetch(`${url}${asset}`);
        expect(res.status, asset).toBe(200);
        expect((await res.text()).length, asset).toBeGreaterThan(100);
      }
      const jq = await run('gantry', ['api', '/licenses/mit', '--jq', '.key'], { cwd: work, env });
      expect([jq.code, jq.stdout, jq.stderr]).toEqual([0, 'mit\n', '']);

      // 4. Over SSH: a key, a clone, a push of a one-job pipeline.
      const keygen = await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(sshDir, 'id_ed25519')], { cwd: work, env });
      expect(keygen.code, keygen.stderr).toBe(0);
      const added = await run('gantry', ['ssh-key', 'add', join(sshDir, 'id_ed25519.pub')], { cwd: work, env });
      expect(added.code, added.stderr).toBe(0);
      const sshClone = await run('gantry', ['repo', 'clone', project.path_with_namespace, 'over-ssh', '--ssh'], { cwd: work, env, timeoutMs: 60_000 });
      expect(sshClone.code, sshClone.stderr).toBe(0);
      const git = (dir: string, args: string[]) => run('git', args, { cwd: join(work, dir), env, timeoutMs: 60_000 });
      writeFileSync(join(work, 'over-ssh', '.gitlab-ci.yml'), 'hello:\n  script:\n    - echo "hello from $(uname -s)"\n');
      for (const args of [['symbolic-ref', 'HEAD', 'refs/heads/master'], ['add', '.gitlab-ci.yml'], ['commit', '-q', '-m', 'ci over ssh'], ['push', '-q', 'origin', 'master']]) {
        const r = await git('over-ssh', args);
        expect(r.code, `git ${args.join(' ')}: ${r.stderr}`).toBe(0);
      }

      // 5. Over HTTP: a clone whose push takes its credentials from the gantry executable (git's credential helper).
      const httpClone = await run('gantry', ['repo', 'clone', project.path_with_namespace, 'over-http', '--http'], { cwd: work, env, timeoutMs: 60_000 });
      expect(httpClone.code, httpClone.stderr).toBe(0);
      writeFileSync(join(work, 'over-http', '.gitlab-ci.yml'), 'hello:\n  script:\n    - echo "hello over http"\n');
      writeFileSync(join(work, 'over-http', 'README.md'), '# Hello from the executable\n\n```js\nconst answer = 42;\n```\n');
      for (const args of [['add', 'README.md'], ['commit', '-q', '-am', 'ci over http'], ['push', '-q', 'origin', 'master']]) {
        const r = await git('over-http', args);
        expect(r.code, `git ${args.join(' ')}: ${r.stderr}`).toBe(0);
      }
      // the pre-receive hook (run by the gantryd executable) refuses a force push to the protected default branch
      const amended = await git('over-http', ['commit', '-q', '--amend', '-m', 'rewritten']);
      expect(amended.code, amended.stderr).toBe(0);
      const forced = await git('over-http', ['push', '-q', '--force', 'origin', 'master']);
      expect(forced.code).not.toBe(0);
      expect(forced.stderr).toMatch(/pre-receive hook declined/);

      // The pages' libraries load from the unpacked files on first use: Markdown and highlighting (the README on the
      // project page), diff2html (the commit page).
      expect((await api(url, 'PUT', `/projects/${project.id}`, token, { visibility_level: 20 })).status).toBe(200);
      const page = await fetch(`${url}/${project.path_with_namespace}`);
      const pageHtml = await page.text();
      expect(page.status, pageHtml.slice(0, 500)).toBe(200);
      expect(pageHtml).toMatch(/<h1[^>]*>Hello from the executable<\/h1>/);
      expect(pageHtml).toContain('hljs');
      const head = (await api(url, 'GET', `/projects/${project.id}/repository/branches/master`, token)).body as { commit: { id: string } };
      const commitPage = await fetch(`${url}/${project.path_with_namespace}/commit/${head.commit.id}`);
      const commitHtml = await commitPage.text();
      expect(commitPage.status, commitHtml.slice(0, 500)).toBe(200);
      expect(commitHtml).toContain('README.md');
      expect(commitHtml).toContain('const answer = 42;');

      // 6. The executable runner takes both builds and both pipelines succeed.
      const registered = await run('gantry-runner', ['register', '--url', url, '--registration-token', RUNNERS_TOKEN, '--description', 'sea'], { cwd: work, env });
      expect(registered.code, registered.stderr).toBe(0);
      const runner = startProgram('gantry-runner', ['run', '--builds-dir', join(home, 'builds')], { cwd: work, env });
      const pipelines = await eventually('both pipelines finish', async () => {
        const r = await api(url, 'GET', `/projects/${project.id}/pipelines`, token);
        const list = r.body as Array<{ status: string }>;
        return list.length === 2 && list.every((p) => p.status !== 'pending' && p.status !== 'running') ? list : undefined;
      }, 120_000, () => `${runner.output()}\n${daemon.output()}`);
      const builds = (await api(url, 'GET', `/projects/${project.id}/builds`, token)).body as Array<{ id: number }>;
      const traces = await Promise.all(builds.map(async (b) => String((await api(url, 'GET', `/projects/${project.id}/builds/${b.id}/trace`, token)).body)));
      expect(pipelines.map((p) => p.status), traces.join('\n')).toEqual(['success', 'success']);
      expect(traces.join('\n')).toContain('hello from Linux');
      expect(traces.join('\n')).toContain('hello over http');

      expect(await runner.stop()).toBe(0);
      expect(await daemon.stop()).toBe(0);

      // 7. `gantry daemon start` runs the gantryd executable beside it, in the background; status and stop find it.
      const bgData = join(home, 'background');
      const started = await run('gantry', ['daemon', 'start', '--data-dir', bgData, '--port', '0', '--ssh-port', 'off', '--root-password', PASSWORD, '--json'], { cwd: work, env, timeoutMs: 60_000 });
      expect(started.code, started.stderr).toBe(0);
      const bg = JSON.parse(started.stdout) as { url: string; pid: number };
      expect((await fetch(`${bg.url}/-/health`)).status).toBe(200);
      const status = await run('gantry', ['daemon', 'status', '--data-dir', bgData, '--json'], { cwd: work, env });
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ running: true, pid: bg.pid });
      const stopped = await run('gantry', ['daemon', 'stop', '--data-dir', bgData], { cwd: work, env, timeoutMs: 60_000 });
      expect(stopped.code, stopped.stderr).toBe(0);
    }, 900_000);
  },
);
