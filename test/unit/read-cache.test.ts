/**
 * The bounds of db/read-cache.ts's UntilNextWrite: by count and by bytes, least recently used first, and a value kept
 * only until the next write (over a stand-in SQLite connection whose write counter the test moves).
 */
import { describe, expect, it } from 'vitest';
import { UntilNextWrite } from '../../daemon/db/read-cache.js';
import type { AppContext } from '../../daemon/context.js';

function fakeConnection() {
  const conn = { changes: 0, totalChanges: () => conn.changes, writes: () => conn.changes, dataVersion: () => 1, inTransaction: () => false };
  const ctx = { data: { sqlite: conn } } as unknown as Pick<AppContext, 'data'>;
  return { conn, ctx };
}

/** A cache and a counter of how often each key was computed. */
function counted(cache: UntilNextWrite<string>, ctx: Pick<AppContext, 'data'>) {
  const computed: string[] = [];
  const get = (key: string, value = key) => cache.getAsync(ctx, key, async () => { computed.push(key); return value; });
  return { computed, get };
}

describe('UntilNextWrite bounds', () => {
  it('keeps at most maxBytes, evicting the least recently used', async () => {
    const { ctx } = fakeConnection();
    const cache = new UntilNextWrite<string>(100, { weigh: (v) => v.length, maxBytes: 100 });
    const { computed, get } = counted(cache, ctx);
    await get('a', 'x'.repeat(40));
    await get('b', 'x'.repeat(40));
    await get('a', 'x'.repeat(40)); // a hit: 'a' is now the most recently used
    expect(computed).toEqual(['a', 'b']);
    await get('c', 'x'.repeat(40)); // 120 bytes would be over: 'b' goes, not 'a'
    expect(cache.peek(ctx, 'a')).toBeDefined();
    expect(cache.peek(ctx, 'b')).toBeUndefined();
    expect(cache.peek(ctx, 'c')).toBeDefined();
    await get('b', 'x'.repeat(40));
    expect(computed).toEqual(['a', 'b', 'c', 'b']);
  });

  it('does not keep a value bigger than the whole budget', async () => {
    const { ctx } = fakeConnection();
    const cache = new UntilNextWrite<string>(100, { weigh: (v) => v.length, maxBytes: 10 });
    const { computed, get } = counted(cache, ctx);
    await get('small', 'x');
    await get('big', 'x'.repeat(11));
    await get('big', 'x'.repeat(11));
    expect(computed).toEqual(['small', 'big', 'big']);
    expect(cache.peek(ctx, 'small')).toBe('x');
  });

  it('keeps at most maxEntries, least recently used first', async () => {
    const { ctx } = fakeConnection();
    const cache = new UntilNextWrite<string>(2);
    const { computed, get } = counted(cache, ctx);
    await get('a');
    await get('b');
    expect(cache.peek(ctx, 'a')).toBe('a'); // peeking is a use too
    await get('c');
    expect(cache.peek(ctx, 'b')).toBeUndefined();
    expect([cache.peek(ctx, 'a'), cache.peek(ctx, 'c')]).toEqual(['a', 'c']);
    expect(computed).toEqual(['a', 'b', 'c']);
  });

  it('keeps the order of use through repeated hits on one key', async () => {
    const { ctx } = fakeConnection();
    const cache = new UntilNextWrite<string>(3);
    const { computed, get } = counted(cache, ctx);
    for (const k of ['a', 'b', 'c']) await get(k);
    for (const k of ['a', 'a', 'b', 'b', 'a']) expect(cache.peek(ctx, k)).toBe(k); // now c, b, a from oldest
    await get('d'); // c goes
    expect(cache.peek(ctx, 'c')).toBeUndefined();
    await get('e'); // then b
    expect([cache.peek(ctx, 'b'), cache.peek(ctx, 'a'), cache.peek(ctx, 'd'), cache.peek(ctx, 'e')]).toEqual([undefined, 'a', 'd', 'e']);
    expect(computed).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('computes again after a write, and the old values no longer count against the bounds', async () => {
    const { conn, ctx } = fakeConnection();
    const cache = new UntilNextWrite<string>(100, { weigh: (v) => v.length, maxBytes: 50 });
    const { computed, get } = counted(cache, ctx);
    await get('a', 'x'.repeat(40));
    conn.changes += 1;
    expect(cache.peek(ctx, 'a')).toBeUndefined();
    await get('a', 'y'.repeat(40));
    expect(cache.peek(ctx, 'a')).toBe('y'.repeat(40));
    await get('b', 'z'.repeat(10)); // 50 bytes: both fit, the 40 of the old version are gone
    expect(cache.peek(ctx, 'a')).toBeDefined();
    expect(computed).toEqual(['a', 'a', 'b']);
  });
});
