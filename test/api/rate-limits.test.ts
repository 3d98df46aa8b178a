/**
 * The failed sign-in throttle (policy/sign-in-throttle.ts) on every password check: POST /session and git over HTTP
 * basic auth. Per address: 10 failures within 60 s ban the address for an hour; per user: 10 failures in a row lock
 * the user for 10 minutes. Behind a balancer named in --trusted-proxies the client of X-Forwarded-For is counted.
 * Time moves with the throttle's injectable clock. On SQLite the counters are in memory; on
 * PostgreSQL in a table every daemon shares (a ban made through one app context holds on another). Git over HTTP and
 * OAuth run on SQLite only until their rooms are on PostgreSQL.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { browse, CookieJar, csrfOf, makeApplication, tokenRequest } from '../helpers/oauth.js';
import { normalizeAddress, SharedSignInThrottle, SignInThrottle, signInThrottle, SignInThrottled, userKey } from '../../daemon/policy/sign-in-throttle.js';
import { DEFAULT_LIMITS } from '../../daemon/config.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
let projectPath: string;
let now = Date.UTC(2026, 0, 1);
let nextAddress = 1;
/** A fresh client address for each test, so that tests do not share per-address counters. */
const freshAddress = () => `203.0.113.${nextAddress++}`;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice');
  bob = await s.user('bob');
  projectPath = (await makeProject(s, alice, 'secret-code')).path_with_namespace;
  signInThrottle(s.ctx).clock = () => now;
});
afterAll(async () => { await s.close(); });
// Each test starts an hour and a half later: every earlier ban and lock is over.
beforeEach(() => { now += 90 * 60 * 1000; });

const session = async (login: string, password: string, address: string) => {
  const r = await s.app.inject({ method: 'POST', url: '/api/v3/session', remoteAddress: address, payload: { login, password } });
  return { status: r.statusCode, body: r.json(), retryAfter: r.headers['retry-after'] };
};

const gitInfoRefs = async (username: string, password: string, address: string) => {
  const opts: InjectOptions = {
    method: 'GET', url: `/${projectPath}.git/info/refs?service=git-upload-pack`, remoteAddress: address,
    headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
  };
  const r = await s.app.inject(opts);
  return { status: r.statusCode, text: r.body, retryAfter: r.headers['retry-after'] };
};

describe('per client address (Rack::Attack git_basic_auth: maxretry 10, findtime 60, bantime 3600)', () => {
  it('bans an address after 10 failed sign-ins within a minute: 429 with Retry-After, even for a right password', async () => {
    const ip = freshAddress();
    for (let i = 0; i < 10; i++) expect((await session(`nobody${i}`, 'wrong', ip)).status).toBe(401);
    const banned = await session('alice', 'password123', ip);
    expect(banned.status).toBe(429);
    expect(banned.retryAfter).toBe('3600');
    expect(banned.body).toEqual({ message: '429 Too Many Requests: too many failed sign-ins from this address; retry later (in 3600 seconds)' });
    // Another address is not affected.
    expect((await session('alice', 'password123', freshAddress())).status).toBe(201);
  });

  it('counts down Retry-After and lifts the ban after an hour', async () => {
    const ip = freshAddress();
    for (let i = 0; i < 10; i++) await session(`ghost${i}`, 'wrong', ip);
    now += 3599 * 1000 - 500;
    const late = await session('alice', 'password123', ip);
    expect(late.status).toBe(429);
    expect(late.retryAfter).toBe('2');
    now += 1500;
    expect((await session('alice', 'password123', ip)).status).toBe(201);
  });

  it('forgets failures older than the 60 s window', async () => {
    const ip = freshAddress();
    for (let i = 0; i < 9; i++) await session(`early${i}`, 'wrong', ip);
    now += 61 * 1000;
    for (let i = 0; i < 9; i++) expect((await session(`late${i}`, 'wrong', ip)).status).toBe(401);
    expect((await session('bob', 'password123', ip)).status).toBe(201);
  });

  it("a success forgets the address's failures for that user only, not those for other users", async () => {
    const ip = freshAddress();
    for (let i = 0; i < 5; i++) await session('bob', 'typo', ip);
    for (let i = 0; i < 4; i++) await session(`other${i}`, 'wrong', ip);
    expect((await session('bob', 'password123', ip)).status).toBe(201);
    // Bob's 5 typos are forgotten; the 4 failures for other logins still count: 5 more reach 9, the 6th bans.
    for (let i = 0; i < 5; i++) expect((await session(`more${i}`, 'wrong', ip)).status).toBe(401);
    expect((await session('bob', 'password123', ip)).status).toBe(201);
    expect((await session('more5', 'wrong', ip)).status).toBe(401);
    expect((await session('bob', 'password123', ip)).status).toBe(429);
  });

  it('counts an IPv6 client by its /64 network (stepping through its addresses gains nothing)', async () => {
    for (let i = 1; i <= 10; i++) expect((await session(`v6-${i}`, 'wrong', `2001:db8:5:7::${i.toString(16)}`)).status).toBe(401);
    expect((await session('bob', 'password123', '2001:db8:5:7:ffff::1')).status).toBe(429);
    expect((await session('bob', 'password123', '2001:db8:5:8::1')).status).toBe(201);
  });

  it('never bans a trusted address (127.0.0.1 and ::1 by default: a proxy on the same machine)', async () => {
    for (let i = 0; i < 12; i++) expect((await session(`local${i}`, 'wrong', '127.0.0.1')).status).toBe(401);
    expect((await session('bob', 'password123', '127.0.0.1')).status).toBe(201);
    for (let i = 0; i < 12; i++) expect((await session(`mapped${i}`, 'wrong', '::ffff:127.0.0.1')).status).toBe(401);
    expect((await session('bob', 'password123', '::ffff:127.0.0.1')).status).toBe(201);
  });
});

