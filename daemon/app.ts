/** The Fastify app: parsers, auth hook, error handler, OpenAPI, and route registration. */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyError, type FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import type { AppContext } from './context.js';
import type { UserRow } from './db/schema.js';
import { ApiError, bodyTooLarge, notFound, unauthorized } from './errors.js';
import { dataExceptionMessage } from './db/layer/errors.js';
import { NOT_BLANK, normalizeBoolean, oddIdParam } from './api/params.js';
import { authenticate, authenticateNow } from './policy/authentication.js';
import { apiRoutes } from './api/index.js';
import { multipartFormParser } from './api/multipart-form.js';
import { parseQuery } from './query-string.js';
import { requestLogger } from './request-logger.js';
import { lazySerializerFactory, lazyValidatorFactory } from './schema-compilers.js';
import gitHttpRoutes from './git-http/index.js';
import metricsRoutes, { instrumentRoutes, observeUnmatched } from './web/metrics.js';
import { pingDatabase } from './db/layer/ping.js';

const SECRET_PARAM = /^(?:private_token|access_token|bearer_token|token|sudo|password|refresh_token|client_secret|code|code_verifier|authenticity_token)(?:\[.*)?$/i;
const decodeKey = (k: string) => {
  try {
    return decodeURIComponent(k.replace(/\+/g, ' '));
  } catch {
    return k;
  }
};
/** A URL with secrets in its query string masked, for logs (keys are compared decoded, as qs parses them). */
export const redactUrl = (url: string) =>
  url.replace(/([?&])([^=&]*)=([^&]*)/g, (all, sep: string, key: string) => (SECRET_PARAM.test(decodeKey(key)) ? `${sep}${key}=[REDACTED]` : all));

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    /** The shutdown state GET /-/readiness reports (daemon/main.ts drains on SIGTERM). */
    drain: DrainState;
  }
}

/** Whether this daemon is stopping, and whether a balancer watches it (daemon/main.ts drains on SIGTERM). */
export interface DrainState {
  /** Set on SIGTERM: GET /-/readiness answers 503 from then on. */
  draining: boolean;
  /** Set by the first GET /-/readiness: a balancer checks this daemon, so a drain gives it time to see the 503. */
  readinessChecked: boolean;
  /**
   * Set for a moment at the start of a drain that no balancer watches through readiness: requests a balancer may send
   * to another daemon (GET, HEAD, PUT, DELETE, OPTIONS) answer 503, so a balancer with passive checks (nginx's
   * max_fails) takes this daemon out before it closes its port; a POST or PATCH is still served.
   */
  shedding: boolean;
  /** Called once when the drain begins (held runner requests answer 204 at once: daemon/ci-api). */
  onDrain: Array<() => void>;
}

/** The methods a balancer repeats on another daemon (nginx's proxy_next_upstream without non_idempotent). */
const REPEATABLE = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** How long GET /-/readiness waits for the database's answer before it says the database is unreachable. */
const READINESS_DATABASE_TIMEOUT_MS = 2000;

