// Every place that starts gantryd sets the same malloc environment as `gantry daemon start` (shared/daemon-env.ts):
// the settings must be in the environment before the process starts, so each starter names them itself.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DAEMON_ENV, DAEMON_MALLOC_ENV, DAEMON_V8_FLAGS, daemonEnv } from '../../shared/daemon-env.js';

const ROOT = join(import.meta.dirname, '../..');
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const assignments = Object.entries(DAEMON_ENV).map(([k, v]) => `${k}=${v}`);

describe('the daemon malloc environment', () => {
  it.each([
    ['the launcher shebang', () => read('bin/gantryd.js').split('\n')[0]],
    ['npm start', () => (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start],
    ['the systemd unit', () => read('deploy/gantryd.service').split('\n').filter((l) => l.startsWith('Environment=MALLOC')).join('\n').replace(/^Environment=/, '')],
    ['the container', () => read('deploy/Containerfile').replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.includes('MALLOC')).join('\n')],
  ])('%s sets every variable to the same value', (_, text) => {
    const t = text();
    for (const a of assignments) expect(t).toMatch(new RegExp(`(^|\\s)${a}(\\s|$)`));
    // and no other value of them
    for (const k of Object.keys(DAEMON_ENV)) expect(t.match(new RegExp(`${k}=`, 'g'))).toHaveLength(1);
  });

  it.each([['bin/gantryd.js'], ['scripts/sea/gantryd.mjs']])('%s sets every V8 flag before the daemon loads', (file) => {
    const text = read(file);
    const loads = text.search(/import\((['"])[^'"]*(gantryd\.mjs|main\.js)\1\)/);
    expect(loads).toBeGreaterThan(0);
    for (const flag of DAEMON_V8_FLAGS) {
      const at = text.indexOf(`setFlagsFromString('${flag}')`);
      expect(at, flag).toBeGreaterThan(0);
      expect(at, flag).toBeLessThan(loads);
    }
  });

  it('gantry daemon start adds them, and a value the caller set wins', () => {
    expect(daemonEnv({ PATH: '/bin' })).toMatchObject({ ...DAEMON_ENV, PATH: '/bin' });
    expect(daemonEnv({ MALLOC_ARENA_MAX: '4' }).MALLOC_ARENA_MAX).toBe('4');
    // NODE_OPTIONS of the caller's own are kept, the young generation's bound appended unless they set one
    expect(daemonEnv({ NODE_OPTIONS: '--trace-warnings' }).NODE_OPTIONS).toBe(`--trace-warnings ${DAEMON_ENV.NODE_OPTIONS}`);
    expect(daemonEnv({ NODE_OPTIONS: '--max-semi-space-size=8' }).NODE_OPTIONS).toBe('--max-semi-space-size=8');
    expect(Object.keys(DAEMON_MALLOC_ENV).every((k) => k in DAEMON_ENV)).toBe(true);
  });
});
