/** Project secret variables: /projects/:id/variables CRUD, validation, 404s, authorization, sealed storage, runner payload. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { claim, clearQueue, exec, insertBuild, insertPipeline, registerRunner } from '../helpers/runner-fixtures.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let cast: Cast;
let priv: { id: number; path_with_namespace: string };
let pub: { id: number; path_with_namespace: string };

const base = (p: { id: number }) => `/projects/${p.id}/variables`;
const rawRow = async (projectId: number, key: string) =>
  (await s.ctx.data.get(`SELECT * FROM ci_variables WHERE project_id = ? AND key = ?`, [projectId, key])) as { value: string } | undefined;

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'var');
  priv = await makeProject(s, cast.owner, 'secret-vars', { visibility: 0 });
  pub = await makeProject(s, cast.owner, 'public-vars', { visibility: 20 });
  await addCastMembers(s.ctx, cast, priv.id);
  await addCastMembers(s.ctx, cast, pub.id);
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

describe('CRUD', () => {
  it('creates (201), shows, lists with pagination headers, updates and deletes', async () => {
    const created = await s.api('POST', base(priv), cast.master, { key: 'DEPLOY_TOKEN', value: 's3cret value' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ key: 'DEPLOY_TOKEN', value: 's3cret value' });
    expect((await s.api('POST', base(priv), cast.master, { key: 'OTHER_1', value: 'two' })).status).toBe(201);

    const one = await s.api('GET', `${base(priv)}/DEPLOY_TOKEN`, cast.master);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ key: 'DEPLOY_TOKEN', value: 's3cret value' });

    const list = await s.api('GET', `${base(priv)}?per_page=1`, cast.master);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([{ key: 'DEPLOY_TOKEN', value: 's3cret value' }]);
    expect(list.headers['x-total']).toBe('2');
    expect(list.headers['x-total-pages']).toBe('2');
    expect(list.headers['x-next-page']).toBe('2');
    const page2 = await s.api('GET', `${base(priv)}?per_page=1&page=2`, cast.master);
    expect(page2.body).toEqual([{ key: 'OTHER_1', value: 'two' }]);

    const updated = await s.api('PUT', `${base(priv)}/OTHER_1`, cast.master, { value: 'changed' });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ key: 'OTHER_1', value: 'changed' });
    // PUT without a value changes nothing
    const same = await s.api('PUT', `${base(priv)}/OTHER_1`, cast.master, {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual({ key: 'OTHER_1', value: 'changed' });

    const removed = await s.api('DELETE', `${base(priv)}/OTHER_1`, cast.master);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ key: 'OTHER_1', value: 'changed' });
    expect((await s.api('GET', `${base(priv)}/OTHER_1`, cast.master)).status).toBe(404);
  });

  it('works with the project path as :id', async () => {
    const r = await s.api('GET', `/projects/${encodeURIComponent(priv.path_with_namespace)}/variables/DEPLOY_TOKEN`, cast.owner);
    expect(r.status).toBe(200);
    expect(r.body.key).toBe('DEPLOY_TOKEN');
  });

  it('stores values sealed, never in plain text', async () => {
    const row = (await rawRow(priv.id, 'DEPLOY_TOKEN'))!;
    expect(row).toBeDefined();
    expect(row.value).not.toContain('s3cret');
    expect(row.value).toMatch(/^v1\./);
    expect(s.ctx.secrets.open(row.value)).toBe('s3cret value');
  });

  it('deletes the variables with their project', async () => {
    const doomed = await makeProject(s, cast.owner, 'doomed-vars');
    expect((await s.api('POST', base(doomed), cast.owner, { key: 'GONE', value: 'x' })).status).toBe(201);
    await exec(s, `DELETE FROM projects WHERE id = ?`, [doomed.id]);
    expect(await rawRow(doomed.id, 'GONE')).toBeUndefined();
  });
});

describe('validation and 404s', () => {
  it('rejects a taken key, a bad key and a too-long key with the validation hash (400), changing nothing', async () => {
    const taken = await s.api('POST', base(priv), cast.master, { key: 'DEPLOY_TOKEN', value: 'other' });
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ message: { key: ['has already been taken'] } });
    expect((await s.api('GET', `${base(priv)}/DEPLOY_TOKEN`, cast.master)).body.value).toBe('s3cret value');

    const bad = await s.api('POST', base(priv), cast.master, { key: 'BAD-KEY', value: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: { key: ["can contain only letters, digits and '_'."] } });

    const long = await s.api('POST', base(priv), cast.master, { key: 'K'.repeat(256), value: 'x' });
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ message: { key: ['is too long (maximum is 255 characters)'] } });
    expect((await s.api('POST', base(priv), cast.master, { key: 'K'.repeat(255), value: 'x' })).status).toBe(201);
    expect((await s.api('DELETE', `${base(priv)}/${'K'.repeat(255)}`, cast.master)).status).toBe(200);
    expect((await s.api('GET', base(priv), cast.master)).headers['x-total']).toBe('1');
  });

  it('requires key and value', async () => {
    const noKey = await s.api('POST', base(priv), cast.master, { value: 'x' });
    expect(noKey.status).toBe(400);
    expect(noKey.body).toEqual({ message: '400 (Bad request) "key" not given' });
    const noValue = await s.api('POST', base(priv), cast.master, { key: 'NO_VALUE' });
    expect(noValue.status).toBe(400);
    expect(noValue.body).toEqual({ message: '400 (Bad request) "value" not given' });
    const blank = await s.api('POST', base(priv), cast.master, { key: 'NO_VALUE', value: '' });
    expect(blank.status).toBe(400);
    expect((await s.api('GET', `${base(priv)}/NO_VALUE`, cast.master)).status).toBe(404);
  });

  it('answers 404 Variable Not Found for a missing key on GET, PUT and DELETE', async () => {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const r = await s.api(method, `${base(priv)}/MISSING`, cast.master, method === 'PUT' ? { value: 'x' } : undefined);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Variable Not Found' });
    }
    expect((await s.api('PUT', `${base(priv)}/MISSING`, cast.master, { value: 'x' })).status).toBe(404);
    expect((await s.api('GET', `${base(priv)}/MISSING`, cast.master)).status).toBe(404);
  });

  it('answers 404 Project Not Found for a missing project', async () => {
    const r = await s.api('GET', '/projects/999999/variables', cast.master);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 Project Not Found' });
  });
});

describe('authorization (admin_build: master and up)', () => {
  const expected = { owner: 200, master: 200, admin: 200, developer: 403, reporter: 403, guest: 403 } as const;

  for (const [label, project] of [['private', () => priv], ['public', () => pub]] as const) {
    it(`on a ${label} project`, async () => {
      const p = project();
      const anon = await s.api('GET', base(p), null);
      expect(anon.status).toBe(401);
      for (const [role, status] of Object.entries(expected) as [keyof typeof expected, number][]) {
        const r = await s.api('GET', base(p), cast[role]);
        expect(r.status, `${role} GET`).toBe(status);
        if (status === 403) {
          expect(r.body).toEqual({ message: '403 Forbidden' });
          const post = await s.api('POST', base(p), cast[role], { key: `BY_${role.toUpperCase()}`, value: 'x' });
          expect(post.status, `${role} POST`).toBe(403);
          expect((await s.api('DELETE', `${base(p)}/DEPLOY_TOKEN`, cast[role])).status).toBe(403);
        }
      }
      const outsider = await s.api('GET', base(p), cast.nonMember);
      expect(outsider.status).toBe(label === 'private' ? 404 : 403);
      if (label === 'private') expect(outsider.body).toEqual({ message: '404 Project Not Found' });
      // the forbidden check comes before body validation
      expect((await s.api('POST', base(p), cast.developer, {})).status).toBe(403);
    });
  }

  it('lets the admin and the owner write', async () => {
    expect((await s.api('POST', base(pub), cast.admin, { key: 'ADMIN_SET', value: 'a' })).status).toBe(201);
    expect((await s.api('PUT', `${base(pub)}/ADMIN_SET`, cast.owner, { value: 'b' })).body).toEqual({ key: 'ADMIN_SET', value: 'b' });
    expect((await s.api('DELETE', `${base(pub)}/ADMIN_SET`, cast.owner)).status).toBe(200);
  });
});

describe('runner payload', () => {
  it('sends the project\'s secret variables after the YAML variables, with public: false', async () => {
    await clearQueue(s);
    const project = await makeProject(s, cast.owner, 'ci-vars');
    expect((await s.api('POST', base(project), cast.owner, { key: 'SECRET_A', value: 'alpha' })).status).toBe(201);
    expect((await s.api('POST', base(project), cast.owner, { key: 'SECRET_B', value: 'beta' })).status).toBe(201);
    const runner = await registerRunner(s, { description: 'vars runner' });
    const pipeline = await insertPipeline(s, project.id);
    await insertBuild(s, project.id, pipeline, { variables: [{ key: 'YAML_VAR', value: 'y', public: true }] });
    const b = await claim(s, runner.token);
    const vars = b.variables as { key: string; value: string; public: boolean }[];
    const at = (k: string) => vars.findIndex((v) => v.key === k);
    expect(vars.find((v) => v.key === 'SECRET_A')).toEqual({ key: 'SECRET_A', value: 'alpha', public: false });
    expect(vars.find((v) => v.key === 'SECRET_B')).toEqual({ key: 'SECRET_B', value: 'beta', public: false });
    expect(at('SECRET_A')).toBeGreaterThan(at('YAML_VAR'));
    expect(at('SECRET_B')).toBe(at('SECRET_A') + 1);
    expect(vars.at(-1)!.key).toBe('SECRET_B');
    // other projects' variables are not sent
    expect(at('DEPLOY_TOKEN')).toBe(-1);
  });
});
