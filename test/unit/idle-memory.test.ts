/**
 * The idle reclaimer's rule (daemon/idle-memory.ts): one full collection after the start, in its first idle second;
 * after a burst of requests, once the daemon has been idle for QUIET_SECONDS in a row (a pause of a second or two
 * keeps what V8 learnt while serving) and has grown by GROWN_BYTES since the last collection; never while busy, never
 * twice for one burst, at most one every 10 s.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GROWN_BYTES, QUIET_SECONDS, shouldCollect, startingState, type IdleState } from '../../daemon/idle-memory.js';

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

  it('leaves a burst that grew the resident set by less than GROWN_BYTES alone', () => {
    const MB = 1024 * 1024;
    const state = startingState();
    expect(shouldCollect(state, 0, 1000, () => 100 * MB)).toBe(true); // the start's: whatever the size
    state.residentAfter = 90 * MB; // (what the reclaimer records after it)
    let resident = 90 * MB + GROWN_BYTES - 1;
    feed(state, 0.5, 5, 20_000);
    const quiet = (t: number) => Array.from({ length: QUIET_SECONDS + 2 }, (_, i) => shouldCollect(state, 0, t + i * 1000, () => resident));
    expect(quiet(30_000)).not.toContain(true);
    resident = 90 * MB + GROWN_BYTES; // the next burst grows it further: collected once that burst is over
    feed(state, 0.5, 5, 40_000);
    expect(quiet(50_000).filter(Boolean)).toHaveLength(1);
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
 * Run `body` in a child node with V8's natives syntax and gc, after `prelude`; what it prints to stderr (where
 * %DebugPrint writes). The reclaimer is imported from the build (npm test builds first; test/unit/daemon-bundle.test.ts
 * checks the build is there).
 */
function child(prelude: string, body: string): string {
  const module = pathToFileURL(join(import.meta.dirname, '../../dist/daemon/idle-memory.js')).href;
  const script = `import { keepTickShape } from ${JSON.stringify(module)};\n${prelude}\n` +
    'for (let i = 0; i < 1000; i++) process.nextTick(() => {});\n' +
    // (the collection once the module loader's own ticks and promises are long over: 10 ms in, one run in eight kept
    // a tick object alive through it without keepTickShape)
    `setTimeout(() => { ${body}; setTimeout(() => { for (let i = 0; i < 1000; i++) process.nextTick(() => {}); setTimeout(() => %DebugPrint(process.nextTick), 10); }, 10); }, 300);\n`;
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return `${r.stdout}${r.stderr}`;
}

/** The states of process.nextTick's literal-define feedback slots, from %DebugPrint. */
const literalSlots = (out: string) => [...out.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]);

describe('the memory-reducing collection', () => {
  const lastResort = "gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })";

  it('leaves process.nextTick as fast as before: the map of its tick objects is kept alive', () => {
    const kept = literalSlots(child('keepTickShape();', lastResort));
    expect(kept.every((s) => s === 'MONOMORPHIC'), kept.join(' ')).toBe(true);
    // what it guards against, where the runtime has it (Node 22 and 24; Node 26's nextTick has no such literal)
    const bare = literalSlots(child('', lastResort));
    if (bare.length) expect(bare).toContain('MEGAMORPHIC');
  });
});
