/**
 * `gantry login --web`: sign in through the browser as an OAuth native app (RFC 8252) with PKCE (RFC 7636). A listener
 * on 127.0.0.1 (a free port) receives the redirect with the code, which is traded at /oauth/token for the built-in
 * application `gantry-cli`; the tokens go into the profile. No password passes through the CLI. Loaded only by
 * `gantry login --web`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpClient } from '../shared/http.js';
import { authHeaders, toCliError } from './client.js';
import { CliError } from './errors.js';
import type { IO } from './io.js';
import { CLI_CLIENT_ID, OAuthError, oauthProfileFields, requestToken, type TokenAnswer } from './oauth.js';
import { configFile, keptOnLogin, loadConfig, saveConfig } from './profiles.js';

/** How `gantry login --web` runs. */
export interface WebLoginOptions {
  /** The server (normalised: no trailing slash). */
  url: string;
  /** The profile the tokens are saved in (it becomes the active one). */
  profile: string;
  /** Try to open a browser (false with --no-browser). */
  browser: boolean;
  /** How long to wait for the browser sign-in. */
  timeoutMs: number;
}

/** A PKCE verifier and its S256 challenge (RFC 7636 4.1, 4.2). */
export interface PkcePair {
  verifier: string;
  challenge: string;
}

/** The S256 code challenge of a verifier: its SHA-256, base64url without padding. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** A new PKCE pair: 32 random bytes as a 43-character base64url verifier, and its S256 challenge. */
export function pkcePair(): PkcePair {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256(verifier) };
}

