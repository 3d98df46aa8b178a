/**
 * The writing half of the pages: what every form shares. A POST is taken only from a signed-in browser with the CSRF
 * token of its session (the OAuth pages' session-bound token, daemon/oauth/browser.ts), and every write calls the
 * API's services and policy, so a rule lives in one room. Their errors become pages: 404 and 403 as the API answers
 * them, and any other 4xx the form again with the service's message (escaped like every value of a page).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { ApiError } from '../../errors.js';
import { csrfValid } from '../../oauth/browser.js';
import type { ProjectAbility } from '../../policy/permissions.js';
import { findProjectWithLevel } from '../../services/projects/projects.js';
import { html, type Html } from './html.js';
import { layout, sendHtml, type PageContext } from './layout.js';
import { PageRefusal } from './scope.js';
import { pageContext } from './session.js';

/** A signed-in page context (the viewer and the CSRF token of its forms). */
export type SignedIn = PageContext & { viewer: UserRow; csrf: string; sessionToken: string };

/** A string field of a submitted form (urlencoded), or undefined. */
export function formField(request: FastifyRequest, name: string): string | undefined {
  const b = request.body as Record<string, unknown> | undefined;
  const v = b && typeof b === 'object' ? b[name] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** The hidden CSRF input of a form. */
export const csrfInput = (pc: PageContext) => html`<input type="hidden" name="authenticity_token" value="${pc.csrf ?? ''}">`;

/** A form of one button that POSTs to `action` (close, retry, revoke, ...). */
export const buttonForm = (pc: PageContext, action: string, label: string, cls = '') =>
  html`<form method="post" action="${action}" class="inline button-form">${csrfInput(pc)}<button type="submit"${cls ? html` class="${cls}"` : ''}>${label}</button></form>`;

/** The session of a GET page that needs one (anonymous browsers go to the sign-in page). */
export async function signedInPage(ctx: AppContext, request: FastifyRequest): Promise<SignedIn> {
  const pc = await pageContext(ctx, request);
  if (!pc.viewer || !pc.sessionToken || !pc.csrf) throw new PageRefusal(401);
  return pc as SignedIn;
}

/**
 * The session of a POST: signed in, and the form's CSRF token is the session's. Otherwise null after answering 422
 * (nothing was done): a form from another site, an expired session, or a tampered token.
 */
export async function formSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<SignedIn | null> {
  const pc = await pageContext(ctx, request);
  if (pc.viewer && pc.sessionToken && pc.csrf && csrfValid(ctx, request, formField(request, 'authenticity_token'), pc.sessionToken)) return pc as SignedIn;
  sendHtml(reply, 422, layout(pc, 'The form had expired', html`<h1>The form had expired</h1>
<p class="alert" role="alert">Nothing was done: the form did not carry this session's security token (it was old, or sent from another site). ${
    pc.viewer ? html`Go back, reload the page and try again.` : html`<a href="/users/sign_in">Sign in</a> and try again.`}</p>`));
  return null;
}

/** The project of a form for the viewer needing `ability`, with their level (the API's loadProject), or a 404/403 page. */
export async function formProject(ctx: AppContext, viewer: UserRow, ns: string, name: string, ability: ProjectAbility): Promise<{ project: ProjectRow; level: number | undefined }> {
  try {
    return await findProjectWithLevel(ctx, viewer, `${ns}/${name}`, ability);
  } catch (e) {
    throw refusalOf(e);
  }
}

/** A service's message as a sentence: a validation hash `{title: ["can't be blank"]}` becomes `title can't be blank`. */
export function errorText(e: ApiError): string {
  const b = e.body as { message?: unknown; error?: unknown } | null;
  const m = b?.message ?? (Array.isArray(b?.error) ? b.error.join('; ') : b?.error);
  if (typeof m === 'string') return m;
  if (m && typeof m === 'object') {
    return Object.entries(m as Record<string, unknown>)
      .map(([k, v]) => `${k.replace(/_/g, ' ')} ${Array.isArray(v) ? v.join(', ') : String(v)}`)
      .join('; ');
  }
  return `The request was refused (${e.statusCode}).`;
}

/** An API error as the page's refusal where the API answers 404 or 403 (401 of a signed-in caller: 403), else itself. */
export function refusalOf(e: unknown): unknown {
  if (e instanceof ApiError) {
    if (e.statusCode === 404) return new PageRefusal(404);
    if (e.statusCode === 403 || e.statusCode === 401) return new PageRefusal(403);
  }
  return e;
}

/**
 * Try a write: its value, or (a 4xx of a service other than 404/403) the message and status to show in the form again.
 * A 404/403 becomes the refusal page; anything else goes to the error handler (500).
 */
export async function attempt<T>(write: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; message: string; status: number }> {
  try {
    return { ok: true, value: await write() };
  } catch (e) {
    const r = refusalOf(e);
    if (r !== e) throw r;
    if (e instanceof ApiError && e.statusCode >= 400 && e.statusCode < 500) return { ok: false, message: errorText(e), status: e.statusCode };
    throw e;
  }
}

/** Run a write whose result is the path to go to (303), or show the form again with the error (attempt). */
export async function runWrite(
  reply: FastifyReply, write: () => Promise<string>, again: (message: string, status: number) => FastifyReply | Promise<FastifyReply>,
): Promise<FastifyReply> {
  const r = await attempt(write);
  if (!r.ok) return again(r.message, r.status);
  return reply.header('cache-control', 'no-store').redirect(r.value, 303);
}

/** The page of a refused action that has no form of its own (a button): the message, and the way back. */
export function actionRefusedPage(pc: PageContext, reply: FastifyReply, status: number, title: string, message: string, back: string): FastifyReply {
  return sendHtml(reply, status, layout(pc, title, html`<h1>${title}</h1><p class="alert" role="alert" id="form-error">${message}</p><p><a href="${back}">Go back</a></p>`));
}

/** An error paragraph of a form (or nothing). */
export const formError = (message: string | undefined): Html => (message ? html`<p class="alert" role="alert" id="form-error">${message}</p>` : html``);
