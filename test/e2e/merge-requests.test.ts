/**
 * Merge requests end to end with the BUILT programs: gantryd as a process, the real git client, the real gantry CLI
 * (bin/gantry.js) run inside a clone, and the gantry-runner agent running the pipeline. A feature branch proposed
 * with `gantry mr create` from the clone, a conflicting merge request refused with 405 and cannot_be_merged, `gantry
 * mr merge --when-pipeline-succeeds` merging once the runner passed the pipeline (followed by `mr show --watch`),
 * a real merge commit that `git log --merges` shows after `git pull`, and "Closes #1" closing the issue.
 * Needs `npm run build`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, gitOk, repoUrl, tempDir, workTree } from '../helpers/git.js';
import { api, cleanEnv, cleanupTmp, killAll, ROOT, runCli, startGantryd, tmp, type Daemon, type RunResult } from './helpers.js';
import { dataDirArgs, dropDatabases } from './database.js';

const PASSWORD = 'mr-e2e-root-password';
const RUNNERS_TOKEN = 'mr-e2e-registration-token-0123456789';
const RUNNER_BIN = join(ROOT, 'bin', 'gantry-runner.js');
const P = 'root/e2e-mrs';

let daemon: Daemon;
let token: string;
let cliConfig: string;
let runnerConfigDir: string;
let runner: { proc: ChildProcess; log(): string; exited: Promise<number | null> } | null = null;
let clone: string;

/** git settings for the CLI's own git calls: no global config, never a prompt. */
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
/** Run the built CLI as root (its saved login) inside the clone. */
const gantry = (args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> =>
  runCli(args, { configDir: cliConfig, env: GIT_ENV, cwd: opts.cwd ?? clone, timeoutMs: opts.timeoutMs });
/** Run a CLI command and insist on exit code 0. */
async function ok(p: Promise<RunResult>): Promise<RunResult> {
  const r = await p;
  expect(r.code, `${r.stderr}${r.stdout}`).toBe(0);
  return r;
}

/** Run gantry-runner to completion. */
function runnerCmd(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const p = spawn(process.execPath, [RUNNER_BIN, ...args], { env: cleanEnv({ GANTRY_CONFIG_DIR: runnerConfigDir }), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    p.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    p.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    p.on('close', (code) => done({ code, output }));
  });
}

/** Start `gantry-runner run` (registered in beforeAll): from now on pending builds run. */
function startRunner(): void {
  const proc = spawn(process.execPath, [RUNNER_BIN, 'run', '--concurrent', '2', '--builds-dir', tmp('gantry-mr-e2e-builds-')], {
    env: cleanEnv({ GANTRY_CONFIG_DIR: runnerConfigDir }), stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout.on('data', (d: Buffer) => { log += d.toString(); });
  proc.stderr.on('data', (d: Buffer) => { log += d.toString(); });
  runner = { proc, log: () => log, exited: new Promise((r) => proc.on('close', (code) => r(code))) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `fn` until it returns a value, or fail after timeoutMs (with the runner's log). */
async function eventually<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 60_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false && v !== null) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}\nrunner log:\n${runner?.log().slice(-3000)}`);
    await sleep(250);
  }
}

/** A new branch of the clone (from master) with these files committed. */
async function branch(name: string, files: Record<string, string>, message: string): Promise<string> {
  await gitOk(clone, ['switch', '-q', 'master']);
  await gitOk(clone, ['switch', '-q', '-c', name]);
  return commitFiles(clone, files, message);
}

beforeAll(async () => {
  cliConfig = tmp('gantry-mr-e2e-cli-');
  runnerConfigDir = tmp('gantry-mr-e2e-runner-');
  daemon = await startGantryd(['--port', '0', ...(await dataDirArgs(tmp('gantry-mr-e2e-data-'))), '--root-password', PASSWORD, '--runners-token', RUNNERS_TOKEN]);
  await ok(runCli(['login', '--url', daemon.url, '--username', 'root', '--password-stdin'], { configDir: cliConfig, input: `${PASSWORD}\n` }));
  const session = await api(daemon.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
  token = session.body.private_token;
  const reg = await runnerCmd(['register', '--url', daemon.url, '--registration-token', RUNNERS_TOKEN, '--description', 'mr-e2e-runner']);
  expect(reg.code, reg.output).toBe(0);

  const outside = tmp('gantry-mr-e2e-outside-');
  await ok(gantry(['project', 'create', 'e2e-mrs', '--visibility', 'public'], { cwd: outside }));
  const seed = await workTree();
  await commitFiles(seed, {
    '.gitlab-ci.yml': 'test:\n  script:\n    - test -f README.md\n',
    'README.md': '# e2e mrs\n',
    'app.txt': 'line 1\nline 2\nline 3\n',
  }, 'initial');
  const url = repoUrl(daemon.url, P, { username: 'root', password: PASSWORD });
  await gitOk(seed, ['push', '-q', url, 'HEAD:master']);
  clone = tempDir('gantry-mr-e2e-clone-');
  await gitOk(clone, ['clone', '-q', url, '.']);
  await ok(gantry(['issue', 'create', P, '--title', 'Checkout fails', '--description', 'It does'], { cwd: outside }));
}, 60_000);

afterAll(async () => {
  if (runner && runner.proc.exitCode === null) {
    runner.proc.kill('SIGKILL');
    await runner.exited;
  }
  await daemon?.stop();
  killAll();
  await dropDatabases();
  cleanupTmp();
});

describe('merge requests through git, the CLI, the daemon and gantry-runner', () => {
  it('a conflicting merge request answers 405 and shows cannot_be_merged', async () => {
    await branch('tweak-a', { 'app.txt': 'line 1\nline 2 from a\nline 3\n' }, 'Tweak line 2 (a)');
    const a = await ok(gantry(['mr', 'create', '--push', '--json']));
    expect(JSON.parse(a.stdout)).toMatchObject({ iid: 1, source_branch: 'tweak-a', target_branch: 'master', title: 'Tweak line 2 (a)' });
    await branch('tweak-b', { 'app.txt': 'line 1\nline 2 from b\nline 3\n' }, 'Tweak line 2 (b)');
    await ok(gantry(['mr', 'create', '--push']));
    const merged = await ok(gantry(['mr', 'merge', '1']));
    expect(merged.stderr).toBe(`Merged merge request !1 of ${P}: tweak-a into master.\n`);

    const refused = await gantry(['mr', 'merge', '2']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`merge request !2 of ${P} cannot be merged: Branch cannot be merged (merge status: cannot_be_merged)`);
    expect(refused.stderr).toContain('hint: tweak-b conflicts with master');
    const project = (await api(daemon.url, 'GET', `/projects/${encodeURIComponent(P)}`, token)).body;
    const mr2 = (await api(daemon.url, 'GET', `/projects/${project.id}/merge_requests?iid=2`, token)).body[0];
    const raw = await api(daemon.url, 'PUT', `/projects/${project.id}/merge_requests/${mr2.id}/merge`, token, {});
    expect(raw.status).toBe(405);
    expect(raw.body).toEqual({ message: 'Branch cannot be merged' });
    const show = await ok(gantry(['mr', 'show', '2']));
    expect(show.stdout).toMatch(/^merge status:\s+cannot_be_merged$/m);
    expect(show.stdout).toMatch(/^state:\s+opened$/m);
  }, 60_000);

  it('a feature branch proposed from the clone merges when gantry-runner passes its pipeline, closing the issue', async () => {
    const featureSha = await branch('fix-checkout', { 'checkout.txt': 'fixed\n' }, 'Fix checkout\n\nCloses #1');
    // gh-style: the server lacks the branch; --push pushes it, the defaults come from the clone and the commit
    const created = await ok(gantry(['mr', 'create', '--push', '--json']));
    expect(created.stderr).toContain('Pushing fix-checkout to origin...');
    expect(created.stderr).toContain(`Created merge request !3 in ${P}: fix-checkout → master.`);
    expect(JSON.parse(created.stdout)).toMatchObject({ iid: 3, title: 'Fix checkout', description: 'Closes #1', source_branch: 'fix-checkout', target_branch: 'master' });
    const pending = await ok(gantry(['mr', 'show', '3']));
    expect(pending.stdout).toMatch(/^pipeline:\s+#\d+ pending$/m);
    const closes = await ok(gantry(['mr', 'diff', '3']));
    expect(closes.stdout).toBe('diff --git a/checkout.txt b/checkout.txt\nnew file mode 100644\n--- /dev/null\n+++ b/checkout.txt\n@@ -0,0 +1 @@\n+fixed\n');

    const mwps = await ok(gantry(['mr', 'merge', '3', '--when-pipeline-succeeds']));
    expect(mwps.stderr).toContain(`Merge request !3 of ${P} will be merged when its pipeline succeeds`);
    expect((await ok(gantry(['mr', 'show', '3']))).stdout).toMatch(/^state:\s+opened$/m); // no runner yet: still waiting

    const watching = gantry(['mr', 'show', '3', '--watch', '--interval', '1'], { timeoutMs: 90_000 });
    startRunner();
    const watched = await watching;
    expect(watched.code, `${watched.stderr}${watched.stdout}`).toBe(0);
    expect(watched.stdout).toMatch(/^\d\d:\d\d:\d\d pipeline #\d+ success {2}fix-checkout @ /m);
    expect(watched.stdout).toMatch(/Pipeline #\d+ success; merge request !3 is merged\.\n$/);

    const mr = await eventually('the merge', async () => {
      const r = await gantry(['mr', 'show', '3', '--json']);
      const json = JSON.parse(r.stdout);
      return json.state === 'merged' ? json : undefined;
    });
    expect(mr.head_pipeline).toMatchObject({ status: 'success', sha: featureSha });

    // the target branch holds a real merge commit that stock git fetches
    await gitOk(clone, ['switch', '-q', 'master']);
    await gitOk(clone, ['pull', '-q', '--ff-only']);
    const merges = (await gitOk(clone, ['log', '--merges', '--format=%H %P%x09%s'])).split('\n');
    expect(merges).toHaveLength(2); // tweak-a, then fix-checkout
    const [newest] = merges;
    expect(newest).toMatch(/^[0-9a-f]{40} [0-9a-f]{40} [0-9a-f]{40}\tMerge branch 'fix-checkout' into 'master'$/);
    expect(newest!.split('\t')[0]!.split(' ')[2]).toBe(featureSha);
    expect(await gitOk(clone, ['show', 'HEAD:checkout.txt'])).toBe('fixed');

    // "Closes #1" in the description closed the issue
    const issue = await ok(gantry(['issue', 'show', P, '1']));
    expect(issue.stdout).toMatch(/^state:\s+closed$/m);
    expect((await ok(gantry(['mr', 'list', '--state', 'merged', '--json']))).stdout).toContain('"fix-checkout"');
  }, 120_000);
});
