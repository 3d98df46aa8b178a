/**
 * The built gantry-runner program as a real process against the fake runner API: register (config file 0600),
 * list, run with a graceful and a forced SIGTERM, run-single limits, unregister, errors. Needs `npm run build`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildPayload } from '../../runner-agent/types.js';
import { commitFiles, gitOk, workTree } from '../helpers/git.js';
import { startFakeServer, type FakeServer } from './fake-server.js';

const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../bin/gantry-runner.js');
let fake: FakeServer;
let repoUrl: string;
let sha: string;
let nextId = 100;
const dirs: string[] = [];
const procs = new Set<ChildProcess>();
const tmp = (prefix = 'gantry-runner-proc-') => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
let configDir: string;

interface Run {
  proc: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function start(args: string[]): Run {
  const proc = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, GANTRY_CONFIG_DIR: configDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.add(proc);
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  proc.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((r) => proc.on('close', (code) => {
    procs.delete(proc);
    r(code);
  }));
  return { proc, output: () => out, exited };
}

async function runner(args: string[]): Promise<{ code: number | null; output: string }> {
  const r = start(args);
  const code = await r.exited;
  return { code, output: r.output() };
}

const waitFor = async (what: () => boolean, timeoutMs = 10_000) => {
  const started = Date.now();
  while (!what()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
};

const payload = (extra: Partial<BuildPayload> = {}): BuildPayload => {
  const id = nextId++;
  return { id, token: `bt-${id}`, repo_url: repoUrl, sha, ref: 'master', commands: 'echo hi', name: `job${id}`, project_id: 9, timeout: 60, options: {}, ...extra };
};

beforeAll(async () => {
  fake = await startFakeServer();
  configDir = tmp('gantry-runner-cfg-');
  const work = await workTree();
  dirs.push(work);
  sha = await commitFiles(work, { 'a.txt': 'a\n' });
  const bare = tmp();
  await gitOk(bare, ['clone', '-q', '--bare', work, 'r.git']);
  repoUrl = `file://${join(bare, 'r.git')}`;
});

afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await fake?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('gantry-runner register, list, unregister', () => {
  it('refuses a wrong registration token with a hint', async () => {
    const r = await runner(['register', '--url', fake.url, '--registration-token', 'wrong']);
    expect(r.code).toBe(1);
    expect(r.output).toContain('gantry-runner: forbidden');
    expect(r.output).toContain('hint:');
  });

  it('registers and writes runner.json (0600) with url, token, description, tags, concurrency', async () => {
    const r = await runner(['register', '--url', `${fake.url}/`, '--registration-token', fake.registrationToken, '--description', 'box', '--tag-list', 'linux, shell', '--run-untagged', '--json']);
    expect(r.code, r.output).toBe(0);
    const file = join(configDir, 'runner.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const config = JSON.parse(readFileSync(file, 'utf8'));
    expect(config).toMatchObject({ concurrent: 1, runners: [{ id: 1, description: 'box', url: fake.url, tags: ['linux', 'shell'], run_untagged: true, locked: false }] });
    expect(fake.runnerTokens.has(config.runners[0].token)).toBe(true);
    const sent = JSON.parse(fake.requests.filter((q) => q.path === '/ci/api/v1/runners/register.json').at(-1)!.body.toString());
    expect(sent).toMatchObject({ token: fake.registrationToken, description: 'box', tag_list: 'linux,shell', run_untagged: true, info: { name: 'gantry-runner' } });
    const list = await runner(['list']);
    expect(list.code).toBe(0);
    expect(list.output).toMatch(/1\s+box\s+http:\/\/127\.0\.0\.1:\d+\s+runnerto…\s+linux,shell\s+yes\s+no/);
  });

  it('unregister needs a choice when several runners are configured, then removes the chosen one', async () => {
    const second = await runner(['register', '--url', fake.url, '-r', fake.registrationToken, '--description', 'other']);
    expect(second.code).toBe(0);
    const ambiguous = await runner(['unregister']);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.output).toContain('has 2 runners');
    const r = await runner(['unregister', '--description', 'other']);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain('Unregistered runner other');
    const config = JSON.parse(readFileSync(join(configDir, 'runner.json'), 'utf8'));
    expect(config.runners.map((x: { description: string }) => x.description)).toEqual(['box']);
    expect(fake.runnerTokens.size).toBe(1);
  });
});

describe('gantry-runner run', () => {
  it('says what to do when no runner is configured', async () => {
    const r = await runner(['run', '--config', join(tmp(), 'none.json')]);
    expect(r.code).toBe(1);
    expect(r.output).toContain('hint: register one first');
  });

  it('first SIGTERM: stops polling and lets the running build finish (exit 0)', async () => {
    const b = fake.enqueue(payload({ commands: 'echo working\nsleep 2\necho finished' }));
    const run = start(['run', '--builds-dir', tmp()]);
    await waitFor(() => b.trace.toString().includes('working') || run.output().includes('build started'));
    const polls = () => fake.requests.filter((q) => q.path === '/ci/api/v1/builds/register.json').length;
    run.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    const before = polls();
    const code = await run.exited;
    expect(code, run.output()).toBe(0);
    expect(b.status).toBe('success');
    expect(b.finalTrace).toContain('finished');
    expect(polls()).toBe(before); // no new polls after the signal
    expect(run.output()).toContain('SIGTERM received');
  });

  it('second SIGTERM: kills the running build, reports it failed and exits', async () => {
    const b = fake.enqueue(payload({ commands: 'echo long\nsleep 60' }));
    const run = start(['run', '--builds-dir', tmp()]);
    await waitFor(() => b.trace.toString().includes('long'));
    const t0 = Date.now();
    run.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    run.proc.kill('SIGTERM');
    const code = await run.exited;
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(code).toBe(1);
    expect(b.status).toBe('failed');
    expect(b.finalTrace).toContain('ERROR: Build failed: the runner was stopped');
  });
});

describe('gantry-runner run-single', () => {
  it('runs one build with --max-builds 1 and exits 0', async () => {
    const token = [...fake.runnerTokens][0];
    const b = fake.enqueue(payload({ commands: 'echo single' }));
    const r = await runner(['run-single', '--url', fake.url, '--token', token, '--builds-dir', tmp(), '--max-builds', '1']);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain('processed its build limit');
    expect(b.status).toBe('success');
  });

  it('exits after --wait-timeout without builds', async () => {
    const token = [...fake.runnerTokens][0];
    const r = await runner(['run-single', '--url', fake.url, '--token', token, '--builds-dir', tmp(), '--wait-timeout', '1']);
    expect(r.code).toBe(0);
    expect(r.output).toContain('no build received in 1 seconds');
  });
});
