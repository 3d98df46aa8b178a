/**
 * The idle reclaimer's rule (daemon/idle-memory.ts): one full collection after the start, in its first idle second;
 * after a burst of requests, once the daemon has been idle for QUIET_SECONDS in a row (a pause of a second or two
 * keeps what V8 learnt while serving); never while busy, never twice for one burst, at most one every 10 s.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { QUIET_SECONDS, shouldCollect, startingState, type IdleState } from '../../daemon/idle-memory.js';

/** Feed `seconds` seconds of `utilization` from `t` (ms, one check a second); the times at which it collected. */
function feed(state: IdleState, utilization: number, seconds: number, t: number): number[] {
  const at: number[] = [];
  for (let i = 0; i < seconds; i++) if (shouldCollect(state, utilization, t + i * 1000)) at.push(t + i * 1000);
  return at;
}

describe('idle reclaimer', () => {
  it('collects what the start left in the first idle second', () => {
    const state = startingState();
    expect(shouldCollect(state, 0.03, 1000)).toBe(false); // winding down, not idle yet
    expect(shouldCollect(state, 0.001, 2000)).toBe(true);
    expect(feed(state, 0, 30, 3000)).toEqual([]); // once
  });

  it('after a burst of requests, collects only once the daemon has been idle for QUIET_SECONDS in a row', () => {
    const state = startingState();
    feed(state, 0, 2, 0); // the start's collection
    expect(feed(state, 0.6, 5, 20_000)).toEqual([]); // busy
    // pauses shorter than QUIET_SECONDS between bursts: no collection, whatever their number
    for (let b = 0; b < 5; b++) {
      expect(feed(state, 0, QUIET_SECONDS - 1, 25_000 + b * 20_000)).toEqual([]);
      expect(feed(state, 0.5, 3, 25_000 + b * 20_000 + (QUIET_SECONDS - 1) * 1000)).toEqual([]);
    }
    // a second that is neither busy nor idle starts the count again
    expect(feed(state, 0, QUIET_SECONDS - 1, 200_000)).toEqual([]);
    expect(shouldCollect(state, 0.03, 209_000)).toBe(false);
    expect(feed(state, 0, QUIET_SECONDS - 1, 210_000)).toEqual([]);
    expect(shouldCollect(state, 0, 219_000)).toBe(true); // the QUIET_SECONDS-th idle second in a row
    expect(feed(state, 0, 60, 220_000)).toEqual([]); // once per burst
  });

  it('never collects a daemon that has done nothing since its last collection', () => {
    const state: IdleState = { ...startingState(), worked: false, booting: false };
    expect(feed(state, 0, 60, 0)).toEqual([]);
  });

  it('waits 10 s between collections, collecting once the interval has passed', () => {
    const state = startingState();
    expect(shouldCollect(state, 0, 1000)).toBe(true); // the start's, at 1 s
    shouldCollect(state, 0.5, 2000);
    const state2: IdleState = { ...state, booting: true }; // (a one-second rule, to reach the interval alone)
    expect(shouldCollect(state2, 0, 3000)).toBe(false); // 2 s after the last
    expect(shouldCollect(state2, 0, 11_000)).toBe(true); // the burst is still owed its collection
  });
});

/**
 * The young generation while booting and after (bin/gantryd.js, daemon/idle-memory.ts): held at its starting size while
 * the daemon boots; once the reclaimer starts, it grows under load up to the bound NODE_OPTIONS sets, and stays at
 * its starting size without one. Run in a child process with the launcher's flag (V8 flags are per process), on the
 * built module (npm run build).
 */
describe('young generation after the boot', () => {
  const grownTo = (nodeOptions: string) => {
    const script = `
      import { setFlagsFromString, getHeapSpaceStatistics } from 'node:v8';
      setFlagsFromString('--semi-space-growth-factor=1');
      const { startIdleReclaimer } = await import(${JSON.stringify(join(import.meta.dirname, '../../dist/daemon/idle-memory.js'))});
      const size = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
      const churn = () => { let keep = []; for (let i = 0; i < 400000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; } };
      churn();
      const booting = size();
      const stop = startIdleReclaimer();
      churn();
      stop();
      console.log(JSON.stringify({ booting, after: size() }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, NODE_OPTIONS: nodeOptions }, encoding: 'utf8' });
    return JSON.parse(out.trim().split('\n').at(-1)!) as { booting: number; after: number };
  };

  it('grows under load up to the bound once booted, not before', () => {
    const { booting, after } = grownTo('--max-semi-space-size=2');
    expect(booting).toBeLessThanOrEqual(2 * 1024 * 1024); // two semi-spaces of their starting 1 MB
    expect(after).toBeGreaterThan(booting);
  });

  it('stays at its starting size without a bound', () => {
    const { booting, after } = grownTo('');
    expect(after).toBeLessThanOrEqual(booting); // (Node 26's V8 may give some back)
  });
});
