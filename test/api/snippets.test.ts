/**
 * Project snippets (GitLab 8.13 project_snippets.rb): CRUD and raw, 8.13's required params and validation errors,
 * who lists and reads which snippet (project visibility, snippet visibility, the snippets feature), author-or-admin
 * edits, odd ids; their notes (events, hooks, the snippet touched) and award emoji on them and their notes; deleting a
 * snippet or its project takes everything with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { ACTORS, addProjectHook, expectedStatus, sqlRows, sqlValue, type Actor } from '../helpers/collaboration.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';

let s: TestServer;
let cast: Cast;
const projects: Record<number, { id: number; path_with_namespace: string }> = {};

const userOf = (a: Actor): TestUser | null => (a === 'anonymous' ? null : cast[a as keyof Cast]);
const base = (p: { id: number }) => `/projects/${p.id}/snippets`;
const count = async (sql: string, ...args: unknown[]) => Number(await sqlValue(s.ctx, sql, args));
const SHAPE = ['id', 'title', 'file_name', 'author', 'updated_at', 'created_at', 'expires_at', 'web_url'].sort();

/** A snippet made by `by` (a reporter by default) in `p`; returns its body. */
async function snippet(p: { id: number }, opts: { by?: TestUser; visibility?: number; title?: string; code?: string } = {}) {
  const r = await s.api('POST', base(p), opts.by ?? cast.reporter, {
    title: opts.title ?? 'A snippet', file_name: 'hello.rb', code: opts.code ?? 'puts "hello"\n', visibility_level: opts.visibility ?? 0,
  });
  if (r.status !== 201) throw new Error(`snippet create failed: ${r.status} ${r.text}`);
  return r.body;
}

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'sn');
  for (const vis of [0, 10, 20]) {
    projects[vis] = await makeProject(s, cast.owner, `snippets-${vis}`, { visibility: vis, extra: { snippets_enabled: true } });
    await addCastMembers(s.ctx, cast, projects[vis]!.id);
  }
});
afterAll(async () => { await s.close(); });

describe('CRUD and raw', () => {
  it('creates (201, the 8.13 entity), shows, serves raw, lists, updates and deletes', async () => {
    const p = projects[0]!;
    const created = await s.api('POST', base(p), cast.reporter, { title: 'Test Title', file_name: 'test.rb', code: 'puts "hello world"\n', visibility_level: 10 });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(SHAPE);
    expect(created.body).toMatchObject({
      title: 'Test Title', file_name: 'test.rb', expires_at: null, author: { id: cast.reporter.id, username: cast.reporter.username },
      web_url: `http://gantry.test/${p.path_with_namespace}/snippets/${created.body.id}`,
    });
    const id = created.body.id;
    const stored = (await sqlRows(s.ctx, 'SELECT * FROM snippets WHERE id = ?', [id]))[0]!;
    expect(stored).toMatchObject({ project_id: p.id, author_id: cast.reporter.id, content: 'puts "hello world"\n', visibility_level: 10 });

    const shown = await s.api('GET', `${base(p)}/${id}`, cast.guest);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(created.body);

    const raw = await s.api('GET', `${base(p)}/${id}/raw`, cast.guest);
    expect(raw.status).toBe(200);
    expect(raw.headers['content-type']).toMatch(/^text\/plain/);
    expect(raw.text).toBe('puts "hello world"\n');

    const second = await snippet(p, { title: 'Second' });
    const list = await s.api('GET', `${base(p)}?per_page=1`, cast.guest);
    expect(list.status).toBe(200);
    expect(list.body.map((x: { id: number }) => x.id)).toEqual([second.id]);
    expect(list.headers['x-total']).toBe(String(await count('SELECT COUNT(*) AS n FROM snippets WHERE project_id = ?', p.id)));
    expect(list.headers['x-next-page']).toBe('2');

    const updated = await s.api('PUT', `${base(p)}/${id}`, cast.reporter, { title: 'New title', file_name: 'new.py', code: 'print(1)', visibility_level: 20 });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id, title: 'New title', file_name: 'new.py' });
    expect((await s.api('GET', `${base(p)}/${id}/raw`, cast.guest)).text).toBe('print(1)');
    expect(await sqlValue(s.ctx, 'SELECT visibility_level FROM snippets WHERE id = ?', [id])).toBe(20);
    // nothing given: unchanged, 200
    const same = await s.api('PUT', `${base(p)}/${id}`, cast.reporter, {});
    expect(same.status).toBe(200);
    expect(same.body.title).toBe('New title');

    const removed = await s.api('DELETE', `${base(p)}/${id}`, cast.reporter);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id, title: 'New title', content: 'print(1)', project_id: p.id, author_id: cast.reporter.id, type: 'ProjectSnippet' });
    expect((await s.api('GET', `${base(p)}/${id}`, cast.reporter)).status).toBe(404);
    expect(await count('SELECT COUNT(*) AS n FROM snippets WHERE id = ?', id)).toBe(0);
    const again = await s.api('DELETE', `${base(p)}/${id}`, cast.reporter);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Snippet Not Found' });
  });

  it('addresses the project by its path too', async () => {
    const p = projects[20]!;
    const made = await snippet(p, { visibility: 20 });
    const r = await s.api('GET', `/projects/${encodeURIComponent(p.path_with_namespace)}/snippets/${made.id}`, cast.nonMember);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(made.id);
  });

  it('goes with its project', async () => {
    const doomed = await makeProject(s, cast.owner, 'snippets-doomed', { extra: { snippets_enabled: true } });
    const made = await snippet(doomed, { by: cast.owner });
    expect((await s.api('DELETE', `/projects/${doomed.id}`, cast.owner)).status).toBe(200);
    expect(await count('SELECT COUNT(*) AS n FROM snippets WHERE id = ?', made.id)).toBe(0);
  });
});

