/**
 * request.log (daemon/request-logger.ts): the pino child with the request id is made only when a line is written at
 * an enabled level, and every line written carries the request id; Fastify's null logger still works.
 */
import Fastify, { LogController } from 'fastify';
import pino from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { requestLogger } from '../../daemon/request-logger.js';

function app(level: string | false) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  const logger = level === false ? undefined : pino({ level }, sink);
  let children = 0;
  const f = Fastify({ ...(logger ? { loggerInstance: logger } : { logger: false }), childLoggerFactory: requestLogger, logController: new LogController({ disableRequestLogging: true }) });
  f.get('/quiet', async (request) => { request.log.info({ n: 1 }, 'an info line'); return { ok: true }; });
  f.get('/warn', async (request) => { request.log.warn({ n: 2 }, 'a warning'); request.log.error('an error'); return { ok: true }; });
  f.get('/both', async (request) => { request.log.child({ part: 'y' }).warn('from a child'); request.log.warn('direct'); return { ok: true }; });
  f.get('/child', async (request) => { request.log.child({ part: 'x' }).warn('from a child'); return { level: request.log.level, on: (request.log as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled('warn') }; });
  const ready = f.ready().then(() => {
    // the children made from now on (Fastify makes some of its own while it starts)
    if (!logger) return;
    const child = logger.child;
    // (every logger Fastify holds is the root or made from it, and inherits this)
    logger.child = function (this: typeof logger, ...args: Parameters<typeof child>) {
      children++;
      return child.apply(this, args);
    } as typeof logger.child;
  });
  return { f: { inject: async (o: { url: string }) => { await ready; return f.inject(o); } }, lines, children: () => children };
}

describe('request logger', () => {
  it('makes no child for a request that writes nothing at an enabled level', async () => {
    const { f, lines, children } = app('warn');
    expect((await f.inject({ url: '/quiet' })).statusCode).toBe(200);
    expect(lines).toEqual([]);
    expect(children()).toBe(0);
  });

  it('writes each enabled line once, through one child carrying the request id', async () => {
    const { f, lines, children } = app('warn');
    await f.inject({ url: '/warn' });
    expect(lines.map((l) => l.msg)).toEqual(['a warning', 'an error']);
    expect(lines[0]).toMatchObject({ n: 2, level: 40 });
    expect(lines[0].reqId).toBeTruthy();
    expect(lines[1].reqId).toBe(lines[0].reqId);
    expect(children()).toBe(1);
    await f.inject({ url: '/warn' });
    expect(lines[2].reqId).not.toBe(lines[0].reqId);
  });

  it('writes info lines when the level is info, and children of the request logger carry both bindings', async () => {
    const { f, lines } = app('info');
    await f.inject({ url: '/quiet' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'an info line', n: 1 });
    expect(lines[0].reqId).toBeTruthy();
    const res = await f.inject({ url: '/child' });
    expect(res.json()).toEqual({ level: 'info', on: true });
    expect(lines[1]).toMatchObject({ msg: 'from a child', part: 'x' });
    expect(lines[1].reqId).toBeTruthy();
  });

  it('works with logging off', async () => {
    const { f } = app(false);
    expect((await f.inject({ url: '/warn' })).statusCode).toBe(200);
    expect((await f.inject({ url: '/both' })).statusCode).toBe(200);
  });
});
