/** The daemon's background jobs: one list in main.ts, each job exactly once, checked before anything starts. */
import { describe, expect, it } from 'vitest';
import { checkWorkers, periodicWorker, repeatEvery, type BackgroundWorker } from '../../daemon/background.js';
import type { AppContext } from '../../daemon/context.js';
import { waitUntil } from '../helpers/hook-receiver.js';
import { BACKGROUND_WORKERS } from '../../daemon/main.js';

const worker = (name: string): BackgroundWorker => ({ name, start: () => undefined, stop: () => undefined });

/** A promise with its resolve, to hold a job's run open until the test lets it end. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { done, open };
}

describe('background workers', () => {
  it('main.ts lists every job once', () => {
    expect(BACKGROUND_WORKERS.map((w) => w.name).sort()).toEqual(
      ['artifact expiry', 'hook deliveries', 'merge lock repair', 'sign-in throttle sweep', 'stuck builds'],
    );
    expect(() => checkWorkers(BACKGROUND_WORKERS)).not.toThrow();
  });

  it('refuses a job listed twice, by name or as the same worker', () => {
    const a = worker('a');
    expect(() => checkWorkers([a, worker('b'), worker('a')])).toThrow('background worker "a" is listed twice');
    expect(() => checkWorkers([a, a])).toThrow(/listed twice/);
  });

  it('repeatEvery runs the job at once, then again on its interval, never two runs at once', async () => {
    let runs = 0;
    let inFlight = 0;
    let most = 0;
    const gates: ReturnType<typeof gate>[] = [];
    const r = repeatEvery(5, 'a test job', async () => {
      runs++;
      inFlight++;
      most = Math.max(most, inFlight);
      const g = gate();
      gates.push(g);
      await g.done;
      inFlight--;
    });
    expect(runs).toBe(0); // started on the next microtask, not inside repeatEvery
    await waitUntil(() => runs === 1, 'the first run');
    // many ticks pass while the first run is held open: none starts a second run
    await new Promise((res) => setTimeout(res, 50));
    expect(runs).toBe(1);
    gates[0]!.open();
    await waitUntil(() => runs === 2, 'the next run after the first ended');
    gates[1]!.open();
    await waitUntil(() => runs === 3, 'a third run');
    // stop() while the third run is in flight resolves only once it has ended
    let stopped = false;
    const stopping = r.stop().then(() => (stopped = true));
    await new Promise((res) => setTimeout(res, 30));
    expect(stopped).toBe(false);
    gates[2]!.open();
    await stopping;
    expect(inFlight).toBe(0);
    await new Promise((res) => setTimeout(res, 30));
    expect(runs).toBe(3); // nothing after stop()
    expect(most).toBe(1);
  });

  it('repeatEvery writes a failed run to stderr and tries again on the next tick', async () => {
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
    let runs = 0;
    try {
      const r = repeatEvery(5, 'counting the sheep', async () => {
        if (++runs === 1) throw new Error('no sheep');
      });
      await waitUntil(() => runs >= 2, 'a run after the failure');
      await r.stop();
    } finally {
      process.stderr.write = write;
    }
    expect(lines.filter((l) => l.includes('gantry: counting the sheep failed: no sheep'))).toHaveLength(1);
  });

  it('periodicWorker keeps one repetition per context, leaves out those `when` refuses, and stops one context only', async () => {
    const a = { name: 'a' } as unknown as AppContext;
    const b = { name: 'b' } as unknown as AppContext;
    const c = { name: 'c' } as unknown as AppContext;
    const runs = new Map<unknown, number>();
    const w = periodicWorker('test job', {
      everyMs: () => 5, what: 'a test job', when: (ctx) => ctx !== c,
      job: async (ctx) => void runs.set(ctx, (runs.get(ctx) ?? 0) + 1),
    });
    w.start(a);
    w.start(a); // started twice: still one repetition
    w.start(b);
    w.start(c);
    await waitUntil(() => (runs.get(a) ?? 0) >= 2 && (runs.get(b) ?? 0) >= 2, 'runs for a and b');
    expect(runs.has(c)).toBe(false);
    await w.stop(a);
    const atStop = runs.get(a);
    const bBefore = runs.get(b)!;
    await waitUntil(() => runs.get(b)! > bBefore + 1, 'b goes on');
    expect(runs.get(a)).toBe(atStop);
    await w.stop(b);
  });
});
