import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { pageOf, paginateArray, paginate, setPageHeaders } from '../../daemon/api/pagination.js';
import type { Database, Queries } from '../../daemon/db/layer/types.js';

/** A minimal request: the URL, parsed query, path params and body, as Fastify gives them. */
function req(url: string, query: Record<string, unknown> = {}, params: Record<string, unknown> = {}, body?: unknown): FastifyRequest {
  return { url, query, params, body, protocol: 'http', headers: { host: 'gantry.test' }, hostname: 'gantry.test' } as unknown as FastifyRequest;
}
/** A reply that records headers. */
function rep(): FastifyReply & { h: Record<string, string> } {
  const h: Record<string, string> = {};
  return { h, header(k: string, v: string) { h[k] = v; return this; } } as unknown as FastifyReply & { h: Record<string, string> };
}
/** A database whose snapshot runs its function at once (the paginate tests send no statement). */
const snapshotOnly = { snapshot: <T>(fn: (q: Queries) => Promise<T>) => fn({} as Queries) } as unknown as Database;
const links = (link: string) => link.split(', ').map((l) => { const m = /^<([^>]+)>; rel="(\w+)"$/.exec(l)!; return { url: m[1]!, rel: m[2]! }; });

describe('pageOf', () => {
  it('defaults to page 1 of 20', () => {
    expect(pageOf(req('/x'))).toEqual({ page: 1, perPage: 20, limit: 20, offset: 0 });
  });
  it('treats junk, zero and negative page as 1, and per_page likewise as 20', () => {
    for (const page of ['abc', '0', '-3', '', 'NaN']) expect(pageOf(req('/x', { page })).page, page).toBe(1);
    for (const per_page of ['abc', '0', '-3', '']) expect(pageOf(req('/x', { per_page })).perPage, per_page).toBe(20);
  });
  it('caps per_page at 100 and computes the offset', () => {
    expect(pageOf(req('/x', { per_page: '1000' })).perPage).toBe(100);
    expect(pageOf(req('/x', { page: '3', per_page: '10' }))).toEqual({ page: 3, perPage: 10, limit: 10, offset: 20 });
  });
  it('reads page params from the body too', () => {
    expect(pageOf(req('/x', {}, {}, { page: '2', per_page: '5' })).offset).toBe(5);
  });
});

describe('setPageHeaders', () => {
  it('sets every header; Link in the order prev, next, first, last', () => {
    const r = rep();
    setPageHeaders(req('/api/v3/users?page=2&per_page=10', { page: '2', per_page: '10' }), r, pageOf(req('/x', { page: '2', per_page: '10' })), 35);
    expect(r.h).toMatchObject({ 'X-Total': '35', 'X-Total-Pages': '4', 'X-Per-Page': '10', 'X-Page': '2', 'X-Next-Page': '3', 'X-Prev-Page': '1' });
    const l = links(r.h.Link!);
    expect(l.map((x) => x.rel)).toEqual(['prev', 'next', 'first', 'last']);
    expect(l[0]!.url).toBe('http://gantry.test/api/v3/users?page=1&per_page=10');
    expect(l[1]!.url).toBe('http://gantry.test/api/v3/users?page=3&per_page=10');
    expect(l[3]!.url).toBe('http://gantry.test/api/v3/users?page=4&per_page=10');
  });

  it('leaves out prev on the first page and next on the last (empty X-*-Page)', () => {
    const first = rep();
    setPageHeaders(req('/l'), first, pageOf(req('/l')), 45);
    expect(first.h['X-Prev-Page']).toBe('');
    expect(links(first.h.Link!).map((x) => x.rel)).toEqual(['next', 'first', 'last']);
    const last = rep();
    setPageHeaders(req('/l'), last, pageOf(req('/l', { page: '3' })), 45);
    expect(last.h['X-Next-Page']).toBe('');
    expect(links(last.h.Link!).map((x) => x.rel)).toEqual(['prev', 'first', 'last']);
  });

  it('an empty list: X-Total 0, X-Total-Pages 0, X-Page 1, last is page 0', () => {
    const r = rep();
    setPageHeaders(req('/l'), r, pageOf(req('/l')), 0);
    expect(r.h).toMatchObject({ 'X-Total': '0', 'X-Total-Pages': '0', 'X-Page': '1', 'X-Next-Page': '', 'X-Prev-Page': '' });
    const l = links(r.h.Link!);
    expect(l.map((x) => x.rel)).toEqual(['first', 'last']);
    expect(l[1]!.url).toContain('page=0');
  });

  it('carries every request param (query, body, path), sorted, with arrays as k[]', () => {
    const r = rep();
    const request = req('/api/v3/projects/5/issues?state=closed&labels[]=a&labels[]=b', { state: 'closed', labels: ['a', 'b'], private_token: 'tok' }, { id: '5' }, { zeta: 'z' });
    setPageHeaders(request, r, pageOf(request), 50);
    const next = links(r.h.Link!).find((x) => x.rel === 'next')!.url;
    expect(next).toBe('http://gantry.test/api/v3/projects/5/issues?id=5&labels%5B%5D=a&labels%5B%5D=b&page=2&per_page=20&private_token=tok&state=closed&zeta=z');
  });
});

describe('paginate and paginateArray', () => {
  it('a page past the end is [] with the headers still set', () => {
    const r = rep();
    const items = Array.from({ length: 5 }, (_, i) => i);
    expect(paginateArray(req('/l', { page: '9', per_page: '2' }), r, items)).toEqual([]);
    expect(r.h).toMatchObject({ 'X-Total': '5', 'X-Total-Pages': '3', 'X-Page': '9', 'X-Next-Page': '' });
  });

  it('slices arrays and passes limit/offset to the fetcher', async () => {
    const r = rep();
    expect(paginateArray(req('/l', { page: '2', per_page: '2' }), r, [1, 2, 3, 4, 5])).toEqual([3, 4]);
    const calls: [number, number][] = [];
    const rows = await paginate(req('/l', { page: '3', per_page: '4' }), rep(), snapshotOnly, async () => 10, async (_q, limit, offset) => { calls.push([limit, offset]); return ['row']; });
    expect(rows).toEqual(['row']);
    expect(calls).toEqual([[4, 8]]);
  });

  it('does not fetch when the total is 0', async () => {
    let fetched = false;
    expect(await paginate(req('/l'), rep(), snapshotOnly, async () => 0, async () => { fetched = true; return [1]; })).toEqual([]);
    expect(fetched).toBe(false);
  });
});
