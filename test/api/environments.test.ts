/** Environments: /projects/:id/environments list, create, edit, delete; 8.13's validation answers; authorization. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';

let s: TestServer;
let cast: Cast;
let priv: { id: number; path_with_namespace: string };
let pub: { id: number; path_with_namespace: string };

const base = (p: { id: number }) => `/projects/${p.id}/environments`;
const NAME_FORMAT = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces";
const envRows = async (projectId: number) =>
  s.ctx.data.all<{ name: string; external_url: string | null; environment_type: string | null }>(
    'SELECT name, external_url, environment_type FROM environments WHERE project_id = ? ORDER BY id', [projectId]);

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'env');
  priv = await makeProject(s, cast.owner, 'private-envs', { visibility: 0 });
  pub = await makeProject(s, cast.owner, 'public-envs', { visibility: 20 });
  await addCastMembers(s.ctx, cast, priv.id);
  await addCastMembers(s.ctx, cast, pub.id);
});
afterAll(async () => {
  await s.close();
});

describe('CRUD', () => {
  it('creates (201) with the Environment entity, lists with pagination headers, edits and deletes', async () => {
    const created = await s.api('POST', base(priv), cast.master, { name: 'review/feature-1', external_url: 'https://feature-1.example.com' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['external_url', 'id', 'name', 'project']);
    expect(created.body).toMatchObject({ name: 'review/feature-1', external_url: 'https://feature-1.example.com' });
    expect(created.body.project).toMatchObject({ id: priv.id, path_with_namespace: priv.path_with_namespace });
    const staging = await s.api('POST', base(priv), cast.developer, { name: 'staging' });
    expect(staging.status).toBe(201);
    expect(staging.body.external_url).toBeNull();
    expect(await envRows(priv.id)).toEqual([
      { name: 'review/feature-1', external_url: 'https://feature-1.example.com', environment_type: 'review' },
      { name: 'staging', external_url: null, environment_type: null },
    ]);

    const list = await s.api('GET', `${base(priv)}?per_page=1`, cast.reporter);
    expect(list.status).toBe(200);
    expect(list.body.map((e: { name: string }) => e.name)).toEqual(['review/feature-1']);
    expect(list.body[0].project.id).toBe(priv.id);
    expect(list.headers['x-total']).toBe('2');
    expect(list.headers['x-next-page']).toBe('2');
    const page2 = await s.api('GET', `${base(priv)}?per_page=1&page=2`, cast.reporter);
    expect(page2.body.map((e: { name: string }) => e.name)).toEqual(['staging']);

    // both fields; then only the name keeps the URL (8.13's spec); a blank URL clears it
    const url = 'https://mepmep.whatever.ninja';
    const both = await s.api('PUT', `${base(priv)}/${staging.body.id}`, cast.master, { name: 'Mepmep', external_url: url });
    expect(both.status).toBe(200);
    expect(both.body).toMatchObject({ id: staging.body.id, name: 'Mepmep', external_url: url });
    const nameOnly = await s.api('PUT', `${base(priv)}/${staging.body.id}`, cast.master, { name: 'prod/eu' });
    expect(nameOnly.body).toMatchObject({ name: 'prod/eu', external_url: url });
    expect((await envRows(priv.id))[1]).toEqual({ name: 'prod/eu', external_url: url, environment_type: 'prod' });
    const cleared = await s.api('PUT', `${base(priv)}/${staging.body.id}`, cast.master, { external_url: '' });
    expect(cleared.body).toMatchObject({ name: 'prod/eu', external_url: null });
    const nothing = await s.api('PUT', `${base(priv)}/${staging.body.id}`, cast.master, {});
    expect(nothing.status).toBe(200);
    expect(nothing.body).toMatchObject({ name: 'prod/eu', external_url: null });

    const removed = await s.api('DELETE', `${base(priv)}/${staging.body.id}`, cast.master);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: staging.body.id, name: 'prod/eu' });
    expect((await envRows(priv.id)).map((e) => e.name)).toEqual(['review/feature-1']);
    expect((await s.api('DELETE', `${base(priv)}/${staging.body.id}`, cast.master)).status).toBe(404);
  });

  it('works with the project path as :id', async () => {
    const r = await s.api('GET', `/projects/${encodeURIComponent(priv.path_with_namespace)}/environments`, cast.owner);
    expect(r.status).toBe(200);
    expect(r.body[0].name).toBe('review/feature-1');
  });

  it('deletes the environments with their project', async () => {
    const doomed = await makeProject(s, cast.owner, 'doomed-envs');
    expect((await s.api('POST', base(doomed), cast.owner, { name: 'gone' })).status).toBe(201);
    expect((await s.api('DELETE', `/projects/${doomed.id}`, cast.owner)).status).toBe(200);
    expect(await envRows(doomed.id)).toEqual([]);
  });
});

describe('validation and 404s', () => {
  it('answers 400 with the errors hash for a taken, badly formed, blank or too long name, and a bad or taken URL; nothing changes', async () => {
    const before = await envRows(priv.id);
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ name: 'review/feature-1' }, { name: ['has already been taken'] }],
      [{ name: 'production|staging' }, { name: [NAME_FORMAT] }],
      [{ name: '' }, { name: ["can't be blank", NAME_FORMAT] }],
      [{ name: '   ' }, { name: ["can't be blank"] }],
      [{ name: 'x'.repeat(256) }, { name: ['is too long (maximum is 255 characters)'] }],
      [{ name: 'ok', external_url: 'test.gitlab.com' }, { external_url: ['must be a valid URL'] }],
      [{ name: 'ok', external_url: 'ftp://files.example.com' }, { external_url: ['must be a valid URL'] }],
      [{ name: 'ok', external_url: 'https://nul\u0000.example.com' }, { external_url: ['must be a valid URL'] }],
      [{ name: 'nul\u0000name' }, { name: [NAME_FORMAT] }],
      [{ name: 'ok', external_url: `https://${'a'.repeat(250)}.com` }, { external_url: ['is too long (maximum is 255 characters)'] }],
      [{ name: 'ok', external_url: 'https://feature-1.example.com' }, { external_url: ['has already been taken'] }],
      [{ name: 'a|b', external_url: 'nope' }, { name: [NAME_FORMAT], external_url: ['must be a valid URL'] }],
    ];
    for (const [body, message] of cases) {
      const r = await s.api('POST', base(priv), cast.master, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body, JSON.stringify(body)).toEqual({ message });
    }
    expect(await envRows(priv.id)).toEqual(before);
  });

  it('requires a name (400 "name" not given)', async () => {
    const r = await s.api('POST', base(priv), cast.master, { external_url: 'https://env.example.com' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: '400 (Bad request) "name" not given' });
    expect((await s.api('POST', base(priv), cast.master)).status).toBe(400);
  });

  it('validates edits the same way (a blank name may not erase the name); nothing changes', async () => {
    const other = await s.api('POST', base(priv), cast.master, { name: 'other', external_url: 'https://other.example.com' });
    const id = other.body.id as number;
    for (const [body, message] of [
      [{ name: 'review/feature-1' }, { name: ['has already been taken'] }],
      [{ name: '' }, { name: ["can't be blank", NAME_FORMAT] }],
      [{ name: 'bad|name' }, { name: [NAME_FORMAT] }],
      [{ external_url: 'https://feature-1.example.com' }, { external_url: ['has already been taken'] }],
      [{ external_url: 'not a url' }, { external_url: ['must be a valid URL'] }],
    ] as const) {
      const r = await s.api('PUT', `${base(priv)}/${id}`, cast.master, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toEqual({ message });
    }
    // its own name and URL are not "taken"
    expect((await s.api('PUT', `${base(priv)}/${id}`, cast.master, { name: 'other', external_url: 'https://other.example.com' })).status).toBe(200);
    expect((await envRows(priv.id)).find((e) => e.name === 'other')).toEqual({ name: 'other', external_url: 'https://other.example.com', environment_type: null });
  });

  it('answers 404 Not found for an unknown environment or one of another project, 400 for a non-numeric id', async () => {
    const theirs = await s.api('POST', base(pub), cast.master, { name: 'public-one' });
    for (const id of [999999, theirs.body.id, 99999999999]) {
      for (const method of ['PUT', 'DELETE'] as const) {
        const r = await s.api(method, `${base(priv)}/${id}`, cast.master, method === 'PUT' ? { name: 'x' } : undefined);
        expect(r.status, `${method} ${id}`).toBe(404);
        expect(r.body).toEqual({ message: '404 Not found' });
      }
    }
    expect((await s.api('PUT', `${base(priv)}/abc`, cast.master, { name: 'x' })).status).toBe(400);
    expect((await s.api('GET', `${base(pub)}`, cast.master)).body.map((e: { name: string }) => e.name)).toEqual(['public-one']);
  });

  it('answers 404 Project Not Found for a missing project', async () => {
    const r = await s.api('GET', '/projects/999999/environments', cast.master);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 Project Not Found' });
  });

  it('two creates of one name at once: one 201, one 400 taken', async () => {
    const [a, b] = await Promise.all([
      s.api('POST', base(pub), cast.master, { name: 'race' }),
      s.api('POST', base(pub), cast.master, { name: 'race' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 400]);
    expect([a, b].find((r) => r.status === 400)!.body).toEqual({ message: { name: ['has already been taken'] } });
  });
});

describe('authorization (8.13: read reporter, create developer, edit and delete master)', () => {
  const levels = { guest: 10, reporter: 20, developer: 30, master: 40, owner: 50, admin: 100 } as const;
  for (const [label, project] of [['private', () => priv], ['public', () => pub]] as const) {
    it(`on a ${label} project`, async () => {
      const p = project();
      const target = (await s.api('POST', base(p), cast.owner, { name: `target-${label}` })).body.id as number;
      expect((await s.api('GET', base(p), null)).status).toBe(401);
      expect((await s.api('POST', base(p), null, { name: 'anon' })).status).toBe(401);
      for (const [role, level] of Object.entries(levels) as [keyof typeof levels, number][]) {
        const read = await s.api('GET', base(p), cast[role]);
        expect(read.status, `${role} GET`).toBe(level >= 20 ? 200 : 403);
        const create = await s.api('POST', base(p), cast[role], { name: `by-${role}` });
        expect(create.status, `${role} POST`).toBe(level >= 30 ? 201 : 403);
        const edit = await s.api('PUT', `${base(p)}/${target}`, cast[role], { external_url: `https://${role}.example.com` });
        expect(edit.status, `${role} PUT`).toBe(level >= 40 ? 200 : 403);
        if (level < 40) {
          expect(edit.body).toEqual({ message: '403 Forbidden' });
          expect((await s.api('DELETE', `${base(p)}/${target}`, cast[role])).status, `${role} DELETE`).toBe(403);
        }
      }
      for (const outsider of [cast.nonMember, cast.external]) {
        const r = await s.api('GET', base(p), outsider);
        expect(r.status).toBe(label === 'private' ? 404 : 403);
        expect((await s.api('POST', base(p), outsider, { name: 'outsider' })).status).toBe(r.status);
      }
      // the refusals changed nothing; who may delete does
      expect((await envRows(p.id)).map((e) => e.name)).not.toContain('outsider');
      expect((await s.api('DELETE', `${base(p)}/${target}`, cast.admin)).status).toBe(200);
      // the forbidden check comes before body validation
      expect((await s.api('POST', base(p), cast.reporter, {})).status).toBe(403);
    });
  }

  it('are gone with builds disabled on the project (8.13 disabled_features!)', async () => {
    const p = await makeProject(s, cast.owner, 'no-builds-envs', { visibility: 20 });
    expect((await s.api('PUT', `/projects/${p.id}`, cast.owner, { builds_enabled: false })).status).toBe(200);
    expect((await s.api('GET', base(p), cast.owner)).status).toBe(403);
    expect((await s.api('POST', base(p), cast.admin, { name: 'x' })).status).toBe(403);
  });
});

describe('OpenAPI', () => {
  it('lists the environment and deployment routes', async () => {
    const doc = (await s.app.inject({ method: 'GET', url: '/api/v3/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/api/v3/projects/{id}/environments'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/v3/projects/{id}/environments/{environment_id}'] ?? {}).sort()).toEqual(['delete', 'put']);
    expect(Object.keys(doc.paths['/api/v3/projects/{id}/deployments'] ?? {})).toEqual(['get']);
    expect(Object.keys(doc.paths['/api/v3/projects/{id}/deployments/{deployment_id}'] ?? {})).toEqual(['get']);
  });
});
