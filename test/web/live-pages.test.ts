/**
 * Live pages (issue 24 item 3): a running build's page carries the one script file and the live trace's address
 * (CSP script-src 'self', no inline script), the /-/live WebSocket takes the page's session cookie from the same
 * origin only (never from another site's page), anonymous readers follow public builds, and the pipeline page's
 * status answer (status.json) follows the API's read_pipeline.
 */
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeProject } from '../helpers/fixtures.js';
import { ci, claim, insertBuild, insertPipeline, registerRunner } from '../helpers/runner-fixtures.js';
import { signIn } from '../helpers/web.js';

let s: TestServer;
let owner: TestUser;
let reporter: TestUser;
let guest: TestUser;
let outsider: TestUser;
let priv: { id: number; web_url: string; path_with_namespace: string };
let pub: { id: number; web_url: string; path_with_namespace: string };
let runner: { id: number; token: string };
let port: number;
const cookies: Record<string, string> = {};

beforeAll(async () => {
  s = await startTestServer({ signinMaxFailures: '1000' });
  [owner, reporter, guest, outsider] = await Promise.all([s.user('liveowner'), s.user('livereporter'), s.user('liveguest'), s.user('liveoutsider')]);
  priv = (await makeProject(s, owner, 'live-page', { visibility: 0 })) as typeof priv;
  pub = (await makeProject(s, owner, 'live-public', { visibility: 20 })) as typeof pub;
  await addMemberAsync(s.ctx, { type: 'Project', id: priv.id }, reporter.id, 20);
  await addMemberAsync(s.ctx, { type: 'Project', id: priv.id }, guest.id, 10);
  for (const u of [owner, reporter, guest, outsider]) {
    await s.api('PUT', `/users/${u.id}`, s.root, { password: 'password123' });
    cookies[u.username] = (await signIn(s, u)).header();
  }
  runner = await registerRunner(s, {});
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  port = (s.app.server.address() as AddressInfo).port;
}, 60_000);
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

/** A running build of a project (claimed by the runner) and its pipeline. */
async function running(projectId: number): Promise<{ id: number; token: string; pipelineId: number }> {
  const pipelineId = await insertPipeline(s, projectId);
  await insertBuild(s, projectId, pipelineId);
  const b = await claim(s, runner.token);
  return { id: b.id, token: b.token, pipelineId };
}

const patch = (b: { id: number; token: string }, start: number, text: string) =>
  ci(s, 'PATCH', `/builds/${b.id}/trace.txt`, text, { 'content-type': 'text/plain', 'build-token': b.token, 'content-range': `${start}-${start + Buffer.byteLength(text)}` });

const get = (url: string, who: TestUser | null) =>
  s.app.inject({ method: 'GET', url: url.replace(/^https?:\/\/[^/]+/, ''), headers: who ? { cookie: cookies[who.username]! } : {} });

/** Open the live trace as a browser page would: the given headers (cookie, origin); resolves with what arrived until close or `ms`. */
function openLive(buildId: number, headers: Record<string, string>) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/-/live/builds/${buildId}/trace`, { headers });
  const frames: (string | Buffer)[] = [];
  ws.on('message', (data: Buffer, binary: boolean) => frames.push(binary ? data : data.toString()));
  const status = new Promise<number>((resolve) => {
    ws.on('open', () => resolve(101));
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => resolve(-1));
  });
  const text = () => Buffer.concat(frames.filter((f): f is Buffer => typeof f !== 'string')).toString();
  const until = async (pred: () => boolean) => {
    for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 25));
    if (!pred()) throw new Error(`timed out: ${JSON.stringify(frames.map(String))}`);
  };
  return { ws, status, text, until, frames };
}
const self = () => `http://127.0.0.1:${port}`;

