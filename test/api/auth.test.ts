import { Writable } from 'node:stream';
import type { InjectOptions } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, redactUrl } from '../../daemon/app.js';
import { ROOT_PASSWORD, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let alicePat: string;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const inject = (opts: InjectOptions) => s.app.inject(opts);

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice');
  bob = await s.user('bob');
  alicePat = (await s.api('POST', '/user/personal_access_tokens', alice, { name: 'auth test' })).body.token;
});
afterAll(async () => { await s.close(); });

/** The username GET /user answers for a raw request. */
async function whoAmI(opts: { url?: string; method?: 'GET' | 'PUT' | 'POST'; headers?: Record<string, string>; payload?: string | object }) {
  const r = await inject({ method: opts.method ?? 'GET', url: opts.url ?? '/api/v3/user', headers: opts.headers, payload: opts.payload });
  return { status: r.statusCode, username: r.statusCode === 200 ? (r.json() as { username: string }).username : null, body: r.json() };
}

describe('where the token may arrive', () => {
  for (const [kind, token] of [['private token', () => alice.token], ['personal access token', () => alicePat]] as const) {
    it(`${kind}: PRIVATE-TOKEN header, any case`, async () => {
      expect((await whoAmI({ headers: { 'PRIVATE-TOKEN': token() } })).username).toBe('alice');
      expect((await whoAmI({ headers: { 'private-token': token() } })).username).toBe('alice');
    });
    it(`${kind}: private_token query param`, async () => {
      expect((await whoAmI({ url: `/api/v3/user?private_token=${token()}` })).username).toBe('alice');
    });
    it(`${kind}: private_token form body param`, async () => {
      const r = await inject({ method: 'POST', url: '/api/v3/user/personal_access_tokens', headers: FORM, payload: `name=viaform&private_token=${token()}` });
      expect(r.statusCode).toBe(201);
      expect(r.json().user_id).toBe(alice.id);
    });
    it(`${kind}: private_token JSON body param`, async () => {
      const r = await inject({ method: 'POST', url: '/api/v3/user/personal_access_tokens', payload: { name: 'viajson', private_token: token() } });
      expect(r.statusCode).toBe(201);
      expect(r.json().user_id).toBe(alice.id);
    });
  }

  it('a param wins over the header', async () => {
    expect((await whoAmI({ url: `/api/v3/user?private_token=${bob.token}`, headers: { 'private-token': alice.token } })).username).toBe('bob');
    const r = await inject({ method: 'POST', url: '/api/v3/user/personal_access_tokens', headers: { ...FORM, 'private-token': alice.token }, payload: `name=x&private_token=${bob.token}` });
    expect(r.json().user_id).toBe(bob.id);
  });

  it('a wrong token is 401 even with a valid one nowhere else; an empty one counts as absent', async () => {
    expect(await whoAmI({ headers: { 'private-token': 'wrong' } })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await whoAmI({ url: '/api/v3/user?private_token=wrong', headers: { 'private-token': alice.token } })).toMatchObject({ status: 401 });
    expect((await whoAmI({ url: '/api/v3/user?private_token=', headers: { 'private-token': alice.token } })).username).toBe('alice');
    expect(await whoAmI({ headers: { 'private-token': alice.token.toUpperCase() === alice.token ? 'x' : alice.token.toUpperCase() } })).toMatchObject({ status: 401 });
  });

  it('a password is not a token', async () => {
    expect((await whoAmI({ headers: { 'private-token': ROOT_PASSWORD } })).status).toBe(401);
  });

  it('every API route but POST /session answers 401 without a token', async () => {
    for (const [method, url] of [
      ['GET', '/api/v3/user'], ['GET', '/api/v3/users'], ['GET', '/api/v3/users/1'], ['POST', '/api/v3/users'], ['PUT', '/api/v3/users/1'],
      ['DELETE', '/api/v3/users/1'], ['PUT', '/api/v3/users/1/block'], ['PUT', '/api/v3/users/1/unblock'],
      ['GET', '/api/v3/user/personal_access_tokens'], ['POST', '/api/v3/user/personal_access_tokens'], ['DELETE', '/api/v3/user/personal_access_tokens/1'],
      ['GET', '/api/v3/users/1/personal_access_tokens'], ['POST', '/api/v3/users/1/personal_access_tokens'],
      ['GET', '/api/v3/application/settings'], ['PUT', '/api/v3/application/settings'],
    ] as const) {
      const r = await inject({ method, url, payload: method === 'GET' || method === 'DELETE' ? undefined : {} });
      expect(r.statusCode, `${method} ${url}`).toBe(401);
      expect(r.json()).toEqual({ message: '401 Unauthorized' });
    }
  });
});

