/**
 * GET and POST /oauth/authorize (the consent page and its answer), POST /oauth/sign_in and /oauth/sign_out: the
 * browser part of the authorization code grant. An unknown client or a redirect URI it did not register is an error
 * page, never a redirect; once the redirect URI is known good, other errors go back to it (RFC 6749 4.1.2.1).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { UserRow } from '../db/schema.js';
import {
  alreadyAuthorized, applicationByUid, applicationOwnerName, createGrant, createSession, deleteSession, isPublicClient, OAuthError, oauthError, OOB_URI,
  redirectUriAllowed, requestedScopes, SCOPES, sessionUser, type OauthApplicationRow,
} from '../services/oauth/index.js';
import { getSettings } from '../services/instance/settings.js';
import { signIn } from '../services/users/users.js';
import { SignInThrottled } from '../policy/sign-in-throttle.js';
import { anonymousCsrf, clearCookie, cookies, csrfValid, sendPage, sessionCsrf, SESSION_COOKIE, setCookie } from './browser.js';
import { AUTHORIZE_FIELDS, codePage, consentPage, errorPage, signedOutPage, signInPage, type AuthorizeParams } from './pages.js';
import { dataExceptionMessage } from '../db/layer/errors.js';
import { bodyTooLarge } from '../errors.js';
import { bodyLimitText, oauthParams } from './token.js';

/** A refusal shown as a page (never redirected). */
class PageError extends Error {
  constructor(public readonly status: number, public readonly title: string, public readonly text: string) {
    super(text);
  }
}

/** A checked authorization request. */
interface Checked {
  app: OauthApplicationRow;
  params: AuthorizeParams;
  redirectUri: string;
  scopes: string[];
}

const PKCE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;

function authorizeParams(request: FastifyRequest): AuthorizeParams {
  const all = oauthParams(request);
  const out: AuthorizeParams = {};
  for (const k of AUTHORIZE_FIELDS) if (all[k] !== undefined) out[k] = all[k];
  return out;
}

/** The client and its redirect URI, or a PageError: nothing about them may send the browser anywhere. */
async function checkClient(ctx: AppContext, p: AuthorizeParams): Promise<{ app: OauthApplicationRow; redirectUri: string }> {
  const app = p.client_id ? await applicationByUid(ctx, p.client_id) : null;
  if (!app) {
    throw new PageError(400, 'Unknown application',
      'This sign-in link names an application (client_id) that is not registered on this Gantry server. Go back to the application and tell its developer; the link may be out of date.');
  }
  if (!p.redirect_uri || !redirectUriAllowed(app, p.redirect_uri)) {
    throw new PageError(400, 'Redirect URI not registered',
      `The redirect URI of this sign-in link is not one ${app.name} registered, so Gantry will not send you there. Go back to the application and tell its developer to register the redirect URI it uses.`);
  }
  return { app, redirectUri: p.redirect_uri };
}

/** The rest of the request, once the redirect URI is trusted: OAuthErrors here go back to the client. */
function checkRequest(app: OauthApplicationRow, redirectUri: string, p: AuthorizeParams): Checked {
  if (p.response_type !== 'code') {
    throw oauthError('unsupported_response_type', p.response_type ? `response_type "${p.response_type}" is not supported: use response_type=code` : 'response_type is missing: use response_type=code');
  }
  const scopes = requestedScopes(app, p.scope);
  if (p.code_challenge_method !== undefined && p.code_challenge_method !== 'S256') {
    throw oauthError('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)');
  }
  if (p.code_challenge !== undefined && !PKCE_CHALLENGE.test(p.code_challenge)) {
    throw oauthError('invalid_request', 'code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636)');
  }
  if (p.code_challenge === undefined && p.code_challenge_method !== undefined) throw oauthError('invalid_request', 'code_challenge_method was sent without code_challenge');
  if (isPublicClient(app) && !p.code_challenge) {
    throw oauthError('invalid_request', `${app.name} must use PKCE: send code_challenge and code_challenge_method=S256 (RFC 7636)`);
  }
  return { app, params: p, redirectUri, scopes };
}

/** The checked request, or the reply that sent its error back to the client. */
function checkOrRedirect(reply: FastifyReply, app: OauthApplicationRow, redirectUri: string, p: AuthorizeParams): Checked | FastifyReply {
  try {
    return checkRequest(app, redirectUri, p);
  } catch (e) {
    if (e instanceof OAuthError) return redirectError(reply, app, redirectUri, p.state, e);
    throw e;
  }
}

