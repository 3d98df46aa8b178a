/**
 * Parameters in the query string on writes (the spec's opening section: "passed either in the query string or as form
 * fields"): POST and PUT take them like form fields on every resource, and a value in the body wins over the same key
 * in the query string.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';

let s: TestServer;
let alice: TestUser;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('qsalice');
});
afterAll(async () => s?.close());

describe('query-string parameters on POST and PUT', () => {
  it('POST /projects?name=x creates the project from the query string (booleans and integers coerced)', async () => {
    const r = await s.api('POST', '/projects?name=from-query&issues_enabled=false&visibility_level=10', alice);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'from-query', issues_enabled: false, visibility_level: 10 });
  });

  it('PUT /projects/:id?description=x changes the project', async () => {
    const p = await s.api('POST', '/projects', alice, { name: 'qs-put' });
    const r = await s.api('PUT', `/projects/${p.body.id}?description=${encodeURIComponent('from the query')}`, alice);
    expect(r.status).toBe(200);
    expect(r.body.description).toBe('from the query');
    expect((await s.api('GET', `/projects/${p.body.id}`, alice)).body.description).toBe('from the query');
  });

  it('a value in the body wins over the same key in the query string; other query keys still apply', async () => {
    const p = await s.api('POST', '/projects', alice, { name: 'qs-both' });
    const r = await s.api('PUT', `/projects/${p.body.id}?description=query&default_branch=master&name=qs-renamed`, alice, { description: 'body' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ description: 'body', name: 'qs-renamed' });
    const form = await s.api('PUT', `/projects/${p.body.id}?description=query`, alice, 'description=form', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.body.description).toBe('form');
  });

  it('works on groups, users and settings too, and validates query values like body values', async () => {
    const g = await s.api('POST', '/groups?name=QS%20Group&path=qs-group', alice);
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({ name: 'QS Group', path: 'qs-group' });
    const u = await s.api('PUT', `/users/${alice.id}?bio=hello`, s.root);
    expect(u.status).toBe(200);
    expect(u.body.bio).toBe('hello');
    const settings = await s.api('PUT', '/application/settings?default_projects_limit=33', s.root);
    expect(settings.body.default_projects_limit).toBe(33);
    const bad = await s.api('PUT', '/application/settings?default_projects_limit=many', s.root);
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.message)).toEqual(['default_projects_limit']);
    expect((await s.api('GET', '/application/settings', s.root)).body.default_projects_limit).toBe(33);
  });

  it('a required parameter missing from both answers "not given"', async () => {
    const r = await s.api('POST', '/projects?description=only', alice);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: '400 (Bad request) "name" not given' });
  });
});
