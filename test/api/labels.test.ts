/**
 * Labels: GET/POST/PUT/DELETE /projects/:id/labels and label subscriptions, with the spec's error bodies, counts that
 * respect confidentiality, pagination, and the authorization matrix over private, internal and public projects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import {
  ACTORS, countStatements, expectedStatus, insertIssue, insertLabel, insertMergeRequest, linkLabel,
  sqlValue, type Actor,
} from '../helpers/collaboration.js';
import { findOrCreateLabels, labelsByTitle, setTargetLabels } from '../../daemon/services/collaboration/labels.js';
import { labelTitlesOf } from '../../daemon/db/labels.js';
import {
  subscribe, subscribedSet, unsubscribe,
} from '../../daemon/services/collaboration/subscriptions.js';

let s: TestServer;
let cast: Cast;
let project: { id: number; path_with_namespace: string };

const who = (a: Actor): TestUser | null => (a === 'anonymous' ? null : cast[a]);
const count = async (table: string, projectId: number) => (await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM ${table} WHERE project_id = ?`, [projectId]))!;
const labelRow = (projectId: number, title: string) => s.ctx.data.get<Record<string, unknown>>(`SELECT * FROM labels WHERE project_id = ? AND title = ?`, [projectId, title]);

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'l');
  project = await makeProject(s, cast.owner, 'labels-main', { visibility: 0 });
  await addCastMembers(s.ctx, cast, project.id);
});
afterAll(async () => { await s.close(); });

function expectLabelShape(l: Record<string, unknown>) {
  expect(Object.keys(l).sort()).toEqual(
    ['closed_issues_count', 'color', 'description', 'id', 'name', 'open_issues_count', 'open_merge_requests_count', 'subscribed'],
  );
  expect(typeof l.id).toBe('number');
  expect(typeof l.name).toBe('string');
  expect(l.color).toMatch(/^#[0-9A-Fa-f]{6}$/);
  expect(l.description === null || typeof l.description === 'string').toBe(true);
  for (const k of ['open_issues_count', 'closed_issues_count', 'open_merge_requests_count']) expect(Number.isInteger(l[k])).toBe(true);
  expect(typeof l.subscribed).toBe('boolean');
}

describe('POST /projects/:id/labels', () => {
  it('creates a label: 201 with the Label entity', async () => {
    const r = await s.api('POST', `/projects/${project.id}/labels`, cast.reporter, { name: 'bug', color: '#FF0000', description: 'Broken things' });
    expect(r.status).toBe(201);
    expectLabelShape(r.body);
    expect(r.body).toMatchObject({ name: 'bug', color: '#FF0000', description: 'Broken things', open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0, subscribed: false });
  });

  it('accepts a project path and a form body; description is optional (null)', async () => {
    const r = await s.app.inject({
      method: 'POST', url: `/api/v3/projects/${encodeURIComponent(project.path_with_namespace)}/labels`,
      headers: { 'private-token': cast.master.token, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=feature&color=%2300ff00',
    });
    expect(r.statusCode).toBe(201);
    expect(JSON.parse(r.body)).toMatchObject({ name: 'feature', color: '#00ff00', description: null });
  });

  it('409 Label already exists for an existing name, and nothing changes', async () => {
    const before = await count('labels', project.id);
    const r = await s.api('POST', `/projects/${project.id}/labels`, cast.reporter, { name: 'bug', color: '#00FF00' });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ message: 'Label already exists' });
    expect(await count('labels', project.id)).toBe(before);
    expect((await labelRow(project.id, 'bug'))!.color).toBe('#FF0000');
  });

  it('two creates of one name at once: one 201, one 409 Label already exists, one row', async () => {
    const rs = await Promise.all([0, 1].map(() => s.api('POST', `/projects/${project.id}/labels`, cast.reporter, { name: 'racing', color: '#00FF00' })));
    expect(rs.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(rs.find((r) => r.status === 409)!.body).toEqual({ message: 'Label already exists' });
    expect(await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM labels WHERE project_id = ? AND title = 'racing'`, [project.id])).toBe(1);
  });

  it('two deletes of one label at once: one 200, one 404', async () => {
    await insertLabel(s.ctx, project.id, 'twice-deleted');
    const rs = await Promise.all([0, 1].map(() => s.api('DELETE', `/projects/${project.id}/labels?name=twice-deleted`, cast.reporter)));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 404]);
  });

  it('a subscription and a delete of one label at once: the subscription answers 201 or 404, and none outlives the label', async () => {
    const id = await insertLabel(s.ctx, project.id, 'watched-going');
    const [sub, del] = await Promise.all([
      s.api('POST', `/projects/${project.id}/labels/${id}/subscription`, cast.guest),
      s.api('DELETE', `/projects/${project.id}/labels?name=watched-going`, cast.reporter),
    ]);
    expect(del.status).toBe(200);
    expect([201, 404]).toContain(sub.status);
    expect(await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM subscriptions WHERE subscribable_type = 'Label' AND subscribable_id = ?`, [id])).toBe(0);
  });

  it('names are case-sensitive (as 8.x): "Bug" is another label', async () => {
    const r = await s.api('POST', `/projects/${project.id}/labels`, cast.reporter, { name: 'Bug', color: '#00FF00' });
    expect(r.status).toBe(201);
  });

  it('400 "name" not given / "color" not given (blank counts as missing)', async () => {
    const before = await count('labels', project.id);
    for (const [body, attr] of [[{ color: '#FF0000' }, 'name'], [{ name: '', color: '#FF0000' }, 'name'], [{ name: 'x1' }, 'color'], [{ name: 'x1', color: '' }, 'color'], [undefined, 'name']] as const) {
      const r = await s.api('POST', `/projects/${project.id}/labels`, cast.reporter, body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: `400 (Bad request) "${attr}" not given` });
    }
    expect(await count('labels', project.id)).toBe(before);
  });

  it('400 with the validation body for a bad color, nothing written', async () => {
    const before = await count('labels', project.id);
    for (const color of ['red', '#FF00', '#GGGGGG', 'FF0000', '#FF00001', '#F00']) {
      const r = await s.api('POST', `/projects/${project.id}/labels`, cast.reporter, { name: `c-${color}`, color });
      expect(r.status, color).toBe(400);
      expect(r.body).toEqual({ message: { color: ['must be a valid color code'] } });
    }
    expect(await count('labels', project.id)).toBe(before);
  });

  it('400 with the validation body for a bad title (&, ?, comma, too long) or a too long description', async () => {
    const before = await count('labels', project.id);
    for (const name of ['a&b', 'why?', 'a,b', 'x'.repeat(256)]) {
      const r = await s.api('POST', `/projects/${project.id}/labels`, cast.reporter, { name, color: '#FF0000' });
      expect(r.status, name.slice(0, 20)).toBe(400);
      expect(Object.keys(r.body.message)).toEqual(['title']);
    }
    const big = await s.api('POST', `/projects/${project.id}/labels`, cast.reporter, { name: 'big', color: '#FF0000', description: 'd'.repeat(1024 * 1024) });
    expect(big.status).toBe(400);
    expect(big.body.message.description[0]).toMatch(/too long/);
    expect(await count('labels', project.id)).toBe(before);
  });

  it('keeps unicode and 255-character names intact', async () => {
    for (const name of ['バグ 🐛', 'ü'.repeat(255), 'with space / slash']) {
      const r = await s.api('POST', `/projects/${project.id}/labels`, cast.reporter, { name, color: '#123456' });
      expect(r.status).toBe(201);
      expect(r.body.name).toBe(name);
    }
  });
});

describe('GET /projects/:id/labels', () => {
  let p: { id: number };
  let ids: Record<string, number>;
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, 'labels-counts', { visibility: 10 });
    await addCastMembers(s.ctx, cast, p.id);
    ids = { alpha: await insertLabel(s.ctx, p.id, 'alpha', { color: '#111111', description: 'first' }), beta: await insertLabel(s.ctx, p.id, 'beta'), gamma: await insertLabel(s.ctx, p.id, 'gamma') };
    const open1 = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id });
    const open2 = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id });
    const closed = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id, state: 'closed' });
    const secret = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id, confidential: true });
    const deleted = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id });
    await s.ctx.data.run(`UPDATE issues SET deleted_at = ? WHERE id = ?`, [new Date().toISOString(), deleted.id]);
    for (const i of [open1, open2, closed, secret, deleted]) await linkLabel(s.ctx, ids.alpha!, { type: 'Issue', id: i.id });
    await linkLabel(s.ctx, ids.beta!, { type: 'Issue', id: closed.id });
    const mr1 = await insertMergeRequest(s.ctx, p.id);
    const mr2 = await insertMergeRequest(s.ctx, p.id, { state: 'reopened' });
    const mr3 = await insertMergeRequest(s.ctx, p.id, { state: 'merged' });
    for (const m of [mr1, mr2, mr3]) await linkLabel(s.ctx, ids.alpha!, { type: 'MergeRequest', id: m });
  });

  it('lists labels by name with open/closed issue counts, open MR counts and subscribed', async () => {
    const r = await s.api('GET', `/projects/${p.id}/labels`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body.map((l: { name: string }) => l.name)).toEqual(['alpha', 'beta', 'gamma']);
    r.body.forEach(expectLabelShape);
    // Reporters see the confidential issue; the deleted one never counts; merged MRs do not count as open.
    expect(r.body[0]).toMatchObject({ id: ids.alpha, color: '#111111', description: 'first', open_issues_count: 3, closed_issues_count: 1, open_merge_requests_count: 2, subscribed: false });
    expect(r.body[1]).toMatchObject({ open_issues_count: 0, closed_issues_count: 1, open_merge_requests_count: 0 });
    expect(r.body[2]).toMatchObject({ open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0 });
  });

  it('does not count confidential issues the caller may not read (guest, non-member)', async () => {
    for (const u of [cast.guest, cast.nonMember]) {
      const r = await s.api('GET', `/projects/${p.id}/labels`, u);
      expect(r.status).toBe(200);
      expect(r.body[0].open_issues_count).toBe(2);
    }
  });

  it('paginates with every header', async () => {
    const r = await s.api('GET', `/projects/${p.id}/labels?per_page=2&page=2`, cast.guest);
    expect(r.status).toBe(200);
    expect(r.body.map((l: { name: string }) => l.name)).toEqual(['gamma']);
    expect(r.headers['x-total']).toBe('3');
    expect(r.headers['x-total-pages']).toBe('2');
    expect(r.headers['x-per-page']).toBe('2');
    expect(r.headers['x-page']).toBe('2');
    expect(r.headers['x-next-page']).toBe('');
    expect(r.headers['x-prev-page']).toBe('1');
    expect(String(r.headers.link)).toContain('rel="first"');
  });

  it('costs a fixed number of queries, whatever the page size', async () => {
    const big = await makeProject(s, cast.owner, 'labels-queries');
    for (let i = 0; i < 30; i++) {
      const l = await insertLabel(s.ctx, big.id, `l${String(i).padStart(2, '0')}`);
      await linkLabel(s.ctx, l, { type: 'Issue', id: (await insertIssue(s.ctx, big.id, { authorId: cast.owner.id })).id });
    }
    const statements = (perPage: number) => countStatements(s.ctx, async () => {
      const r = await s.api('GET', `/projects/${big.id}/labels?per_page=${perPage}`, cast.owner);
      expect(r.body).toHaveLength(perPage);
    });
    // A read may also pay for lookups kept until the next write being read again: on PostgreSQL that "write" is the
    // server's snapshot, which moves with every other database's writes (other test files). A query per label would
    // make thirty labels cost 29 statements more than one, every time; so page sizes 1 and 30 are measured in turn
    // until one pair is read without such a miss between them.
    await statements(1);
    let pair: number[] = [];
    for (let i = 0; i < 10; i++) {
      pair = [await statements(1), await statements(30)];
      if (pair[0] === pair[1]) break;
    }
    expect(pair[0]).toBeGreaterThan(0);
    expect(pair[1]).toBe(pair[0]);
  });

  it('an empty list has X-Total 0', async () => {
    const empty = await makeProject(s, cast.owner, 'labels-empty');
    const r = await s.api('GET', `/projects/${empty.id}/labels`, cast.owner);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
    expect(r.headers['x-total']).toBe('0');
  });

  it('404 Project Not Found for an unknown project', async () => {
    const r = await s.api('GET', `/projects/999999/labels`, cast.owner);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 Project Not Found' });
  });
});

describe('PUT /projects/:id/labels', () => {
  let p: { id: number };
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, 'labels-put');
    await addCastMembers(s.ctx, cast, p.id);
    await insertLabel(s.ctx, p.id, 'old', { color: '#000000', description: 'desc' });
    await insertLabel(s.ctx, p.id, 'taken', { color: '#000000' });
  });

  it('renames a label (new_name) and keeps its colour', async () => {
    const r = await s.api('PUT', `/projects/${p.id}/labels`, cast.reporter, { name: 'old', new_name: 'renamed' });
    expect(r.status).toBe(200);
    expectLabelShape(r.body);
    expect(r.body).toMatchObject({ name: 'renamed', color: '#000000', description: 'desc' });
    expect((await labelRow(p.id, 'old'))).toBeUndefined();
  });

  it('changes the colour (and description) only', async () => {
    const r = await s.api('PUT', `/projects/${p.id}/labels`, cast.reporter, { name: 'renamed', color: '#ABCDEF', description: 'new desc' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'renamed', color: '#ABCDEF', description: 'new desc' });
  });

  it('changes both at once, the name given in the query string', async () => {
    const r = await s.api('PUT', `/projects/${p.id}/labels?name=renamed`, cast.reporter, { new_name: 'both', color: '#FEDCBA' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'both', color: '#FEDCBA' });
  });

  it('400 when neither new_name nor color is given', async () => {
    const r = await s.api('PUT', `/projects/${p.id}/labels`, cast.reporter, { name: 'both', description: 'only this' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Required parameters "new_name" or "color" missing' });
    expect((await labelRow(p.id, 'both'))!.description).toBe('new desc');
  });

  it('400 "name" not given', async () => {
    const r = await s.api('PUT', `/projects/${p.id}/labels`, cast.reporter, { color: '#FFFFFF' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: '400 (Bad request) "name" not given' });
  });

  it('404 for an absent label (before the new_name/color check, as 8.x)', async () => {
    for (const body of [{ name: 'nope', color: '#FFFFFF' }, { name: 'nope' }]) {
      const r = await s.api('PUT', `/projects/${p.id}/labels`, cast.reporter, body);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Label not found Not Found' });
    }
  });

  it('409 when new_name belongs to another label; nothing changes', async () => {
    const r = await s.api('PUT', `/projects/${p.id}/labels`, cast.reporter, { name: 'both', new_name: 'taken', color: '#FFFFFF' });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ message: 'Label already exists' });
    expect((await labelRow(p.id, 'both'))!.color).toBe('#FEDCBA');
  });

  it('400 validation body for a bad colour or new name; nothing changes', async () => {
    const bad = await s.api('PUT', `/projects/${p.id}/labels`, cast.reporter, { name: 'both', new_name: 'fine', color: 'blue' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: { color: ['must be a valid color code'] } });
    const badName = await s.api('PUT', `/projects/${p.id}/labels`, cast.reporter, { name: 'both', new_name: 'a&b' });
    expect(badName.status).toBe(400);
    expect(badName.body).toEqual({ message: { title: ['is invalid'] } });
    const big = await s.api('PUT', `/projects/${p.id}/labels`, cast.reporter, { name: 'both', color: '#FFFFFF', description: 'x'.repeat(1024 * 1024) });
    expect(big.status).toBe(400);
    expect((await labelRow(p.id, 'both'))).toMatchObject({ color: '#FEDCBA', description: 'new desc' });
    expect((await labelRow(p.id, 'fine'))).toBeUndefined();
  });
});

describe('DELETE /projects/:id/labels', () => {
  let p: { id: number };
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, 'labels-delete');
    await addCastMembers(s.ctx, cast, p.id);
  });

  it('deletes by name (query string) and answers the raw label record; links and subscriptions go too', async () => {
    const id = await insertLabel(s.ctx, p.id, 'doomed', { color: '#010203', description: 'bye' });
    const issue = await insertIssue(s.ctx, p.id, { authorId: cast.owner.id });
    await linkLabel(s.ctx, id, { type: 'Issue', id: issue.id });
    expect((await s.api('POST', `/projects/${p.id}/labels/${id}/subscription`, cast.guest)).status).toBe(201);
    const r = await s.api('DELETE', `/projects/${p.id}/labels?name=doomed`, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id, title: 'doomed', color: '#010203', project_id: p.id, created_at: expect.any(String), updated_at: expect.any(String),
      template: false, description: 'bye', priority: null,
    });
    expect((await labelRow(p.id, 'doomed'))).toBeUndefined();
    expect(await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM label_links WHERE label_id = ?`, [id])).toBe(0);
    expect(await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM subscriptions WHERE subscribable_type = 'Label' AND subscribable_id = ?`, [id])).toBe(0);
  });

  it('deletes by name given in a JSON body', async () => {
    await insertLabel(s.ctx, p.id, 'body-named ✓');
    const r = await s.api('DELETE', `/projects/${p.id}/labels`, cast.reporter, { name: 'body-named ✓' });
    expect(r.status).toBe(200);
    expect(r.body.title).toBe('body-named ✓');
  });

  it('404 Label Not Found for an absent label', async () => {
    const r = await s.api('DELETE', `/projects/${p.id}/labels?name=ghost`, cast.reporter);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 Label Not Found' });
  });

  it('400 "name" not given', async () => {
    const r = await s.api('DELETE', `/projects/${p.id}/labels`, cast.reporter);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: '400 (Bad request) "name" not given' });
  });
});

describe('label subscriptions', () => {
  let p: { id: number };
  let id: number;
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, 'labels-subs', { visibility: 20 });
    await addCastMembers(s.ctx, cast, p.id);
    id = await insertLabel(s.ctx, p.id, 'watch me');
    await insertLabel(s.ctx, p.id, '12345');
  });

  it('subscribes by id: 201 with subscribed true, then 304', async () => {
    const r = await s.api('POST', `/projects/${p.id}/labels/${id}/subscription`, cast.guest);
    expect(r.status).toBe(201);
    expectLabelShape(r.body);
    expect(r.body).toMatchObject({ id, name: 'watch me', subscribed: true });
    const again = await s.api('POST', `/projects/${p.id}/labels/${id}/subscription`, cast.guest);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const list = await s.api('GET', `/projects/${p.id}/labels`, cast.guest);
    expect(list.body.find((l: { id: number }) => l.id === id).subscribed).toBe(true);
    const other = await s.api('GET', `/projects/${p.id}/labels`, cast.reporter);
    expect(other.body.find((l: { id: number }) => l.id === id).subscribed).toBe(false);
  });

  it('unsubscribes by title: 200 with subscribed false, then 304', async () => {
    const r = await s.api('DELETE', `/projects/${p.id}/labels/${encodeURIComponent('watch me')}/subscription`, cast.guest);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, subscribed: false });
    const again = await s.api('DELETE', `/projects/${p.id}/labels/${encodeURIComponent('watch me')}/subscription`, cast.guest);
    expect(again.status).toBe(304);
  });

  it('finds a title with a slash, spaces and unicode when URL-encoded', async () => {
    await insertLabel(s.ctx, p.id, 'area/ui ✓');
    const r = await s.api('POST', `/projects/${p.id}/labels/${encodeURIComponent('area/ui ✓')}/subscription`, cast.guest);
    expect(r.status).toBe(201);
    expect(r.body.name).toBe('area/ui ✓');
  });

  it('a non-member of a public project may subscribe; a digit-only title is found when no id matches', async () => {
    const r = await s.api('POST', `/projects/${p.id}/labels/12345/subscription`, cast.nonMember);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: '12345', subscribed: true });
  });

  it('404 Label Not Found for an unknown id or title, and for a label of another project', async () => {
    const other = await makeProject(s, cast.owner, 'labels-subs-other');
    const foreign = await insertLabel(s.ctx, other.id, 'foreign');
    for (const ref of ['999999', 'nope', String(foreign)]) {
      for (const method of ['POST', 'DELETE'] as const) {
        const r = await s.api(method, `/projects/${p.id}/labels/${ref}/subscription`, cast.guest);
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ message: '404 Label Not Found' });
      }
    }
  });
});

describe('labels when issues and merge requests are both disabled', () => {
  it('answers 403 (read_label is removed, as 8.x)', async () => {
    const p = await makeProject(s, cast.owner, 'labels-off', { extra: { issues_enabled: false, merge_requests_enabled: false } });
    expect((await s.api('GET', `/projects/${p.id}/labels`, cast.owner)).status).toBe(403);
    expect((await s.api('POST', `/projects/${p.id}/labels`, cast.owner, { name: 'x', color: '#000000' })).status).toBe(403);
  });
});

describe.each([0, 10, 20])('authorization on a project of visibility %i', (vis) => {
  let p: { id: number };
  beforeAll(async () => {
    p = await makeProject(s, cast.owner, `labels-authz-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
  });

  it.each(ACTORS)('GET list as %s', async (a) => {
    const r = await s.api('GET', `/projects/${p.id}/labels`, who(a));
    expect(r.status).toBe(expectedStatus(a, vis, 10, 200, true));
  });

  it.each(ACTORS)('POST, PUT, DELETE as %s (reporters and up); a refused write changes nothing', async (a) => {
    const name = `by-${a}`;
    const before = await count('labels', p.id);
    const created = await s.api('POST', `/projects/${p.id}/labels`, who(a), { name, color: '#0000FF' });
    const want = expectedStatus(a, vis, 20, 201);
    expect(created.status).toBe(want);
    if (want !== 201) {
      expect(await count('labels', p.id)).toBe(before);
      await insertLabel(s.ctx, p.id, name);
    }
    const updated = await s.api('PUT', `/projects/${p.id}/labels`, who(a), { name, color: '#00FFFF' });
    expect(updated.status).toBe(expectedStatus(a, vis, 20, 200));
    if (want !== 201) expect((await labelRow(p.id, name))!.color).toBe('#428BCA');
    const deleted = await s.api('DELETE', `/projects/${p.id}/labels?name=${name}`, who(a));
    expect(deleted.status).toBe(expectedStatus(a, vis, 20, 200));
    expect((await labelRow(p.id, name)) === undefined).toBe(want === 201);
  });

  it.each(ACTORS)('subscribe and unsubscribe as %s (anyone who reads the project)', async (a) => {
    const id = await insertLabel(s.ctx, p.id, `sub-${a}`);
    expect((await s.api('POST', `/projects/${p.id}/labels/${id}/subscription`, who(a))).status).toBe(expectedStatus(a, vis, 10, 201, true));
    expect((await s.api('DELETE', `/projects/${p.id}/labels/${id}/subscription`, who(a))).status).toBe(expectedStatus(a, vis, 10, 200, true));
  });

  it('the 401 and 404 bodies', async () => {
    const anon = await s.api('GET', `/projects/${p.id}/labels`, null);
    expect(anon.body).toEqual({ message: '401 Unauthorized' });
    if (vis === 0) {
      const hidden = await s.api('GET', `/projects/${p.id}/labels`, cast.nonMember);
      expect(hidden.body).toEqual({ message: '404 Project Not Found' });
    }
  });
});

describe('label and subscription services (the contract issues and merge requests call)', () => {
  let p: { id: number };
  beforeAll(async () => { p = await makeProject(s, cast.owner, 'labels-contract'); });

  it('findOrCreateLabels trims, drops blanks and duplicates, keeps order and creates missing labels with #428BCA', async () => {
    await insertLabel(s.ctx, p.id, 'existing', { color: '#000000' });
    const rows = await s.ctx.data.transaction((tx) => findOrCreateLabels(tx, p.id, [' new one ', '', 'existing', 'new one', '  '], true));
    expect(rows.map((l) => [l.title, l.color])).toEqual([['new one', '#428BCA'], ['existing', '#000000']]);
    expect((await s.ctx.data.transaction((tx) => findOrCreateLabels(tx, p.id, ['missing', 'existing'], false))).map((l) => l.title)).toEqual(['existing']);
    expect((await labelRow(p.id, 'missing'))).toBeUndefined();
  });

  it('findOrCreateLabels at once from two transactions: one label, both get it', async () => {
    const [a, b] = await Promise.all([0, 1].map(() => s.ctx.data.transaction((tx) => findOrCreateLabels(tx, p.id, ['raced'], true))));
    expect(a![0]!.id).toBe(b![0]!.id);
    expect(await sqlValue(s.ctx, `SELECT COUNT(*) AS n FROM labels WHERE project_id = ? AND title = 'raced'`, [p.id])).toBe(1);
  });

  it('findOrCreateLabels refuses a title that cannot be a label with the 8.x body, creating none', async () => {
    await expect(s.ctx.data.transaction((tx) => findOrCreateLabels(tx, p.id, ['fine', 'a&b'], true)))
      .rejects.toMatchObject({ statusCode: 400, body: { message: { labels: { 'a&b': { title: ['is invalid'] } } } } });
    expect((await labelRow(p.id, 'fine'))).toBeUndefined();
  });

  it('setTargetLabels answers the labels added and removed; labelTitlesOf sorts titles per target', async () => {
    const [a, b, c] = await Promise.all(['b-label', 'a-label', 'c-label'].map((t) => insertLabel(s.ctx, p.id, t)));
    const target = { type: 'Issue' as const, id: (await insertIssue(s.ctx, p.id, { authorId: cast.owner.id })).id };
    const first = await s.ctx.data.transaction((tx) => setTargetLabels(tx, target, [a!, b!]));
    expect(first.added.map((l) => l.title)).toEqual(['a-label', 'b-label']);
    expect(first.removed).toEqual([]);
    const second = await s.ctx.data.transaction((tx) => setTargetLabels(tx, target, [c!, a!]));
    expect(second.added.map((l) => l.title)).toEqual(['c-label']);
    expect(second.removed.map((l) => l.title)).toEqual(['a-label']);
    const titles = await labelTitlesOf(s.ctx.data, 'Issue', [target.id, 999999]);
    expect(titles.get(target.id)).toEqual(['b-label', 'c-label']);
    expect(titles.get(999999)).toEqual([]);
    expect((await labelsByTitle(s.ctx.data, p.id, ['c-label', 'nope'])).map((l) => l.id)).toEqual([c]);
  });

  it('subscribe/unsubscribe with explicit rows and the implicit (author/assignee) rule; subscribedSet', async () => {
    const u = cast.developer.id;
    const v = cast.reporter.id;
    const q = s.ctx.data;
    expect(await subscribe(q, u, 'Issue', 787)).toBe(true);
    expect(await subscribe(q, u, 'Issue', 787)).toBe(false);
    expect(await subscribe(q, v, 'Issue', 788, true)).toBe(false);
    expect(await unsubscribe(q, v, 'Issue', 788, true)).toBe(true);
    expect(await unsubscribe(q, v, 'Issue', 788, true)).toBe(false);
    expect(await unsubscribe(q, u, 'Issue', 789)).toBe(false);
    const implicit = new Map([[788, [v]], [789, [v]]]);
    expect([...(await subscribedSet(q, v, 'Issue', [787, 788, 789], implicit))]).toEqual([789]);
    expect([...(await subscribedSet(q, u, 'Issue', [787, 788, 789], implicit))]).toEqual([787]);
    expect((await subscribedSet(q, u, 'Label', [787])).size).toBe(0);
    // two subscriptions at once: one changes the state, the other finds it done (the route's 304)
    expect((await Promise.all([subscribe(q, u, 'Issue', 790), subscribe(q, u, 'Issue', 790)])).sort()).toEqual([false, true]);
  });
});