const isChecked = (c: Checked | FastifyReply): c is Checked => 'scopes' in c;

/** redirect_uri with parameters added (its own query kept). */
function withParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}

/** Send the browser back to the client with an error (or show it, for an out-of-band client). */
function redirectError(reply: FastifyReply, app: OauthApplicationRow, redirectUri: string, state: string | undefined, e: OAuthError): FastifyReply {
  if (redirectUri === OOB_URI) return sendPage(reply, 400, codePage({ appName: app.name, error: `${e.error}: ${e.description}` }));
  return reply.header('cache-control', 'no-store').redirect(withParams(redirectUri, { error: e.error, error_description: e.description, state }), 302);
}

/**
 * Issue the code and send the browser back with it (or show it, for an out-of-band client). A user or application
 * deleted meanwhile gets the page the request would have got a moment later (`gone`).
 */
async function grant(ctx: AppContext, reply: FastifyReply, user: UserRow, c: Checked, gone: () => Promise<FastifyReply>): Promise<FastifyReply> {
  const code = await createGrant(ctx, user, c.app, {
    redirectUri: c.redirectUri, scopes: c.scopes, codeChallenge: c.params.code_challenge, codeChallengeMethod: c.params.code_challenge_method,
  });
  if (code === null) return gone();
  if (c.redirectUri === OOB_URI) return sendPage(reply, 200, codePage({ appName: c.app.name, code }));
  return reply.header('cache-control', 'no-store').redirect(withParams(c.redirectUri, { code, state: c.params.state }), 302);
}

/** The signed-in user of the browser and its session cookie value, or nulls. */
async function browserSession(ctx: AppContext, request: FastifyRequest): Promise<{ user: UserRow | null; token: string | undefined }> {
  const token = cookies(request)[SESSION_COOKIE];
  const user = await sessionUser(ctx, token);
  return { user, token: user ? token : undefined };
}

async function showSignIn(
  ctx: AppContext, request: FastifyRequest, reply: FastifyReply, p: AuthorizeParams, app: OauthApplicationRow | null, status = 200, error?: string, login?: string,
): Promise<FastifyReply> {
  const disabled = !(await getSettings(ctx)).signinEnabled;
  const html = signInPage({ params: p, csrf: anonymousCsrf(ctx, request, reply), appName: app?.name ?? null, error, login, disabled });
  return sendPage(reply, disabled ? 403 : status, html);
}

const forgedPage = (reply: FastifyReply) => sendPage(reply, 422, errorPage('The form has expired',
  'This form could not be checked (its security token is missing or wrong, or your session changed), so nothing was done. Go back to the application and start the sign-in again.'));

async function showConsent(ctx: AppContext, reply: FastifyReply, user: UserRow, sessionToken: string, c: Checked): Promise<FastifyReply> {
  const owner = await applicationOwnerName(ctx, c.app);
  const redirectHost = c.redirectUri === OOB_URI ? 'a page showing a code to copy' : new URL(c.redirectUri).host;
  return sendPage(reply, 200, consentPage({
    params: c.params, csrf: sessionCsrf(ctx, sessionToken), appName: c.app.name, owner: owner ? `@${owner}` : null, redirectHost,
    user: { name: user.name, username: user.username }, scopes: c.scopes.map((s) => ({ name: s, description: SCOPES[s]! })),
  }));
}

/**
 * Registers the authorization pages (under /oauth; on the data layer: served on SQLite and PostgreSQL). Nothing of a
 * sign-in lives in the process: the session is a row, the CSRF tokens are derived from the shared secrets file and
 * the session (or the CSRF cookie), and the authorization request travels in the forms, so any daemon sharing the
 * database and the data directory answers any step.
 */
