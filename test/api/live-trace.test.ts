/**
 * Live build trace over WebSocket (/-/live/builds/:id/trace): existing trace, appended parts, rewrites, final status, auth
 * (private and personal tokens, OAuth access tokens as Bearer header or access_token param, sudo, as the API).
 */
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../daemon/secrets.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeProject } from '../helpers/fixtures.js';
import { tokenRequest } from '../helpers/oauth.js';
import { ci, claim, exec, insertBuild, insertPipeline, registerRunner } from '../helpers/runner-fixtures.js';

let s: TestServer;
let owner: TestUser;
let reporter: TestUser;
let guest: TestUser;
let outsider: TestUser;
let projectId: number;
let runner: { id: number; token: string };
let port: number;

beforeAll(async () => {
  s = await startTestServer();
  [owner, reporter, guest, outsider] = await Promise.all([s.user('lowner'), s.user('lreporter'), s.user('lguest'), s.user('loutsider')]);
  projectId = (await makeProject(s, owner, 'live', { visibility: 0 })).id;
  await addMemberAsync(s.ctx, { type: 'Project', id: projectId }, reporter.id, 20);
  await addMemberAsync(s.ctx, { type: 'Project', id: projectId }, guest.id, 10);
  runner = await registerRunner(s, {});
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  port = (s.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

async function running(): Promise<{ id: number; token: string }> {
  await insertBuild(s, projectId, await insertPipeline(s, projectId));
  const b = await claim(s, runner.token);
  return { id: b.id, token: b.token };
}

const patch = (b: { id: number; token: string }, start: number, text: string) =>
  ci(s, 'PATCH', `/builds/${b.id}/trace.txt`, text, { 'content-type': 'text/plain', 'build-token': b.token, 'content-range': `${start}-${start + Buffer.byteLength(text)}` });

/** A follower that records every message; `until(pred)` waits for a condition on what arrived. */
function follow(buildId: number, token: string | null) {
  const url = `ws://127.0.0.1:${port}/-/live/builds/${buildId}/trace${token ? `?private_token=${token}` : ''}`;
  const ws = new WebSocket(url);
  const events: ({ kind: 'json'; msg: Record<string, unknown> } | { kind: 'bytes'; data: Buffer })[] = [];
  let closeCode: number | null = null;
  const waiters: (() => void)[] = [];
  const poke = () => waiters.splice(0).forEach((w) => w());
  ws.on('message', (data: Buffer, binary: boolean) => {
    events.push(binary ? { kind: 'bytes', data } : { kind: 'json', msg: JSON.parse(data.toString()) });
    poke();
  });
  ws.on('close', (code) => {
    closeCode = code;
    poke();
  });
  const opened = new Promise<number>((resolve) => {
    ws.on('open', () => resolve(101));
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => resolve(-1));
  });
  const text = () => Buffer.concat(events.flatMap((e) => (e.kind === 'bytes' ? [e.data] : []))).toString();
  const json = () => events.flatMap((e) => (e.kind === 'json' ? [e.msg] : []));
  const until = async (pred: () => boolean, ms = 5000) => {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(json())} / ${JSON.stringify(text())}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 50);
      });
    }
  };
  return { ws, events, opened, text, json, until, closed: () => closeCode };
}

