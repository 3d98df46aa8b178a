/**
 * Request bodies are bounded with 413 `{"message":"413 Request Entity Too Large"}` (8.x's wording), through a real
 * socket so that the client is seen to get the answer (never a reset connection), with nothing written: JSON, form
 * and multipart API bodies (--max-body-size, 64 KiB here), runner trace parts, uploads (max_attachment_size),
 * artifacts (max_artifacts_size) and git pushes (--max-push-size). /oauth answers 413 in its own forms: RFC 6749's
 * invalid_request body from the token endpoints, an HTML page from the sign-in and consent forms.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { sqlValue } from '../helpers/collaboration.js';
import { makeProject } from '../helpers/fixtures.js';
import { buildRow, claim, insertBuild, insertPipeline, registerRunner } from '../helpers/runner-fixtures.js';
import { commitFiles, git, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

const TOO_LARGE = { message: '413 Request Entity Too Large' };
const BOUNDARY = 'b0undary7';
const LIMIT = 64 * 1024;

let s: TestServer;
let base: string;
let projectId: number;
let runner: { id: number; token: string };

beforeAll(async () => {
  s = await startTestServer({ maxBodySize: '64k' });
  base = await s.app.listen({ host: '127.0.0.1', port: 0 });
  projectId = (await makeProject(s, s.root, 'limits')).id;
  runner = await registerRunner(s, {});
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

interface Sent {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Send a body through a real socket in 16 KiB writes: with Content-Length, or chunked (no length announced). */
function send(method: string, path: string, headers: Record<string, string>, body: Buffer, chunked = false): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers: { ...headers, ...(chunked ? {} : { 'content-length': String(body.length) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode!, body: parsed });
      });
    });
    // The server may answer and close before the whole body is written: the answer is what counts.
    req.on('error', (e) => (req.writableEnded ? undefined : reject(e)));
    let at = 0;
    const pump = () => {
      while (at < body.length) {
        const ok = req.write(body.subarray(at, at + 16 * 1024));
        at += 16 * 1024;
        if (!ok) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

/** A multipart body; parts with a filename are files. */
function multipart(parts: { name: string; filename?: string; data: Buffer | string }[]): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n`), Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

const AUTH = () => ({ 'private-token': s.root.token });
const issuesPath = () => `/api/v3/projects/${projectId}/issues`;
const issueCount = async () => Number(await sqlValue(s.ctx, 'SELECT COUNT(*) AS n FROM issues'));
const files = (dir: string): string[] =>
  existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => join(d.parentPath, d.name)) : [];

describe('API bodies (--max-body-size)', () => {
  const huge = 'y'.repeat(LIMIT + 1);

  it.each([false, true])('JSON over the limit: 413, nothing created (chunked: %s)', async (chunked) => {
    const before = await issueCount();
    const r = await send('POST', issuesPath(), { ...AUTH(), 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ title: 't', description: huge })), chunked);
    expect(r).toEqual({ status: 413, body: TOO_LARGE });
    expect(await issueCount()).toBe(before);
  });

  it.each([false, true])('a form over the limit: 413 (chunked: %s)', async (chunked) => {
    const before = await issueCount();
    const r = await send('POST', issuesPath(), { ...AUTH(), 'content-type': 'application/x-www-form-urlencoded' }, Buffer.from(`title=t&description=${huge}`), chunked);
    expect(r).toEqual({ status: 413, body: TOO_LARGE });
    expect(await issueCount()).toBe(before);
  });

  it.each([false, true])('a multipart form over the limit: 413, never a shortened field (chunked: %s)', async (chunked) => {
    const before = await issueCount();
    const body = multipart([{ name: 'title', data: 't' }, { name: 'description', data: huge }]);
    const r = await send('POST', issuesPath(), { ...AUTH(), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body, chunked);
    expect(r).toEqual({ status: 413, body: TOO_LARGE });
    expect(await issueCount()).toBe(before);
  });

  it('takes bodies within the limit, multipart included', async () => {
    const description = 'z'.repeat(LIMIT - 1024);
    const json = await send('POST', issuesPath(), { ...AUTH(), 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ title: 'json', description })));
    expect(json.status).toBe(201);
    expect(json.body.description).toBe(description);
    const form = multipart([{ name: 'title', data: 'multipart' }, { name: 'labels', data: 'a,b' }, { name: 'description', data: description }]);
    const mp = await send('POST', issuesPath(), { ...AUTH(), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, form, true);
    expect(mp.status).toBe(201);
    expect(mp.body).toMatchObject({ title: 'multipart', labels: ['a', 'b'], description });
  });

  it('a multipart body that is not one: 400', async () => {
    const r = await send('POST', issuesPath(), { ...AUTH(), 'content-type': 'multipart/form-data; boundary=nope' }, Buffer.from('garbage'));
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^400 \(Bad request\) the multipart body could not be parsed/);
  });
});

describe('/oauth bodies (--max-body-size)', () => {
  const huge = 'y'.repeat(LIMIT + 1);
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
  const tokenCount = async () => Number(await sqlValue(s.ctx, 'SELECT COUNT(*) AS n FROM oauth_access_tokens'));

  it.each([false, true])('POST /oauth/token and /oauth/revoke over the limit: 413 invalid_request saying the limit, no token (chunked: %s)', async (chunked) => {
    const before = await tokenCount();
    const body = Buffer.from(`grant_type=password&username=root&password=rootpassword123&scope=${huge}`);
    for (const path of ['/oauth/token', '/oauth/revoke']) {
      const r = await send('POST', path, FORM, body, chunked);
      expect(r.status, path).toBe(413);
      expect(Object.keys(r.body).sort()).toEqual(['error', 'error_description']);
      expect(r.body.error).toBe('invalid_request');
      expect(r.body.error_description).toBe('The request body is too large: this server takes at most 64 KiB (65536 bytes) (gantryd --max-body-size)');
    }
    const json = await send('POST', '/oauth/token', { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ grant_type: 'password', scope: huge })), chunked);
    expect(json).toMatchObject({ status: 413, body: { error: 'invalid_request' } });
    expect(await tokenCount()).toBe(before);
    // within the limit the same grant works
    const ok = await send('POST', '/oauth/token', FORM, Buffer.from('grant_type=password&username=root&password=rootpassword123'));
    expect(ok.status).toBe(200);
  });

  it('the sign-in and consent forms over the limit: a 413 page saying the limit, no session', async () => {
    for (const path of ['/oauth/sign_in', '/oauth/authorize', '/oauth/sign_out']) {
      const r = await send('POST', path, FORM, Buffer.from(`login=root&password=rootpassword123&client_id=${huge}`));
      expect(r.status, path).toBe(413);
      expect(r.body).toContain('The form is too large');
      expect(r.body).toContain('at most 64 KiB (65536 bytes)');
    }
    expect(Number(await sqlValue(s.ctx, 'SELECT COUNT(*) AS n FROM oauth_sessions'))).toBe(0);
  });
});

describe('uploads (max_attachment_size) and artifacts (max_artifacts_size)', () => {
  it.each([false, true])('an upload over max_attachment_size: 413, no file left (chunked: %s)', async (chunked) => {
    expect((await s.api('PUT', '/application/settings', s.root, { max_attachment_size: 1 })).status).toBe(200);
    const body = multipart([{ name: 'file', filename: 'big.bin', data: randomBytes(1024 * 1024 + 70 * 1024) }]);
    const r = await send('POST', `/api/v3/projects/${projectId}/uploads`, { ...AUTH(), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body, chunked);
    expect(r).toEqual({ status: 413, body: TOO_LARGE });
    expect(files(s.ctx.paths.uploads).filter((f) => !f.endsWith('fine.bin'))).toEqual([]);
    // Uploads have their own limit: far above --max-body-size is fine below max_attachment_size.
    const ok = multipart([{ name: 'file', filename: 'fine.bin', data: randomBytes(512 * 1024) }]);
    expect((await send('POST', `/api/v3/projects/${projectId}/uploads`, { ...AUTH(), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, ok, chunked)).status).toBe(201);
    expect(files(s.ctx.paths.uploads).filter((f) => f.endsWith('fine.bin'))).toHaveLength(chunked ? 2 : 1);
  });

  it.each([false, true])('artifacts over max_artifacts_size: 413, no file or temporary file left (chunked: %s)', async (chunked) => {
    expect((await s.api('PUT', '/application/settings', s.root, { max_artifacts_size: 1 })).status).toBe(200);
    try {
      await insertBuild(s, projectId, await insertPipeline(s, projectId));
      const build = await claim(s, runner.token);
      const body = multipart([{ name: 'file', filename: 'a.zip', data: randomBytes(1024 * 1024 + 1) }]);
      const r = await send('POST', `/ci/api/v1/builds/${build.id}/artifacts`, { 'build-token': build.token, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body, chunked);
      expect(r).toEqual({ status: 413, body: TOO_LARGE });
      expect((await buildRow(s, build.id)).artifacts_file).toBeNull();
      expect(files(join(s.ctx.paths.artifacts, String(projectId), String(build.id)))).toEqual([]);
    } finally {
      expect((await s.api('PUT', '/application/settings', s.root, { max_artifacts_size: 100 })).status).toBe(200);
    }
  });

  it('max_artifacts_size is set with PUT /application/settings (at least 1), as in 8.x not shown by GET', async () => {
    const bad = await s.api('PUT', '/application/settings', s.root, { max_artifacts_size: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: { max_artifacts_size: ['must be greater than 0'] } });
    expect((await s.api('PUT', '/application/settings', s.root, { max_artifacts_size: 250 })).body).not.toHaveProperty('max_artifacts_size');
    expect(Number(await sqlValue(s.ctx, 'SELECT max_artifacts_size AS mb FROM application_settings'))).toBe(250);
    expect((await s.api('PUT', '/application/settings', s.root, { max_artifacts_size: 100 })).status).toBe(200);
  });

  it('a trace part over --max-body-size: 413, the trace unchanged', async () => {
    await insertBuild(s, projectId, await insertPipeline(s, projectId));
    const build = await claim(s, runner.token);
    const part = Buffer.alloc(LIMIT + 1, 'x');
    const r = await send('PATCH', `/ci/api/v1/builds/${build.id}/trace.txt`, { 'build-token': build.token, 'content-type': 'text/plain', 'content-range': `0-${part.length}` }, part, true);
    expect(r).toEqual({ status: 413, body: TOO_LARGE });
    expect((await buildRow(s, build.id)).trace_size).toBe(0);
  });
});

describe('git pushes (--max-push-size)', () => {
  let p: TestServer;
  let url: string;
  let pushBase: string;

  beforeAll(async () => {
    p = await startTestServer({ maxPushSize: '64k' });
    pushBase = await p.app.listen({ host: '127.0.0.1', port: 0 });
    const project = await makeProject(p, p.root, 'capped');
    url = repoUrl(pushBase, project.path_with_namespace, { username: 'root', password: p.root.token });
  });
  afterAll(async () => { await p.close(); });

  const branches = async () => (await p.api('GET', `/projects/${encodeURIComponent('root/capped')}/repository/branches`, p.root)).body as { name: string }[];

  it('takes a push under the cap', async () => {
    const dir = await workTree();
    await commitFiles(dir, { 'small.txt': 'hello\n' });
    await gitOk(dir, ['push', url, 'HEAD:refs/heads/small']);
    expect((await branches()).map((b) => b.name)).toEqual(['small']);
  });

  it.each([
    ['with a Content-Length: 413 before reading it', []],
    ['chunked: git refuses the pack', ['-c', 'http.postBuffer=8192']],
  ])('refuses a push over the cap, %s; no ref changes', async (_how, config) => {
    const dir = await workTree();
    await commitFiles(dir, { 'big.bin': randomBytes(256 * 1024) });
    const r = await git(dir, [...config, 'push', url, 'HEAD:refs/heads/big']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(config.length ? /pack exceeds maximum allowed size/ : /413/);
    expect((await branches()).map((b) => b.name)).toEqual(['small']);
  });

  it('closes the connection of a refused push whose body was left unread, once the answer is out', async () => {
    const { port } = new URL(pushBase);
    const auth = Buffer.from(`root:${p.root.token}`).toString('base64');
    const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
    const command = pkt(`${'0'.repeat(40)} ${'1'.repeat(40)} refs/heads/never\0 report-status\n`);
    const chunk = (b: Buffer | string) => Buffer.concat([Buffer.from(`${Buffer.byteLength(b).toString(16)}\r\n`), Buffer.from(b), Buffer.from('\r\n')]);
    const socket = connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write([
      `POST /root/capped.git/git-receive-pack HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Authorization: Basic ${auth}`,
      'Content-Type: application/x-git-receive-pack-request', 'Transfer-Encoding: chunked', '', '',
    ].join('\r\n'));
    // The commands, then a pack stream that is not one: receive-pack stops reading and answers; the body never ends.
    socket.write(chunk(`${command}0000`));
    socket.write(chunk(Buffer.concat([Buffer.from('PACK\0\0\0\x02\0\0\0\x01'), randomBytes(128 * 1024)])));
    const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 10_000))]);
    socket.destroy();
    expect(outcome).toBe('closed');
    expect(Buffer.concat(received).toString('latin1')).toMatch(/^HTTP\/1\.1 200[^]*unpack /);
    expect((await branches()).map((b) => b.name)).toEqual(['small']);
  });
});
