/**
 * The young generation after the boot (bin/gantryd.js, daemon/idle-memory.ts): the launcher holds it at its starting
 * size (V8's growth factor 1) while the daemon boots; when the reclaimer starts, just before the daemon says it
 * listens, V8's own growth factor (2) is set back, so that under load it grows up to the bound NODE_OPTIONS sets
 * (shared/daemon-env.ts), and only when there is one. (What V8 then does with the factor was measured, not asserted:
 * its new space's reported size moves by pages from run to run, docs/benchmarks.md.)
 */
import { setFlagsFromString } from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import { startIdleReclaimer } from '../../daemon/idle-memory.js';
import { youngGenerationBounded } from '../../shared/daemon-env.js';

/** The V8 flags the reclaimer sets when it starts (passed on to V8). */
function flagsAtStart(): string[] {
  const set: string[] = [];
  const stop = startIdleReclaimer((f) => { set.push(f); setFlagsFromString(f); });
  stop();
  return set;
}

describe('young generation after the boot', () => {
  const before = process.env.NODE_OPTIONS;
  afterEach(() => {
    if (before === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = before;
  });

  it('lets it grow again once booted when NODE_OPTIONS bounds it', () => {
    process.env.NODE_OPTIONS = '--trace-warnings --max-semi-space-size=2';
    expect(flagsAtStart()).toContain('--semi-space-growth-factor=2');
  });

  it('leaves it at its starting size without a bound', () => {
    process.env.NODE_OPTIONS = '--trace-warnings';
    expect(flagsAtStart()).not.toContain('--semi-space-growth-factor=2');
  });

  it('reads the bound from the arguments or NODE_OPTIONS', () => {
    expect(youngGenerationBounded(['--max-semi-space-size=4'], {})).toBe(true);
    expect(youngGenerationBounded([], { NODE_OPTIONS: '--max-semi-space-size=2' })).toBe(true);
    expect(youngGenerationBounded(['--inspect'], { NODE_OPTIONS: '--max-old-space-size=512' })).toBe(false);
  });
});
