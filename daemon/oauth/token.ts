/** POST /oauth/token (authorization_code, password, refresh_token grants), POST /oauth/revoke, GET /oauth/token/info. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { dataExceptionMessage } from '../db/layer/errors.js';
import { ApiError, bodyTooLarge } from '../errors.js';
import { parseBasicAuth } from '../git-http/auth.js';
import { SignInThrottled } from '../policy/sign-in-throttle.js';
import {
  authenticateClient, checkAccessToken, exchangeCode, OAuthError, oauthError, passwordGrant, refreshGrant, revokeToken, tokenInfo,
  type ClientCredentials, type OauthApplicationRow,
} from '../services/oauth/index.js';

/** The request's parameters: the body (form or JSON) over the query string; only strings count. */
export function oauthParams(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const source of [request.query, request.body]) {
    if (!source || typeof source !== 'object' || Buffer.isBuffer(source)) continue;
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** Client credentials from HTTP Basic (RFC 6749 2.3.1: form-encoded id and secret) or the client_id/client_secret params. */
function clientCredentials(request: FastifyRequest, p: Record<string, string>): ClientCredentials {
  const basic = parseBasicAuth(request.headers.authorization);
  if (basic?.username) {
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s.replace(/\+/g, ' '));
      } catch {
        return s;
      }
    };
    return { clientId: decode(basic.username), clientSecret: decode(basic.password) };
  }
  return { clientId: p.client_id || undefined, clientSecret: p.client_secret || undefined };
}

/** Send an OAuth error body (RFC 6749 5.2); invalid_client and invalid_token carry WWW-Authenticate. */
export function sendOAuthError(reply: FastifyReply, e: OAuthError): FastifyReply {
  if (e.status === 401) {
    reply.header('www-authenticate', `Bearer realm="Gantry", error="${e.error}", error_description="${e.description.replace(/["\\]/g, "'")}"`);
  }
  return reply.code(e.status).header('cache-control', 'no-store').header('pragma', 'no-cache').send({ error: e.error, error_description: e.description });
}

/** The body limit of /oauth (--max-body-size) in words: `64 KiB (65536 bytes)`. */
export function bodyLimitText(ctx: AppContext): string {
  const n = ctx.config.limits.maxBodyBytes;
  const unit = n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : null;
  return unit ? `${unit} (${n} bytes)` : `${n} bytes`;
}

/**
 * An error of the token endpoints in OAuth's form: a body over the limit is 413 invalid_request saying the limit, another
 * malformed body is 400 invalid_request, nothing answers 500.
 */
function asOAuthError(ctx: AppContext, error: unknown): OAuthError | null {
  if (error instanceof OAuthError) return error;
  if (bodyTooLarge(error)) {
    return oauthError('invalid_request', `The request body is too large: this server takes at most ${bodyLimitText(ctx)} (gantryd --max-body-size)`, 413);
  }
  if (dataExceptionMessage(error)) {
    // A value PostgreSQL refuses as data (a NUL character in a client_id or a username): the client's input.
    return oauthError('invalid_request', 'A parameter holds a value that cannot be used (such as a NUL character): send plain text');
  }
  if (error instanceof ApiError || ((error as { statusCode?: number }).statusCode ?? 500) < 500) {
    return oauthError('invalid_request', 'The request body could not be read: send form fields (application/x-www-form-urlencoded) or a JSON object');
  }
  return null;
}

/** Registers the token endpoints (under /oauth; on the data layer: served on SQLite and PostgreSQL). */
export default async function tokenRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof SignInThrottled) {
      // Too many failed sign-ins (services/users/users.ts signIn): 429 with Retry-After, in OAuth's body form.
      return sendOAuthError(reply.header('retry-after', String(error.retryAfter)), oauthError('invalid_grant',
        `Too many failed sign-ins ${error.scope === 'address' ? 'from this address' : 'for this user'}: try again in ${error.retryAfter} seconds`, 429));
    }
    const e = asOAuthError(ctx, error);
    if (e) return sendOAuthError(reply, e);
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ error: 'server_error', error_description: 'The server failed; try again later' });
  });

  app.post('/token', { schema: { hide: true } }, async (request, reply) => {
    const p = oauthParams(request);
    const client = () => authenticateClient(ctx, clientCredentials(request, p));
    let answer;
    switch (p.grant_type) {
      case 'authorization_code': {
        const c = await client();
        if (!c) throw oauthError('invalid_client', 'client_id is missing: send the application id (and its secret) of the registered application');
        answer = await exchangeCode(ctx, c, { code: p.code, redirectUri: p.redirect_uri, codeVerifier: p.code_verifier });
        break;
      }
      case 'password':
        answer = await passwordGrant(ctx, await client(), { username: p.username, password: p.password, scope: p.scope, address: request.ip });
        break;
      case 'refresh_token':
        answer = await refreshGrant(ctx, await client(), { refreshToken: p.refresh_token, scope: p.scope });
        break;
      case undefined:
      case '':
        throw oauthError('invalid_request', 'grant_type is missing: use authorization_code, password or refresh_token');
      default:
        throw oauthError('unsupported_grant_type', `grant_type "${p.grant_type}" is not supported: use authorization_code, password or refresh_token`);
    }
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer);
  });

  app.post('/revoke', { schema: { hide: true } }, async (request, reply) => {
    const p = oauthParams(request);
    const creds = clientCredentials(request, p);
    let c: OauthApplicationRow | null = null;
    if (creds.clientId || creds.clientSecret) c = await authenticateClient(ctx, creds);
    await revokeToken(ctx, c, p.token, p.token_type_hint);
    return reply.header('cache-control', 'no-store').send({});
  });

  app.get('/token/info', { schema: { hide: true } }, async (request, reply) => {
    const token = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? oauthParams(request).access_token;
    const found = token ? await checkAccessToken(ctx, token) : { problem: 'unknown' as const };
    if ('problem' in found) {
      const why = { unknown: 'The access token is invalid', expired: 'The access token expired', revoked: 'The access token was revoked' }[found.problem];
      throw oauthError('invalid_token', `${why}: get a new one (refresh it, or sign in again)`);
    }
    return reply.header('cache-control', 'no-store').send(tokenInfo(found));
  });
}
