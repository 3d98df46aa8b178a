/**
 * Values one engine stores and the other refuses as data: PostgreSQL refuses NUL characters in text and numbers past
 * its integer columns. They must be the client's 400 there (never a 500), and change nothing; SQLite keeps them as
 * text, as it always has. Runs on both engines (npm test runs every file on each).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';

let s: TestServer;
beforeAll(async () => { s = await startTestServer(); });
afterAll(async () => { await s.close(); });

const NUL_MESSAGE = { message: '400 (Bad request) text must not contain NUL (\\u0000) characters' };

describe('text with a NUL character', () => {
  it('POST /session: 400 on PostgreSQL, the usual 401 on SQLite', async () => {
    const r = await s.api('POST', '/session', null, { login: 'ro\u0000ot', password: 'x' });
    if (onPostgres) expect(r).toMatchObject({ status: 400, body: NUL_MESSAGE });
    else expect(r.status).toBe(401);
  });

  it('POST /users with a NUL in the name: 400 and no user on PostgreSQL; created on SQLite', async () => {
    const r = await s.api('POST', '/users', s.root, { username: 'nul', email: 'nul@example.com', name: 'a\u0000b', password: 'password123' });
    if (onPostgres) {
      expect(r).toMatchObject({ status: 400, body: NUL_MESSAGE });
      expect((await s.api('GET', '/users?username=nul', s.root)).body).toEqual([]);
    } else {
      expect(r.status).toBe(201);
    }
  });

  it('a search with a NUL: 400 on PostgreSQL, an empty list on SQLite', async () => {
    const r = await s.api('GET', '/projects?search=a%00b', s.root);
    if (onPostgres) expect(r).toMatchObject({ status: 400, body: NUL_MESSAGE });
    else expect(r).toMatchObject({ status: 200, body: [] });
  });
});
