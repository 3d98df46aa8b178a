/**
 * `npm start` as the README's quick start runs it: gantryd is npm's own child (the script `exec`s node), so a SIGTERM
 * to npm (a service manager, a terminal closing, Ctrl-C in some shells) reaches gantryd, which drains and stops,
 * instead of leaving it running as an orphan under the `sh -c` that npm starts.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupTmp, ROOT, tmp } from './helpers.js';

afterAll(cleanupTmp);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  it('stops gantryd when npm gets SIGTERM: no orphan left behind', async () => {
    const data = tmp();
    const npm = spawn('npm', ['start', '--silent', '--', '--port', '0', '--data-dir', data, '--root-password', 'npm-start-root-password'], {
      cwd: ROOT, env: cleanEnv({ GANTRY_LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    npm.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
    // gantryd's pid, from its JSON log line
    let pid = 0;
    for (let i = 0; i < 300 && !pid; i++) {
      const m = out.match(/"pid":(\d+)[^\n]*Server listening/);
      if (m) pid = Number(m[1]);
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(pid, out).toBeGreaterThan(0);
    expect(pid).not.toBe(npm.pid);
    npm.kill('SIGTERM');
    await exited;
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    const left = alive(pid);
    if (left) process.kill(pid, 'SIGKILL');
    expect(left, 'gantryd still runs after npm stopped').toBe(false);
    // (what gantryd logs while it drains is not checked: npm exits with its child's signal and may close the pipe first)
  }, 30_000);
});