export default async function authorizeRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof PageError) return sendPage(reply, error.status, errorPage(error.title, error.text));
    if (bodyTooLarge(error)) {
      return sendPage(reply, 413, errorPage('The form is too large',
        `The form sent is larger than this server takes (at most ${bodyLimitText(ctx)}), so nothing was done. Go back to the application and start the sign-in again.`));
    }
    const status = dataExceptionMessage(error) ? 400 : (error as { statusCode?: number }).statusCode ?? 500;
    if (status < 500) return sendPage(reply, 400, errorPage('Bad request', 'The form could not be read. Go back to the application and start the sign-in again.'));
    request.log.error({ err: error }, 'unhandled error');
    return sendPage(reply, 500, errorPage('Something went wrong', 'The server failed to answer. Try again in a moment.'));
  });

  // The authorization request: sign-in page, consent page, or straight back when the app was authorized before.
  app.get('/authorize', { schema: { hide: true } }, async (request, reply) => {
    const p = authorizeParams(request);
    const { app: client, redirectUri } = await checkClient(ctx, p);
    const checked = checkOrRedirect(reply, client, redirectUri, p);
    if (!isChecked(checked)) return checked;
    const { user, token } = await browserSession(ctx, request);
    if (!user) return showSignIn(ctx, request, reply, p, client);
    if (await alreadyAuthorized(ctx, user, client, checked.scopes)) return grant(ctx, reply, user, checked, () => showSignIn(ctx, request, reply, p, client));
    return showConsent(ctx, reply, user, token!, checked);
  });

  // The consent page's answer: decision=authorize or decision=deny.
  app.post('/authorize', { schema: { hide: true } }, async (request, reply) => {
    const p = authorizeParams(request);
    const { app: client, redirectUri } = await checkClient(ctx, p);
    const { user, token } = await browserSession(ctx, request);
    if (!user) return showSignIn(ctx, request, reply, p, client);
    if (!csrfValid(ctx, request, oauthParams(request).authenticity_token, token)) return forgedPage(reply);
    const checked = checkOrRedirect(reply, client, redirectUri, p);
    if (!isChecked(checked)) return checked;
    const decision = oauthParams(request).decision;
    // The user or the application deleted since the checks above: the sign-in page, as the session is gone with them.
    if (decision === 'authorize') return grant(ctx, reply, user, checked, () => showSignIn(ctx, request, reply, p, client));
    return redirectError(reply, client, redirectUri, p.state, oauthError('access_denied', 'The user denied the authorization request'));
  });

  app.post('/sign_in', { schema: { hide: true } }, async (request, reply) => {
    const all = oauthParams(request);
    const p = authorizeParams(request);
    const { app: client } = await checkClient(ctx, p);
    if (!csrfValid(ctx, request, all.authenticity_token)) return forgedPage(reply);
    if (!(await getSettings(ctx)).signinEnabled) return showSignIn(ctx, request, reply, p, client);
    if (!all.login || !all.password) return showSignIn(ctx, request, reply, p, client, 400, 'Enter your username or email and your password.', all.login);
    let user: UserRow | null;
    try {
      user = await signIn(ctx, all.login, all.password, { address: request.ip });
    } catch (e) {
      if (!(e instanceof SignInThrottled)) throw e;
      const minutes = Math.ceil(e.retryAfter / 60);
      reply.header('retry-after', String(e.retryAfter));
      return showSignIn(ctx, request, reply, p, client, 429,
        `Too many failed sign-ins ${e.scope === 'address' ? 'from this address' : 'for this account'}. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, all.login);
    }
    const invalid = () => showSignIn(ctx, request, reply, p, client, 401,
      'Invalid username, email or password. Check them and try again; if your account is blocked, ask an administrator.', all.login);
    if (!user) return invalid();
    await deleteSession(ctx, cookies(request)[SESSION_COOKIE]); // a new session id at every sign-in (no fixation)
    const session = await createSession(ctx, user);
    if (!session) return invalid(); // the user was deleted since the password was checked
    setCookie(ctx, reply, SESSION_COOKIE, session.token, session.expiresAt);
    return reply.redirect(`authorize?${new URLSearchParams(p as Record<string, string>).toString()}`, 303);
  });

  app.post('/sign_out', { schema: { hide: true } }, async (request, reply) => {
    const p = authorizeParams(request);
    const { token } = await browserSession(ctx, request);
    if (!csrfValid(ctx, request, oauthParams(request).authenticity_token, token)) return forgedPage(reply);
    await deleteSession(ctx, token);
    clearCookie(ctx, reply, SESSION_COOKIE);
    if (p.client_id) return reply.redirect(`authorize?${new URLSearchParams(p as Record<string, string>).toString()}`, 303);
    return sendPage(reply, 200, signedOutPage());
  });
}
