// BuildWaiters (services/ci/build-queue.ts), the held builds/register requests of one daemon: who is tried on a wake-up,
// in which order, when a pass stops, and that a claim in flight is never dropped by the end of its hold.
import { describe, expect, it } from 'vitest';
import { BuildWaiters, type Claimed } from '../../daemon/services/ci/build-queue.js';
import type { CommitStatusRow, RunnerRow } from '../../daemon/db/schema-ci.js';

type Listener = (payload: string | null) => void;

/** A Database stand-in that only listens (as PostgreSQL's layer does), so a test can deliver notifications. */
function listener() {
  let fn: Listener | null = null;
  const data = { listen: async (_channel: string, f: Listener) => { fn = f; return async () => { fn = null; }; } };
  return { data: data as never, notify: (payload: string | null) => fn?.(payload) };
}

const runner = (id: number) => ({ id }) as RunnerRow;
const build = (id: number): Claimed => ({ build: { id } as CommitStatusRow, token: `t${id}` });
const tick = () => new Promise((r) => setTimeout(r, 0));
const settle = async () => { for (let i = 0; i < 20; i++) await tick(); };

describe('BuildWaiters', () => {
  it('a build taken elsewhere costs one claim and one lookup, not a claim per held runner', async () => {
    const claims: number[] = [];
    let lookups = 0;
    const waiters = new BuildWaiters(async (id) => { claims.push(id); return null; }, async () => { lookups++; return []; });
    const { data, notify } = listener();
    waiters.start(data);
    await tick();
    const held = [1, 2, 3, 4, 5].map((id) => waiters.hold(runner(id), null, 60_000, () => undefined));
    await settle();
    expect(claims).toEqual([1, 2, 3, 4, 5]); // each claims once on arrival
    claims.length = 0;
    notify('7:100');
    await settle();
    expect(claims).toEqual([1]); // the oldest tried, then the lookup says build 100 is gone
    expect(lookups).toBe(1);
    waiters.close();
    expect(await Promise.all(held)).toEqual([null, null, null, null, null]);
    await waiters.stop();
  });

  it('tries the held runners in arrival order while the build still waits; the one that gets it is answered', async () => {
    const claims: number[] = [];
    let queued = false;
    let taken = false;
    const waiters = new BuildWaiters(async (id) => {
      claims.push(id);
      if (id === 3 && queued && !taken) { taken = true; return build(100); }
      return null;
    }, async () => (taken ? [] : [100]));
    const { data, notify } = listener();
    waiters.start(data);
    await tick();
    const held = [1, 2, 3, 4].map((id) => waiters.hold(runner(id), null, 60_000, () => undefined));
    await settle();
    claims.length = 0;
    queued = true; // build 100 is queued, and only runner 3 may take it (its tags, say)
    notify('7:100');
    await settle();
    expect(claims).toEqual([1, 2, 3]);
    expect(waiters.size).toBe(3);
    waiters.close();
    expect((await Promise.all(held)).map((r) => r?.build.id ?? null)).toEqual([null, null, 100, null]);
  });

  it('a wake-up for a project skips runners of other projects; a lost LISTEN (null) tries everyone', async () => {
    const claims: number[] = [];
    const waiters = new BuildWaiters(async (id) => { claims.push(id); return null; }, async (ids) => [...ids]);
    const { data, notify } = listener();
    waiters.start(data);
    await tick();
    const held = [waiters.hold(runner(1), [7], 60_000, () => undefined), waiters.hold(runner(2), [8], 60_000, () => undefined), waiters.hold(runner(3), null, 60_000, () => undefined)];
    await settle();
    claims.length = 0;
    notify('8:100');
    await settle();
    expect(claims).toEqual([2, 3]);
    claims.length = 0;
    notify(null);
    await settle();
    expect(claims).toEqual([1, 2, 3]);
    waiters.close();
    await Promise.all(held);
  });

  it('a hold that ends while its claim runs answers with what the claim got (the build is never dropped)', async () => {
    let release!: (r: Claimed) => void;
    const waiters = new BuildWaiters(() => new Promise<Claimed>((r) => { release = r; }), async () => []);
    let stop!: () => void;
    const answer = waiters.hold(runner(1), null, 60_000, (s) => { stop = s; });
    await tick();
    stop(); // the client went away, or the drain began, while the first claim runs
    waiters.close();
    release(build(42));
    expect((await answer)?.build.id).toBe(42);
  });

  it('answers null when its hold ends, and at once after close()', async () => {
    const waiters = new BuildWaiters(async () => null, async () => []);
    const started = Date.now();
    expect(await waiters.hold(runner(1), null, 50, () => undefined)).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    waiters.close();
    expect(await waiters.hold(runner(1), null, 60_000, () => undefined)).toBeNull();
    expect(waiters.size).toBe(0);
  });
});
