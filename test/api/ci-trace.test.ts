/** Incremental trace: PATCH /ci/api/v1/builds/:id/trace.txt (Content-Range, 202/416 with Range, Build-Status). */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { buildRow, ci, claim, exec, insertBuild, insertPipeline, projectRunnersToken, registerRunner } from '../helpers/runner-fixtures.js';
import { appendTrace, onTraceAppend, readTrace, removeTrace, replaceTrace, traceLength, tracePath, type TraceEvent } from '../../daemon/services/ci/traces.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let owner: TestUser;
let projectId: number;
let runner: { id: number; token: string };

beforeAll(async () => {
  s = await startTestServer();
  owner = await s.user('towner');
  projectId = (await makeProject(s, owner, 'traced')).id;
  runner = await registerRunner(s, {});
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

/** A new running build claimed by the runner: {id, token}. */
async function running(): Promise<{ id: number; token: string }> {
  const pipeline = await insertPipeline(s, projectId);
  await insertBuild(s, projectId, pipeline);
  const b = await claim(s, runner.token);
  return { id: b.id, token: b.token };
}

const patch = (id: number, range: string | null, body: string | Buffer, headers: Record<string, string> = {}) =>
  ci(s, 'PATCH', `/builds/${id}/trace.txt`, body, { 'content-type': 'text/plain', ...(range === null ? {} : { 'content-range': range }), ...headers });

describe('PATCH /ci/api/v1/builds/:id/trace.txt', () => {
  it('appends parts in order: 202 with Build-Status and Range 0-<length>, stored and counted', async () => {
    const b = await running();
    const first = await patch(b.id, '0-6', 'hello\n', { 'build-token': b.token });
    expect(first.status).toBe(202);
    expect(first.headers['build-status']).toBe('running');
    expect(first.headers.range).toBe('0-6');
    expect(first.raw.length).toBe(0);
    const second = await patch(b.id, '6-12', 'world\n', { 'build-token': b.token });
    expect(second.status).toBe(202);
    expect(second.headers.range).toBe('0-12');
    expect((await buildRow(s, b.id)).trace_size).toBe(12);
    expect(readFileSync(tracePath(s.ctx, { id: b.id, projectId }), 'utf8')).toBe('hello\nworld\n');
  });

  it('answers 416 with Range 0-<current length> for a part that does not start at the end; the runner resyncs', async () => {
    const b = await running();
    await patch(b.id, '0-4', 'abcd', { 'build-token': b.token });
    const ahead = await patch(b.id, '10-12', 'zz', { 'build-token': b.token });
    expect(ahead.status).toBe(416);
    expect(ahead.headers.range).toBe('0-4');
    expect(ahead.body).toEqual({ message: '416 Range Not Satisfiable' });
    expect(ahead.headers['content-type']).toBe('application/json');
    const behind = await patch(b.id, '2-6', 'cdef', { 'build-token': b.token });
    expect(behind.status).toBe(416);
    expect(behind.headers.range).toBe('0-4');
    // resend from the length the server reported
    const resync = await patch(b.id, '4-6', 'ef', { 'build-token': b.token });
    expect(resync.status).toBe(202);
    expect(resync.headers.range).toBe('0-6');
    expect((await readTrace(s.ctx, { id: b.id, projectId }))!.toString()).toBe('abcdef');
  });

  it('accepts an empty keep-alive part (N-N) and keeps bytes exactly, whatever the Content-Type', async () => {
    const b = await running();
    const bytes = Buffer.from([0xe2, 0x82, 0xff, 0x00, 0x1b, 0x5b, 0x33, 0x32, 0x6d]);
    expect((await patch(b.id, `0-${bytes.length}`, bytes, { 'build-token': b.token, 'content-type': 'application/octet-stream' })).status).toBe(202);
    const empty = await patch(b.id, `${bytes.length}-${bytes.length}`, '', { 'build-token': b.token });
    expect(empty.status).toBe(202);
    expect(empty.headers.range).toBe(`0-${bytes.length}`);
    const json = await patch(b.id, `${bytes.length}-${bytes.length + 2}`, '{}', { 'build-token': b.token, 'content-type': 'application/json' });
    expect(json.status).toBe(202);
    expect((await readTrace(s.ctx, { id: b.id, projectId }))!).toEqual(Buffer.concat([bytes, Buffer.from('{}')]));
    // a "bytes " prefix and a /total are tolerated
    expect((await patch(b.id, `bytes ${bytes.length + 2}-${bytes.length + 3}/*`, 'x', { 'build-token': b.token })).status).toBe(202);
  });

  it('masks the build token and the runners token in parts (same length)', async () => {
    const b = await running();
    const rt = await projectRunnersToken(s, projectId);
    const text = `t=${b.token} r=${rt}\n`;
    const r = await patch(b.id, `0-${text.length}`, text, { 'build-token': b.token });
    expect(r.status).toBe(202);
    expect((await readTrace(s.ctx, { id: b.id, projectId }))!.toString()).toBe(`t=${'x'.repeat(b.token.length)} r=${'x'.repeat(rt.length)}\n`);
  });

  it('accepts the token as a param, the runner token and the project runners token', async () => {
    const b = await running();
    expect((await ci(s, 'PATCH', `/builds/${b.id}/trace.txt?token=${b.token}`, 'a', { 'content-range': '0-1' })).status).toBe(202);
    expect((await patch(b.id, '1-2', 'b', { 'build-token': runner.token })).status).toBe(202);
    expect((await patch(b.id, '2-3', 'c', { 'build-token': await projectRunnersToken(s, projectId) })).status).toBe(202);
  });

  it('answers 400 without Content-Range, 400 for a malformed one, 403 for a bad token, 404 for an unknown build', async () => {
    const b = await running();
    const missing = await patch(b.id, null, 'x', { 'build-token': b.token });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: '400 (Bad request) "Content-Range" not given' });
    expect((await patch(b.id, 'abc', 'x', { 'build-token': b.token })).status).toBe(400);
    const bad = await patch(b.id, '0-1', 'x', { 'build-token': 'wrong' });
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual({ message: '403 Forbidden' });
    expect((await patch(b.id, '0-1', 'x')).status).toBe(403);
    expect((await patch(99999999, '0-1', 'x', { 'build-token': b.token })).status).toBe(404);
    // another build's token does not work
    const other = await running();
    expect((await patch(b.id, '0-1', 'x', { 'build-token': other.token })).status).toBe(403);
    expect((await buildRow(s, b.id)).trace_size).toBe(0);
  });

  it('tells the runner to stop once the build is canceled: 403 with Build-Status canceled, nothing appended', async () => {
    const b = await running();
    await patch(b.id, '0-3', 'abc', { 'build-token': b.token });
    const cancel = await s.api('POST', `/projects/${projectId}/builds/${b.id}/cancel`, owner);
    expect(cancel.status).toBeLessThan(300);
    const r = await patch(b.id, '3-6', 'def', { 'build-token': b.token });
    expect(r.status).toBe(403);
    expect(r.headers['build-status']).toBe('canceled');
    expect(r.headers.range).toBe('0-3');
    expect(r.body).toEqual({ message: '403 Forbidden - Build is not running!' });
    expect((await buildRow(s, b.id)).trace_size).toBe(3);
  });

  it('refuses erased builds', async () => {
    const b = await running();
    await exec(s, `UPDATE commit_statuses SET erased_at = '2001-01-01T00:00:00.000Z' WHERE id = ?`, [b.id]);
    const r = await patch(b.id, '0-1', 'x', { 'build-token': b.token });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ message: '403 Forbidden - Build has been erased!' });
  });
});

describe('services/traces', () => {
  it('appendTrace only writes at the current length; replaceTrace and removeTrace keep trace_size; listeners hear every change', async () => {
    const b = await running();
    const build = { id: b.id, projectId };
    const events: TraceEvent[] = [];
    const off = onTraceAppend(s.ctx, b.id, (e) => events.push(e));
    expect(await appendTrace(s.ctx, build, 0, Buffer.from('ab'))).toEqual({ ok: true, length: 2 });
    expect(await appendTrace(s.ctx, build, 1, Buffer.from('zz'))).toEqual({ ok: false, length: 2 });
    expect(traceLength(s.ctx, build)).toBe(2);
    await replaceTrace(s.ctx, build, 'full trace');
    expect((await buildRow(s, b.id)).trace_size).toBe(10);
    off();
    await appendTrace(s.ctx, build, 10, Buffer.from('!'));
    expect(events.map((e) => [e.offset, e.data.toString(), e.replaced])).toEqual([[0, 'ab', false], [0, 'full trace', true]]);
    await removeTrace(s.ctx, build);
    expect(await readTrace(s.ctx, build)).toBeNull();
    expect((await buildRow(s, b.id)).trace_size).toBe(0);
  });
});