describe('a deleted author', () => {
  it('leaves the snippet to the project with author null; admins still change it', async () => {
    const p = projects[0]!;
    const leaving = await s.user('snleaving');
    await s.api('POST', `/projects/${p.id}/members`, cast.owner, { user_id: leaving.id, access_level: 30 });
    const made = await snippet(p, { by: leaving });
    expect((await s.api('DELETE', `/users/${leaving.id}`, s.root)).status).toBe(200);
    const shown = await s.api('GET', `${base(p)}/${made.id}`, cast.guest);
    expect(shown.status).toBe(200);
    expect(shown.body.author).toBeNull();
    expect((await s.api('PUT', `${base(p)}/${made.id}`, cast.master, { title: 'x' })).status).toBe(403);
    expect((await s.api('PUT', `${base(p)}/${made.id}`, s.root, { title: 'kept' })).status).toBe(200);
  });
});

describe('create: 8.13 required params and validation', () => {
  const p = () => projects[0]!;
  const full = { title: 't', file_name: 'f.txt', code: 'x', visibility_level: 0 };

  it('400 `"<attr>" not given` for each missing or blank required param, in 8.13 order; nothing stored', async () => {
    const before = await count('SELECT COUNT(*) AS n FROM snippets');
    for (const key of ['title', 'file_name', 'code', 'visibility_level'] as const) {
      const { [key]: _drop, ...rest } = full;
      const r = await s.api('POST', base(p()), cast.reporter, rest);
      expect(r.status, key).toBe(400);
      expect(r.body).toEqual({ message: `400 (Bad request) "${key}" not given` });
      for (const value of ['', '  ']) {
        const blank = await s.api('POST', base(p()), cast.reporter, { ...full, [key]: value });
        expect(blank.body, `${key}=${JSON.stringify(value)}`).toEqual({ message: `400 (Bad request) "${key}" not given` });
      }
    }
    expect((await s.api('POST', base(p()), cast.reporter, {})).body).toEqual({ message: '400 (Bad request) "title" not given' });
    expect(await count('SELECT COUNT(*) AS n FROM snippets')).toBe(before);
  });

  it('400 with the validation hash for a bad file name, a long title, an unknown visibility; nothing stored', async () => {
    const before = await count('SELECT COUNT(*) AS n FROM snippets');
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ file_name: 'a b/c.rb' }, { file_name: ["can contain only letters, digits, '_', '-', '@' and '.'."] }],
      [{ title: 'x'.repeat(256) }, { title: ['is too long (maximum is 255 characters)'] }],
      [{ file_name: `${'f'.repeat(256)}` }, { file_name: ['is too long (maximum is 255 characters)'] }],
      [{ visibility_level: 5 }, { visibility_level: ['is not included in the list'] }],
    ];
    for (const [change, errors] of cases) {
      const r = await s.api('POST', base(p()), cast.reporter, { ...full, ...change });
      expect(r.status, JSON.stringify(change)).toBe(400);
      expect(r.body).toEqual({ message: errors });
    }
    const notNumber = await s.api('POST', base(p()), cast.reporter, { ...full, visibility_level: 'lots' });
    expect(notNumber.status).toBe(400);
    expect(await count('SELECT COUNT(*) AS n FROM snippets')).toBe(before);
  });

  it('a visibility the settings restrict: 400 for non-admins (create, and update when it changes), allowed for admins', async () => {
    expect((await s.api('PUT', '/application/settings', s.root, { restricted_visibility_levels: [20] })).status).toBe(200);
    try {
      const r = await s.api('POST', base(p()), cast.master, { ...full, visibility_level: 20 });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: { visibility_level: ['public has been restricted by your GitLab administrator'] } });
      const mine = await snippet(p(), { by: cast.master, visibility: 0 });
      const up = await s.api('PUT', `${base(p())}/${mine.id}`, cast.master, { visibility_level: 20 });
      expect(up.status).toBe(400);
      expect(up.body).toEqual({ message: { visibility_level: ['public has been restricted by your GitLab administrator'] } });
      expect(await sqlValue(s.ctx, 'SELECT visibility_level FROM snippets WHERE id = ?', [mine.id])).toBe(0);
      const admin = await s.api('POST', base(p()), s.root, { ...full, visibility_level: 20 });
      expect(admin.status).toBe(201);
      // a snippet that already has the level keeps it through other edits
      const kept = await s.api('PUT', `${base(p())}/${admin.body.id}`, s.root, { title: 'still public' });
      expect(kept.status).toBe(200);
    } finally {
      await s.api('PUT', '/application/settings', s.root, { restricted_visibility_levels: [] });
    }
  });
});

