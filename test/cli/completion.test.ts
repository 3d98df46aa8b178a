/**
 * Shell completion: the scripts pass `bash -n` (zsh -n and fish -n where those shells exist), `__complete` answers
 * nouns, verbs, flags and project paths, and a real bash session completes a noun and a verb through the script and a
 * `gantry` built from this source (esbuild, as scripts/bundle-clients.mjs does).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, startCliFixture, type CliFixture } from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
// Inside the package, so the bundle finds package.json above it (for --version).
const BIN = join(ROOT, 'node_modules', '.cache', `gantry-completion-test-${process.pid}`);
let f: CliFixture;

/** Run a program with stdin text, without blocking this process's event loop. */
function run(cmd: string, args: string[], input: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const has = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
const complete = async (...words: string[]) => (await f.cli(['__complete', '--', ...words])).stdout.split('\n').filter(Boolean);

beforeAll(async () => {
  f = await startCliFixture();
  expect((await f.cli(['login', '--url', f.url, '--username', 'root', '--password-stdin'], { input: `${ROOT_PASSWORD}\n` })).code).toBe(0);
  for (const name of ['web', 'worker']) expect((await f.cli(['project', 'create', name])).code).toBe(0);
  mkdirSync(BIN, { recursive: true });
  await build({
    entryPoints: { gantry: join(ROOT, 'cli', 'main.ts') }, outdir: BIN, outExtension: { '.js': '.mjs' }, splitting: true, bundle: true, platform: 'node', format: 'esm', target: 'node22',
    external: ['react-devtools-core'], logLevel: 'error',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  writeFileSync(join(BIN, 'gantry'), `#!/bin/sh\nexec "${process.execPath}" -e 'import(process.argv[1]).then((m) => m.main(["node", "gantry", ...process.argv.slice(2)]))' "${join(BIN, 'gantry.mjs')}" "$@"\n`);
  chmodSync(join(BIN, 'gantry'), 0o755);
}, 60_000);

afterAll(async () => {
  await f?.close();
  rmSync(BIN, { recursive: true, force: true });
});

describe('gantry completion', () => {
  it('prints scripts the shells accept', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const r = await f.cli(['completion', shell]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('gantry __complete --');
      if (has(shell)) {
        const check = spawnSync(shell, ['-n'], { input: r.stdout });
        expect(check.status, `${shell} -n: ${check.stderr}`).toBe(0);
      }
    }
    const bad = await f.cli(['completion', 'powershell']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('use bash, zsh or fish');
  });

  it('__complete answers nouns, verbs, flags and project paths', async () => {
    expect(await complete('iss')).toEqual(['issue']);
    expect(await complete('')).toEqual(expect.arrayContaining(['api', 'issue', 'mr', 'pipeline', 'completion', 'help']));
    expect(await complete('')).not.toContain('__complete');
    expect(await complete('issue', 'c')).toEqual(expect.arrayContaining(['close', 'comment', 'create']));
    expect(await complete('issue', 'list', '--st')).toEqual(['--state']);
    expect(await complete('issue', 'list', '-R', 'root/w')).toEqual(expect.arrayContaining(['root/web', 'root/worker']));
    expect(await complete('pipeline', 'list', 'root/we')).toEqual(['root/web']);
    expect(await complete('api', '--met')).toEqual(['--method']);
  });

  it('completes in a real bash session through the script', async () => {
    const script = spawnSync(join(BIN, 'gantry'), ['completion', 'bash'], { env: { ...process.env, GANTRY_CONFIG_DIR: f.configDir }, encoding: 'utf8' });
    expect(script.status, script.stderr).toBe(0);
    const driver = [
      script.stdout,
      'COMP_WORDS=(gantry pipel); COMP_CWORD=1; _gantry_complete; echo "noun:${COMPREPLY[*]}"',
      'COMP_WORDS=(gantry issue sub); COMP_CWORD=2; _gantry_complete; echo "verb:${COMPREPLY[*]}"',
      'COMP_WORDS=(gantry mr list -R root/wo); COMP_CWORD=4; _gantry_complete; echo "project:${COMPREPLY[*]}"',
      'complete -p gantry',
    ].join('\n');
    // not spawnSync: the daemon answering the project request runs in this process
    const r = await run('bash', ['--norc', '--noprofile', '-i'], driver, { ...process.env, PATH: `${BIN}:${process.env.PATH}`, GANTRY_CONFIG_DIR: f.configDir });
    expect(r.stdout).toContain('noun:pipeline');
    expect(r.stdout).toContain('verb:subscribe');
    expect(r.stdout).toContain('project:root/worker');
    expect(r.stdout).toContain('complete -o default -F _gantry_complete gantry');
  }, 30_000);
});