describe('per user (Devise lockable: maximum_attempts 10, unlock_in 10 minutes)', () => {
  it('locks a user after 10 failures in a row from any addresses: 429 for the right password, then unlocks', async () => {
    const carol = await s.user('carol');
    for (let i = 0; i < 10; i++) expect((await session('carol', 'wrong', freshAddress())).status).toBe(401);
    const locked = await session('carol', 'password123', freshAddress());
    expect(locked.status).toBe(429);
    expect(locked.retryAfter).toBe('600');
    expect(locked.body.message).toBe('429 Too Many Requests: too many failed sign-ins for this user; retry later (in 600 seconds)');
    // The email names the same user: also locked.
    expect((await session('carol@example.com', 'password123', freshAddress())).status).toBe(429);
    // Tokens are not passwords: the user keeps working with them.
    expect((await s.api('GET', '/user', carol)).status).toBe(200);
    now += 600 * 1000;
    expect((await session('carol', 'password123', freshAddress())).status).toBe(201);
  });

  it('a success starts the count again', async () => {
    await s.user('dave');
    for (let i = 0; i < 9; i++) await session('dave', 'wrong', freshAddress());
    expect((await session('dave', 'password123', freshAddress())).status).toBe(201);
    for (let i = 0; i < 9; i++) expect((await session('dave', 'wrong', freshAddress())).status).toBe(401);
    expect((await session('dave', 'password123', freshAddress())).status).toBe(201);
  });

  it('locks unknown logins the same way (the answer never tells whether a user exists)', async () => {
    for (let i = 0; i < 10; i++) expect((await session('no-such-user', 'wrong', freshAddress())).status).toBe(401);
    expect((await session('no-such-user', 'wrong', freshAddress())).status).toBe(429);
  });

  it("does not count a blocked user's right password (401 every time, never 429)", async () => {
    const gina = await s.user('gina');
    expect((await s.api('PUT', `/users/${gina.id}/block`, s.root)).status).toBe(200);
    const ip = freshAddress();
    for (let i = 0; i < 12; i++) expect((await session('gina', 'password123', ip)).status).toBe(401);
    expect((await s.api('PUT', `/users/${gina.id}/unblock`, s.root)).status).toBe(200);
    expect((await session('gina', 'password123', ip)).status).toBe(201);
  });

  it('applies to trusted addresses too', async () => {
    await s.user('erin');
    for (let i = 0; i < 10; i++) await session('erin', 'wrong', '127.0.0.1');
    expect((await session('erin', 'password123', '127.0.0.1')).status).toBe(429);
  });
});