describe('sudo', () => {
  it('an admin acts as another user by id or username, via header or param', async () => {
    expect((await whoAmI({ headers: { 'private-token': s.root.token, sudo: String(alice.id) } })).username).toBe('alice');
    expect((await whoAmI({ headers: { 'private-token': s.root.token, SUDO: 'alice' } })).username).toBe('alice');
    expect((await whoAmI({ url: `/api/v3/user?sudo=bob`, headers: { 'private-token': s.root.token } })).username).toBe('bob');
    expect((await whoAmI({ url: `/api/v3/user?sudo=${bob.id}&private_token=${s.root.token}` })).username).toBe('bob');
    expect((await whoAmI({ headers: { 'private-token': s.root.token, sudo: 'ALICE' } })).username).toBe('alice');
  });

  it('works with an admin personal access token too, and acts with the target\'s rights', async () => {
    const rootPat = (await s.api('POST', '/user/personal_access_tokens', s.root, { name: 'root pat' })).body.token;
    expect((await whoAmI({ headers: { 'private-token': rootPat, sudo: 'alice' } })).username).toBe('alice');
    const r = await inject({ method: 'GET', url: '/api/v3/application/settings', headers: { 'private-token': s.root.token, sudo: 'alice' } });
    expect(r.statusCode).toBe(403);
  });

  it('a non-admin gets 403 Must be admin to use sudo (but may name themself)', async () => {
    for (const sudo of ['bob', String(bob.id), 'nobody-at-all']) {
      const r = await whoAmI({ headers: { 'private-token': alice.token, sudo } });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ message: '403 Forbidden - Must be admin to use sudo' });
    }
    expect((await whoAmI({ headers: { 'private-token': alice.token, sudo: 'alice' } })).username).toBe('alice');
    expect((await whoAmI({ headers: { 'private-token': alice.token, sudo: String(alice.id) } })).username).toBe('alice');
  });

  it('an unknown user gives 404 No user id or username for', async () => {
    for (const sudo of ['ghost', '99999']) {
      const r = await whoAmI({ headers: { 'private-token': s.root.token, sudo } });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: `404 Not Found: No user id or username for: ${sudo}` });
    }
  });

  it('sudo without a valid token is 401', async () => {
    expect(await whoAmI({ headers: { sudo: 'alice' } })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await whoAmI({ headers: { 'private-token': 'nope', sudo: 'root' } })).toMatchObject({ status: 401 });
  });
});

