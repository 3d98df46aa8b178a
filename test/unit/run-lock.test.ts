/**
 * The marks of processes using a data directory (daemon/run-lock.ts): several daemons at once, no daemon beside a
 * migrate-db, stale marks of dead processes ignored, marks of other hosts counted (they cannot be checked from here).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../daemon/config.js';
import { announce, describeHolder, holders, runDir, withDaemonMark } from '../../daemon/run-lock.js';

const dirs: string[] = [];
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'gantry-run-lock-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const host = hostname().replace(/[^A-Za-z0-9_-]/g, '_');
const opened = () => ({ closed: 0, async close() { this.closed++; } });

/** A pid that is certainly not running: a child that has already exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('run marks', () => {
  it('several daemons mark one data directory at once; each mark goes with its close()', async () => {
    const dir = dataDir();
    const a = await withDaemonMark(dir, async () => opened());
    const b = await withDaemonMark(dir, async () => opened());
    expect(holders(dir).map((h) => [h.kind, h.pid, h.local])).toEqual([['gantryd', process.pid, true], ['gantryd', process.pid, true]]);
    await a.close();
    expect(a.closed).toBe(1);
    expect(holders(dir)).toHaveLength(1);
    await b.close();
    expect(readdirSync(runDir(dir))).toEqual([]);
  });

  it('a daemon does not start while migrate-db copies the data directory, and leaves no mark', async () => {
    const dir = dataDir();
    const migrating = announce(dir, 'migrate-db');
    let openedIt = false;
    const start = withDaemonMark(dir, async () => {
      openedIt = true;
      return opened();
    });
    await expect(start).rejects.toThrow(ConfigError);
    await expect(start).rejects.toThrow(`gantryd migrate-db is copying this data dir (pid ${process.pid}); start gantryd when it has finished`);
    expect(openedIt).toBe(false);
    expect(holders(dir).map((h) => h.kind)).toEqual(['migrate-db']);
    migrating.release();
    migrating.release(); // twice is harmless
    const d = await withDaemonMark(dir, async () => opened());
    await d.close();
  });

  it('a failed open leaves no mark', async () => {
    const dir = dataDir();
    await expect(withDaemonMark(dir, async () => { throw new Error('no database'); })).rejects.toThrow('no database');
    expect(readdirSync(runDir(dir))).toEqual([]);
  });

  it('the mark of a dead process of this host is ignored, and removed when asked', () => {
    const dir = dataDir();
    announce(dir, 'migrate-db'); // makes run/
    const stale = join(runDir(dir), `gantryd.${host}.${deadPid()}.0badc0de`);
    writeFileSync(stale, '{}\n');
    expect(holders(dir).map((h) => h.kind)).toEqual(['migrate-db']);
    expect(existsSync(stale)).toBe(true);
    holders(dir, { removeStale: true });
    expect(existsSync(stale)).toBe(false);
  });

  it('the mark of another host counts as running, and the message names the file to delete', () => {
    const dir = dataDir();
    const self = announce(dir, 'migrate-db');
    const remote = join(runDir(dir), 'gantryd.other-host.4242.00c0ffee');
    writeFileSync(remote, '{}\n');
    const found = holders(dir, { self: self.file, removeStale: true });
    expect(found).toEqual([{ kind: 'gantryd', host: 'other-host', pid: 4242, file: remote, local: false }]);
    expect(describeHolder(found[0]!)).toBe(`pid 4242 on host other-host; if it is not running, delete ${remote}`);
    expect(existsSync(remote)).toBe(true);
  });
});