describe('git over HTTP basic auth', () => {
  it('throttles username + password the same way, sharing the count with POST /session', async () => {
    const ip = freshAddress();
    for (let i = 0; i < 5; i++) expect((await gitInfoRefs(`intruder${i}`, 'wrong', ip)).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await session(`intruder${i}`, 'wrong', ip)).status).toBe(401);
    const banned = await gitInfoRefs('alice', 'password123', ip);
    expect(banned.status).toBe(429);
    expect(banned.retryAfter).toBe('3600');
    expect(JSON.parse(banned.text).message).toMatch(/^429 Too Many Requests: .*retry later \(in 3600 seconds\)$/);
    expect((await gitInfoRefs('alice', 'password123', freshAddress())).status).toBe(200);
  });

  it('locks the user for git as for the API, and a token still works', async () => {
    for (let i = 0; i < 10; i++) expect((await gitInfoRefs('alice', 'wrong', freshAddress())).status).toBe(401);
    expect((await gitInfoRefs('alice', 'password123', freshAddress())).status).toBe(429);
    expect((await session('alice', 'password123', freshAddress())).status).toBe(429);
    expect((await gitInfoRefs('alice', alice.token, freshAddress())).status).toBe(200);
  });

  it('does not count requests without credentials (git asks for them after a 401)', async () => {
    const ip = freshAddress();
    for (let i = 0; i < 12; i++) {
      const r = await s.app.inject({ method: 'GET', url: `/${projectPath}.git/info/refs?service=git-upload-pack`, remoteAddress: ip });
      expect(r.statusCode).toBe(401);
    }
    expect((await gitInfoRefs('bob', 'password123', ip)).status).toBe(404);
  });
});

describe('OAuth: the password grant and the sign-in page', () => {
  it('count failures toward the user lock, and a locked user gets no token and no session', async () => {
    await s.user('frank');
    const app = await makeApplication(s, s.root, 'https://client.test/cb');
    for (let i = 0; i < 5; i++) expect((await tokenRequest(s, { grant_type: 'password', username: 'frank', password: 'wrong' })).status).toBe(401);
    const query = { client_id: app.application_id, redirect_uri: 'https://client.test/cb', response_type: 'code', state: 's' };
    const jar = new CookieJar();
    const page = await browse(s, jar, 'GET', `/oauth/authorize?${new URLSearchParams(query)}`);
    for (let i = 0; i < 5; i++) {
      const r = await browse(s, jar, 'POST', '/oauth/sign_in', { ...query, login: 'frank', password: 'wrong', authenticity_token: csrfOf(page.body) });
      expect(r.statusCode).toBe(401);
    }
    // Ten failures over both pages: locked everywhere, even with the right password.
    expect((await session('frank', 'password123', freshAddress())).status).toBe(429);
    const grant = await tokenRequest(s, { grant_type: 'password', username: 'frank', password: 'password123' });
    expect(grant.status).not.toBe(200);
    expect(grant.body.access_token).toBeUndefined();
    const signIn = await browse(s, jar, 'POST', '/oauth/sign_in', { ...query, login: 'frank', password: 'password123', authenticity_token: csrfOf(page.body) });
    expect(signIn.statusCode).not.toBe(303);
    expect(jar.get('gantry_session')).toBeUndefined();
    now += 600 * 1000;
    expect((await tokenRequest(s, { grant_type: 'password', username: 'frank', password: 'password123' })).status).toBe(200);
  });
});

