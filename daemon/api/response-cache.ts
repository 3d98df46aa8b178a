/**
 * GET answers kept as their serialized bytes until the next database write, on either engine (db/read-cache.ts): a page
 * or a project that is read again before anything is written is sent without a query, a presenter or a serializer run. The key
 * names everything the answer depends on besides the database (the caller, the URL, the host of the Link headers);
 * the headers the route set while computing (pagination) are kept with the bytes.
 */
import type { FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import { requestVersion, UntilNextWrite } from '../db/read-cache.js';

interface CachedAnswer {
  body: Buffer;
  type: string;
  headers: [string, string][];
}

/** The bytes each route's cache of answers may hold (the project list and project, issue lists, merge request lists). */
export const ANSWER_BYTES = 4 * 1024 * 1024;

/** What a kept answer holds: its body, its headers and the bookkeeping around them (about 300 bytes). */
const weigh = (a: CachedAnswer) => a.body.length + 300 + a.headers.reduce((n, [k, v]) => n + k.length + v.length, 0);

/**
 * A bounded cache of serialized GET answers: at most `maxEntries` answers and `maxBytes` of them (bodies and headers),
 * the least recently used evicted first (README, "Memory"). The bytes bound what a walk over many big pages leaves held.
 */
export class ResponseCache {
  private readonly answers: UntilNextWrite<CachedAnswer>;

  constructor(maxEntries: number, maxBytes: number) {
    // on PostgreSQL too: a hit costs one statement (the version) instead of the 3-5 of the answer
    this.answers = new UntilNextWrite<CachedAnswer>(maxEntries, { postgres: true, weigh, maxBytes });
  }

  /**
   * A preValidation hook (the route's last) that sends the answer kept for `key(request)` before Fastify validates the
   * query and params: a kept answer was made for the same URL and caller, whose query and params passed then and would
   * pass again, and validating them was 6 % of a kept project list page (102 against 110 µs a request, 30 alternated
   * rounds). Without a kept answer the route goes on, and its handler's sendAsync names the same key.
   */
  keptFirst(ctx: AppContext, key: (request: FastifyRequest) => string): preValidationHookHandler {
    return (request, reply, done) => {
      const kept = this.answers.peek(ctx, keyOf(request, key(request)));
      if (kept === undefined) return done();
      sendAnswer(reply, kept, true);
    };
  }

  /**
   * Send the cached answer for `key`, or run `compute` (which may set headers on the reply), serialize its result
   * with the route's response schema and keep the bytes. On SQLite a kept answer goes out at
   * once, without a promise (the hot path of cached lists and projects); on PostgreSQL the answers are kept under the
   * database's snapshot (db/read-cache.ts), read first, so an answer kept by this daemon is sent only while no daemon
   * has written anything since.
   */
  sendAsync(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, key: string, compute: () => Promise<unknown>): FastifyReply | Promise<FastifyReply> {
    const fullKey = keyOf(request, key);
    const kept = this.answers.peek(ctx, fullKey);
    if (kept !== undefined) return sendAnswer(reply, kept, true);
    return (async () => {
      let computed = false;
      // on PostgreSQL the request's one version read (a project route's hook read it before its lookup)
      const version = ctx.data.sqlite ? undefined : await requestVersion(ctx, request);
      const answer = await this.answers.getAsync(ctx, fullKey, async () => {
        computed = true;
        const headersBefore = new Set(Object.keys(reply.getHeaders()));
        return capture(reply, await compute(), headersBefore);
      }, false, version);
      return sendAnswer(reply, answer, !computed);
    })();
  }
}

/**
 * The cache key: the host (for the Link headers), the caller's attributes that answers depend on, and what the route
 * names. The caller's row was read before the version (by authentication), so a change of it made meanwhile on another
 * daemon is not covered by the version: with the attributes in the key, an answer made for the caller as they were is
 * never sent to them as they are now.
 */
const keyOf = (request: FastifyRequest, key: string) => {
  const u = request.user;
  const caller = u ? `${u.id}:${u.isAdmin ? 1 : 0}:${u.external ? 1 : 0}:${u.state}` : '-';
  return `${request.protocol}://${request.headers.host ?? ''}\u0000${caller}\u0000${key}`;
};

/** The answer of a computed payload: its serialized bytes and the headers set while computing it (those not in `before`). */
function capture(reply: FastifyReply, payload: unknown, before: Set<string>): CachedAnswer {
  const headers = Object.entries(reply.getHeaders())
    .filter(([k, v]) => !before.has(k) && v !== undefined)
    .map(([k, v]) => [k, String(v)] as [string, string]);
  return { body: Buffer.from(reply.serialize(payload) as string), type: 'application/json; charset=utf-8', headers };
}

/** Send an answer; a kept one first gets back the headers its computation set. */
function sendAnswer(reply: FastifyReply, answer: CachedAnswer, kept: boolean): FastifyReply {
  if (kept) for (const [k, v] of answer.headers) reply.header(k, v);
  return reply.type(answer.type).send(answer.body);
}
