/**
 * The browser side of the OAuth pages: cookies (the session, and a CSRF cookie before sign-in), CSRF tokens bound to
 * the session (or, before sign-in, to the CSRF cookie: a signed double submit), and the security headers of a page.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { hashToken, randomToken } from '../secrets.js';

/** Cookie of the signed-in browser session. */
export const SESSION_COOKIE = 'gantry_session';
/** Cookie a CSRF token is bound to before sign-in. */
const CSRF_COOKIE = 'gantry_csrf';

/** The cookies of a request, by name (the first of a repeated name wins). */
export function cookies(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !(name in out)) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

/** Append a Set-Cookie header: HttpOnly, SameSite=Lax, Path=/, Secure when the external URL is https. */
export function setCookie(ctx: AppContext, reply: FastifyReply, name: string, value: string, expires?: Date): void {
  const attrs = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (expires) attrs.push(`Expires=${expires.toUTCString()}`);
  if (ctx.externalUrl().startsWith('https:')) attrs.push('Secure');
  const prior = reply.getHeader('set-cookie');
  const list = prior === undefined ? [] : Array.isArray(prior) ? prior.map(String) : [String(prior)];
  reply.header('set-cookie', [...list, attrs.join('; ')]);
}

/** Remove a cookie from the browser. */
export function clearCookie(ctx: AppContext, reply: FastifyReply, name: string): void {
  setCookie(ctx, reply, name, '', new Date(0));
}

/** What a CSRF token is bound to: the session cookie when signed in, else the CSRF cookie. */
type Binding = { kind: 'session' | 'anonymous'; value: string };

const csrfFor = (ctx: AppContext, b: Binding) => ctx.secrets.derive('oauth-csrf', `${b.kind}:${hashToken(b.value)}`, 43);

/** The CSRF token of a form shown to a signed-in browser (bound to its session). */
export function sessionCsrf(ctx: AppContext, sessionToken: string): string {
  return csrfFor(ctx, { kind: 'session', value: sessionToken });
}

/** The CSRF token of a form shown before sign-in; sets the CSRF cookie when the browser has none. */
export function anonymousCsrf(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): string {
  let value = cookies(request)[CSRF_COOKIE];
  if (!value || !/^[A-Za-z0-9_-]{20,64}$/.test(value)) {
    value = randomToken(32);
    setCookie(ctx, reply, CSRF_COOKIE, value);
  }
  return csrfFor(ctx, { kind: 'anonymous', value });
}

/** Whether a submitted form carries the right CSRF token for its binding (session, or the CSRF cookie). */
export function csrfValid(ctx: AppContext, request: FastifyRequest, submitted: unknown, sessionToken?: string): boolean {
  const value = sessionToken ?? cookies(request)[CSRF_COOKIE];
  if (!value || typeof submitted !== 'string' || !submitted) return false;
  const expected = Buffer.from(csrfFor(ctx, { kind: sessionToken ? 'session' : 'anonymous', value }));
  const given = Buffer.from(submitted);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Send an HTML page with headers that keep it out of caches and frames and its URL out of Referer headers. */
export function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'")
    .send(html);
}
