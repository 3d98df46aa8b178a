/**
 * The profile pages (GitLab 8.x's /profile, /profile/keys, /profile/personal_access_tokens): the signed-in user's
 * account, their SSH keys (add, delete) and personal access tokens (create, revoke). Through the services of
 * POST/DELETE /user/keys and /user/personal_access_tokens: the same validation and the same system hooks. A new
 * token's secret is in the one answer to its form (kept out of caches), never in a page again.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { createUserKey, deleteUserKey, listUserKeys } from '../../services/keys/index.js';
import {
  createPersonalAccessToken, listPersonalAccessTokens, revokePersonalAccessToken, tokenActive,
} from '../../services/users/users.js';
import { attempt, buttonForm, csrfInput, formError, formField, formSession, runWrite, signedInPage, type SignedIn } from './forms.js';
import { html, pageNumber, pager, timeAgo, type Html } from './html.js';
import { layout, sendHtml } from './layout.js';
import { pageId, PageRefusal } from './scope.js';

const TOKENS_PER_PAGE = 20;

/** The tabs of the profile pages. */
function profileNav(current: 'profile' | 'keys' | 'tokens'): Html {
  const items: [typeof current, string, string][] = [['profile', 'Profile', '/profile'], ['keys', 'SSH keys', '/profile/keys'], ['tokens', 'Access tokens', '/profile/personal_access_tokens']];
  return html`<nav class="tabs" aria-label="Profile">${items.map(([k, label, href]) => html`<a href="${href}"${k === current ? html` aria-current="page"` : ''}>${label}</a>`)}</nav>`;
}

