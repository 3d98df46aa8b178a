/**
 * User SSH keys: /user/keys (own keys), /users/:id/keys (admins), /keys/:id (admins): every route, its errors
 * (validation hash, duplicates across users and deploy keys, 404s) and authorization (anonymous 401, non-admins 403
 * on the admin routes, someone else's key 404); a deleted user's keys go with them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { generateKeyPair, type TestKeyPair } from '../helpers/ssh-keys.js';
import { createUserKey, keyForSshAsync, touchKeyUsed } from '../../daemon/services/keys/index.js';
import { findUser } from '../../daemon/services/users/users.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let blocked: TestUser;
const ed = () => generateKeyPair('ed25519', { comment: 'alice@laptop' });

beforeAll(async () => {
  s = await startTestServer();
  [alice, bob, blocked] = await Promise.all([s.user('keyalice'), s.user('keybob'), s.user('keyblocked')]) as [TestUser, TestUser, TestUser];
});
afterAll(async () => s?.close());

const keyCount = async () => (await s.ctx.data.get<{ n: number }>(`SELECT COUNT(*) AS n FROM keys`))!.n;

describe('POST /user/keys', () => {
  it('adds a key: 201 SSHKey with the line as given (trimmed), fingerprints stored', async () => {
    const pair = ed();
    const r = await s.api('POST', '/user/keys', alice, { title: '  Laptop ', key: `  ${pair.publicKey}\n` });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(Number), title: 'Laptop', key: pair.publicKey, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*\.\d{3}Z$/) });
    const row = (await s.ctx.data.get<Record<string, unknown>>(`SELECT * FROM keys WHERE id = ?`, [r.body.id]))!;
    expect(row).toMatchObject({ type: 'Key', user_id: alice.id, key_type: 'ssh-ed25519', fingerprint: pair.md5, fingerprint_sha256: pair.sha256 });
    expect(!!row.can_push).toBe(false);
  });

  it('accepts ECDSA and RSA 2048 keys', async () => {
    for (const pair of [generateKeyPair('ecdsa', { bits: 384 }), generateKeyPair('rsa', { bits: 2048 })]) {
      const r = await s.api('POST', '/user/keys', alice, { title: 'k', key: pair.publicKey });
      expect(r.status, pair.publicKey.slice(0, 20)).toBe(201);
    }
  });

  it('answers 400 "<attr>" not given for a missing or blank title or key, title first', async () => {
    const before = await keyCount();
    expect((await s.api('POST', '/user/keys', alice, {})).body).toEqual({ message: '400 (Bad request) "title" not given' });
    expect((await s.api('POST', '/user/keys', alice, { title: '', key: ed().publicKey })).body).toEqual({ message: '400 (Bad request) "title" not given' });
    const r = await s.api('POST', '/user/keys', alice, { title: 'x', key: '' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: '400 (Bad request) "key" not given' });
    expect(await keyCount()).toBe(before);
  });

  it('answers 400 with 8.x validation hashes for refused keys, and stores nothing', async () => {
    const before = await keyCount();
    const cases: [string, unknown][] = [
      ['not a key', { key: ['is invalid'], fingerprint: ['cannot be generated'] }],
      ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA', { fingerprint: ['cannot be generated'] }],
      [`${ed().publicKey.slice(0, 30)}\n${ed().publicKey.slice(30)}`, { key: ['should be a single line'], fingerprint: ['cannot be generated'] }],
      [generateKeyPair('dsa').publicKey, { key: ['type is forbidden. Must be RSA, ECDSA, or ED25519'] }],
      [generateKeyPair('rsa', { bits: 1024 }).publicKey, { key: ['must be at least 2048 bits'] }],
    ];
    for (const [key, message] of cases) {
      const r = await s.api('POST', '/user/keys', alice, { title: 'bad', key });
      expect(r.status, key.slice(0, 30)).toBe(400);
      expect(r.body).toEqual({ message });
    }
    const long = await s.api('POST', '/user/keys', alice, { title: 't'.repeat(256), key: ed().publicKey });
    expect(long.body).toEqual({ message: { title: ['is too long (maximum is 255 characters)'] } });
    expect(await keyCount()).toBe(before);
  });

  it('refuses a private key with a message that says to send the .pub file, never echoing the key', async () => {
    const { readFileSync } = await import('node:fs');
    const pair = ed();
    const secret = readFileSync(pair.privatePath, 'utf8');
    const r = await s.api('POST', '/user/keys', alice, { title: 'oops', key: secret });
    expect(r.status).toBe(400);
    expect(r.body.message.key[0]).toMatch(/private key.*\.pub/);
    expect(r.text).not.toContain(secret.split('\n')[1]!);
  });

  it('refuses a key already used by the same user, another user or a deploy key: fingerprint has already been taken', async () => {
    const pair = ed();
    expect((await s.api('POST', '/user/keys', alice, { title: 'a', key: pair.publicKey })).status).toBe(201);
    // the same key with another comment is the same key
    const [type, data] = pair.publicKey.split(' ');
    for (const [who, line] of [[alice, pair.publicKey], [bob, `${type} ${data} other comment`]] as const) {
      const r = await s.api('POST', '/user/keys', who, { title: 'again', key: line });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: { fingerprint: ['has already been taken'] } });
    }
    const project = await s.api('POST', '/projects', bob, { name: 'keys-dup' });
    const deploy = ed();
    expect((await s.api('POST', `/projects/${project.body.id}/deploy_keys`, bob, { title: 'd', key: deploy.publicKey })).status).toBe(201);
    const taken = await s.api('POST', '/user/keys', alice, { title: 'mine?', key: deploy.publicKey });
    expect(taken.body).toEqual({ message: { fingerprint: ['has already been taken'] } });
  });

  it('anonymous: 401', async () => {
    expect((await s.api('POST', '/user/keys', null, { title: 'a', key: ed().publicKey })).status).toBe(401);
  });

  it('odd bodies (objects, numbers, a JSON array or string, a form body) answer 400 or work, never 500', async () => {
    const pair = ed();
    const before = await keyCount();
    for (const body of [{ title: 'a', key: { x: 1 } }, { title: 'a', key: 12345 }, [pair.publicKey], 'garbage']) {
      const r = await s.api('POST', '/user/keys', alice, body, typeof body === 'string' ? { 'content-type': 'application/json' } : {});
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect(await keyCount()).toBe(before);
    const form = await s.api('POST', '/user/keys', alice, `title=form&key=${encodeURIComponent(pair.publicKey)}`, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(201);
    expect(form.body.key).toBe(pair.publicKey);
  });
});

describe('GET /user/keys and /user/keys/:key_id', () => {
  it('lists only the caller’s keys, oldest first, with pagination headers', async () => {
    const mine = await s.api('GET', '/user/keys', alice);
    expect(mine.status).toBe(200);
    const rows = await s.ctx.data.all<{ id: number }>(`SELECT id FROM keys WHERE user_id = ? ORDER BY id`, [alice.id]);
    expect(mine.body.map((k: { id: number }) => k.id)).toEqual(rows.map((r) => r.id));
    expect(Object.keys(mine.body[0]).sort()).toEqual(['created_at', 'id', 'key', 'title']);
    expect(mine.headers['x-total']).toBe(String(rows.length));
    const page = await s.api('GET', '/user/keys?per_page=1&page=2', alice);
    expect(page.body).toEqual([mine.body[1]]);
    expect((await s.api('GET', '/user/keys', bob)).body).toEqual([]);
  });

  it('shows one own key; someone else’s or a missing key is 404 `404 Not found`', async () => {
    const [first] = (await s.api('GET', '/user/keys', alice)).body;
    expect((await s.api('GET', `/user/keys/${first.id}`, alice)).body).toEqual(first);
    for (const [who, id] of [[bob, first.id], [alice, 999999]] as const) {
      const r = await s.api('GET', `/user/keys/${id}`, who);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Not found' });
    }
  });

  it('anonymous: 401; text id: 400', async () => {
    expect((await s.api('GET', '/user/keys', null)).status).toBe(401);
    expect((await s.api('GET', '/user/keys/1', null)).status).toBe(401);
    expect((await s.api('GET', '/user/keys/abc', alice)).status).toBe(400);
  });
});

describe('DELETE /user/keys/:key_id', () => {
  it('deletes an own key and answers the raw record; someone else’s key is 404 and stays', async () => {
    const pair = ed();
    const created = (await s.api('POST', '/user/keys', alice, { title: 'gone', key: pair.publicKey })).body;
    const other = await s.api('DELETE', `/user/keys/${created.id}`, bob);
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ message: '404 Key Not Found' });
    const r = await s.api('DELETE', `/user/keys/${created.id}`, alice);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: created.id, user_id: alice.id, title: 'gone', key: pair.publicKey, type: 'Key', fingerprint: pair.md5 });
    expect((await s.api('GET', `/user/keys/${created.id}`, alice)).status).toBe(404);
    expect(await keyForSshAsync(s.ctx, pair.sha256)).toBeNull();
    expect((await s.api('DELETE', `/user/keys/${created.id}`, alice)).status).toBe(404);
    expect((await s.api('DELETE', `/user/keys/${created.id}`, null)).status).toBe(401);
  });
});

describe('admin routes: /users/:id/keys, /users/:id/keys/:key_id, /keys/:id', () => {
  let bobKey: { id: number; key: string };
  let bobPair: TestKeyPair;

  it('POST /users/:id/keys adds a key to the user (201); unknown user `404 Not found`; validation as for /user/keys', async () => {
    bobPair = ed();
    const r = await s.api('POST', `/users/${bob.id}/keys`, s.root, { title: 'by admin', key: bobPair.publicKey });
    expect(r.status).toBe(201);
    bobKey = r.body;
    expect((await s.api('GET', '/user/keys', bob)).body.map((k: { id: number }) => k.id)).toContain(bobKey.id);
    const unknown = await s.api('POST', '/users/999999/keys', s.root, { title: 'x', key: ed().publicKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Not found' });
    expect((await s.api('POST', `/users/${bob.id}/keys`, s.root, { title: 'x', key: 'nope' })).status).toBe(400);
    expect((await s.api('POST', `/users/${bob.id}/keys`, s.root, { key: ed().publicKey })).body).toEqual({ message: '400 (Bad request) "title" not given' });
  });

  it('GET /users/:id/keys lists the user’s keys; unknown user `404 User Not Found`', async () => {
    const r = await s.api('GET', `/users/${bob.id}/keys`, s.root);
    expect(r.status).toBe(200);
    expect(r.body).toEqual((await s.api('GET', '/user/keys', bob)).body);
    expect((await s.api('GET', '/users/999999/keys', s.root)).body).toEqual({ message: '404 User Not Found' });
  });

  it('GET /keys/:id shows any key with its user as UserFull; a deploy key has user null; missing `404 Not found`', async () => {
    const r = await s.api('GET', `/keys/${bobKey.id}`, s.root);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: bobKey.id, title: 'by admin', key: bobPair.publicKey, user: { id: bob.id, username: 'keybob', email: 'keybob@example.com' } });
    const project = await s.api('POST', '/projects', s.root, { name: 'keys-admin-deploy' });
    const deploy = await s.api('POST', `/projects/${project.body.id}/deploy_keys`, s.root, { title: 'dk', key: ed().publicKey });
    expect((await s.api('GET', `/keys/${deploy.body.id}`, s.root)).body).toMatchObject({ id: deploy.body.id, user: null });
    expect((await s.api('GET', '/keys/999999', s.root)).body).toEqual({ message: '404 Not found' });
  });

  it('DELETE /users/:id/keys/:key_id: raw record; `404 User Not Found`, `404 Key Not Found` (also for another user’s key)', async () => {
    const aliceKey = (await s.api('GET', '/user/keys', alice)).body[0];
    expect((await s.api('DELETE', `/users/${bob.id}/keys/${aliceKey.id}`, s.root)).body).toEqual({ message: '404 Key Not Found' });
    expect((await s.api('DELETE', `/users/999999/keys/${bobKey.id}`, s.root)).body).toEqual({ message: '404 User Not Found' });
    const r = await s.api('DELETE', `/users/${bob.id}/keys/${bobKey.id}`, s.root);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: bobKey.id, user_id: bob.id, type: 'Key' });
    expect((await s.api('DELETE', `/users/${bob.id}/keys/${bobKey.id}`, s.root)).body).toEqual({ message: '404 Key Not Found' });
  });

  it('non-admins get 403 on every admin route (even for themselves), anonymous 401, and nothing changes', async () => {
    const before = await keyCount();
    const aliceKey = (await s.api('GET', '/user/keys', alice)).body[0];
    const calls: [string, string, unknown?][] = [
      ['GET', `/users/${alice.id}/keys`], ['POST', `/users/${alice.id}/keys`, { title: 'x', key: ed().publicKey }],
      ['POST', `/users/${alice.id}/keys`, {}], ['DELETE', `/users/${alice.id}/keys/${aliceKey.id}`], ['GET', `/keys/${aliceKey.id}`],
    ];
    for (const [method, path, body] of calls) {
      const r = await s.api(method as 'GET', path, bob, body);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body).toEqual({ message: '403 Forbidden' });
      expect((await s.api(method as 'GET', path, alice, body)).status, `${method} ${path} as self`).toBe(403);
      expect((await s.api(method as 'GET', path, null, body)).status).toBe(401);
    }
    expect(await keyCount()).toBe(before);
  });
});

describe('the SSH server’s lookups', () => {
  it('keyForSsh finds a user key with its user; blocked users are returned for the caller to refuse', async () => {
    const pair = ed();
    const key = (await s.api('POST', '/user/keys', blocked, { title: 'b', key: pair.publicKey })).body;
    expect(await keyForSshAsync(s.ctx, pair.sha256)).toMatchObject({ key: { id: key.id, type: 'Key' }, user: { id: blocked.id, state: 'active' }, deployProjectIds: [] });
    await s.api('PUT', `/users/${blocked.id}/block`, s.root);
    expect((await keyForSshAsync(s.ctx, pair.sha256))!.user!.state).toBe('blocked');
    expect(await keyForSshAsync(s.ctx, 'SHA256:unknown')).toBeNull();
  });

  it('touchKeyUsed writes last_used_at at most once a minute per key', async () => {
    const pair = ed();
    const key = (await s.api('POST', '/user/keys', alice, { title: 'used', key: pair.publicKey })).body;
    const lastUsed = async () => (await s.ctx.data.get<{ t: string | null }>(`SELECT last_used_at AS t FROM keys WHERE id = ?`, [key.id]))!.t;
    expect(await lastUsed()).toBeNull();
    const t0 = Date.parse('2030-01-01T00:00:00.000Z');
    await touchKeyUsed(s.ctx, key.id, t0);
    expect(await lastUsed()).toBe('2030-01-01T00:00:00.000Z');
    await touchKeyUsed(s.ctx, key.id, t0 + 30_000);
    expect(await lastUsed()).toBe('2030-01-01T00:00:00.000Z');
    await touchKeyUsed(s.ctx, key.id, t0 + 61_000);
    expect(await lastUsed()).toBe('2030-01-01T00:01:01.000Z');
  });

  it('deleting a user deletes their keys', async () => {
    const doomed = await s.user('keydoomed');
    const pair = ed();
    expect((await s.api('POST', '/user/keys', doomed, { title: 'x', key: pair.publicKey })).status).toBe(201);
    expect((await s.api('DELETE', `/users/${doomed.id}`, s.root)).status).toBe(200);
    expect(await keyForSshAsync(s.ctx, pair.sha256)).toBeNull();
    expect(await s.ctx.data.get(`SELECT COUNT(*) AS n FROM keys WHERE user_id = ?`, [doomed.id])).toEqual({ n: 0 });
  });
});

describe('races between requests', () => {
  it('the same key added twice at once (also by two users): one 201, one 400 `fingerprint has already been taken`, one row', async () => {
    for (const [first, second] of [[alice, alice], [alice, bob]] as const) {
      const pair = ed();
      const [type, data] = pair.publicKey.split(' ');
      const answers = await Promise.all([
        s.api('POST', '/user/keys', first, { title: 'one', key: pair.publicKey }),
        s.api('POST', '/user/keys', second, { title: 'two', key: `${type} ${data} another comment` }),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([201, 400]);
      expect(answers.find((r) => r.status === 400)!.body).toEqual({ message: { fingerprint: ['has already been taken'] } });
      expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM keys WHERE fingerprint = ?', [pair.md5])).toEqual({ n: 1 });
    }
  });

  it('a key for a user deleted meanwhile answers 404 (the route’s own form) and writes nothing, never a 500', async () => {
    const gone = await s.user('key-vanishing');
    const stale = await findUser(s.ctx, gone.id);
    expect((await s.api('DELETE', `/users/${gone.id}`, s.root)).status).toBe(200);
    const pair = ed();
    await expect(createUserKey(s.ctx, stale, { title: 'late', key: pair.publicKey })).rejects.toMatchObject({ statusCode: 404, body: { message: '404 User Not Found' } });
    expect(await keyForSshAsync(s.ctx, pair.sha256)).toBeNull();
    // Through the API, the admin's add and the user's deletion at once: a 201 (then cascaded away) or the bare 404.
    const other = await s.user('key-vanishing-2');
    const [added, deleted] = await Promise.all([
      s.api('POST', `/users/${other.id}/keys`, s.root, { title: 'late', key: ed().publicKey }),
      s.api('DELETE', `/users/${other.id}`, s.root),
    ]);
    expect(deleted.status).toBe(200);
    expect([201, 404]).toContain(added.status);
    if (added.status === 404) expect(added.body).toEqual({ message: '404 Not found' });
    expect(await s.ctx.data.get('SELECT COUNT(*) AS n FROM keys WHERE user_id = ?', [other.id])).toEqual({ n: 0 });
  });

  it('ids beyond any row (and beyond PostgreSQL’s integer) answer 404 as any missing key', async () => {
    for (const id of [2147483648, 9007199254740991]) {
      expect((await s.api('GET', `/user/keys/${id}`, alice)).body).toEqual({ message: '404 Not found' });
      expect((await s.api('DELETE', `/user/keys/${id}`, alice)).body).toEqual({ message: '404 Key Not Found' });
      expect((await s.api('GET', `/keys/${id}`, s.root)).body).toEqual({ message: '404 Not found' });
      expect((await s.api('GET', `/users/${id}/keys`, s.root)).body).toEqual({ message: '404 User Not Found' });
    }
  });
});

describe('a NUL character in a title (PostgreSQL refuses it as text)', () => {
  it('is a 400 and no key on PostgreSQL, a key on SQLite; never a 500', async () => {
    const pair = ed();
    const r = await s.api('POST', '/user/keys', alice, { title: 'a\u0000b', key: pair.publicKey });
    if (onPostgres) {
      expect(r).toMatchObject({ status: 400, body: { message: '400 (Bad request) text must not contain NUL (\\u0000) characters' } });
      expect(await keyForSshAsync(s.ctx, pair.sha256)).toBeNull();
    } else {
      expect(r.status).toBe(201);
    }
  });
});