/** Whether the database answers a cheap query within `ms`. */
async function databaseAnswers(ctx: AppContext, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  try {
    const query = Promise.resolve().then(() => pingDatabase(ctx.data)).then(() => true, () => false);
    return await Promise.race([query, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The messages of busboy's errors for a malformed multipart body. */
const MALFORMED_MULTIPART = /^(Multipart: Boundary not found|Boundary required|Unexpected end of multipart data|\w+ terminated early due to unexpected end of multipart data)$/;

/** Build the HTTP application around a context (tests call this directly and use app.inject). */
export async function buildApp(ctx: AppContext, opts: { logger?: boolean | object } = {}): Promise<FastifyInstance> {
  // `{ loggerInstance }` is a ready pino logger (Fastify 5 takes it as a top-level option, not inside `logger`).
  const instance = opts.logger && typeof opts.logger === 'object' && 'loggerInstance' in opts.logger
    ? (opts.logger as { loggerInstance: FastifyBaseLogger }).loggerInstance
    : undefined;
  const app = Fastify({
    ...(instance ? { loggerInstance: instance } : { logger: opts.logger ?? false }),
    // request.log makes its pino child (with the request id) only when a line is written (request-logger.ts)
    childLoggerFactory: requestLogger,
    // JSON, form and text bodies (--max-body-size); uploads, artifacts and git pushes have their own limits.
    bodyLimit: ctx.config.limits.maxBodyBytes,
    // Behind trusted balancers (--trusted-proxies), request.ip is the client X-Forwarded-For names: the sign-in throttle
    // counts clients, not the balancer. Any other peer is the client itself, whatever it sends.
    ...(ctx.config.trustedProxies.length > 0 ? { trustProxy: ctx.config.trustedProxies } : {}),
    routerOptions: {
      querystringParser: parseQuery,
      ignoreTrailingSlash: true,
      // Path params up to 1 KiB (the default 100 answered 414 for a 255-character variable key or a long project path).
      maxParamLength: 1024,
    },
    // Every /api/v3 and /ci/api/v1 route also answers with a `.json` suffix (GitLab 8.x did).
    rewriteUrl: (req) => {
      const url = req.url ?? '/';
      if (!url.startsWith('/api/v3/') && !url.startsWith('/ci/api/v1/')) return url;
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      return path.endsWith('.json') ? path.slice(0, -5) + (q < 0 ? '' : url.slice(q)) : url;
    },
    // A stopping daemon answers every request that reaches it (daemon/main.ts drains); Fastify's default, a 503 to
    // requests arriving on open connections once closing, lost writes behind a balancer that cannot retry them.
    return503OnClosing: false,
    // Fastify's own per-request lines are off (the onResponse hook logs one redacted line instead).
    logController: new LogController({ disableRequestLogging: true }),
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: true, useDefaults: true, allErrors: false, keywords: [NOT_BLANK] } },
    // Fastify's own compilers, compiling each route's schemas on first use (daemon/schema-compilers.ts).
    schemaController: { compilersFactory: { buildValidator: lazyValidatorFactory(ctx) as never, buildSerializer: lazySerializerFactory(ctx) as never } },
  });
  app.decorate('ctx', ctx);
  app.decorateRequest('user', null);
  // Request counts and latency per route pattern for GET /-/metrics: a hook on each route registered below.
  instrumentRoutes(app);
  // One log line per request, with secrets masked out of the URL; never a token, password or body. Not even hooked
  // when the level is above info (the benchmarks' `--log-level warn`): masking the URL is a measurable part of a request.
  if (instance ? (instance as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled('info') : opts.logger) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info(
        { method: request.method, url: redactUrl(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime), user: request.user?.id },
        'request',
      );
      done();
    });
  }

  // JSON bodies: an empty body (GET/DELETE clients sending `Content-Type: application/json`) is ignored, never a 400.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError(400, { message: '400 (Bad request) body is not valid JSON' }) as unknown as Error, undefined);
    }
  });
  await app.register(formbody, { parser: parseQuery });
  // Multipart API forms, read whole within --max-body-size (413 past it); uploads and artifacts have their own parsers.
  app.addContentTypeParser('multipart/form-data', multipartFormParser(() => ctx.config.limits.maxBodyBytes));

  // Booleans in query and body accept true/false/1/0/yes/no/on/off, normalised before schema validation.
  app.addHook('preValidation', (request, _reply, done) => {
    const schema = request.routeOptions.schema as RouteSchemaLike | undefined;
    if (!schema) return done();
    const keys = schemaKeys(schema);
    // A POST/PUT without any body validates as an empty one, so a missing field reads "not given", not "body is invalid".
    if (schema.body && (request.body === undefined || request.body === null)) request.body = {};
    // Parameters may come in the query string as well as in the body (the spec's opening section); the body wins.
    mergeQueryIntoBody(keys.body, request.query, request.body);
    normalizeBooleans(keys.booleanQuery, request.query);
    normalizeBooleans(keys.booleanBody, request.body);
    done();
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
      if (error.statusCode === 304) return reply.code(304).send();
      return reply.code(error.statusCode).send(error.body);
    }
    const fe = error as FastifyError;
    if (fe.validation) {
      const first = fe.validation[0];
      const field = validationField(first, fe.validationContext);
      if (first && (first.keyword === 'required' || first.keyword === 'minLength')) {
        return reply.code(400).send({ message: `400 (Bad request) "${field}" not given` });
      }
      return reply.code(400).send({ message: `400 (Bad request) "${field}" is invalid` });
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      if (bodyTooLarge(fe)) return reply.code(413).send({ message: '413 Request Entity Too Large' });
      if (fe.statusCode === 415) return reply.code(415).send({ message: '415 Unsupported Media Type' });
      return reply.code(fe.statusCode).send({ message: `${fe.statusCode} ${fe.message}` });
    }
    // busboy's plain Errors for a multipart body with no boundary or cut short: the client's, not ours (were 500).
    if (MALFORMED_MULTIPART.test(fe.message) || (fe.code === 'ERR_STREAM_PREMATURE_CLOSE' && /^multipart\//i.test(String(request.headers['content-type'])))) {
      return reply.code(400).send({ message: '400 (Bad request) the multipart body is malformed: give a boundary and end the body with --<boundary>--' });
    }
    // A value PostgreSQL refused as data (NUL in text, a number out of range): the client's input.
    const dataError = dataExceptionMessage(error);
    if (dataError) return reply.code(400).send({ message: dataError });
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ message: '500 Internal Server Error' });
  });
  app.setNotFoundHandler((request, reply) => {
    observeUnmatched(request, reply.code(404));
    return reply.send({ message: '404 Not Found' });
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'Gantry API (GitLab API v3 compatible)', version: '0.1.0' },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          privateToken: { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ privateToken: [] }, { bearer: [] }],
    },
  });

  app.get('/-/health', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => {
    await pingDatabase(ctx.data);
    return reply.send({ status: 'ok' });
  });
  // For load balancers (CONTRACT.md): 200 only while this daemon should get traffic; 503 once it drains (SIGTERM) or
  // when its database does not answer within 2 s. Never cached: a balancer asks every few seconds.
  const drain: DrainState = { draining: false, readinessChecked: false, shedding: false, onDrain: [] };
  app.decorate('drain', drain);
  // (a callback hook, not an async one: every request passes here, and a promise per request is measurable)
  app.addHook('onRequest', (request, reply, done) => {
    if (drain.shedding && REPEATABLE.has(request.method) && request.url !== '/-/readiness') {
      reply.header('retry-after', '1');
      reply.code(503).send({ message: '503 Service Unavailable: this daemon is stopping; another one takes the request' });
      return;
    }
    done();
  });
  app.get('/-/readiness', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => {
    drain.readinessChecked = true;
    reply.header('cache-control', 'no-store');
    if (drain.draining) return reply.code(503).send({ status: 'draining' });
    if (!(await databaseAnswers(ctx, READINESS_DATABASE_TIMEOUT_MS))) return reply.code(503).send({ status: 'database unreachable' });
    // The drain may have begun while the database answered.
    if (drain.draining) return reply.code(503).send({ status: 'draining' });
    return reply.send({ status: 'ok' });
  });

  await app.register(
    async (api) => {
      // Authentication runs before validation, as GitLab's `authenticate!` runs before required_attributes!.
      // Through the data layer on either engine (one statement for a private token on a cache miss, see authenticate).
      // A cache hit (or no credential at all) is answered at once, without a promise: most requests.
      api.addHook('preValidation', (request: FastifyRequest, _reply, done) => {
        const admit = (user: UserRow | null) => {
          request.user = user;
          if (!user && !request.routeOptions.config.public) return done(unauthorized());
          // An id that can name no row (0, negative, huge) is not found, before any loader looks it up.
          if (oddIdParam(request)) return done(notFound());
          done();
        };
        let now: UserRow | null | undefined;
        try {
          now = authenticateNow(ctx, request);
        } catch (e) {
          return done(e as Error);
        }
        if (now !== undefined) return admit(now);
        authenticate(ctx, request).then(admit, (e: Error) => done(e));
      });
      // Served at /api/v3/openapi.json (the .json suffix is stripped by rewriteUrl, as on every route).
      api.get('/openapi', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
      await api.register(apiRoutes);
    },
    { prefix: '/api/v3' },
  );
  await app.register(gitHttpRoutes);
  await app.register((await import('./ci-api/index.js')).default, { prefix: '/ci/api/v1' });
  await app.register((await import('./web/uploads.js')).default);
  await app.register(metricsRoutes);
  await app.register((await import('./oauth/index.js')).default, { prefix: '/oauth' });
  // The web pages behind every web_url (after every other route: their paths are the most general).
  await app.register((await import('./web/pages/index.js')).default);
  return app;
}