/** The /oauth/authorize URL for the CLI's application: code flow, loopback redirect, state, S256 challenge. */
export function authorizeUrl(serverUrl: string, redirectUri: string, state: string, challenge: string): string {
  const q = new URLSearchParams({
    client_id: CLI_CLIENT_ID, redirect_uri: redirectUri, response_type: 'code', state, code_challenge: challenge, code_challenge_method: 'S256',
  });
  return `${serverUrl}/oauth/authorize?${q}`;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Answers written to the browser, so the listener closes only once they are sent. */
const writing = new Set<Promise<void>>();

/** The small page the browser shows after the redirect. */
function page(res: ServerResponse, status: number, title: string, text: string): void {
  const sent = new Promise<void>((resolve) => res.once('close', resolve));
  writing.add(sent);
  void sent.then(() => writing.delete(sent));
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - Gantry CLI</title>
<style>body{font-family:system-ui,sans-serif;color:#1f2328;background:#f6f8fa;margin:0}main{max-width:30rem;margin:15vh auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1.5rem 2rem;line-height:1.5}h1{font-size:1.4rem;margin-top:0}</style>
</head><body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></main></body></html>
`);
}

/** What the redirect brought: a code (the browser waits for the answer page), or the server's error. */
type Callback = { code: string; res: ServerResponse };

/** The message and hint for an error the authorization server redirected with (RFC 6749 4.1.2.1). */
export function callbackError(error: string, description: string | null): CliError {
  if (error === 'access_denied') {
    return new CliError('the sign-in was denied in the browser (access_denied)', 'run `gantry login --web` again and choose Authorize');
  }
  return new CliError(`the server refused the sign-in: ${error}${description ? ` (${description})` : ''}`, 'run `gantry login --web` again; if it happens again, the server\'s log has the details');
}

/**
 * Serve the loopback redirect: resolves with the first code whose state matches, rejects on an error redirect.
 * Answers with the wrong state are refused (400) and waiting goes on: they do not belong to this sign-in.
 */
function awaitCallback(io: IO, server: Server, state: string): Promise<Callback> {
  return new Promise((resolve, reject) => {
    let settled = false;
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (u.pathname !== '/callback') return page(res, 404, 'Not found', 'This address only receives the Gantry sign-in.');
      if (req.method !== 'GET') return page(res, 405, 'Method not allowed', 'This address only receives the Gantry sign-in.');
      if (settled) return page(res, 410, 'Sign-in finished', 'This sign-in has finished already; you can close this tab.');
      const q = u.searchParams;
      if (q.get('state') !== state) {
        io.err('Refused an answer to the sign-in address whose state does not match this login (still waiting).\n');
        return page(res, 400, 'Sign-in refused', 'This answer does not belong to the sign-in gantry is waiting for (the state does not match). Nothing was done; start the sign-in again from `gantry login --web`.');
      }
      const error = q.get('error');
      const code = q.get('code');
      settled = true;
      if (error) {
        const e = callbackError(error, q.get('error_description'));
        page(res, 400, error === 'access_denied' ? 'Sign-in denied' : 'Sign-in failed', `${e.message}. You can close this tab; ${e.hint}.`);
        return reject(e);
      }
      if (!code) {
        page(res, 400, 'Sign-in failed', 'The answer had no code. You can close this tab and run `gantry login --web` again.');
        return reject(new CliError('the server redirected without a code', 'run `gantry login --web` again'));
      }
      resolve({ code, res });
    });
  });
}

/** Reject after `ms` with a clear message (the timer does not keep the process alive). */
function timeout(ms: number, url: string): { promise: Promise<never>; cancel(): void } {
  let timer: NodeJS.Timeout;
  const promise = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const s = Math.round(ms / 1000);
      const span = s >= 60 && s % 60 === 0 ? `${s / 60} minute${s === 60 ? '' : 's'}` : `${s} second${s === 1 ? '' : 's'}`;
      reject(new CliError(`no sign-in arrived from the browser within ${span}`, `run \`gantry login --web --url ${url}\` again and finish the sign-in in the browser (--timeout <seconds> gives more time)`));
    }, ms);
    timer.unref();
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Run the browser sign-in and save the tokens in the profile. */
export async function webLogin(io: IO, o: WebLoginOptions): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new CliError(`cannot listen on 127.0.0.1 for the sign-in: ${e.code ?? e.message}`, 'log in with a token instead: `gantry login --token-stdin`')));
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const limit = timeout(o.timeoutMs, o.url);
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    const state = randomBytes(16).toString('base64url');
    const pkce = pkcePair();
    const callback = awaitCallback(io, server, state);
    callback.catch(() => undefined); // rejected while racing the timeout: handled by the race below
    const url = authorizeUrl(o.url, redirectUri, state, pkce.challenge);

    let opened = false;
    if (o.browser && io.stdoutIsTTY) {
      const { openBrowser } = await import('./open-browser.js');
      const failed = await openBrowser(io, url);
      if (failed) io.err(`Could not open a browser (${failed}).\n`);
      else {
        opened = true;
        io.err(`Opened ${o.url}/oauth/authorize in your browser; if no page appeared, open the URL below.\n`);
      }
    }
    if (!opened) io.err('Open this URL in a browser to sign in:\n');
    io.out(`${url}\n`);
    io.err('Waiting for the browser sign-in... (Ctrl-C to give up)\n');

    const { code, res } = await Promise.race([callback, limit.promise]);
    let answer: TokenAnswer;
    let username: string;
    try {
      answer = await requestToken(o.url, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: CLI_CLIENT_ID, code_verifier: pkce.verifier });
      username = await whoAmI(o.url, answer.access_token);
    } catch (e) {
      const err = e instanceof OAuthError ? new CliError(e.message, 'run `gantry login --web` again (a code works once and for 10 minutes)') : e;
      page(res, 400, 'Sign-in failed', `${(err as Error).message}. You can close this tab and look at the terminal.`);
      throw err;
    }
    const config = loadConfig(io.env);
    config.profiles[o.profile] = { ...keptOnLogin(config.profiles[o.profile]), url: o.url, username, ...oauthProfileFields(answer) };
    config.active = o.profile;
    saveConfig(io.env, config);
    page(res, 200, 'Signed in', `Gantry CLI is signed in to ${o.url} as ${username}. You can close this tab.`);
    io.err(`Logged in to ${o.url} as ${username} with the browser (profile "${o.profile}", saved in ${configFile(io.env)}).\n`);
  } finally {
    limit.cancel();
    server.close();
    await Promise.race([Promise.all(writing), new Promise((r) => setTimeout(r, 2000).unref())]);
    server.closeAllConnections();
  }
}

/** The user name of an access token (GET /user). */
async function whoAmI(url: string, token: string): Promise<string> {
  const http = new HttpClient({ baseUrl: `${url}/api/v3` });
  try {
    return (await http.request<{ username: string }>('GET', '/user', { headers: authHeaders({ url, token, profile: null, oauth: { refreshToken: null, expiresAt: null } }) })).data.username;
  } catch (e) {
    throw toCliError(e, url);
  } finally {
    await http.close();
  }
}