/** Try the upgrade with a query string and headers: the status (101 opened, else the refusal's) and the refusal's body. */
function attempt(buildId: number, query: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/-/live/builds/${buildId}/trace${query ? `?${query}` : ''}`, { headers });
  return new Promise((resolve) => {
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101, body: null });
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.on('error', () => resolve({ status: -1, body: null }));
  });
}

/** An OAuth access token of `username` (password grant, no client). */
const oauthToken = async (username: string, password = 'password123') =>
  (await tokenRequest(s, { grant_type: 'password', username, password })).body.access_token as string;

describe('live trace WebSocket', () => {
  it('sends the status and the stored trace, then appended parts, then the final status and closes', async () => {
    const b = await running();
    await patch(b, 0, 'first\n');
    const f = follow(b.id, owner.token);
    expect(await f.opened).toBe(101);
    await f.until(() => f.text() === 'first\n');
    expect(f.json()[0]).toEqual({ type: 'status', build_id: b.id, status: 'running', trace_size: 6 });
    await patch(b, 6, 'second\n');
    await f.until(() => f.text() === 'first\nsecond\n');
    // the final PUT carries the full trace: only the new tail is sent
    const put = await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success', trace: 'first\nsecond\nthird\n' });
    expect(put.status).toBe(200);
    await f.until(() => f.closed() !== null);
    expect(f.text()).toBe('first\nsecond\nthird\n');
    expect(f.json().at(-1)).toEqual({ type: 'finished', build_id: b.id, status: 'success' });
    expect(f.json().some((m) => m.type === 'reset')).toBe(false);
    expect(f.closed()).toBe(1000);
  });

  it('announces a reset when the trace is rewritten with other content', async () => {
    const b = await running();
    await patch(b, 0, 'partial output');
    const f = follow(b.id, reporter.token);
    await f.until(() => f.text() === 'partial output');
    await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'failed', trace: 'rewritten\n' });
    await f.until(() => f.closed() !== null);
    const seq = f.events.map((e) => (e.kind === 'json' ? e.msg.type : e.data.toString()));
    expect(seq).toEqual(['status', 'partial output', 'reset', 'rewritten\n', 'finished']);
    expect(f.json().at(-1)).toMatchObject({ status: 'failed' });
  });

  it('ends with canceled when the build is canceled', async () => {
    const b = await running();
    const f = follow(b.id, owner.token);
    await f.until(() => f.json().length === 1);
    expect(f.text()).toBe('');
    await s.api('POST', `/projects/${projectId}/builds/${b.id}/cancel`, owner);
    await f.until(() => f.closed() !== null);
    expect(f.json().at(-1)).toEqual({ type: 'finished', build_id: b.id, status: 'canceled' });
  });

  it('serves a finished build at once: status, whole trace, finished', async () => {
    const b = await running();
    await patch(b, 0, 'all done\n');
    await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success' });
    await settleBuildWork(s.ctx);
    const f = follow(b.id, owner.token);
    await f.until(() => f.closed() !== null);
    expect(f.json()).toEqual([
      { type: 'status', build_id: b.id, status: 'success', trace_size: 9 },
      { type: 'finished', build_id: b.id, status: 'success' },
    ]);
    expect(f.text()).toBe('all done\n');
  });

  it('refuses callers: 401 without a valid token, 404 hidden or unknown, 403 without read_build', async () => {
    const b = await running();
    expect(await follow(b.id, null).opened).toBe(401);
    expect(await follow(b.id, 'not-a-token').opened).toBe(401);
    expect(await follow(b.id, outsider.token).opened).toBe(404);
    expect(await follow(b.id, guest.token).opened).toBe(403);
    expect(await follow(99999999, owner.token).opened).toBe(404);
    expect(await follow(b.id, s.root.token).opened).toBe(101);
    // the header works as well as the query parameter
    const viaHeader = new WebSocket(`ws://127.0.0.1:${port}/-/live/builds/${b.id}/trace`, { headers: { 'PRIVATE-TOKEN': reporter.token } });
    expect(await new Promise((r) => { viaHeader.on('open', () => r(101)); viaHeader.on('unexpected-response', (_q, res) => r(res.statusCode)); })).toBe(101);
    viaHeader.close();
    const other = new WebSocket(`ws://127.0.0.1:${port}/-/live/elsewhere`);
    expect(await new Promise((r) => { other.on('unexpected-response', (_q, res) => r(res.statusCode)); other.on('error', () => r(-1)); })).toBe(404);
  });

  it('takes an OAuth access token as the API does: Authorization: Bearer or ?access_token=, with the token owner\'s abilities', async () => {
    const b = await running();
    const t = await oauthToken('lreporter');
    expect((await attempt(b.id, '', { authorization: `Bearer ${t}` })).status).toBe(101);
    expect((await attempt(b.id, `access_token=${t}`)).status).toBe(101);
    // the trace itself streams over an OAuth-authenticated socket
    await patch(b, 0, 'via oauth\n');
    const ws = new WebSocket(`ws://127.0.0.1:${port}/-/live/builds/${b.id}/trace`, { headers: { authorization: `Bearer ${t}` } });
    const got = await new Promise<string>((resolve) => ws.on('message', (data: Buffer, binary: boolean) => { if (binary) resolve(data.toString()); }));
    expect(got).toBe('via oauth\n');
    ws.close();
    // whose token it is decides: a guest 403, an outsider 404, as with private tokens
    expect((await attempt(b.id, '', { authorization: `Bearer ${await oauthToken('lguest')}` })).status).toBe(403);
    expect((await attempt(b.id, `access_token=${await oauthToken('loutsider')}`)).status).toBe(404);
    expect(await attempt(b.id, '', { authorization: `Bearer ${'f'.repeat(64)}` })).toEqual({ status: 401, body: { message: '401 Unauthorized' } });
  });

  it('refuses an expired or a revoked OAuth access token with 401, sent either way', async () => {
    const b = await running();
    const expired = await oauthToken('lreporter');
    expect((await attempt(b.id, `access_token=${expired}`)).status).toBe(101);
    await exec(s, 'UPDATE oauth_access_tokens SET created_at = ? WHERE token_hash = ?', [new Date(Date.now() - 7201 * 1000).toISOString(), hashToken(expired)]);
    expect(await attempt(b.id, `access_token=${expired}`)).toEqual({ status: 401, body: { message: '401 Unauthorized' } });
    expect((await attempt(b.id, '', { authorization: `Bearer ${expired}` })).status).toBe(401);

    const revoked = await oauthToken('lreporter');
    expect((await attempt(b.id, '', { authorization: `Bearer ${revoked}` })).status).toBe(101);
    const r = await s.app.inject({ method: 'POST', url: '/oauth/revoke', payload: { token: revoked } });
    expect(r.statusCode).toBe(200);
    expect((await attempt(b.id, '', { authorization: `Bearer ${revoked}` })).status).toBe(401);
    expect((await attempt(b.id, `access_token=${revoked}`)).status).toBe(401);
  });

  it('applies sudo as the API does: an admin acts as the user named, others get the API\'s 403', async () => {
    const b = await running();
    const root = await oauthToken('root', 'rootpassword123');
    expect((await attempt(b.id, 'sudo=lreporter', { authorization: `Bearer ${root}` })).status).toBe(101);
    expect((await attempt(b.id, `access_token=${root}&sudo=lguest`)).status).toBe(403); // the guest's abilities
    expect((await attempt(b.id, `private_token=${s.root.token}`, { sudo: 'loutsider' })).status).toBe(404);
    expect(await attempt(b.id, 'sudo=nobody-here', { authorization: `Bearer ${root}` }))
      .toEqual({ status: 404, body: { message: '404 Not Found: No user id or username for: nobody-here' } });
    expect(await attempt(b.id, `access_token=${await oauthToken('lreporter')}&sudo=lowner`))
      .toEqual({ status: 403, body: { message: '403 Forbidden - Must be admin to use sudo' } });
  });
});
