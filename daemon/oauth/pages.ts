/**
 * The OAuth pages, rendered on the server as plain HTML (no script, no build step): sign-in, consent, the code of an
 * out-of-band client, errors. Every value is escaped; every form carries the CSRF token and the authorization
 * request's parameters as hidden fields.
 */

/** The authorization request's parameters carried from page to page. */
export const AUTHORIZE_FIELDS = ['client_id', 'redirect_uri', 'response_type', 'state', 'scope', 'code_challenge', 'code_challenge_method'] as const;
/** An authorization request's parameters (only those given). */
export type AuthorizeParams = Partial<Record<(typeof AUTHORIZE_FIELDS)[number], string>>;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** HTML-escape a text for element content or a quoted attribute. */
export const esc = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)} · Gantry</title>
<link rel="stylesheet" href="assets/oauth.css">
</head>
<body>
<main class="card" aria-labelledby="title">
<p class="brand" aria-hidden="true"><span class="mark">G</span> Gantry</p>
${body}
</main>
</body>
</html>
`;
}

function hidden(params: AuthorizeParams, csrf: string): string {
  const fields = AUTHORIZE_FIELDS.filter((k) => params[k] !== undefined).map((k) => `<input type="hidden" name="${k}" value="${esc(params[k]!)}">`);
  return [`<input type="hidden" name="authenticity_token" value="${esc(csrf)}">`, ...fields].join('\n');
}

/** The sign-in page (username or email and password); `error` is shown above the form, `disabled` replaces it. */
export function signInPage(o: { params: AuthorizeParams; csrf: string; appName: string | null; login?: string; error?: string; disabled?: boolean }): string {
  const intro = o.appName
    ? `<p class="lead">Sign in to continue to <strong>${esc(o.appName)}</strong>.</p>`
    : '<p class="lead">Sign in to your Gantry account.</p>';
  if (o.disabled) {
    return layout('Sign in', `<h1 id="title">Sign in</h1>
${intro}
<p class="alert" role="alert">Signing in with a password is turned off on this server (the <code>signin_enabled</code> setting). Ask an administrator to turn it on, or use a personal access token.</p>`);
  }
  const error = o.error ? `<p class="alert" role="alert" id="signin-error">${esc(o.error)}</p>` : '';
  const described = o.error ? ' aria-describedby="signin-error" aria-invalid="true"' : '';
  return layout('Sign in', `<h1 id="title">Sign in</h1>
${intro}
${error}
<form method="post" action="sign_in" class="stack">
${hidden(o.params, o.csrf)}
<label for="login">Username or email</label>
<input id="login" name="login" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus value="${esc(o.login ?? '')}"${described}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described}>
<button type="submit" class="primary">Sign in</button>
</form>`);
}

/** The consent page: which application, as whom, with which access; Authorize or Deny. */
export function consentPage(o: {
  params: AuthorizeParams; csrf: string; appName: string; owner: string | null; redirectHost: string; user: { name: string; username: string };
  scopes: { name: string; description: string }[];
}): string {
  const by = o.owner ? ` <span class="muted">(registered by ${esc(o.owner)})</span>` : '';
  const scopes = o.scopes.map((s) => `<li><strong>${esc(s.name)}</strong>: ${esc(s.description)}</li>`).join('\n');
  return layout(`Authorize ${o.appName}`, `<h1 id="title">Authorize <span class="app">${esc(o.appName)}</span>?</h1>
<p class="lead"><strong>${esc(o.appName)}</strong>${by} wants to use your Gantry account <strong>@${esc(o.user.username)}</strong>.</p>
<section aria-labelledby="scopes-title">
<h2 id="scopes-title">It will be able to</h2>
<ul class="scopes">
${scopes}
</ul>
</section>
<p class="muted">You will be sent back to <strong>${esc(o.redirectHost)}</strong>. Authorize only applications you trust.</p>
<form method="post" action="authorize" class="actions">
${hidden(o.params, o.csrf)}
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
<button type="submit" name="decision" value="authorize" class="primary">Authorize</button>
</form>
<form method="post" action="sign_out" class="signout">
${hidden(o.params, o.csrf)}
<p class="muted">Signed in as ${esc(o.user.name)} (@${esc(o.user.username)}). <button type="submit" class="link">Not you? Sign out</button></p>
</form>`);
}

/** The page of an out-of-band client (`urn:ietf:wg:oauth:2.0:oob`): the code to copy, or the error. */
export function codePage(o: { appName: string; code?: string; error?: string }): string {
  if (o.error) {
    return layout('Authorization refused', `<h1 id="title">Authorization refused</h1>
<p class="alert" role="alert">${esc(o.error)}</p>
<p class="muted">You can close this page and go back to ${esc(o.appName)}.</p>`);
  }
  return layout('Authorization code', `<h1 id="title">Authorization code</h1>
<p class="lead">Copy this code and paste it into <strong>${esc(o.appName)}</strong>. It works once, within 10 minutes.</p>
<p><label for="code">Code</label></p>
<input id="code" class="code" type="text" readonly value="${esc(o.code!)}">`);
}

/** An error page: what went wrong and what to do next. */
export function errorPage(title: string, message: string): string {
  return layout(title, `<h1 id="title">${esc(title)}</h1>
<p class="alert" role="alert">${esc(message)}</p>`);
}

/** The page after signing out without an authorization request to go back to. */
export function signedOutPage(): string {
  return layout('Signed out', `<h1 id="title">Signed out</h1>
<p class="lead">You are signed out of Gantry in this browser. You can close this page.</p>`);
}
