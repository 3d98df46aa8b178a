import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateSettings } from '../../daemon/services/instance/settings.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMemberAsync, makeProject } from '../helpers/fixtures.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let priv: { id: number; path_with_namespace: string };
let pub: { id: number; path_with_namespace: string };

/** A multipart body with the given parts, as a browser or curl -F would send it. */
async function multipart(parts: Record<string, string | { name: string; data: Buffer | string }>): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const fd = new FormData();
  for (const [k, v] of Object.entries(parts)) {
    if (typeof v === 'string') fd.append(k, v);
    else fd.append(k, new Blob([typeof v.data === 'string' ? v.data : new Uint8Array(v.data)]), v.name);
  }
  const req = new Request('http://x/', { method: 'POST', body: fd });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
}

async function upload(projectId: number, as: TestUser | null, parts: Parameters<typeof multipart>[0]) {
  const { payload, headers } = await multipart(parts);
  const res = await s.app.inject({
    method: 'POST', url: `/api/v3/projects/${projectId}/uploads`, payload, headers: { ...headers, ...(as ? { 'private-token': as.token } : {}) },
  });
  return { status: res.statusCode, body: res.body ? res.json() : undefined };
}

const countUploads = async () => Number((await s.ctx.data.get<{ n: number }>('SELECT COUNT(*) AS n FROM uploads'))!.n);

beforeAll(async () => {
  s = await startTestServer();
  [alice, bob] = await Promise.all([s.user('alice'), s.user('bob')]);
  priv = await makeProject(s, alice, 'private-files');
  pub = await makeProject(s, alice, 'public-files', { visibility: 20 });
});
afterAll(async () => { await s.close(); });

describe('POST /projects/:id/uploads', () => {
  it('stores an image and answers alt, url and an image Markdown link', async () => {
    const r = await upload(priv.id, alice, { file: { name: 'screen shot.png', data: Buffer.from('PNGDATA') } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      alt: 'screen_shot', url: expect.stringMatching(/^\/uploads\/[0-9a-f]{32}\/screen_shot\.png$/),
      markdown: `![screen_shot](${r.body.url})`,
    });
    const secret = r.body.url.split('/')[2];
    const file = join(s.ctx.paths.uploads, String(priv.id), secret, 'screen_shot.png');
    expect(readFileSync(file, 'utf8')).toBe('PNGDATA');
    expect(readdirSync(join(s.ctx.paths.uploads, String(priv.id), secret))).toEqual(['screen_shot.png']);
    expect(await s.ctx.data.get('SELECT project_id, uploader_id, filename, size FROM uploads WHERE secret = ?', [secret]))
      .toEqual({ project_id: priv.id, uploader_id: alice.id, filename: 'screen_shot.png', size: 7 });
  });
  it('links other files without the image marker and sanitises their names', async () => {
    const r = await upload(priv.id, alice, { file: { name: '../../etc/my report (v2).PDF', data: 'pdf' } });
    expect(r.status).toBe(201);
    expect(r.body.alt).toBe('my_report__v2_');
    expect(r.body.url).toMatch(/\/my_report__v2_\.PDF$/);
    expect(r.body.markdown).toBe(`[my_report__v2_](${r.body.url})`);
    const svg = await upload(priv.id, alice, { file: { name: 'logo.SVG', data: '<svg/>' } });
    expect(svg.body.markdown.startsWith('![logo]')).toBe(true);
  });
  it('400 when the file is missing or not a file part', async () => {
    expect((await upload(priv.id, alice, { other: 'x' })).body).toEqual({ message: '400 (Bad request) "file" not given' });
    expect((await upload(priv.id, alice, { file: 'just text' })).body).toEqual({ message: '400 (Bad request) "file" is invalid' });
    const json = await s.api('POST', `/projects/${priv.id}/uploads`, alice, { file: 'x' });
    expect(json.status).toBe(400);
    const none = await s.api('POST', `/projects/${priv.id}/uploads`, alice);
    expect(none.body).toEqual({ message: '400 (Bad request) "file" not given' });
  });

  it('400 for a multipart body without a boundary or cut short, on any route, anonymous or not (were 500; found by the fuzzer)', async () => {
    const before = await countUploads();
    const part = '--b\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello\r\n';
    for (const [url, as] of [[`/api/v3/projects/${priv.id}/uploads`, alice], [`/api/v3/projects/${priv.id}/star`, null]] as const) {
      for (const [type, payload] of [['multipart/form-data', '{}'], ['multipart/form-data; boundary=', part], ['multipart/form-data; boundary=b', part]]) {
        const res = await s.app.inject({ method: 'POST', url, payload, headers: { 'content-type': type, ...(as ? { 'private-token': as.token } : {}) } });
        // anonymous: 401 when the body was not read before authentication, else 400; never 500
        if (!as && res.statusCode === 401) continue;
        expect(res.statusCode, `${url} ${type}`).toBe(400);
        expect(res.json().message).toMatch(/^400 \(Bad request\) the multipart body (is malformed|could not be parsed)/);
      }
    }
    expect(await countUploads()).toBe(before);
  });
  it('413 over max_attachment_size, with nothing stored', async () => {
    await updateSettings(s.ctx, { max_attachment_size: 1 });
    try {
      const before = await countUploads();
      const dirs = readdirSync(join(s.ctx.paths.uploads, String(priv.id))).length;
      for (const size of [1024 * 1024 + 1, 3 * 1024 * 1024]) {
        const r = await upload(priv.id, alice, { file: { name: 'big.bin', data: Buffer.alloc(size, 1) } });
        expect(r.status).toBe(413);
        expect(r.body).toEqual({ message: '413 Request Entity Too Large' });
      }
      expect(await countUploads()).toBe(before);
      expect(readdirSync(join(s.ctx.paths.uploads, String(priv.id))).length).toBe(dirs);
      expect((await upload(priv.id, alice, { file: { name: 'fits.bin', data: Buffer.alloc(1024 * 1024, 1) } })).status).toBe(201);
    } finally {
      await updateSettings(s.ctx, { max_attachment_size: 10 });
    }
  });
  it('needs upload_file: guests and non-members of public projects may upload; hidden 404; anonymous 401', async () => {
    expect((await upload(priv.id, bob, { file: { name: 'a.txt', data: 'a' } })).body).toEqual({ message: '404 Project Not Found' });
    expect((await upload(pub.id, bob, { file: { name: 'a.txt', data: 'a' } })).status).toBe(201);
    expect((await upload(priv.id, null, { file: { name: 'a.txt', data: 'a' } })).status).toBe(401);
    await addMemberAsync(s.ctx, { type: 'Project', id: priv.id }, bob.id, 10);
    expect((await upload(priv.id, bob, { file: { name: 'a.txt', data: 'a' } })).status).toBe(201);
    // The token may also come as a form field of the multipart body.
    expect((await upload(priv.id, null, { private_token: alice.token, file: { name: 'b.txt', data: 'b' } })).status).toBe(201);
  });
});