/** Registers the profile pages. */
export default async function profilePages(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get('/profile', { schema: { hide: true } }, async (request, reply) => {
    const pc = await signedInPage(ctx, request);
    const u = pc.viewer;
    const body = html`<h1>Profile</h1>${profileNav('profile')}
<dl class="facts"><dt>Name</dt><dd>${u.name}</dd><dt>Username</dt><dd><a href="/${u.username}">@${u.username}</a></dd><dt>Email</dt><dd>${u.email}</dd>
<dt>Member since</dt><dd>${timeAgo(u.createdAt)}</dd>${u.isAdmin ? html`<dt>Role</dt><dd>Administrator</dd>` : ''}</dl>`;
    return sendHtml(reply, 200, layout(pc, 'Profile', body));
  });

  // ---- SSH keys ----------------------------------------------------------------------------------------------

  async function keysPage(reply: FastifyReply, pc: SignedIn, status: number, v: { title?: string; key?: string } = {}, error?: string) {
    const keys = await listUserKeys(ctx, pc.viewer.id);
    const items = keys.map((k) => html`<li id="key-${k.id}"><strong>${k.title}</strong>
<span class="muted"><code>${k.fingerprint}</code> · ${k.keyType} · added ${timeAgo(k.createdAt)}</span>
${buttonForm(pc, `/profile/keys/${k.id}/delete`, 'Delete', 'danger')}</li>`);
    const body = html`<h1>SSH keys</h1>${profileNav('keys')}
<section aria-labelledby="add-key" class="form-section"><h2 id="add-key">Add an SSH key</h2>${formError(error)}
<form method="post" action="/profile/keys" class="stacked">${csrfInput(pc)}
<label for="key">Key <span class="muted">(the line of your <code>~/.ssh/id_ed25519.pub</code>)</span></label>
<textarea id="key" name="key" rows="4" required spellcheck="false">${v.key ?? ''}</textarea>
<label for="title">Title</label><input id="title" name="title" type="text" required value="${v.title ?? ''}">
<button type="submit">Add key</button></form></section>
<h2>Your keys (${keys.length})</h2>${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="muted">No SSH keys yet.</p>`}`;
    return sendHtml(reply, status, layout(pc, 'SSH keys', body));
  }

  app.get('/profile/keys', { schema: { hide: true } }, async (request, reply) => keysPage(reply, await signedInPage(ctx, request), 200));

  app.post('/profile/keys', { schema: { hide: true } }, async (request, reply) => {
    const pc = await formSession(ctx, request, reply);
    if (!pc) return reply;
    const v = { title: formField(request, 'title') ?? '', key: formField(request, 'key') ?? '' };
    return runWrite(reply, async () => {
      const key = await createUserKey(ctx, pc.viewer, v);
      return `/profile/keys#key-${key.id}`;
    }, (message, status) => keysPage(reply, pc, status, v, message));
  });

  app.post<{ Params: { id: string } }>('/profile/keys/:id/delete', { schema: { hide: true } }, async (request, reply) => {
    const pc = await formSession(ctx, request, reply);
    if (!pc) return reply;
    const key = await deleteUserKey(ctx, pc.viewer.id, pageId(request.params.id));
    if (!key) throw new PageRefusal(404);
    return reply.header('cache-control', 'no-store').redirect('/profile/keys', 303);
  });

  // ---- personal access tokens ------------------------------------------------------------------------------

  async function tokensPage(
    reply: FastifyReply, pc: SignedIn, page: number, status: number, o: { name?: string; expires_at?: string; error?: string; created?: { name: string; token: string } } = {},
  ) {
    const listing = listPersonalAccessTokens(pc.viewer);
    const total = await listing.count(ctx.data);
    const tokens = await listing.fetch(ctx.data, TOKENS_PER_PAGE, (page - 1) * TOKENS_PER_PAGE);
    const rows = tokens.map((t) => {
      const active = tokenActive(t);
      return html`<li id="token-${t.id}"><strong>${t.name}</strong>
<span class="muted">created ${timeAgo(t.createdAt)} · ${t.expiresAt ? html`expires ${t.expiresAt}` : 'never expires'} · ${t.revoked ? 'revoked' : active ? 'active' : 'expired'}</span>
${active ? buttonForm(pc, `/profile/personal_access_tokens/${t.id}/revoke`, 'Revoke', 'danger') : ''}</li>`;
    });
    const created = o.created
      ? html`<section class="created-token" aria-labelledby="new-token"><h2 id="new-token">Your new personal access token “${o.created.name}”</h2>
<p>Copy it now: it is shown only this once.</p><input id="created-token" type="text" readonly value="${o.created.token}" aria-label="The new token"></section>`
      : '';
    const body = html`<h1>Personal access tokens</h1>${profileNav('tokens')}${created}
<section aria-labelledby="add-token" class="form-section"><h2 id="add-token">Create a personal access token</h2>
<p class="muted">A token works as your password for the API and git over HTTP, until it expires or you revoke it.</p>${formError(o.error)}
<form method="post" action="/profile/personal_access_tokens" class="stacked">${csrfInput(pc)}
<label for="name">Name</label><input id="name" name="name" type="text" required value="${o.name ?? ''}">
<label for="expires_at">Expires at <span class="muted">(optional)</span></label><input id="expires_at" name="expires_at" type="date" value="${o.expires_at ?? ''}">
<button type="submit">Create token</button></form></section>
<h2>Your tokens (${total})</h2>${rows.length ? html`<ul class="list">${rows}</ul>` : html`<p class="muted">No tokens yet.</p>`}${pager(page, TOKENS_PER_PAGE, total)}`;
    return sendHtml(reply, status, layout(pc, 'Personal access tokens', body));
  }

  app.get('/profile/personal_access_tokens', { schema: { hide: true } }, async (request, reply) =>
    tokensPage(reply, await signedInPage(ctx, request), pageNumber(request.query), 200));

  app.post('/profile/personal_access_tokens', { schema: { hide: true } }, async (request, reply) => {
    const pc = await formSession(ctx, request, reply);
    if (!pc) return reply;
    const name = formField(request, 'name') ?? '';
    const expires = formField(request, 'expires_at') ?? '';
    const r = await attempt(() => createPersonalAccessToken(ctx, pc.viewer, name, expires.trim() === '' ? null : expires.trim()));
    if (!r.ok) return tokensPage(reply, pc, 1, r.status, { name, expires_at: expires, error: r.message });
    // The secret is in this answer only: no redirect to a page that would have to hold it.
    return tokensPage(reply, pc, 1, 201, { created: { name: r.value.row.name, token: r.value.token } });
  });

  app.post<{ Params: { id: string } }>('/profile/personal_access_tokens/:id/revoke', { schema: { hide: true } }, async (request, reply) => {
    const pc = await formSession(ctx, request, reply);
    if (!pc) return reply;
    return runWrite(reply, async () => {
      await revokePersonalAccessToken(ctx, pc.viewer, pageId(request.params.id));
      return '/profile/personal_access_tokens';
    }, (message, status) => tokensPage(reply, pc, 1, status, { error: message }));
  });
}

