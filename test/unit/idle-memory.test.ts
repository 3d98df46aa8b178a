/**
 * The idle reclaimer's rule (daemon/idle-memory.ts): one full collection after a burst of work, in the first idle
 * second; never while busy, never twice for one burst, at most one every 10 s.
 */
import { describe, expect, it } from 'vitest';
import { shouldCollect, type IdleState } from '../../daemon/idle-memory.js';

describe('idle reclaimer', () => {
  it('collects once, in the first idle second after work', () => {
    const state: IdleState = { worked: false, lastAt: -Infinity };
    expect(shouldCollect(state, 0, 1000)).toBe(false); // idle from the start: nothing to give back
    expect(shouldCollect(state, 0.6, 2000)).toBe(false); // busy
    expect(shouldCollect(state, 0.03, 3000)).toBe(false); // winding down, not idle yet
    expect(shouldCollect(state, 0.001, 4000)).toBe(true);
    expect(shouldCollect(state, 0.001, 5000)).toBe(false); // once per burst
    expect(shouldCollect(state, 0.2, 20_000)).toBe(false);
    expect(shouldCollect(state, 0.002, 21_000)).toBe(true); // the next burst
  });

  it('waits 10 s between collections, collecting once the interval has passed', () => {
    const state: IdleState = { worked: false, lastAt: -Infinity };
    shouldCollect(state, 0.5, 0);
    expect(shouldCollect(state, 0, 1000)).toBe(true);
    shouldCollect(state, 0.5, 2000);
    expect(shouldCollect(state, 0, 3000)).toBe(false); // 2 s after the last
    expect(shouldCollect(state, 0, 11_000)).toBe(true); // the burst is still owed its collection
  });
});
