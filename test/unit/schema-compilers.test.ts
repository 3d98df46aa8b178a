/** Route schemas compile on first use: every route's validation and response schema must still compile. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePendingSchemas } from '../../daemon/schema-compilers.js';
import { startTestServer, type TestServer } from '../helpers/app.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

describe('lazy schema compilers', () => {
  it('compile nothing until asked, then every route schema without an error', async () => {
    const compiled = await compilePendingSchemas(s.ctx);
    expect(compiled).toBeGreaterThan(200);
    expect(await compilePendingSchemas(s.ctx)).toBe(0);
  });
  it('validate and serialize as the eager compilers did (coercion, "not given", response shapes)', async () => {
    const missing = await s.api('POST', '/projects', s.root, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: '400 (Bad request) "name" not given' });
    const created = await s.api('POST', '/projects', s.root, { name: 'lazy', issues_enabled: 'false' });
    expect(created.status).toBe(201);
    expect(created.body.issues_enabled).toBe(false);
    const shown = await s.api('GET', `/projects/${created.body.id}?statistics=1`, s.root);
    expect(shown.body.path_with_namespace).toBe('root/lazy');
    expect(shown.body).not.toHaveProperty('runners_token_hash');
  });
});
