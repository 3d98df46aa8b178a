/** GET /version (8.13 lib/api/version.rb): Gantry's version and build revision, to signed-in callers only. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';

let s: TestServer;
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('GET /version', () => {
  it('answers 401 to anonymous callers', async () => {
    const r = await s.api('GET', '/version', null);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ message: '401 Unauthorized' });
  });

  it('answers the package version and a revision to any signed-in user, the same each time', async () => {
    const user = await s.user('plain');
    const r = await s.api('GET', '/version', user);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['revision', 'version']);
    expect(r.body.version).toBe(pkg.version);
    // A short git commit when the tree was built in a checkout (dist/build-info.json), else `unknown`.
    expect(r.body.revision).toMatch(/^([0-9a-f]{7,40}|unknown)$/);
    expect((await s.api('GET', '/version', s.root)).body).toEqual(r.body);
  });
});
