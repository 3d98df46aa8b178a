import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addMember, makeGroup, pageHeaders } from '../helpers/group-fixtures.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice');
  bob = await s.user('bob');
  await makeGroup(s, 'alice-team', 0, alice);
  await makeGroup(s, 'public-crowd', 20);
  const shared = await makeGroup(s, 'shared-team', 10);
  await addMember(s, 'groups', shared.id, alice, 10);
});
afterAll(async () => { await s.close(); });

type Ns = { id: number; path: string; kind: string };
const paths = (body: Ns[]) => body.map((n) => n.path);

describe('GET /namespaces', () => {
  it('a user sees their personal namespace and the groups they belong to', async () => {
    const r = await s.api('GET', '/namespaces', alice);
    expect(r.status).toBe(200);
    expect(paths(r.body)).toEqual(['alice', 'alice-team', 'shared-team']);
    for (const n of r.body as Ns[]) {
      expect(Object.keys(n).sort()).toEqual(['id', 'kind', 'path']);
      expect(typeof n.id).toBe('number');
    }
    expect(r.body.map((n: Ns) => n.kind)).toEqual(['user', 'group', 'group']);
    const b = await s.api('GET', '/namespaces', bob);
    expect(b.body).toEqual([{ id: expect.any(Number), path: 'bob', kind: 'user' }]);
  });

  it('admins see every namespace', async () => {
    const r = await s.api('GET', '/namespaces?per_page=100', s.root);
    expect(paths(r.body)).toEqual(['root', 'alice', 'bob', 'alice-team', 'public-crowd', 'shared-team']);
  });

  it('search matches path or name; pagination headers', async () => {
    const r = await s.api('GET', '/namespaces?search=team', alice);
    expect(paths(r.body)).toEqual(['alice-team', 'shared-team']);
    const none = await s.api('GET', '/namespaces?search=crowd', alice);
    expect(none.body).toEqual([]);
    await s.api('PUT', '/groups/public-crowd', s.root, { name: 'The Big Crowd' });
    const byName = await s.api('GET', '/namespaces?search=big%20crowd', s.root);
    expect(paths(byName.body)).toEqual(['public-crowd']);
    const page = await s.api('GET', '/namespaces?per_page=2&page=2', s.root);
    expect(paths(page.body)).toEqual(['bob', 'alice-team']);
    expect(pageHeaders(page.headers)).toMatchObject({ total: '6', totalPages: '3', perPage: '2', page: '2', next: '3', prev: '1' });
    expect(page.headers.link).toContain('rel="first"');
  });

  it('401 anonymous', async () => {
    const r = await s.api('GET', '/namespaces', null);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ message: '401 Unauthorized' });
  });
});
