/**
 * Who is reading a page: the browser session of the OAuth pages (the `gantry_session` cookie, a row in
 * oauth_sessions), never a PRIVATE-TOKEN, a private_token parameter or a bearer token: pages take cookies only, so a
 * link with a token in it never signs anyone in.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { cookies, sessionCsrf, SESSION_COOKIE } from '../../oauth/browser.js';
import { sessionUser } from '../../services/oauth/index.js';
import type { PageContext } from './layout.js';

/** The signed-in user of the browser (or null) and the CSRF token of its forms. */
export async function pageContext(ctx: AppContext, request: FastifyRequest): Promise<PageContext & { sessionToken?: string }> {
  const token = cookies(request)[SESSION_COOKIE];
  const viewer = await sessionUser(ctx, token);
  if (!viewer || !token) return { viewer: null };
  return { viewer, csrf: sessionCsrf(ctx, token), sessionToken: token };
}