describe('the build page of a running build', () => {
  it('carries the live trace address and the one script file, with script-src self and no inline script', async () => {
    const b = await running(priv.id);
    await patch(b, 0, 'hello\n');
    const r = await get(`${priv.web_url}/builds/${b.id}`, reporter);
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain(`data-live-trace="/-/live/builds/${b.id}/trace"`);
    expect(r.body).toContain('<script src="/-/assets/live.js" defer></script>');
    expect(r.body.match(/<script/g)).toHaveLength(1);
    expect(r.body).toContain('data-status-of="build"');
    // no secret in the page: the build's token, the reader's API token or its session
    expect(r.body).not.toContain(b.token);
    expect(r.body).not.toContain(reporter.token);
    expect(r.body).not.toContain(cookies[reporter.username]!.split('=')[1]!);
    expect(r.headers['content-security-policy']).toContain("script-src 'self'; connect-src 'self'");
    expect(r.headers['content-security-policy']).not.toContain('unsafe-inline');
    const js = await s.app.inject({ method: 'GET', url: '/-/assets/live.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body).toContain('data-live-trace');
    await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success', trace: 'hello\n' });
    // finished: no script, the strict CSP again
    const done = await get(`${priv.web_url}/builds/${b.id}`, reporter);
    expect(done.body).not.toContain('<script');
    expect(done.body).not.toContain('data-live-trace');
    expect(done.headers['content-security-policy']).not.toContain('script-src');
  });
});

describe('the live trace WebSocket and the page session', () => {
  it('a same-origin page with a session cookie follows the trace to its end', async () => {
    const b = await running(priv.id);
    await patch(b, 0, 'first\n');
    const f = openLive(b.id, { cookie: cookies[reporter.username]!, origin: self() });
    expect(await f.status).toBe(101);
    await f.until(() => f.text() === 'first\n');
    await patch(b, 6, 'second\n');
    await f.until(() => f.text() === 'first\nsecond\n');
    await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'failed', trace: 'first\nsecond\n' });
    await f.until(() => f.frames.some((m) => typeof m === 'string' && m.includes('"finished"')));
    expect(f.frames.at(-1)).toBe(JSON.stringify({ type: 'finished', build_id: b.id, status: 'failed' }));
  });

  it('the cookie counts only from a page of this site: another origin, or none, is a 401', async () => {
    const b = await running(priv.id);
    for (const headers of [
      { cookie: cookies[reporter.username]!, origin: 'https://evil.test' },
      { cookie: cookies[reporter.username]! },
      { cookie: cookies[reporter.username]!, origin: 'null' },
    ]) expect(await openLive(b.id, headers).status).toBe(401);
    // and the API's ways still work alongside
    expect(await openLive(b.id, { 'private-token': reporter.token }).status).toBe(101);
    await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success', trace: '' });
  });

  it('answers as the pages do: a guest 403, an outsider 404, a signed-out session and an anonymous reader of a private project 401', async () => {
    const b = await running(priv.id);
    expect(await openLive(b.id, { cookie: cookies[guest.username]!, origin: self() }).status).toBe(403);
    expect(await openLive(b.id, { cookie: cookies[outsider.username]!, origin: self() }).status).toBe(404);
    expect(await openLive(b.id, { cookie: 'gantry_session=not-a-session', origin: self() }).status).toBe(401);
    expect(await openLive(b.id, { origin: self() }).status).toBe(401);
    await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success', trace: '' });
  });

  it('an anonymous page follows a public project\'s public build; not when its builds are not public', async () => {
    const b = await running(pub.id);
    await patch(b, 0, 'public output\n');
    const page = await get(`${pub.web_url}/builds/${b.id}`, null);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-live-trace');
    const f = openLive(b.id, { origin: self() });
    expect(await f.status).toBe(101);
    await f.until(() => f.text() === 'public output\n');
    f.ws.close();
    await s.api('PUT', `/projects/${pub.id}`, owner, { public_builds: false });
    try {
      expect(await openLive(b.id, { origin: self() }).status).toBe(401);
    } finally {
      await s.api('PUT', `/projects/${pub.id}`, owner, { public_builds: true });
    }
    await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success', trace: '' });
  });
});

describe('the pipeline page and its status answer', () => {
  it('a running pipeline\'s page names its status answer; the answer has the statuses the API has', async () => {
    const b = await running(priv.id);
    const r = await get(`${priv.web_url}/pipelines/${b.pipelineId}`, reporter);
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain(`data-status-url="/${priv.path_with_namespace}/pipelines/${b.pipelineId}/status.json"`);
    expect(r.body).toContain(`data-status-of="build-${b.id}"`);
    expect(r.body).toContain('<script src="/-/assets/live.js" defer></script>');
    const url = `${priv.web_url}/pipelines/${b.pipelineId}/status.json`;
    const before = await get(url, reporter);
    expect(before.statusCode).toBe(200);
    const api = await s.api('GET', `/projects/${priv.id}/pipelines/${b.pipelineId}`, reporter);
    expect(before.json()).toMatchObject({ id: b.pipelineId, status: api.body.status, builds: [{ id: b.id, status: 'running' }] });
    await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success', trace: '' });
    const after = (await get(url, reporter)).json();
    expect(after.builds[0].status).toBe('success');
    expect(after.status).toBe((await s.api('GET', `/projects/${priv.id}/pipelines/${b.pipelineId}`, reporter)).body.status);
    // finished: the page no longer polls
    expect((await get(`${priv.web_url}/pipelines/${b.pipelineId}`, reporter)).body).not.toContain('data-status-url');
  });

  it('the status answer is refused as the page is: guest 403, outsider 404, anonymous to sign in, unknown id 404', async () => {
    const pipelineId = await insertPipeline(s, priv.id);
    const url = `${priv.web_url}/pipelines/${pipelineId}/status.json`;
    expect((await get(url, guest)).statusCode).toBe(403);
    expect((await get(url, outsider)).statusCode).toBe(404);
    expect((await get(url, null)).statusCode).toBe(302);
    expect((await get(`${priv.web_url}/pipelines/99999999999/status.json`, reporter)).statusCode).toBe(404);
  });
});
