/** Live build trace over WebSocket (/-/live/builds/:id/trace): existing trace, appended parts, rewrites, final status, auth. */
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleBuildWork } from '../../daemon/services/builds.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMember, makeProject } from '../helpers/fixtures.js';
import { ci, claim, insertBuild, insertPipeline, registerRunner } from '../helpers/runner-fixtures.js';

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
  addMember(s.ctx, { type: 'Project', id: projectId }, reporter.id, 20);
  addMember(s.ctx, { type: 'Project', id: projectId }, guest.id, 10);
  runner = await registerRunner(s, {});
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  port = (s.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await settleBuildWork();
  await s.close();
});

async function running(): Promise<{ id: number; token: string }> {
  insertBuild(s, projectId, insertPipeline(s, projectId));
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
    await settleBuildWork();
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
});