describe('behind trusted proxies (--trusted-proxies): the client X-Forwarded-For names is counted, not the balancer', () => {
  const PROXY = '10.20.0.3';
  const OTHER_PROXY = '192.0.2.7';
  const UNTRUSTED = '198.51.100.40';
  let p: TestServer;
  let repo: string;

  beforeAll(async () => {
    p = await startTestServer({ trustedProxies: '10.20.0.0/16, 192.0.2.7' });
    await p.user('alice');
    repo = (await makeProject(p, await p.user('carol'), 'behind-proxy')).path_with_namespace;
    signInThrottle(p.ctx).clock = () => now;
  });
  afterAll(async () => { await p?.close(); });

  /** A request as the balancer passes it on: from `peer`, with the X-Forwarded-For it built. */
  const via = (peer: string, forwardedFor: string | undefined) => ({
    remoteAddress: peer,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  });
  const sessionVia = async (peer: string, forwardedFor: string | undefined, login: string, password: string) => {
    const { remoteAddress, headers } = via(peer, forwardedFor);
    const r = await p.app.inject({ method: 'POST', url: '/api/v3/session', remoteAddress, headers, payload: { login, password } });
    return r.statusCode;
  };

  it('POST /session: a client banned through one balancer is banned through the other; its neighbours and the balancer are not', async () => {
    const client = freshAddress();
    for (let i = 0; i < 10; i++) expect(await sessionVia(PROXY, client, `proxied${i}`, 'wrong')).toBe(401);
    expect(await sessionVia(PROXY, client, 'alice', 'password123')).toBe(429);
    expect(await sessionVia(OTHER_PROXY, client, 'alice', 'password123')).toBe(429);
    // The balancer's own address and the other clients behind it are untouched.
    expect(await sessionVia(PROXY, freshAddress(), 'alice', 'password123')).toBe(201);
    expect(await sessionVia(PROXY, undefined, 'alice', 'password123')).toBe(201);
  });

  it('a client cannot choose its address: a forged X-Forwarded-For in front of what the balancer appended does not count', async () => {
    const client = freshAddress();
    for (let i = 0; i < 10; i++) expect(await sessionVia(PROXY, `203.0.114.${i}, ${client}`, `forger${i}`, 'wrong')).toBe(401);
    expect(await sessionVia(PROXY, `203.0.114.99, ${client}`, 'alice', 'password123')).toBe(429);
    expect(await sessionVia(PROXY, '203.0.114.1', 'alice', 'password123')).toBe(201);
  });

  it('a peer that is not a trusted proxy counts as itself, whatever X-Forwarded-For it sends', async () => {
    for (let i = 0; i < 10; i++) expect(await sessionVia(UNTRUSTED, freshAddress(), `direct${i}`, 'wrong')).toBe(401);
    expect(await sessionVia(UNTRUSTED, freshAddress(), 'alice', 'password123')).toBe(429);
    expect(await sessionVia(UNTRUSTED, undefined, 'alice', 'password123')).toBe(429);
    // The addresses it named were never counted.
    const named = freshAddress();
    for (let i = 0; i < 9; i++) expect(await sessionVia(UNTRUSTED, named, `again${i}`, 'wrong')).toBe(429);
    expect(await sessionVia(PROXY, named, 'alice', 'password123')).toBe(201);
  });

  it("takes the scheme of pagination links from a trusted proxy's X-Forwarded-Proto only", async () => {
    const links = async (peer: string) => {
      const r = await p.app.inject({
        method: 'GET', url: '/api/v3/users?per_page=1', remoteAddress: peer,
        headers: { 'private-token': p.root.token, host: 'gantry.example', 'x-forwarded-proto': 'https', 'x-forwarded-for': freshAddress() },
      });
      expect(r.statusCode).toBe(200);
      return String(r.headers.link);
    };
    expect(await links(PROXY)).toContain('<https://gantry.example/api/v3/users?page=1&per_page=1>; rel="first"');
    expect(await links(UNTRUSTED)).toContain('<http://gantry.example/api/v3/users?page=1&per_page=1>; rel="first"');
  });

  it('git over HTTP counts the forwarded client', async () => {
    const client = freshAddress();
    const git = async (forwardedFor: string, username: string, password: string) => {
      const { remoteAddress, headers } = via(PROXY, forwardedFor);
      const r = await p.app.inject({
        method: 'GET', url: `/${repo}.git/info/refs?service=git-upload-pack`, remoteAddress,
        headers: { ...headers, authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
      });
      return r.statusCode;
    };
    for (let i = 0; i < 10; i++) expect(await git(client, `gitter${i}`, 'wrong')).toBe(401);
    expect(await git(client, 'carol', 'password123')).toBe(429);
    expect(await sessionVia(PROXY, client, 'alice', 'password123')).toBe(429);
    expect(await git(freshAddress(), 'carol', 'password123')).toBe(200);
  });

  it('the OAuth password grant and sign-in page count the forwarded client', async () => {
    const client = freshAddress();
    for (let i = 0; i < 5; i++) {
      const { remoteAddress, headers } = via(PROXY, client);
      const r = await p.app.inject({
        method: 'POST', url: '/oauth/token', remoteAddress, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'password', username: `granted${i}`, password: 'wrong' }).toString(),
      });
      expect(r.statusCode).toBe(401);
    }
    const app = await makeApplication(p, p.root, 'https://client.test/cb');
    const query = { client_id: app.application_id, redirect_uri: 'https://client.test/cb', response_type: 'code', state: 's' };
    const jar = new CookieJar();
    const page = await browse(p, jar, 'GET', `/oauth/authorize?${new URLSearchParams(query)}`);
    for (let i = 0; i < 5; i++) {
      const { remoteAddress, headers } = via(PROXY, client);
      const r = await p.app.inject({
        method: 'POST', url: '/oauth/sign_in', remoteAddress,
        headers: { ...headers, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ ...query, login: `paged${i}`, password: 'wrong', authenticity_token: csrfOf(page.body) }).toString(),
      });
      expect(r.statusCode).toBe(401);
    }
    // Ten failures over both OAuth paths from one forwarded client: that client is banned, not the balancer.
    expect(await sessionVia(PROXY, client, 'alice', 'password123')).toBe(429);
    expect(await sessionVia(PROXY, freshAddress(), 'alice', 'password123')).toBe(201);
  });
});

