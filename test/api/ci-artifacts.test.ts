/** Artifacts over the runner API: streamed multipart upload, download with dependency tokens, delete, limits and expiry. */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { buildRow, ci, claim, exec, insertBuild, insertPipeline, projectRunnersToken, registerRunner } from '../helpers/runner-fixtures.js';
import { readMultipart } from '../../daemon/ci-api/multipart.js';
import { artifactsFilePath, removeExpiredArtifacts } from '../../daemon/services/ci/artifacts.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let owner: TestUser;
let projectId: number;
let runner: { id: number; token: string };
let port: number;

const BOUNDARY = 'db01cbf7e1a2';

/** A multipart body with the given parts (file parts have a filename). */
function multipart(parts: { name: string; filename?: string; data: Buffer | string }[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.filename !== undefined ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n`));
    chunks.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

const upload = (id: number, token: string | null, body: Buffer, query = '') =>
  ci(s, 'POST', `/builds/${id}/artifacts${query}`, body, {
    'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...(token ? { 'build-token': token } : {}),
  });

/** Upload with chunked transfer encoding through a real socket (as GitLab Runner does), in pieces of `piece` bytes. */
function chunkedUpload(id: number, token: string, body: Buffer, piece = 65536, query = ''): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1', port, method: 'POST', path: `/ci/api/v1/builds/${id}/artifacts${query}`,
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'build-token': token, 'transfer-encoding': 'chunked' },
    }, (res) => {
      const out: Buffer[] = [];
      res.on('data', (d: Buffer) => out.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(out).toString() }));
    });
    req.on('error', reject);
    let at = 0;
    const pump = () => {
      while (at < body.length) {
        const ok = req.write(body.subarray(at, at + piece));
        at += piece;
        if (!ok) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

async function running(pipelineId?: number, name = 'job'): Promise<{ id: number; token: string; pipeline: number }> {
  const pipeline = pipelineId ?? (await insertPipeline(s, projectId));
  await insertBuild(s, projectId, pipeline, { name });
  const b = await claim(s, runner.token);
  return { id: b.id, token: b.token, pipeline };
}

beforeAll(async () => {
  s = await startTestServer();
  owner = await s.user('aowner');
  projectId = (await makeProject(s, owner, 'artifacted')).id;
  runner = await registerRunner(s, {});
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  port = (s.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

describe('POST /ci/api/v1/builds/:id/artifacts', () => {
  it('stores the file part under its original name, with expire_in from the query: 201 with the build', async () => {
    const b = await running();
    const zip = randomBytes(5000);
    const before = Date.now();
    const r = await upload(b.id, b.token, multipart([{ name: 'file', filename: 'myart.zip', data: zip }]), '?expire_in=1+week');
    expect(r.status).toBe(201);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body).toMatchObject({ id: b.id, status: 'running', artifacts_file: { filename: 'myart.zip', size: 5000 } });
    const expireAt = Date.parse(r.body.artifacts_expire_at);
    expect(expireAt).toBeGreaterThanOrEqual(before + 7 * 86400_000 - 1000);
    expect(expireAt).toBeLessThanOrEqual(Date.now() + 7 * 86400_000 + 1000);
    const row = await buildRow(s, b.id);
    expect(row).toMatchObject({ artifacts_file: 'myart.zip', artifacts_size: 5000 });
    const path = (await artifactsFilePath(s.ctx, { id: b.id, projectId }))!;
    expect(path.endsWith(`/artifacts/${projectId}/${b.id}/myart.zip`)).toBe(true);
    expect(readFileSync(path)).toEqual(zip);
  });

  it('streams a chunked upload (tar.gz, several MB) to disk byte for byte; a second upload replaces the first', async () => {
    const b = await running();
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const body = multipart([{ name: 'other', data: 'field value' }, { name: 'file', filename: 'artifacts.tar.gz', data }]);
    const r = await chunkedUpload(b.id, b.token, body, 7919);
    expect(r.status).toBe(201);
    expect(JSON.parse(r.body).artifacts_file).toEqual({ filename: 'artifacts.tar.gz', size: data.length });
    expect(JSON.parse(r.body).artifacts_expire_at).toBeNull();
    // (Buffer.equals: a deep toEqual over megabytes is very slow)
    expect(readFileSync((await artifactsFilePath(s.ctx, { id: b.id, projectId }))!).equals(data)).toBe(true);
    const again = await upload(b.id, b.token, multipart([{ name: 'file', filename: 'second.zip', data: 'two' }]));
    expect(again.status).toBe(201);
    expect(await buildRow(s, b.id)).toMatchObject({ artifacts_file: 'second.zip', artifacts_size: 3 });
    expect(existsSync((await artifactsFilePath(s.ctx, { id: b.id, projectId }))!.replace('second.zip', 'artifacts.tar.gz'))).toBe(false);
  });

  it('answers 413 for a file at or over max_artifacts_size, storing nothing (streamed and declared)', async () => {
    await exec(s, `UPDATE application_settings SET max_artifacts_size = 1`);
    try {
      const b = await running();
      const exact = await chunkedUpload(b.id, b.token, multipart([{ name: 'file', filename: 'big.zip', data: randomBytes(1024 * 1024) }]));
      expect(exact.status).toBe(413);
      expect(JSON.parse(exact.body)).toEqual({ message: '413 Request Entity Too Large' });
      const declared = await upload(b.id, b.token, multipart([{ name: 'file', filename: 'big.zip', data: randomBytes(3 * 1024 * 1024) }]));
      expect(declared.status).toBe(413);
      expect((await buildRow(s, b.id)).artifacts_file).toBeNull();
      expect(await artifactsFilePath(s.ctx, { id: b.id, projectId })).toBeNull();
      const under = await upload(b.id, b.token, multipart([{ name: 'file', filename: 'ok.zip', data: randomBytes(1024 * 1024 - 1) }]));
      expect(under.status).toBe(201);
    } finally {
      await exec(s, `UPDATE application_settings SET max_artifacts_size = 100`);
    }
  });

  it('answers 400 without a file part or multipart body, and for a bad expire_in', async () => {
    const b = await running();
    const noFile = await upload(b.id, b.token, multipart([{ name: 'expire_in', data: '1 day' }]));
    expect(noFile.status).toBe(400);
    expect(noFile.body).toEqual({ message: '400 (Bad request) "file" not given' });
    const notMultipart = await ci(s, 'POST', `/builds/${b.id}/artifacts`, { file: 'x' }, { 'build-token': b.token });
    expect(notMultipart.status).toBe(400);
    const badExpiry = await upload(b.id, b.token, multipart([{ name: 'file', filename: 'a.zip', data: 'x' }]), '?expire_in=soonish');
    expect(badExpiry.status).toBe(400);
    expect(badExpiry.body).toEqual({ message: '400 (Bad request) "expire_in" is invalid' });
    const truncated = await upload(b.id, b.token, multipart([{ name: 'file', filename: 'a.zip', data: 'abc' }]).subarray(0, 90));
    expect(truncated.status).toBe(400);
    expect((await buildRow(s, b.id)).artifacts_file).toBeNull();
  });

  it('answers 403 for a bad token or a build that is not running, 404 for an unknown build', async () => {
    const b = await running();
    const body = multipart([{ name: 'file', filename: 'a.zip', data: 'x' }]);
    expect((await upload(b.id, 'wrong', body)).status).toBe(403);
    expect((await upload(b.id, null, body)).status).toBe(403);
    expect((await upload(99999999, b.token, body)).status).toBe(404);
    await ci(s, 'PUT', `/builds/${b.id}.json`, { token: runner.token, state: 'success' });
    const done = await upload(b.id, b.token, body);
    expect(done.status).toBe(403);
    expect(done.body).toEqual({ message: '403 Forbidden - Build is not running!' });
    // the project runners token authenticates, but the build must still be running
    const viaProject = await upload(b.id, await projectRunnersToken(s, projectId), body);
    expect(viaProject.status).toBe(403);
    expect(viaProject.body).toEqual({ message: '403 Forbidden - Build is not running!' });
  });
});

describe('GET and DELETE /ci/api/v1/builds/:id/artifacts', () => {
  it('downloads with the build token, and with the token of a running build of the same pipeline (dependencies)', async () => {
    const pipeline = await insertPipeline(s, projectId);
    const dep = await running(pipeline, 'compile');
    const data = randomBytes(2048);
    await upload(dep.id, dep.token, multipart([{ name: 'file', filename: 'dep art.zip', data }]));
    const own = await ci(s, 'GET', `/builds/${dep.id}/artifacts`, undefined, { 'build-token': dep.token });
    expect(own.status).toBe(200);
    expect(own.headers['content-type']).toBe('application/octet-stream');
    // stored under the sanitised original name, as CarrierWave did
    expect(own.headers['content-disposition']).toContain('attachment; filename="dep_art.zip"');
    expect(own.raw).toEqual(data);
    await ci(s, 'PUT', `/builds/${dep.id}.json`, { token: runner.token, state: 'success' });
    // the finished build's own token no longer works; the next build's token (handed out in depends_on_builds) does
    expect((await ci(s, 'GET', `/builds/${dep.id}/artifacts`, undefined, { 'build-token': dep.token })).status).toBe(403);
    await insertBuild(s, projectId, pipeline, { name: 'test', stage: 'test', stageIdx: 1 });
    const next = await claim(s, runner.token);
    const listed = next.depends_on_builds.find((d: { id: number }) => d.id === dep.id);
    expect(listed).toMatchObject({ token: next.token, artifacts_file: { filename: 'dep_art.zip', size: 2048 } });
    const viaDependency = await ci(s, 'GET', `/builds/${dep.id}/artifacts`, undefined, { 'build-token': listed.token });
    expect(viaDependency.status).toBe(200);
    expect(viaDependency.raw).toEqual(data);
    // a running build of another pipeline may not
    const stranger = await running();
    expect((await ci(s, 'GET', `/builds/${dep.id}/artifacts?token=${stranger.token}`)).status).toBe(403);
    expect((await ci(s, 'GET', `/builds/${dep.id}/artifacts?token=${await projectRunnersToken(s, projectId)}`)).status).toBe(200);
  });

  it('answers 404 when there are no artifacts or no build, 403 for a bad token', async () => {
    const b = await running();
    expect((await ci(s, 'GET', `/builds/${b.id}/artifacts`, undefined, { 'build-token': b.token })).status).toBe(404);
    expect((await ci(s, 'GET', `/builds/${b.id}/artifacts`, undefined, { 'build-token': 'nope' })).status).toBe(403);
    expect((await ci(s, 'GET', '/builds/99999999/artifacts', undefined, { 'build-token': b.token })).status).toBe(404);
  });

  it('DELETE removes the file and the columns (200 with the build)', async () => {
    const b = await running();
    await upload(b.id, b.token, multipart([{ name: 'file', filename: 'gone.zip', data: 'bye' }]), '?expire_in=2d');
    const path = (await artifactsFilePath(s.ctx, { id: b.id, projectId }))!;
    expect((await ci(s, 'DELETE', `/builds/${b.id}/artifacts`, undefined, { 'build-token': 'bad' })).status).toBe(403);
    const r = await ci(s, 'DELETE', `/builds/${b.id}/artifacts`, undefined, { 'build-token': b.token });
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(b.id);
    expect(r.body.artifacts_file).toBeUndefined();
    expect(existsSync(path)).toBe(false);
    expect(await buildRow(s, b.id)).toMatchObject({ artifacts_file: null, artifacts_size: null, artifacts_expire_at: null });
  });

  it('removeExpiredArtifacts deletes only expired archives', async () => {
    const a = await running();
    const keep = await running();
    await upload(a.id, a.token, multipart([{ name: 'file', filename: 'old.zip', data: 'o' }]), '?expire_in=1+hour');
    await upload(keep.id, keep.token, multipart([{ name: 'file', filename: 'new.zip', data: 'n' }]), '?expire_in=1+hour');
    await exec(s, `UPDATE commit_statuses SET artifacts_expire_at = '2001-01-01T00:00:00.000Z' WHERE id = ?`, [a.id]);
    expect(await removeExpiredArtifacts(s.ctx)).toBe(1);
    expect((await buildRow(s, a.id)).artifacts_file).toBeNull();
    expect((await buildRow(s, keep.id)).artifacts_file).toBe('new.zip');
  });
});

describe('readMultipart', () => {
  const collect = async (body: Buffer, piece: number) => {
    const chunks: Buffer[] = [];
    for (let i = 0; i < body.length; i += piece) chunks.push(body.subarray(i, i + piece));
    return readMultipart(Readable.from(chunks), BOUNDARY, 'file', async (part) => {
      const out: Buffer[] = [];
      for await (const c of part.stream) out.push(c as Buffer);
      return { filename: part.filename, fields: part.fields, data: Buffer.concat(out) };
    });
  };

  it('splits parts correctly whatever the chunk boundaries, including CRLF and boundary-like bytes in the file', async () => {
    const tricky = Buffer.concat([Buffer.from(`\r\n--${BOUNDARY.slice(0, 6)}\r\n--`), randomBytes(300), Buffer.from('\r\n\r\n')]);
    const body = multipart([{ name: 'expire_in', data: '3 days' }, { name: 'file', filename: 'x.zip', data: tricky }, { name: 'after', data: 'z' }]);
    for (const piece of [1, 2, 3, 7, 13, 64, 100000]) {
      const { fields, result } = await collect(body, piece);
      expect(result!.data).toEqual(tricky);
      expect(result!.filename).toBe('x.zip');
      expect(result!.fields).toEqual({ expire_in: '3 days' });
      expect(fields).toEqual({ expire_in: '3 days', after: 'z' });
    }
  });

  it('rejects a body without the closing boundary', async () => {
    const body = multipart([{ name: 'file', filename: 'x.zip', data: 'abc' }]);
    await expect(collect(body.subarray(0, body.length - 10), 5)).rejects.toMatchObject({ statusCode: 400 });
  });

  it('survives a body cut short after the file handler gave up without reading (an unhandled stream error ended the daemon; found by the fuzzer)', async () => {
    const body = multipart([{ name: 'file', filename: 'x.zip', data: 'a'.repeat(1000) }]);
    const errors: unknown[] = [];
    const onUncaught = (e: unknown) => errors.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const chunks = [body.subarray(0, 200), body.subarray(200, 400)];
      const read = readMultipart(Readable.from(chunks), BOUNDARY, 'file', async () => {
        throw Object.assign(new Error('bad expire_in'), { statusCode: 400 });
      });
      await expect(read).rejects.toMatchObject({ statusCode: 400 });
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(errors).toEqual([]);
  });

  it('answers 400 to an upload cut short with a bad expire_in field, and the daemon goes on', async () => {
    const b = await running();
    const body = multipart([{ name: 'expire_in', data: 'soonish' }, { name: 'file', filename: 'a.zip', data: 'x'.repeat(5000) }]);
    const cut = await upload(b.id, b.token, body.subarray(0, body.length - 200));
    expect(cut.status).toBe(400);
    const ok = await upload(b.id, b.token, multipart([{ name: 'file', filename: 'a.zip', data: 'x' }]));
    expect(ok.status).toBe(201);
  });
});