interface SchemaLike {
  properties?: Record<string, { type?: string | string[]; anyOf?: { type?: string }[] }>;
}
type RouteSchemaLike = { body?: SchemaLike; querystring?: SchemaLike };

function isBooleanSchema(s: { type?: string | string[]; anyOf?: { type?: string }[] }): boolean {
  if (s.type === 'boolean') return true;
  return Array.isArray(s.anyOf) && s.anyOf.some((a) => a.type === 'boolean');
}

/** What the preValidation hook needs of a route's schema, worked out once per route instead of on every request. */
interface SchemaKeys {
  /** The body's property names (query parameters of these names are merged into the body). */
  body: ReadonlySet<string> | null;
  booleanQuery: readonly string[];
  booleanBody: readonly string[];
}
const schemaKeysCache = new WeakMap<object, SchemaKeys>();
const booleanKeys = (s: SchemaLike | undefined) => Object.entries(s?.properties ?? {}).filter(([, p]) => isBooleanSchema(p)).map(([k]) => k);

function schemaKeys(schema: RouteSchemaLike): SchemaKeys {
  let keys = schemaKeysCache.get(schema);
  if (!keys) {
    keys = {
      body: schema.body?.properties ? new Set(Object.keys(schema.body.properties)) : null,
      booleanQuery: booleanKeys(schema.querystring),
      booleanBody: booleanKeys(schema.body),
    };
    schemaKeysCache.set(schema, keys);
  }
  return keys;
}

function normalizeBooleans(keys: readonly string[], values: unknown): void {
  if (!keys.length || !values || typeof values !== 'object' || Buffer.isBuffer(values)) return;
  const v = values as Record<string, unknown>;
  for (const key of keys) {
    if (key in v) v[key] = normalizeBoolean(v[key]);
  }
}

/** Copy the query parameters a body schema names into the body, where the body does not already give them. */
function mergeQueryIntoBody(bodyKeys: ReadonlySet<string> | null, query: unknown, body: unknown): void {
  if (!bodyKeys || !query || typeof query !== 'object' || !body || typeof body !== 'object' || Buffer.isBuffer(body)) return;
  const q = query as Record<string, unknown>;
  const b = body as Record<string, unknown>;
  for (const key in q) {
    if (bodyKeys.has(key) && !Object.hasOwn(b, key)) b[key] = q[key];
  }
}

function validationField(
  error: { keyword: string; instancePath: string; params: Record<string, unknown> } | undefined,
  context: string | undefined,
): string {
  if (!error) return context ?? 'param';
  if (error.keyword === 'required') return String(error.params.missingProperty);
  const path = error.instancePath.replace(/^\//, '').split('/')[0];
  return path || context || 'param';
}