describe('GET /:namespace/:project/uploads/:secret/:filename', () => {
  it('serves public project uploads to anyone, images inline', async () => {
    const up = await upload(pub.id, alice, { file: { name: 'pic.png', data: 'IMG' } });
    const r = await s.app.inject({ method: 'GET', url: `/${pub.path_with_namespace}${up.body.url}` });
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe('IMG');
    expect(r.headers['content-type']).toBe('image/png');
    expect(r.headers['content-disposition']).toMatch(/^inline/);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
  });
  it('serves private uploads only to readers with a token; 404 otherwise', async () => {
    const up = await upload(priv.id, alice, { file: { name: 'notes.txt', data: 'secret notes' } });
    const url = `/${priv.path_with_namespace}${up.body.url}`;
    expect((await s.app.inject({ method: 'GET', url })).statusCode).toBe(404);
    const byQuery = await s.app.inject({ method: 'GET', url: `${url}?private_token=${alice.token}` });
    expect(byQuery.statusCode).toBe(200);
    expect(byQuery.body).toBe('secret notes');
    expect(byQuery.headers['content-type']).toBe('application/octet-stream');
    expect(byQuery.headers['content-disposition']).toMatch(/^attachment/);
    const carol = await s.user('carol');
    expect((await s.app.inject({ method: 'GET', url, headers: { 'private-token': carol.token } })).statusCode).toBe(404);
    expect((await s.app.inject({ method: 'GET', url, headers: { 'private-token': 'wrong' } })).statusCode).toBe(404);
    expect((await s.app.inject({ method: 'GET', url, headers: { 'private-token': alice.token } })).statusCode).toBe(200);
    const [, , secret] = up.body.url.split('/');
    const wrong = [
      `/${priv.path_with_namespace}/uploads/${'0'.repeat(32)}/notes.txt`, `/${priv.path_with_namespace}/uploads/${secret}/other.txt`,
      `/${pub.path_with_namespace}/uploads/${secret}/notes.txt`, `/alice/nothing/uploads/${secret}/notes.txt`,
    ];
    for (const u of wrong) {
      const r = await s.app.inject({ method: 'GET', url: u, headers: { 'private-token': alice.token } });
      expect(r.statusCode).toBe(404);
      expect(r.json()).toEqual({ message: '404 Not Found' });
    }
  });
  it('an upload into a project deleted at the same moment: 201 or 404, and no file left behind', async () => {
    for (let i = 0; i < 6; i++) {
      const p = await makeProject(s, alice, `vanishing-${i}`);
      const [up, del] = await Promise.all([
        upload(p.id, alice, { file: { name: 'x.txt', data: 'x' } }),
        new Promise((resolve) => setTimeout(resolve, i * 3)).then(() => s.api('DELETE', `/projects/${p.id}`, alice)),
      ]);
      expect([201, 404], JSON.stringify(up.body)).toContain(up.status);
      expect(del.status, del.text).toBe(200);
      expect(existsSync(join(s.ctx.paths.uploads, String(p.id)))).toBe(false);
      expect(await s.ctx.data.get('SELECT id FROM uploads WHERE project_id = ?', [p.id])).toBeUndefined();
    }
  });
  it('upload files disappear with the project', async () => {
    const p = await makeProject(s, alice, 'temp-files');
    await upload(p.id, alice, { file: { name: 'x.txt', data: 'x' } });
    expect(existsSync(join(s.ctx.paths.uploads, String(p.id)))).toBe(true);
    await s.api('DELETE', `/projects/${p.id}`, alice);
    expect(existsSync(join(s.ctx.paths.uploads, String(p.id)))).toBe(false);
  });
});
