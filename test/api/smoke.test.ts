import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';

let s: TestServer;
beforeAll(async () => { s = await startTestServer(); });
afterAll(async () => { await s.close(); });

describe('smoke', () => {
  it('health', async () => {
    const r = await s.app.inject({ method: 'GET', url: '/-/health' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ status: 'ok' });
  });
  it('GET /user', async () => {
    const r = await s.api('GET', '/user', s.root);
    expect(r.status).toBe(200);
    expect(r.body.username).toBe('root');
    expect(r.body.private_token).toBeUndefined();
  });
  it('401 without token, 404 JSON for unknown routes', async () => {
    expect((await s.api('GET', '/user', null)).body).toEqual({ message: '401 Unauthorized' });
    const r = await s.api('GET', '/nope', s.root);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 Not Found' });
  });
  it('creates users, lists them with pagination', async () => {
    await s.user('alice');
    const r = await s.api('GET', '/users?per_page=1', s.root);
    expect(r.status).toBe(200);
    expect(r.headers['x-total']).toBe('2');
    expect(r.headers.link).toContain('rel="next"');
    const missing = await s.api('POST', '/users', s.root, { username: 'bob' });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/^400 \(Bad request\) "\w+" not given$/);
    expect((await s.api('GET', '/user.json', s.root)).status).toBe(200);
  });
  it('settings', async () => {
    const r = await s.api('PUT', '/application/settings', s.root, 'signup_enabled=0&default_branch_protection=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(200);
    expect(r.body.signup_enabled).toBe(false);
    expect(r.body.default_branch_protection).toBe(1);
    expect(typeof r.body.runners_registration_token).toBe('string');
    const bad = await s.api('PUT', '/application/settings', s.root, { default_branch_protection: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body.message.default_branch_protection).toBeDefined();
  });
  it('openapi', async () => {
    const r = await s.api('GET', '/openapi.json', null);
    expect(r.status).toBe(200);
    expect(r.body.paths['/api/v3/users']).toBeDefined();
  });
});
