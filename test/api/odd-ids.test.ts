/**
 * Every route walked with ids that can name nothing: each path parameter in turn set to a negative number, zero, a
 * number past the largest id, and text. Integer ids answer 404 (text 400, as 8.x's Grape `type: Integer`); no route
 * answers 500, and nothing is changed. The routes come from the OpenAPI document, so new routes are walked too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';

let s: TestServer;
let projectId: number;

interface Operation { method: string; path: string; params: { name: string; integer: boolean }[] }
let operations: Operation[] = [];

beforeAll(async () => {
  s = await startTestServer();
  const p = await s.api('POST', '/projects', s.root, { name: 'odd-ids' });
  expect(p.status).toBe(201);
  projectId = p.body.id;
  const doc = await s.app.inject({ method: 'GET', url: '/api/v3/openapi.json' });
  const paths = (doc.json() as { paths: Record<string, Record<string, { parameters?: { in: string; name: string; schema?: { type?: string } }[] }>> }).paths;
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = (op.parameters ?? []).filter((x) => x.in === 'path').map((x) => ({ name: x.name, integer: x.schema?.type === 'integer' }));
      if (params.length) operations.push({ method: method.toUpperCase(), path, params });
    }
  }
});
afterAll(async () => s?.close());

/** The path with `odd` in parameter `name`, a real project for `{id}` of /projects/{id}/..., and `1` elsewhere. */
function url(op: Operation, name: string, odd: string): string {
  let out = op.path;
  for (const p of op.params) {
    const value = p.name === name ? odd : p.name === 'id' && op.path.startsWith('/api/v3/projects/{id}') ? String(projectId) : '1';
    out = out.replace(`{${p.name}}`, encodeURIComponent(value));
  }
  return out;
}

describe('odd ids on every route', () => {
  it('finds the routes to walk', () => {
    expect(operations.length).toBeGreaterThan(80);
    expect(operations.some((o) => o.path === '/api/v3/runners/{id}')).toBe(true);
  });

  it('answers 404 for negative, zero and huge integer ids and 400 for text, never 500, as an admin', async () => {
    const before = (await s.api('GET', `/projects/${projectId}`, s.root)).body;
    const failures: string[] = [];
    for (const op of operations) {
      for (const p of op.params) {
        for (const odd of ['-1', '0', '99999999999999999999', 'abc']) {
          const target = url(op, p.name, odd);
          const r = await s.app.inject({ method: op.method as 'GET', url: target, headers: { 'private-token': s.root.token } });
          // integer ids: 404 (text 400); a project's `:id` (id or path): 404; other text (a sha, a branch, a search) may
          // name nothing or match nothing, but never fails
          const isProjectId = p.name === 'id' && op.path.startsWith('/api/v3/projects/{id}');
          // the runner API checks the runner or build token first (403 here, as 8.x's authenticate_runner!)
          const ci = op.path.startsWith('/ci/api/') ? [403] : [];
          // text in an integer id: 400, or 404 when a parent named by the path (an issue, a note) is not found first
          const expected = p.integer ? (odd === 'abc' ? [400, 404, ...ci] : [404, ...ci]) : isProjectId ? [404] : null;
          if (expected && !expected.includes(r.statusCode)) failures.push(`${op.method} ${target} (${p.name}=${odd}): ${r.statusCode} ${r.body.slice(0, 120)}`);
          else if (r.statusCode >= 500) failures.push(`${op.method} ${target}: ${r.statusCode} ${r.body.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    // nothing was changed by any of these requests
    const after = (await s.api('GET', `/projects/${projectId}`, s.root)).body;
    expect({ ...after, last_activity_at: null }).toEqual({ ...before, last_activity_at: null });
  });

  it('answers 404 for integer ids written as other numbers (+5, 1e3, 0x10, 1.5, " 7"; they were 500 on /runners/:id; found by the fuzzer)', async () => {
    const failures: string[] = [];
    for (const op of operations) {
      for (const p of op.params.filter((x) => x.integer)) {
        for (const odd of ['+5', '1e3', '0x10', '1.5', ' 7', '-0', '\u2028\u2029', 'Infinity', '-Infinity']) {
          const target = url(op, p.name, odd);
          const r = await s.app.inject({ method: op.method as 'GET', url: target, headers: { 'private-token': s.root.token } });
          // the runner API checks its token first (403) and reads ids with its own schema (1.5: 400)
          const expected = op.path.startsWith('/ci/api/') ? [400, 403, 404] : [404];
          if (!expected.includes(r.statusCode)) failures.push(`${op.method} ${target} (${p.name}=${odd}): ${r.statusCode} ${r.body.slice(0, 120)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect((await s.api('PUT', '/runners/0x10', s.root, { description: 'x' })).status).toBe(404);
  });

  it('GET and DELETE /runners/-1 answer 404 (they were 500)', async () => {
    for (const method of ['GET', 'DELETE', 'PUT'] as const) {
      const r = await s.api(method, '/runners/-1', s.root);
      expect(r.status, method).toBe(404);
      expect(r.body).toEqual({ message: '404 Not Found' });
    }
  });

  it('an anonymous caller still gets 401 first on private routes', async () => {
    expect((await s.api('GET', '/runners/-1', null)).status).toBe(401);
  });
});