describe('secrets at rest', () => {
  it('stores no token, password or derived secret in plain text', async () => {
    const pat = await s.api('POST', `/users/${bob.id}/personal_access_tokens`, s.root, { name: 'at rest' });
    const secrets = [s.root.token, alice.token, bob.token, alicePat, pat.body.token, ROOT_PASSWORD, 'password123'];
    const db = s.ctx.data;
    for (const table of ['users', 'personal_access_tokens', 'application_settings', 'namespaces']) {
      const rows = await db.all(`SELECT * FROM ${table}`);
      expect(rows.length).toBeGreaterThan(0);
      const text = JSON.stringify(rows);
      for (const secret of secrets) expect(text.includes(secret), `${table} holds a secret`).toBe(false);
    }
    const user = (await db.get<Record<string, string>>('SELECT password_hash, private_token_hash FROM users WHERE id = ?', [alice.id]))!;
    expect(user.password_hash).toMatch(/^scrypt\$/);
    expect(user.private_token_hash).toMatch(/^[0-9a-f]{64}$/);
    const tokens = await db.all<{ token_hash: string }>('SELECT token_hash FROM personal_access_tokens');
    for (const t of tokens) expect(t.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the settings table holds the runners registration token sealed, not in plain text', async () => {
    const token = (await s.api('GET', '/application/settings', s.root)).body.runners_registration_token as string;
    const raw = (await s.ctx.data.get<{ t: string }>('SELECT runners_registration_token AS t FROM application_settings'))!;
    expect(raw.t).not.toContain(token);
    expect(s.ctx.secrets.open(raw.t)).toBe(token);
  });
});

describe('logs', () => {
  it('never contain a token or a password', async () => {
    let out = '';
    const stream = new Writable({ write(chunk, _enc, cb) { out += chunk.toString(); cb(); } });
    const app = await buildApp(s.ctx, { logger: { loggerInstance: pino({ level: 'trace' }, stream) } });
    await app.ready();
    try {
      const calls = [
        { method: 'GET', url: `/api/v3/user?private_token=${alice.token}` },
        { method: 'GET', url: `/api/v3/user?private%5Ftoken=${bob.token}` },
        { method: 'GET', url: `/api/v3/users?per_page=1&PRIVATE_TOKEN=${alicePat}` },
        { method: 'GET', url: '/api/v3/user', headers: { 'private-token': s.root.token } },
        { method: 'GET', url: `/api/v3/user?sudo=alice`, headers: { 'private-token': s.root.token } },
        { method: 'GET', url: '/api/v3/user', headers: { authorization: `Bearer ${alicePat}` } },
        { method: 'POST', url: '/api/v3/session', payload: { login: 'root', password: ROOT_PASSWORD } },
        { method: 'POST', url: '/api/v3/session', headers: FORM, payload: 'login=alice&password=password123' },
        { method: 'POST', url: '/api/v3/session', payload: { login: 'alice', password: 'wrong-secret-pw' } },
        { method: 'POST', url: `/api/v3/session?password=${encodeURIComponent(ROOT_PASSWORD)}&login=root` },
        { method: 'POST', url: '/api/v3/user/personal_access_tokens', payload: { name: 'logged', private_token: bob.token } },
        { method: 'PUT', url: `/api/v3/users/${bob.id}`, headers: { 'private-token': s.root.token }, payload: { password: 'logged-new-password' } },
        { method: 'GET', url: `/api/v3/user?private_token=${alice.token}&boom=1`, headers: { 'content-type': 'application/json' }, payload: '{bad json' },
      ] as const;
      const created: string[] = [];
      for (const c of calls) {
        const r = await app.inject(c as InjectOptions);
        if (r.statusCode === 201 && r.json().token) created.push(r.json().token);
        if (r.statusCode === 201 && r.json().private_token) created.push(r.json().private_token);
      }
      const secrets = [alice.token, bob.token, s.root.token, alicePat, ROOT_PASSWORD, 'password123', 'wrong-secret-pw', 'logged-new-password', ...created];
      const lines = out.trim().split('\n');
      expect(lines.length).toBeGreaterThanOrEqual(calls.length);
      expect(out).toContain('[REDACTED]');
      expect(out).toContain('/api/v3/session');
      for (const secret of secrets) expect(out.includes(secret), `log holds ${secret.slice(0, 4)}...`).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('redactUrl masks secret params however their names are written', () => {
    expect(redactUrl('/a?private_token=abc&x=1')).toBe('/a?private_token=[REDACTED]&x=1');
    expect(redactUrl('/a?x=1&Private_Token=abc')).toBe('/a?x=1&Private_Token=[REDACTED]');
    expect(redactUrl('/a?private%5Ftoken=abc')).toBe('/a?private%5Ftoken=[REDACTED]');
    expect(redactUrl('/a?access_token=abc&sudo=root&password=p&token=t')).toBe('/a?access_token=[REDACTED]&sudo=[REDACTED]&password=[REDACTED]&token=[REDACTED]');
    expect(redactUrl('/a?private_token[]=abc')).toBe('/a?private_token[]=[REDACTED]');
    expect(redactUrl('/a?page=2')).toBe('/a?page=2');
  });
});
