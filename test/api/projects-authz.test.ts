/**
 * Authorization matrix of the projects resource: for private (0), internal (10) and public (20) projects, every
 * kind of caller (anonymous, non-member, external non-member, guest .. master, owner, admin) against each route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';

type Actor = 'anonymous' | 'nonMember' | 'external' | 'guest' | 'reporter' | 'developer' | 'master' | 'owner' | 'admin';
const ACTORS: Actor[] = ['anonymous', 'nonMember', 'external', 'guest', 'reporter', 'developer', 'master', 'owner', 'admin'];
const LEVEL: Record<Actor, number> = { anonymous: 0, nonMember: 0, external: 0, guest: 10, reporter: 20, developer: 30, master: 40, owner: 50, admin: 100 };
const VISIBILITIES = [0, 10, 20] as const;

let s: TestServer;
let cast: Cast;
const projects: Record<number, { id: number; name: string }> = {};

const who = (a: Actor): TestUser | null => (a === 'anonymous' ? null : cast[a]);

/** Whether an actor sees a project of this visibility at all. */
function sees(a: Actor, vis: number): boolean {
  if (a === 'anonymous') return false;
  if (LEVEL[a] > 0) return true;
  return a === 'external' ? vis === 20 : vis >= 10;
}

/**
 * The status an actor should get: 401 anonymous, 404 hidden, `ok` with at least `min` access (or as a non-member when
 * `nonMembers` is set for visible projects), else 403.
 */
function expected(a: Actor, vis: number, min: number, ok: number, nonMembers = false): number {
  if (a === 'anonymous') return 401;
  if (!sees(a, vis)) return 404;
  if (LEVEL[a] >= min) return ok;
  if (LEVEL[a] === 0 && nonMembers) return ok;
  return 403;
}

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'm');
  for (const vis of VISIBILITIES) {
    const p = await makeProject(s, cast.owner, `matrix-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    projects[vis] = { id: p.id, name: `matrix-${vis}` };
  }
});
afterAll(async () => { await s.close(); });

interface Case {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: (id: number) => string;
  body?: (a: Actor, vis: number) => unknown;
  expect: (a: Actor, vis: number) => number;
}

const CASES: Case[] = [
  { name: 'GET project', method: 'GET', path: (id) => `/projects/${id}`, expect: (a, v) => expected(a, v, 10, 200, true) },
  { name: 'GET events', method: 'GET', path: (id) => `/projects/${id}/events`, expect: (a, v) => expected(a, v, 10, 200, true) },
  { name: 'POST star', method: 'POST', path: (id) => `/projects/${id}/star`, expect: (a, v) => expected(a, v, 10, 201, true) },
  { name: 'PUT settings', method: 'PUT', path: (id) => `/projects/${id}`, body: (a) => ({ description: `by ${a}` }), expect: (a, v) => expected(a, v, 40, 200) },
  { name: 'PUT rename', method: 'PUT', path: (id) => `/projects/${id}`, body: (a, v) => ({ name: `renamed ${v} by ${a}` }), expect: (a, v) => expected(a, v, 50, 200) },
  { name: 'PUT visibility', method: 'PUT', path: (id) => `/projects/${id}`, body: () => ({ visibility_level: 0 }), expect: (a, v) => (v === 0 && LEVEL[a] >= 40 ? 200 : expected(a, v, 50, 200)) },
  { name: 'POST archive', method: 'POST', path: (id) => `/projects/${id}/archive`, expect: (a, v) => expected(a, v, 50, 201) },
  { name: 'POST unarchive', method: 'POST', path: (id) => `/projects/${id}/unarchive`, expect: (a, v) => expected(a, v, 50, 201) },
  { name: 'GET hooks', method: 'GET', path: (id) => `/projects/${id}/hooks`, expect: (a, v) => expected(a, v, 40, 200) },
  { name: 'POST hook', method: 'POST', path: (id) => `/projects/${id}/hooks`, body: () => ({ url: 'http://hooks.example/' }), expect: (a, v) => expected(a, v, 40, 201) },
  // Authorization comes before parameter checks, so a permitted caller without params gets 400.
  { name: 'POST share (no params)', method: 'POST', path: (id) => `/projects/${id}/share`, body: () => ({}), expect: (a, v) => expected(a, v, 40, 400) },
  {
    name: 'POST fork', method: 'POST', path: (id) => `/projects/fork/${id}`,
    // Reporters and up fork private projects; anyone who sees an internal or public one may fork it.
    // The owner's own namespace already holds the path: 409.
    expect: (a, v) => (a === 'owner' ? 409 : expected(a, v, v === 0 ? 20 : 10, 201, true)),
  },
  { name: 'DELETE fork link', method: 'DELETE', path: (id) => `/projects/${id}/fork`, expect: (a, v) => expected(a, v, 50, 304) },
];

describe.each(VISIBILITIES)('project with visibility %i', (vis) => {
  for (const c of CASES) {
    it(c.name, async () => {
      const { id } = projects[vis]!;
      const got: Record<string, number> = {};
      const want: Record<string, number> = {};
      for (const a of ACTORS) {
        // Visibility changes are undone so that the next actor meets the same project.
        const r = await s.api(c.method, c.path(id), who(a), c.body?.(a, vis));
        got[a] = r.status;
        want[a] = c.expect(a, vis);
        if (c.name === 'PUT visibility' && r.status === 200) await s.api('PUT', `/projects/${id}`, cast.owner, { visibility_level: vis });
      }
      expect(got).toEqual(want);
    });
  }

  it('DELETE project: owner or admin only', async () => {
    const p = await makeProject(s, cast.owner, `doomed-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    const got: Record<string, number> = {};
    const want: Record<string, number> = {};
    for (const a of ACTORS.filter((x) => x !== 'owner' && x !== 'admin')) {
      got[a] = (await s.api('DELETE', `/projects/${p.id}`, who(a))).status;
      want[a] = expected(a, vis, 50, 200);
    }
    expect(got).toEqual(want);
    const deleter = vis === 10 ? cast.admin : cast.owner;
    const r = await s.api('DELETE', `/projects/${p.id}`, deleter);
    expect(r.status).toBe(200);
    expect(r.body).toBe(true);
  });
});

describe('lists and membership', () => {
  it('GET /projects lists member projects for every role, not for outsiders', async () => {
    const ids = Object.values(projects).map((p) => p.id).sort();
    for (const a of ['guest', 'reporter', 'developer', 'master', 'owner'] as const) {
      const r = await s.api('GET', '/projects?per_page=100', cast[a]);
      const listed = r.body.map((p: { id: number }) => p.id);
      for (const id of ids) expect(listed).toContain(id);
    }
    for (const a of ['nonMember', 'external'] as const) {
      const listed = (await s.api('GET', '/projects?per_page=100', cast[a])).body.map((p: { id: number }) => p.id);
      for (const id of ids) expect(listed).not.toContain(id);
    }
  });
  it('external users see public projects only, in /projects/visible too', async () => {
    const visible = (await s.api('GET', '/projects/visible?per_page=100', cast.external)).body.map((p: { id: number }) => p.id);
    expect(visible).toContain(projects[20]!.id);
    expect(visible).not.toContain(projects[10]!.id);
    expect(visible).not.toContain(projects[0]!.id);
  });
});
