/**
 * GET /-/metrics in the Prometheus text format, and the per-route request metrics behind it. Not public: a scraper
 * sends the --metrics-token (`Authorization: Bearer <token>` or `?token=`), an administrator any of their tokens;
 * everyone else gets 404, as for a page that does not exist (docs/decisions.md).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, onResponseHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { routeSeries } from '../metrics.js';
import { authenticate } from '../policy/authentication.js';
import { metricsText } from '../services/instance/metrics.js';

const METRICS_HOOK = Symbol('gantry.metricsHook');
type MarkedHook = onResponseHookHandler & { [METRICS_HOOK]?: true };

/**
 * Give every route registered from now on an onResponse hook bound to its own series (route pattern and method),
 * so that a request costs one histogram observe and no lookup. Call before registering routes.
 */
export function instrumentRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const method = Array.isArray(route.method) ? route.method.join(',') : route.method;
    const series = routeSeries(route.url, method);
    const hook: MarkedHook = (_request, reply, done) => {
      series.observe(reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    hook[METRICS_HOOK] = true;
    // A route Fastify derives from another (HEAD from GET) arrives with the other's hook: replace it.
    const existing = (route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse]) as MarkedHook[];
    route.onResponse = [...existing.filter((h) => !h[METRICS_HOOK]), hook];
  });
}

/** Record a request no route matched (answered by the not-found handler). */
export function observeUnmatched(request: FastifyRequest, reply: FastifyReply): void {
  routeSeries('(unmatched)', request.method).observe(reply.statusCode, reply.elapsedTime / 1000);
}

const same = (given: unknown, expected: string): boolean => {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** Whether the request may read the metrics: the scraper token, or an administrator. */
async function mayRead(ctx: AppContext, request: FastifyRequest): Promise<boolean> {
  const token = ctx.config.metricsToken;
  if (token) {
    const bearer = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
    if (same(bearer, token) || same((request.query as { token?: unknown }).token, token)) return true;
  }
  try {
    return (await authenticate(ctx, request))?.isAdmin === true;
  } catch (e) {
    if (e instanceof ApiError) return false;
    throw e;
  }
}

/** Registers GET /-/metrics. */
export default async function metricsRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.get('/-/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!(await mayRead(ctx, request))) throw notFound();
    const text = await metricsText(ctx);
    return reply.header('cache-control', 'no-store').type('text/plain; version=0.0.4; charset=utf-8').send(text);
  });
}
