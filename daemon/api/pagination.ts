/** The one pagination helper: page/per_page parsing, X-* headers and the Link header on every list. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import qs from 'qs';
import type { Database, Queries } from '../db/layer/types.js';

export interface Page {
  page: number;
  perPage: number;
  limit: number;
  offset: number;
}

const positive = (v: unknown): number | null => {
  const n = Number.parseInt(String(v ?? ''), 10);
  return Number.isFinite(n) && n > 0 ? n : null;
};

/**
 * Parse page and per_page from the request (missing, zero, negative or junk page means 1; per_page 20, max 100). A
 * page past 2^53 is read as 2^53 - 1 and the offset kept an exact integer: SQLite refuses a fractional OFFSET (a
 * `page=99999999999999999999` was 500; found by the fuzzer); such a page is empty either way.
 */
export function pageOf(request: FastifyRequest): Page {
  const all = allParams(request);
  const page = Math.min(positive(all.page) ?? 1, Number.MAX_SAFE_INTEGER);
  const perPage = Math.min(positive(all.per_page) ?? 20, 100);
  return { page, perPage, limit: perPage, offset: Math.min((page - 1) * perPage, Number.MAX_SAFE_INTEGER) };
}

/** Every request param (query, body, path), as Kaminari's Link URLs carry them. */
function allParams(request: FastifyRequest): Record<string, unknown> {
  const body = request.body && typeof request.body === 'object' && !Buffer.isBuffer(request.body) ? (request.body as object) : {};
  return { ...(request.params as object), ...body, ...(request.query as object) };
}

const codeUnitOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Set the pagination headers for a page of a list of `total` items. */
export function setPageHeaders(request: FastifyRequest, reply: FastifyReply, page: Page, total: number): void {
  const totalPages = Math.ceil(total / page.perPage);
  const next = page.page < totalPages ? page.page + 1 : null;
  const prev = page.page > 1 ? page.page - 1 : null;
  reply.header('X-Total', String(total));
  reply.header('X-Total-Pages', String(totalPages));
  reply.header('X-Per-Page', String(page.perPage));
  reply.header('X-Page', String(page.page));
  reply.header('X-Next-Page', next ? String(next) : '');
  reply.header('X-Prev-Page', prev ? String(prev) : '');

  const base = `${requestBaseUrl(request)}${request.url.split('?')[0]}`;
  // The query of every link: the request's params and page/per_page, keys in code-unit order, each key's part encoded
  // once (qs, brackets for arrays) and `page` filled in per link.
  const params = allParams(request);
  const keys = Object.keys(params).filter((k) => k !== 'page' && k !== 'per_page' && ((params[k] !== undefined && typeof params[k] !== 'object') || Array.isArray(params[k])));
  keys.push('page', 'per_page');
  keys.sort(codeUnitOrder);
  const parts = keys.map((k) => (k === 'page' ? null : k === 'per_page' ? `per_page=${page.perPage}` : qs.stringify({ [k]: params[k] }, { arrayFormat: 'brackets', sort: codeUnitOrder })));
  const link = (p: number, rel: string) => `<${base}?${parts.map((x) => x ?? `page=${p}`).filter((x) => x !== '').join('&')}>; rel="${rel}"`;
  const links: string[] = [];
  if (prev) links.push(link(prev, 'prev'));
  if (next) links.push(link(next, 'next'));
  links.push(link(1, 'first'));
  links.push(link(totalPages, 'last'));
  reply.header('Link', links.join(', '));
}

/** Paginate an already materialised array (for lists computed in memory, e.g. from git). */
export function paginateArray<T>(request: FastifyRequest, reply: FastifyReply, items: T[]): T[] {
  const page = pageOf(request);
  setPageHeaders(request, reply, page, items.length);
  return items.slice(page.offset, page.offset + page.limit);
}

/** Scheme and host of the request, as the client addressed us. */
export function requestBaseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? request.hostname}`;
}

/**
 * Paginate a query: `count` gives the total, `fetch(q, limit, offset, total)` one page of rows (the total lets a
 * keyset-paged list read a deep page from its nearer end: db/keyset.ts). Both run in one `ctx.data.snapshot` (the
 * COUNT and the page agree on both engines, docs/design/postgres.md "Reads that must agree").
 */
export async function paginate<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  data: Database,
  count: (q: Queries) => Promise<number>,
  fetch: (q: Queries, limit: number, offset: number, total: number) => Promise<T[]>,
): Promise<T[]> {
  const page = pageOf(request);
  const { total, rows } = await data.snapshot(async (q) => {
    const n = await count(q);
    return { total: n, rows: n === 0 ? [] : await fetch(q, page.limit, page.offset, n) };
  });
  setPageHeaders(request, reply, page, total);
  return rows;
}