describe('SignInThrottle', () => {
  const limits = { ...DEFAULT_LIMITS.signIn, maxFailures: 3 };

  it('does nothing with maxFailures 0', () => {
    const t = new SignInThrottle({ ...limits, maxFailures: 0 });
    for (let i = 0; i < 50; i++) t.failed('198.51.100.1', 'login:x');
    expect(() => t.checkAddress('198.51.100.1')).not.toThrow();
    expect(() => t.checkUser('login:x')).not.toThrow();
  });

  it('throws SignInThrottled (an ApiError 429) naming what is throttled', () => {
    const t = new SignInThrottle(limits);
    t.clock = () => 1_000_000;
    for (let i = 0; i < 3; i++) t.failed('198.51.100.2', `login:u${i}`);
    let error: unknown;
    try {
      t.checkAddress('198.51.100.2');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SignInThrottled);
    expect(error).toMatchObject({ statusCode: 429, scope: 'address', retryAfter: 3600, headers: { 'Retry-After': '3600' } });
  });

  it('keys addresses: IPv4 (also mapped into IPv6) as is, IPv6 by /64, the loopback as ::1', () => {
    expect(normalizeAddress('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(normalizeAddress('192.0.2.7')).toBe('192.0.2.7');
    expect(normalizeAddress('2001:DB8::1')).toBe('2001:db8:0:0::/64');
    expect(normalizeAddress('2001:db8:0:0:abcd::9%eth0')).toBe('2001:db8:0:0::/64');
    expect(normalizeAddress('2001:db8:0:1:2:3:4:5')).toBe('2001:db8:0:1::/64');
    expect(normalizeAddress('::1')).toBe('::1');
    expect(normalizeAddress('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(normalizeAddress('::2')).toBe('0:0:0:0::/64');
  });

  it('keys a login that names no user by its first 256 characters', () => {
    expect(userKey('x'.repeat(10_000), undefined)).toBe(`login:${'x'.repeat(256)}`);
    expect(userKey('Alice', 7)).toBe('id:7');
    expect(userKey('Alice', undefined)).toBe('login:alice');
  });

  it('keeps a ban through a flood of new addresses (the maps stay bounded, active bans go last)', () => {
    const t = new SignInThrottle(limits);
    t.clock = () => 5_000_000;
    for (let i = 0; i < 3; i++) t.failed('198.51.100.9', 'login:x');
    for (let i = 0; i < 60_000; i++) t.failed(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, `login:flood${i}`);
    expect(() => t.checkAddress('198.51.100.9')).toThrow(SignInThrottled);
  });

  it('forgets a user whose last failure is older than the lock time', () => {
    const t = new SignInThrottle(limits);
    let at = 0;
    t.clock = () => at;
    t.failed(undefined, 'login:slow');
    t.failed(undefined, 'login:slow');
    at += 601 * 1000;
    t.failed(undefined, 'login:slow');
    expect(() => t.checkUser('login:slow')).not.toThrow();
    t.failed(undefined, 'login:slow');
    t.failed(undefined, 'login:slow');
    expect(() => t.checkUser('login:slow')).toThrow(SignInThrottled);
  });
});

describe.runIf(onPostgres)('on PostgreSQL: counters every daemon shares (table sign_in_failures)', () => {
  let other: TestServer;
  const sessionOn = async (server: TestServer, login: string, password: string, address: string) => {
    const r = await server.app.inject({ method: 'POST', url: '/api/v3/session', remoteAddress: address, payload: { login, password } });
    return { status: r.statusCode, body: r.json(), retryAfter: r.headers['retry-after'] };
  };

  beforeAll(async () => {
    // A second daemon on the same database (its own pool and throttle object), as behind a load balancer.
    other = await startTestServer({ databaseUrl: s.ctx.config.databaseUrl! });
    signInThrottle(other.ctx).clock = () => now;
  });
  afterAll(async () => { await other?.close(); });

  it('uses the shared table, not memory', () => {
    expect(signInThrottle(s.ctx)).toBeInstanceOf(SharedSignInThrottle);
    expect(signInThrottle(other.ctx)).not.toBe(signInThrottle(s.ctx));
  });

  it('a ban made through one daemon holds on the other, with its Retry-After, and lifts on both', async () => {
    const ip = freshAddress();
    for (let i = 0; i < 10; i++) expect((await session(`roamer${i}`, 'wrong', ip)).status).toBe(401);
    const banned = await sessionOn(other, 'alice', 'password123', ip);
    expect(banned).toMatchObject({ status: 429, retryAfter: '3600' });
    expect(banned.body).toEqual({ message: '429 Too Many Requests: too many failed sign-ins from this address; retry later (in 3600 seconds)' });
    expect((await session('alice', 'password123', ip)).status).toBe(429);
    expect((await sessionOn(other, 'alice', 'password123', freshAddress())).status).toBe(201);
    now += 3600 * 1000;
    expect((await sessionOn(other, 'alice', 'password123', ip)).status).toBe(201);
  });

  it('counts the failures made through both daemons together: 5 + 5 lock the user everywhere', async () => {
    await s.user('hank');
    for (let i = 0; i < 5; i++) expect((await session('hank', 'wrong', freshAddress())).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await sessionOn(other, 'hank', 'wrong', freshAddress())).status).toBe(401);
    const locked = await session('hank', 'password123', freshAddress());
    expect(locked).toMatchObject({ status: 429, retryAfter: '600' });
    expect((await sessionOn(other, 'hank', 'password123', freshAddress())).status).toBe(429);
  });

  it('a success through one daemon starts the count again for both', async () => {
    await s.user('iris');
    for (let i = 0; i < 9; i++) await sessionOn(other, 'iris', 'wrong', freshAddress());
    expect((await session('iris', 'password123', freshAddress())).status).toBe(201);
    for (let i = 0; i < 9; i++) expect((await sessionOn(other, 'iris', 'wrong', freshAddress())).status).toBe(401);
    expect((await sessionOn(other, 'iris', 'password123', freshAddress())).status).toBe(201);
  });

  it('many failures at once through both daemons ban the address (counted in the database, under its row lock)', async () => {
    const ip = freshAddress();
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => sessionOn(i % 2 ? other : s, `swarm${i}`, 'wrong', ip)));
    for (const a of answers) expect([401, 429]).toContain(a.status);
    expect((await session('alice', 'password123', ip)).status).toBe(429);
    expect((await sessionOn(other, 'alice', 'password123', ip)).status).toBe(429);
  });

  it('keeps hashes, not addresses or logins; the sweep removes what has expired and keeps bans and locks', async () => {
    const ip = freshAddress();
    await session('sweep-me', 'wrong', ip);
    const rows = await s.ctx.data.all<{ scope: string; key_hash: string }>('SELECT scope, key_hash FROM sign_in_failures');
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.key_hash).toMatch(/^[0-9a-f]{64}$/);
    const dump = JSON.stringify(await s.ctx.data.all('SELECT * FROM sign_in_failures'));
    expect(dump).not.toContain('sweep-me');
    expect(dump).not.toContain(ip);
    // a lock that is still running, next to the expired rows of every earlier test
    now += 6 * 60 * 1000;
    await s.user('jill');
    for (let i = 0; i < 10; i++) await session('jill', 'wrong', freshAddress());
    // past every window, every earlier lock and ban and the lock time since sweep-me's failure; jill's lock runs
    now += 5 * 60 * 1000;
    const throttle = signInThrottle(s.ctx) as SharedSignInThrottle;
    expect(await throttle.sweep()).toBeGreaterThan(0);
    const left = await s.ctx.data.all<{ scope: string; ends_at: string | null }>('SELECT scope, ends_at FROM sign_in_failures');
    expect(left, JSON.stringify(left)).toHaveLength(1);
    expect(left[0]!.scope).toBe('user');
    expect((await sessionOn(other, 'jill', 'password123', freshAddress())).status).toBe(429);
    expect(await throttle.sweep()).toBe(0);
    now += 6 * 60 * 1000;
    expect(await throttle.sweep()).toBe(1);
    expect((await sessionOn(other, 'jill', 'password123', freshAddress())).status).toBe(201);
  });
});