describe('update: blank fields are refused, never erased', () => {
  it('400 `can\'t be blank` for a blank title, file name or code; 400 for a bad file name; nothing changes', async () => {
    const p = projects[0]!;
    const made = await snippet(p, { title: 'Keep me', code: 'keep', visibility: 10 });
    for (const [body, errors] of [
      [{ title: '' }, { title: ["can't be blank"] }],
      [{ file_name: '' }, { file_name: ["can't be blank"] }],
      [{ code: '' }, { content: ["can't be blank"] }],
      [{ file_name: 'no spaces.rb' }, { file_name: ["can contain only letters, digits, '_', '-', '@' and '.'."] }],
      [{ visibility_level: 7 }, { visibility_level: ['is not included in the list'] }],
    ] as const) {
      const r = await s.api('PUT', `${base(p)}/${made.id}`, cast.reporter, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toEqual({ message: errors });
    }
    // a blank visibility is not given (never read as 0)
    expect((await s.api('PUT', `${base(p)}/${made.id}`, cast.reporter, { visibility_level: ' ' })).status).toBe(200);
    const row = (await sqlRows(s.ctx, 'SELECT title, file_name, content, visibility_level FROM snippets WHERE id = ?', [made.id]))[0];
    expect(row).toEqual({ title: 'Keep me', file_name: 'hello.rb', content: 'keep', visibility_level: 10 });
  });
});

describe('who lists and reads which snippet', () => {
  let ids: Record<number, number>;
  const p = () => projects[20]!;
  beforeAll(async () => {
    ids = {};
    for (const vis of [0, 10, 20]) ids[vis] = (await snippet(p(), { by: cast.developer, visibility: vis, title: `vis ${vis}` })).id;
  });

  it('members and admins list every snippet; others the public and internal ones; external users the public ones', async () => {
    const seen = async (who: TestUser) => {
      const r = await s.api('GET', `${base(p())}?per_page=100`, who);
      expect(r.status).toBe(200);
      return new Set(r.body.map((x: { id: number }) => x.id));
    };
    for (const who of [cast.guest, cast.master, s.root]) for (const vis of [0, 10, 20]) expect((await seen(who)).has(ids[vis])).toBe(true);
    const outsider = await seen(cast.nonMember);
    expect([outsider.has(ids[0]), outsider.has(ids[10]), outsider.has(ids[20])]).toEqual([false, true, true]);
    const external = await seen(cast.external);
    expect([external.has(ids[0]), external.has(ids[10]), external.has(ids[20])]).toEqual([false, false, true]);
    const total = await s.api('GET', base(p()), cast.nonMember);
    expect(total.headers['x-total']).toBe(String(await count('SELECT COUNT(*) AS n FROM snippets WHERE project_id = ? AND visibility_level > 0', p().id)));
  });

  it('a snippet the caller may not read is not found (show, raw, update, delete, notes, award emoji)', async () => {
    for (const [who, vis] of [[cast.nonMember, 0], [cast.external, 0], [cast.external, 10]] as const) {
      for (const suffix of ['', '/raw', '/notes', '/award_emoji']) {
        const r = await s.api('GET', `${base(p())}/${ids[vis]}${suffix}`, who);
        expect(r.status, `${who.username} ${vis} ${suffix}`).toBe(404);
      }
      expect((await s.api('PUT', `${base(p())}/${ids[vis]}`, who, { title: 'x' })).status).toBe(404);
      expect((await s.api('DELETE', `${base(p())}/${ids[vis]}`, who)).status).toBe(404);
      expect((await s.api('POST', `${base(p())}/${ids[vis]}/notes`, who, { body: 'x' })).status).toBe(404);
    }
    expect((await s.api('GET', `${base(p())}/${ids[20]}/raw`, cast.external)).status).toBe(200);
  });

  it('list and read as each caller on private, internal and public projects (public snippets)', async () => {
    for (const vis of [0, 10, 20]) {
      const made = await snippet(projects[vis]!, { by: cast.reporter, visibility: 20 });
      for (const actor of ACTORS) {
        const want = expectedStatus(actor, vis, 10, 200, true);
        expect((await s.api('GET', base(projects[vis]!), userOf(actor))).status, `${actor} list on ${vis}`).toBe(want);
        expect((await s.api('GET', `${base(projects[vis]!)}/${made.id}`, userOf(actor))).status, `${actor} show on ${vis}`).toBe(want);
        expect((await s.api('GET', `${base(projects[vis]!)}/${made.id}/raw`, userOf(actor))).status, `${actor} raw on ${vis}`).toBe(want);
      }
    }
  });
});

describe('who creates, changes and deletes', () => {
  it('create: reporters and up (and admins); guests and visible non-members 403; hidden 404; anonymous 401', async () => {
    for (const vis of [0, 10, 20]) {
      for (const actor of ACTORS) {
        const r = await s.api('POST', base(projects[vis]!), userOf(actor), { title: `by ${actor}`, file_name: 'a.txt', code: 'x', visibility_level: 0 });
        expect(r.status, `${actor} on ${vis}`).toBe(expectedStatus(actor, vis, 20, 201));
        if (r.status === 403) expect(r.body).toEqual({ message: '403 Forbidden' });
      }
    }
  });

  it('update and delete: the author or an admin; masters and owners of the project 403 (8.13 ProjectSnippetPolicy)', async () => {
    const p = projects[10]!;
    const made = await snippet(p, { by: cast.developer, visibility: 10 });
    for (const who of [cast.guest, cast.reporter, cast.master, cast.owner, cast.nonMember]) {
      const r = await s.api('PUT', `${base(p)}/${made.id}`, who, { title: 'taken over' });
      expect(r.status, who.username).toBe(403);
      expect((await s.api('DELETE', `${base(p)}/${made.id}`, who)).status, who.username).toBe(403);
    }
    expect((await s.api('PUT', `${base(p)}/${made.id}`, cast.developer, { title: 'mine' })).status).toBe(200);
    expect((await s.api('PUT', `${base(p)}/${made.id}`, s.root, { title: 'the admin' })).status).toBe(200);
    expect((await s.api('PUT', `${base(p)}/${made.id}`, null, { title: 'anon' })).status).toBe(401);
    expect(await sqlValue(s.ctx, 'SELECT title FROM snippets WHERE id = ?', [made.id])).toBe('the admin');
    expect((await s.api('DELETE', `${base(p)}/${made.id}`, s.root)).status).toBe(200);
  });

  it('an author who left the project no longer sees or changes a private snippet', async () => {
    const p = await makeProject(s, cast.owner, 'snippets-left', { visibility: 20, extra: { snippets_enabled: true } });
    await addCastMembers(s.ctx, cast, p.id);
    const made = await snippet(p, { by: cast.reporter, visibility: 0 });
    await s.ctx.data.run(`DELETE FROM members WHERE source_type = 'Project' AND source_id = ? AND user_id = ?`, [p.id, cast.reporter.id]);
    expect((await s.api('GET', `${base(p)}/${made.id}`, cast.reporter)).status).toBe(404);
    expect((await s.api('PUT', `${base(p)}/${made.id}`, cast.reporter, { title: 'x' })).status).toBe(404);
  });
});

describe('the snippets feature', () => {
  it('off: 403 for every snippet route, admins included; on again: everything is back', async () => {
    const p = await makeProject(s, cast.owner, 'snippets-off', { visibility: 20, extra: { snippets_enabled: true } });
    const made = await snippet(p, { by: cast.owner, visibility: 20 });
    expect((await s.api('PUT', `/projects/${p.id}`, cast.owner, { snippets_enabled: false })).status).toBe(200);
    for (const who of [cast.owner, s.root, cast.nonMember]) {
      for (const path of ['', `/${made.id}`, `/${made.id}/raw`]) expect((await s.api('GET', `${base(p)}${path}`, who)).status, `${who.username} ${path}`).toBe(403);
      expect((await s.api('POST', base(p), who, { title: 't', file_name: 'f', code: 'c', visibility_level: 0 })).status).toBe(403);
      expect((await s.api('PUT', `${base(p)}/${made.id}`, who, { title: 'x' })).status).toBe(403);
      expect((await s.api('DELETE', `${base(p)}/${made.id}`, who)).status).toBe(403);
      // notes and awards hang on a snippet no one may read now
      expect((await s.api('GET', `${base(p)}/${made.id}/notes`, who)).status).toBe(404);
      expect((await s.api('GET', `${base(p)}/${made.id}/award_emoji`, who)).status).toBe(404);
    }
    expect(await count('SELECT COUNT(*) AS n FROM snippets WHERE id = ?', made.id)).toBe(1);
    expect((await s.api('PUT', `/projects/${p.id}`, cast.owner, { snippets_enabled: true })).status).toBe(200);
    expect((await s.api('GET', `${base(p)}/${made.id}`, cast.nonMember)).status).toBe(200);
  });

  it('is off in new projects unless asked for (Gantry\'s default, as 8.x gitlab.yml\'s)', async () => {
    const p = await makeProject(s, cast.owner, 'snippets-default');
    expect((await s.api('GET', base(p), cast.owner)).status).toBe(403);
  });
});

describe('odd ids', () => {
  it('404 for a missing snippet, another project\'s snippet, 0 and ids past the largest; 400 for text', async () => {
    const mine = await snippet(projects[0]!, { visibility: 20 });
    for (const id of ['999999', '0', '99999999999', '9999999999999999999999']) {
      for (const suffix of ['', '/raw']) {
        const r = await s.api('GET', `${base(projects[0]!)}/${id}${suffix}`, s.root);
        expect(r.status, `${id}${suffix}`).toBe(404);
      }
    }
    const elsewhere = await s.api('GET', `${base(projects[20]!)}/${mine.id}`, s.root);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ message: '404 Not found' });
    expect((await s.api('PUT', `${base(projects[20]!)}/${mine.id}`, s.root, { title: 'x' })).status).toBe(404);
    expect((await s.api('GET', `${base(projects[0]!)}/abc`, s.root)).status).toBe(400);
    expect((await s.api('GET', '/projects/999999/snippets', s.root)).body).toEqual({ message: '404 Project Not Found' });
  });
});

