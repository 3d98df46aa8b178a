/** Tags API: list (name descending), show, create (lightweight, annotated, with release), delete, releases, authorization. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { ACTORS, actorUser, commitTo, expectedStatus, pushEvents, repositoryOf, VISIBILITIES } from '../helpers/repository.js';

let s: TestServer;
let cast: Cast;
let project: { id: number; path_with_namespace: string };
let base: string;
let first: string;
let head: string;
const matrix: Record<number, number> = {};

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 't');
  project = await makeProject(s, cast.owner, 'tags');
  await addCastMembers(s.ctx, cast, project.id);
  base = `/projects/${project.id}/repository/tags`;
  first = await commitTo(s.ctx, project.id, 'master', { 'README.md': 'one\n' }, { message: 'first' });
  head = await commitTo(s.ctx, project.id, 'master', { 'README.md': 'two\n' }, { message: 'second' });
  for (const vis of VISIBILITIES) {
    const p = await makeProject(s, cast.owner, `tags-matrix-${vis}`, { visibility: vis });
    await addCastMembers(s.ctx, cast, p.id);
    const sha = await commitTo(s.ctx, p.id, 'master', { 'README.md': 'm\n' });
    await (await repositoryOf(s.ctx, p.id)).createTag('existing', sha);
    matrix[vis] = p.id;
  }
});
afterAll(async () => { await s.close(); });

describe('POST tags', () => {
  it('creates a lightweight tag (201 RepoTag, message null) and processes a tag push', async () => {
    const r = await s.api('POST', base, cast.developer, { tag_name: 'v1.0', ref: first });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['commit', 'message', 'name', 'release']);
    expect(r.body).toMatchObject({ name: 'v1.0', message: null, release: null, commit: { id: first, parents: [], parent_ids: [], message: 'first\n' } });
    expect((await pushEvents(s, project.id))[0]).toMatchObject({ ref: 'refs/tags/v1.0', before: '0'.repeat(40), after: first, object_kind: 'tag_push' });
  });
  it('creates an annotated tag with a message (tagger: the caller) and release notes', async () => {
    const r = await s.api('POST', base, cast.developer, { tag_name: 'v2.0', ref: 'master', message: 'Version 2', release_description: '## Notes' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'v2.0', message: 'Version 2', commit: { id: head }, release: { tag_name: 'v2.0', description: '## Notes' } });
    const tag = (await (await repositoryOf(s.ctx, project.id)).findTag('v2.0'))!;
    expect(tag.sha).not.toBe(head);
    expect(tag.tagger).toMatchObject({ name: cast.developer.username, email: `${cast.developer.username}@example.com` });
    const event = (await pushEvents(s, project.id))[0]!;
    expect(event).toMatchObject({ ref: 'refs/tags/v2.0', after: tag.sha, object_kind: 'tag_push' });
  });
  it('accepts names with / and form bodies', async () => {
    const r = await s.api('POST', base, cast.developer, 'tag_name=release%2F1&ref=master', { 'content-type': 'application/x-www-form-urlencoded' });
    expect([r.status, r.body.name]).toEqual([201, 'release/1']);
  });
  it('400 with GitLab\'s messages', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ tag_name: 'bad..tag', ref: 'master' }, 'Tag name invalid'],
      [{ tag_name: 'has space', ref: 'master' }, 'Tag name invalid'],
      [{ tag_name: 'v1.0', ref: 'master' }, 'Tag v1.0 already exists'],
      [{ tag_name: 'v9', ref: 'nope' }, 'Target nope is invalid'],
      [{ ref: 'master' }, '400 (Bad request) "tag_name" not given'],
      [{ tag_name: 'v9' }, '400 (Bad request) "ref" not given'],
    ];
    for (const [body, message] of cases) {
      const r = await s.api('POST', base, cast.developer, body);
      expect([body, r.status, r.body]).toEqual([body, 400, { message }]);
    }
  });
});

describe('GET tags', () => {
  it('lists tags sorted by name descending, paginated', async () => {
    const r = await s.api('GET', base, cast.reporter);
    expect(r.status).toBe(200);
    expect(r.body.map((t: { name: string }) => t.name)).toEqual(['v2.0', 'v1.0', 'release/1']);
    expect(r.headers).toMatchObject({ 'x-total': '3', 'x-total-pages': '1', 'x-page': '1' });
    expect(r.body[0].release).toEqual({ tag_name: 'v2.0', description: '## Notes' });
    const p = await s.api('GET', `${base}?per_page=1&page=2`, cast.reporter);
    expect(p.body.map((t: { name: string }) => t.name)).toEqual(['v1.0']);
    expect(p.headers).toMatchObject({ 'x-total-pages': '3', 'x-next-page': '3', 'x-prev-page': '1' });
  });
  it('shows one tag (names with / encoded or not); 404 Tag Not Found', async () => {
    expect((await s.api('GET', `${base}/v2.0`, cast.reporter)).body).toMatchObject({ name: 'v2.0', message: 'Version 2' });
    expect((await s.api('GET', `${base}/release/1`, cast.reporter)).body.name).toBe('release/1');
    expect((await s.api('GET', `${base}/release%2F1`, cast.reporter)).body.name).toBe('release/1');
    const r = await s.api('GET', `${base}/nope`, cast.reporter);
    expect([r.status, r.body]).toEqual([404, { message: '404 Tag Not Found' }]);
  });
});

describe('releases', () => {
  it('POST adds release notes (201), 409 when they exist, 404 for a missing tag', async () => {
    const r = await s.api('POST', `${base}/v1.0/release`, cast.developer, { description: 'First release' });
    expect([r.status, r.body]).toEqual([201, { tag_name: 'v1.0', description: 'First release' }]);
    expect((await s.api('GET', `${base}/v1.0`, cast.reporter)).body.release).toEqual({ tag_name: 'v1.0', description: 'First release' });
    const again = await s.api('POST', `${base}/v1.0/release`, cast.developer, { description: 'x' });
    expect([again.status, again.body]).toEqual([409, { message: 'Release already exists' }]);
    expect((await s.api('POST', `${base}/nope/release`, cast.developer, { description: 'x' })).body).toEqual({ message: 'Tag does not exist' });
    expect((await s.api('POST', `${base}/v1.0/release`, cast.developer, {})).body).toEqual({ message: '400 (Bad request) "description" not given' });
  });
  it('PUT changes them (200); 404 when the tag or the release is missing', async () => {
    const r = await s.api('PUT', `${base}/v1.0/release`, cast.developer, { description: 'Changed' });
    expect([r.status, r.body]).toEqual([200, { tag_name: 'v1.0', description: 'Changed' }]);
    expect((await s.api('PUT', `${base}/release/1/release`, cast.developer, { description: 'x' })).body).toEqual({ message: 'Release does not exist' });
    expect((await s.api('PUT', `${base}/nope/release`, cast.developer, { description: 'x' })).body).toEqual({ message: 'Tag does not exist' });
    expect((await s.api('POST', `${base}/release/1/release`, cast.developer, { description: 'slash' })).body).toEqual({ tag_name: 'release/1', description: 'slash' });
  });
  it('two POSTs of release notes at once: one 201, the other 409, one release stored', async () => {
    expect((await s.api('POST', base, cast.developer, { tag_name: 'race', ref: 'master' })).status).toBe(201);
    const both = await Promise.all(['one', 'two'].map((d) => s.api('POST', `${base}/race/release`, cast.developer, { description: d })));
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const winner = both.find((r) => r.status === 201)!.body.description;
    expect((await s.api('GET', `${base}/race`, cast.reporter)).body.release).toEqual({ tag_name: 'race', description: winner });
  });
});

describe('DELETE tags', () => {
  it('deletes (200 {tag_name}) with its release and processes a tag push; 404 No such tag', async () => {
    const value = await (await repositoryOf(s.ctx, project.id)).refValue('refs/tags/v1.0');
    const r = await s.api('DELETE', `${base}/v1.0`, cast.developer);
    expect([r.status, r.body]).toEqual([200, { tag_name: 'v1.0' }]);
    expect((await pushEvents(s, project.id))[0]).toMatchObject({ ref: 'refs/tags/v1.0', before: value, after: '0'.repeat(40), object_kind: 'tag_push' });
    const again = await s.api('DELETE', `${base}/v1.0`, cast.developer);
    expect([again.status, again.body]).toEqual([404, { message: 'No such tag' }]);
    // a new tag of the same name starts without the old release
    expect((await s.api('POST', base, cast.developer, { tag_name: 'v1.0', ref: 'master' })).body.release).toBeNull();
    expect((await s.api('DELETE', `${base}/release%2F1`, cast.developer)).body).toEqual({ tag_name: 'release/1' });
  });
});

describe('authorization', () => {
  for (const vis of VISIBILITIES) {
    it(`project of visibility ${vis}`, async () => {
      const b = `/projects/${matrix[vis]}/repository/tags`;
      for (const a of ACTORS) {
        const as = actorUser(cast, a);
        const read = expectedStatus(a, vis, 20, 200, true);
        expect([a, (await s.api('GET', b, as)).status]).toEqual([a, read]);
        expect([a, (await s.api('GET', `${b}/existing`, as)).status]).toEqual([a, read]);
        const write = expectedStatus(a, vis, 30, 201);
        expect([a, (await s.api('POST', b, as, { tag_name: `by-${a}`, ref: 'master' })).status]).toEqual([a, write]);
        expect([a, (await s.api('POST', `${b}/existing/release`, as, { description: a })).status]).toEqual([a, write === 201 ? (a === 'developer' ? 201 : 409) : write]);
        expect([a, (await s.api('DELETE', `${b}/by-${a}`, as)).status]).toEqual([a, write === 201 ? 200 : write]);
      }
    });
  }
});
