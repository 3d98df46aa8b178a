/**
 * deploy/gantryd.service (README "Running as a service"): a dedicated user, the data dir, restarts on failure, and a
 * stop timeout above gantryd's own bound on a drain (GANTRY_DRAIN_TIMEOUT, then 5 s more before it exits by itself),
 * so systemd never kills a daemon that is still answering requests. systemd-analyze checks the unit where it exists.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { drainOptions } from '../../daemon/main.js';

const text = readFileSync(join(import.meta.dirname, '../../deploy/gantryd.service'), 'utf8');
/** The values of a key in the unit (comments left out). */
const values = (key: string) => text.split('\n').filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1));

describe('deploy/gantryd.service', () => {
  it('runs gantryd as its own user on /var/lib/gantry, restarting on failure', () => {
    expect(values('User')).toEqual(['gantry']);
    expect(values('ExecStart')[0]).toMatch(/\/gantryd$/);
    expect(values('Environment')).toContain('GANTRY_DATA_DIR=/var/lib/gantry');
    expect(values('ReadWritePaths')).toEqual(['/var/lib/gantry']);
    expect(values('Restart')).toEqual(['on-failure']);
    expect(values('KillSignal')).toEqual(['SIGTERM']);
  });

  it('waits longer for a stop than gantryd drains', () => {
    const stopSeconds = Number(values('TimeoutStopSec')[0]);
    const drainBound = drainOptions({}).timeoutMs / 1000 + 5;
    expect(stopSeconds).toBeGreaterThan(drainBound);
  });

  it('passes systemd-analyze verify (where systemd is installed)', () => {
    if (spawnSync('systemd-analyze', ['--version']).status !== 0) return;
    const dir = mkdtempSync(join(tmpdir(), 'gantry-unit-'));
    try {
      // the unit names /usr/local/bin/gantryd; verify it against a program that exists here
      const unit = join(dir, 'gantryd.service');
      writeFileSync(unit, text.replace(/^ExecStart=.*$/m, `ExecStart=${process.execPath}`));
      const r = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
      expect(r.stderr.trim()).toBe('');
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