describe('notes on snippets', () => {
  const notes = (p: { id: number }, id: number) => `${base(p)}/${id}/notes`;

  it('create (event, note hook with the snippet, the snippet touched), list, show, edit and delete', async () => {
    const p = projects[0]!;
    const hook = await addProjectHook(s, p.id, cast.owner, { url: 'http://127.0.0.1:9/notes', note_events: true, push_events: false });
    const made = await snippet(p, { by: cast.developer, visibility: 0, title: 'Noted' });
    await s.ctx.data.run('UPDATE snippets SET updated_at = ? WHERE id = ?', ['2020-01-01T00:00:00.000Z', made.id]);
    const created = await s.api('POST', notes(p, made.id), cast.guest, { body: 'a comment' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ body: 'a comment', author: { id: cast.guest.id }, system: false });
    expect(await sqlValue(s.ctx, 'SELECT updated_at FROM snippets WHERE id = ?', [made.id])).not.toBe('2020-01-01T00:00:00.000Z');
    expect(await sqlRows(s.ctx, `SELECT action, target_title FROM events WHERE target_type = 'Note' AND target_id = ?`, [created.body.id]))
      .toEqual([{ action: 'commented', target_title: 'Noted' }]);
    const payloads = (await sqlRows(s.ctx, 'SELECT payload FROM hook_deliveries WHERE hook_id = ?', [hook.body.id])).map((d) => JSON.parse(d.payload as string));
    expect(payloads).toHaveLength(1);
    expect(payloads[0]).toMatchObject({
      object_kind: 'note',
      object_attributes: { id: created.body.id, noteable_type: 'Snippet', noteable_id: made.id, url: `http://gantry.test/${p.path_with_namespace}/snippets/${made.id}#note_${created.body.id}` },
      snippet: { id: made.id, title: 'Noted', content: 'puts "hello"\n', file_name: 'hello.rb', type: 'ProjectSnippet', visibility_level: 0, author_id: cast.developer.id },
    });
    // no todos on snippet notes (8.13 TodoService skips them)
    await s.api('POST', notes(p, made.id), cast.guest, { body: `@${cast.master.username} look` });
    expect(await count(`SELECT COUNT(*) AS n FROM todos WHERE target_type = 'Snippet'`)).toBe(0);

    const list = await s.api('GET', notes(p, made.id), cast.reporter);
    expect(list.status).toBe(200);
    expect(list.body.map((n: { body: string }) => n.body)).toEqual(['a comment', `@${cast.master.username} look`]);
    expect((await s.api('GET', `${notes(p, made.id)}/${created.body.id}`, cast.reporter)).body.body).toBe('a comment');
    expect((await s.api('PUT', `${notes(p, made.id)}/${created.body.id}`, cast.reporter, { body: 'no' })).status).toBe(403);
    const edited = await s.api('PUT', `${notes(p, made.id)}/${created.body.id}`, cast.guest, { body: 'edited' });
    expect(edited.status).toBe(200);
    expect(edited.body.body).toBe('edited');
    expect((await s.api('DELETE', `${notes(p, made.id)}/${created.body.id}`, cast.master)).status).toBe(200);
    expect((await s.api('GET', `${notes(p, made.id)}/${created.body.id}`, cast.reporter)).status).toBe(404);
    // a note of another snippet is not found under this one
    const other = await snippet(p);
    const elsewhere = await s.api('POST', notes(p, other.id), cast.guest, { body: 'elsewhere' });
    expect((await s.api('GET', `${notes(p, made.id)}/${elsewhere.body.id}`, cast.reporter)).status).toBe(404);
    expect((await s.api('POST', notes(p, made.id), cast.guest, {})).body).toEqual({ message: '400 (Bad request) "body" not given' });
  });

  it('comment events show a snippet note only to who may read the snippet', async () => {
    const p = projects[20]!;
    const hidden = await snippet(p, { by: cast.developer, visibility: 0, title: 'Hidden snippet title' });
    const shown = await snippet(p, { by: cast.developer, visibility: 20, title: 'Open snippet title' });
    await s.api('POST', notes(p, hidden.id), cast.guest, { body: 'secret remark' });
    await s.api('POST', notes(p, shown.id), cast.guest, { body: 'open remark' });
    const member = await s.api('GET', `/projects/${p.id}/events?per_page=100`, cast.reporter);
    expect(member.text).toContain('secret remark');
    expect(member.text).toContain('open remark');
    const outsider = await s.api('GET', `/projects/${p.id}/events?per_page=100`, cast.nonMember);
    expect(outsider.status).toBe(200);
    expect(outsider.text).not.toContain('secret remark');
    expect(outsider.text).not.toContain('Hidden snippet title');
    expect(outsider.text).toContain('open remark');
    expect(outsider.text).toContain('Open snippet title');
    expect(member.text).toContain('Hidden snippet title');
    // with the snippets feature off, no one sees comments on snippets (the event's title is the snippet's)
    expect((await s.api('PUT', `/projects/${p.id}`, cast.owner, { snippets_enabled: false })).status).toBe(200);
    try {
      for (const who of [cast.reporter, s.root]) expect((await s.api('GET', `/projects/${p.id}/events?per_page=100`, who)).text).not.toContain('snippet title');
    } finally {
      expect((await s.api('PUT', `/projects/${p.id}`, cast.owner, { snippets_enabled: true })).status).toBe(200);
    }
  });

  it('per caller on each project (public snippets): read for who sees it, write for who may create notes', async () => {
    for (const vis of [0, 10, 20]) {
      const made = await snippet(projects[vis]!, { by: cast.reporter, visibility: 20 });
      for (const actor of ACTORS) {
        const want = expectedStatus(actor, vis, 10, 200, true);
        expect((await s.api('GET', notes(projects[vis]!, made.id), userOf(actor))).status, `${actor} on ${vis}`).toBe(want);
        const post = await s.api('POST', notes(projects[vis]!, made.id), userOf(actor), { body: `by ${actor}` });
        expect(post.status, `${actor} posts on ${vis}`).toBe(expectedStatus(actor, vis, 10, 201, true));
      }
    }
  });
});

