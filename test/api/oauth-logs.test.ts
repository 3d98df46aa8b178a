/**
 * No OAuth secret in any log line: codes, access and refresh tokens, client secrets, passwords, PKCE verifiers and
 * CSRF tokens, whether they came in a query string, a form, JSON or a header, on success and on error.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../daemon/app.js';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { browse, CookieJar, csrfOf, makeApplication, pkcePair } from '../helpers/oauth.js';

let s: TestServer;
let logged: FastifyInstance;
const lines: string[] = [];

beforeAll(async () => {
  s = await startTestServer();
  const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  logged = await buildApp(s.ctx, { logger: { loggerInstance: pino({ level: 'trace' }, sink) } });
  await logged.ready();
});
afterAll(async () => {
  await logged.close();
  await s.close();
});

it('logs one line per request and never a secret of the OAuth flows', async () => {
  await s.user('alice');
  const alice = (await s.api('POST', '/session', null, { login: 'alice', password: 'password123' })).body;
  const app = await makeApplication(s, { id: alice.id, username: 'alice', token: alice.private_token });
  const server = { ...s, app: logged } as TestServer;
  const secrets: string[] = ['password123', app.secret];
  const pk = pkcePair();
  secrets.push(pk.verifier);
  const cb = 'https://client.test/cb';
  const q = { client_id: app.application_id, redirect_uri: cb, response_type: 'code', state: 'st', code_challenge: pk.challenge, code_challenge_method: 'S256' };

  // the browser flow
  const jar = new CookieJar();
  const signIn = await browse(server, jar, 'GET', `/oauth/authorize?${new URLSearchParams(q)}`);
  secrets.push(csrfOf(signIn.body));
  await browse(server, jar, 'POST', '/oauth/sign_in', { ...q, login: 'alice', password: 'wrong-password', authenticity_token: csrfOf(signIn.body) });
  await browse(server, jar, 'POST', '/oauth/sign_in', { ...q, login: 'alice', password: 'password123', authenticity_token: csrfOf(signIn.body) });
  secrets.push(jar.get('gantry_session')!);
  const consent = await browse(server, jar, 'GET', `/oauth/authorize?${new URLSearchParams(q)}`);
  secrets.push(csrfOf(consent.body));
  const answer = await browse(server, jar, 'POST', '/oauth/authorize', { ...q, decision: 'authorize', authenticity_token: csrfOf(consent.body) });
  const code = new URL(String(answer.headers.location)).searchParams.get('code')!;
  secrets.push(code);

  // the token endpoint with everything in the query string (the worst case), then in a form and in JSON
  const tokenQs = new URLSearchParams({ grant_type: 'authorization_code', client_id: app.application_id, client_secret: app.secret, code, redirect_uri: cb, code_verifier: pk.verifier });
  const t = (await logged.inject({ method: 'POST', url: `/oauth/token?${tokenQs}` })).json();
  expect(t.access_token).toBeTruthy();
  secrets.push(t.access_token, t.refresh_token);
  await logged.inject({ method: 'POST', url: `/oauth/token?${tokenQs}` }); // a replay (error path)
  const pw = (await logged.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'password', username: 'alice', password: 'password123' } })).json();
  secrets.push(pw.access_token, pw.refresh_token);
  const refreshed = (await logged.inject({
    method: 'POST', url: `/oauth/token?grant_type=refresh_token&refresh_token=${pw.refresh_token}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '',
  })).json();
  secrets.push(refreshed.access_token, refreshed.refresh_token);
  await logged.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json' }, payload: `{"password":"password123","broken` });

  // bearer tokens on the API, token info, revoke, git over HTTP
  await logged.inject({ method: 'GET', url: `/api/v3/user?access_token=${t.access_token}` });
  await logged.inject({ method: 'GET', url: '/api/v3/user', headers: { authorization: `Bearer ${refreshed.access_token}` } });
  await logged.inject({ method: 'GET', url: `/oauth/token/info?access_token=${refreshed.access_token}` });
  await logged.inject({ method: 'POST', url: `/oauth/revoke?token=${refreshed.access_token}&client_secret=${app.secret}&client_id=${app.application_id}` });
  await logged.inject({ method: 'GET', url: `/alice/nothing.git/info/refs?service=git-upload-pack`, headers: { authorization: `Basic ${Buffer.from(`oauth2:${t.access_token}`).toString('base64')}` } });

  const text = lines.join('');
  expect(lines.filter((l) => l.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(14);
  expect(text).toContain('/oauth/token?grant_type=authorization_code');
  for (const secret of secrets) expect(text, `a secret in the log: ${secret.slice(0, 6)}...`).not.toContain(secret);
});
