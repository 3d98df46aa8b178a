/**
 * The young generation after the boot (bin/gantryd.js, daemon/idle-memory.ts): the launcher holds it at its starting
 * size (V8's growth factor 1) while the daemon boots; when the reclaimer starts, just before the daemon says it
 * listens, V8's own growth factor (2) is set back, so that under load it grows up to the bound NODE_OPTIONS sets
 * (shared/daemon-env.ts), and only when there is one. (What V8 then does with the factor was measured, not asserted:
 * its new space's reported size moves by pages from run to run, docs/benchmarks.md.)
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

vi.mock('node:v8', async (original) => {
  const actual = await original<typeof import('node:v8')>();
  return { ...actual, setFlagsFromString: vi.fn(actual.setFlagsFromString) };
});

const v8 = await import('node:v8');
const { startIdleReclaimer } = await import('../../daemon/idle-memory.js');
const { youngGenerationBounded } = await import('../../shared/daemon-env.js');

const growthSet = () => vi.mocked(v8.setFlagsFromString).mock.calls.some(([f]) => f === '--semi-space-growth-factor=2');

describe('young generation after the boot', () => {
  const before = process.env.NODE_OPTIONS;
  afterEach(() => {
    if (before === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = before;
    vi.mocked(v8.setFlagsFromString).mockClear();
  });

  it('lets it grow again once booted when NODE_OPTIONS bounds it', () => {
    process.env.NODE_OPTIONS = '--trace-warnings --max-semi-space-size=2';
    const stop = startIdleReclaimer();
    stop();
    expect(growthSet()).toBe(true);
  });

  it('leaves it at its starting size without a bound', () => {
    process.env.NODE_OPTIONS = '--trace-warnings';
    const stop = startIdleReclaimer();
    stop();
    expect(growthSet()).toBe(false);
  });

  it('reads the bound from the arguments or NODE_OPTIONS', () => {
    expect(youngGenerationBounded(['--max-semi-space-size=4'], {})).toBe(true);
    expect(youngGenerationBounded([], { NODE_OPTIONS: '--max-semi-space-size=2' })).toBe(true);
    expect(youngGenerationBounded(['--inspect'], { NODE_OPTIONS: '--max-old-space-size=512' })).toBe(false);
  });
});