describe('award emoji on snippets and their notes', () => {
  it('award, list, show and remove; the author may not vote on their own snippet; emoji-only notes award', async () => {
    const p = projects[10]!;
    const made = await snippet(p, { by: cast.developer, visibility: 10 });
    const awards = `${base(p)}/${made.id}/award_emoji`;
    const given = await s.api('POST', awards, cast.nonMember, { name: '+1' });
    expect(given.status).toBe(201);
    expect(given.body).toMatchObject({ name: 'thumbsup', awardable_type: 'Snippet', awardable_id: made.id, user: { id: cast.nonMember.id } });
    expect((await s.api('POST', awards, cast.developer, { name: 'thumbsdown' })).body).toEqual({ message: '404 Award Emoji Not Found' });
    expect((await s.api('POST', awards, cast.developer, { name: 'tada' })).status).toBe(201);
    const list = await s.api('GET', awards, cast.guest);
    expect(list.body.map((a: { name: string }) => a.name)).toEqual(['thumbsup', 'tada']);
    expect((await s.api('GET', `${awards}/${given.body.id}`, cast.guest)).body.name).toBe('thumbsup');
    expect((await s.api('DELETE', `${awards}/${given.body.id}`, cast.guest)).status).toBe(401);
    expect((await s.api('DELETE', `${awards}/${given.body.id}`, cast.nonMember)).status).toBe(200);

    const byNote = await s.api('POST', `${base(p)}/${made.id}/notes`, cast.reporter, { body: ':heart:' });
    expect(byNote.status).toBe(201);
    expect(byNote.body).toMatchObject({ name: 'heart', awardable_type: 'Snippet', awardable_id: made.id });

    const note = await s.api('POST', `${base(p)}/${made.id}/notes`, cast.guest, { body: 'nice' });
    const noteAwards = `${base(p)}/${made.id}/notes/${note.body.id}/award_emoji`;
    const onNote = await s.api('POST', noteAwards, cast.master, { name: 'rocket' });
    expect(onNote.status).toBe(201);
    expect(onNote.body).toMatchObject({ awardable_type: 'Note', awardable_id: note.body.id });
    expect((await s.api('GET', noteAwards, cast.reporter)).body).toHaveLength(1);
    expect((await s.api('POST', noteAwards, cast.guest, { name: 'thumbsup' })).status).toBe(404);
  });

  it('deleting a snippet removes its notes, their awards and its own awards', async () => {
    const p = projects[0]!;
    const made = await snippet(p, { by: cast.developer });
    const note = await s.api('POST', `${base(p)}/${made.id}/notes`, cast.guest, { body: 'bye' });
    await s.api('POST', `${base(p)}/${made.id}/notes/${note.body.id}/award_emoji`, cast.master, { name: 'wave' });
    await s.api('POST', `${base(p)}/${made.id}/award_emoji`, cast.master, { name: 'wave' });
    expect((await s.api('DELETE', `${base(p)}/${made.id}`, cast.developer)).status).toBe(200);
    expect(await count(`SELECT COUNT(*) AS n FROM notes WHERE noteable_type = 'Snippet' AND noteable_id = ?`, made.id)).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM award_emoji WHERE (awardable_type = 'Snippet' AND awardable_id = ?) OR (awardable_type = 'Note' AND awardable_id = ?)`,
      made.id, note.body.id)).toBe(0);
    expect((await s.api('POST', `${base(p)}/${made.id}/notes`, cast.guest, { body: 'late' })).status).toBe(404);
  });

  it('a note or an award racing the deletion of its snippet: never left behind', async () => {
    const p = projects[0]!;
    for (let i = 0; i < 3; i++) {
      const made = await snippet(p, { by: cast.developer });
      const [, note, award] = await Promise.all([
        s.api('DELETE', `${base(p)}/${made.id}`, cast.developer),
        s.api('POST', `${base(p)}/${made.id}/notes`, cast.guest, { body: 'race' }),
        s.api('POST', `${base(p)}/${made.id}/award_emoji`, cast.guest, { name: 'zap' }),
      ]);
      expect([201, 404]).toContain(note.status);
      expect([201, 404]).toContain(award.status);
      expect(await count(`SELECT COUNT(*) AS n FROM notes WHERE noteable_type = 'Snippet' AND noteable_id = ?`, made.id)).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM award_emoji WHERE awardable_type = 'Snippet' AND awardable_id = ?`, made.id)).toBe(0);
    }
  });
});

describe('OpenAPI', () => {
  it('lists every snippet route', async () => {
    const doc = (await s.app.inject({ method: 'GET', url: '/api/v3/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const one = '/api/v3/projects/{id}/snippets/{snippet_id}';
    expect(Object.keys(doc.paths['/api/v3/projects/{id}/snippets'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths[one] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(doc.paths[`${one}/raw`] ?? {})).toEqual(['get']);
    expect(Object.keys(doc.paths[`${one}/notes/{note_id}`] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(doc.paths[`${one}/notes/{note_id}/award_emoji/{award_id}`] ?? {}).sort()).toEqual(['delete', 'get']);
  });
});
