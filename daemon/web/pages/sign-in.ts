/**
 * GET/POST /users/sign_in and POST /users/sign_out: the session sign-in of the pages, GitLab's paths. The same
 * session, CSRF tokens, password check and throttle as the OAuth sign-in page (daemon/oauth/): a new session id at
 * every sign-in, and sign-out deletes the session row (the cookie alone is not trusted to end it).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { anonymousCsrf, clearCookie, cookies, csrfValid, SESSION_COOKIE, setCookie } from '../../oauth/browser.js';
import { SignInThrottled } from '../../policy/sign-in-throttle.js';
import { createSession, deleteSession } from '../../services/oauth/index.js';
import { getSettings } from '../../services/instance/settings.js';
import { signIn } from '../../services/users/users.js';
import { html } from './html.js';
import { layout, sendHtml } from './layout.js';
import { pageContext } from './session.js';

/** A redirect target that stays on this site (a path, never `//host` or a scheme). */
export function localPath(raw: unknown): string {
  return typeof raw === 'string' && /^\/(?![/\\])[^\s\\]*$/.test(raw) && raw.length <= 2000 ? raw : '/';
}

const field = (request: FastifyRequest, name: string): string | undefined => {
  const b = request.body as Record<string, unknown> | undefined;
  const v = b && typeof b === 'object' ? b[name] : undefined;
  return typeof v === 'string' ? v : undefined;
};

/** Registers the sign-in and sign-out routes. */
export default async function signInPages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  async function form(request: FastifyRequest, reply: FastifyReply, status: number, o: { error?: string; login?: string; redirectTo: string }) {
    const disabled = !(await getSettings(ctx)).signinEnabled;
    const csrf = anonymousCsrf(ctx, request, reply);
    const body = disabled
      ? html`<div class="card"><h1>Sign in</h1><p class="alert" role="alert">Signing in with a password is turned off on this server (the <code>signin_enabled</code> setting).</p></div>`
      : html`<div class="card"><h1>Sign in</h1>${o.error ? html`<p class="alert" role="alert" id="signin-error">${o.error}</p>` : ''}
<form method="post" action="/users/sign_in">
<input type="hidden" name="authenticity_token" value="${csrf}">
<input type="hidden" name="redirect_to" value="${o.redirectTo}">
<label for="login">Username or email</label>
<input id="login" name="login" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${o.login ?? ''}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form></div>`;
    return sendHtml(reply, disabled ? 403 : status, layout({ viewer: null }, 'Sign in', body));
  }

  app.get('/users/sign_in', { schema: { hide: true } }, async (request, reply) => {
    const redirectTo = localPath((request.query as Record<string, unknown>).redirect_to);
    const pc = await pageContext(ctx, request);
    if (pc.viewer) return reply.redirect(redirectTo, 302);
    return form(request, reply, 200, { redirectTo });
  });

  app.post('/users/sign_in', { schema: { hide: true } }, async (request, reply) => {
    const redirectTo = localPath(field(request, 'redirect_to'));
    const login = field(request, 'login');
    const password = field(request, 'password');
    if (!csrfValid(ctx, request, field(request, 'authenticity_token'))) {
      return form(request, reply, 422, { redirectTo, login, error: 'The form had expired, so nothing was done. Sign in again.' });
    }
    if (!(await getSettings(ctx)).signinEnabled) return form(request, reply, 403, { redirectTo });
    if (!login || !password) return form(request, reply, 400, { redirectTo, login, error: 'Enter your username or email and your password.' });
    let user;
    try {
      user = await signIn(ctx, login, password, { address: request.ip });
    } catch (e) {
      if (!(e instanceof SignInThrottled)) throw e;
      const minutes = Math.ceil(e.retryAfter / 60);
      reply.header('retry-after', String(e.retryAfter));
      return form(request, reply, 429, {
        redirectTo, login, error: `Too many failed sign-ins ${e.scope === 'address' ? 'from this address' : 'for this account'}. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      });
    }
    const invalid = () => form(request, reply, 401, { redirectTo, login, error: 'Invalid username, email or password.' });
    if (!user) return invalid();
    await deleteSession(ctx, cookies(request)[SESSION_COOKIE]); // a new session id at every sign-in (no fixation)
    const session = await createSession(ctx, user);
    if (!session) return invalid();
    setCookie(ctx, reply, SESSION_COOKIE, session.token, session.expiresAt);
    return reply.redirect(redirectTo, 303);
  });

  app.post('/users/sign_out', { schema: { hide: true } }, async (request, reply) => {
    const pc = await pageContext(ctx, request);
    if (!pc.sessionToken || !csrfValid(ctx, request, field(request, 'authenticity_token'), pc.sessionToken)) {
      return sendHtml(reply, 422, layout(pc, 'Sign out', html`<h1>The form had expired</h1><p>Nothing was done. <a href="/">Go back</a> and try again.</p>`));
    }
    await deleteSession(ctx, pc.sessionToken);
    clearCookie(ctx, reply, SESSION_COOKIE);
    return reply.redirect('/users/sign_in', 303);
  });
}
