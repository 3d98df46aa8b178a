import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { now } from '../../daemon/context.js';

let s: TestServer;
let alice: TestUser;
let bob: TestUser;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const BASIC_KEYS = ['avatar_url', 'id', 'name', 'state', 'username', 'web_url'];
const USER_KEYS = [...BASIC_KEYS, 'bio', 'created_at', 'is_admin', 'linkedin', 'location', 'organization', 'skype', 'twitter', 'website_url'];
const FULL_KEYS = [
  ...USER_KEYS, 'can_create_group', 'can_create_project', 'color_scheme_id', 'confirmed_at', 'current_sign_in_at', 'email', 'external',
  'identities', 'last_sign_in_at', 'projects_limit', 'theme_id', 'two_factor_enabled',
];
const sorted = (o: object) => Object.keys(o).sort();

let seq = 0;
/** A valid create body with a fresh username and email. */
const newUser = (extra: Record<string, unknown> = {}) => {
  seq += 1;
  return { username: `user${seq}`, email: `user${seq}@example.com`, name: `User ${seq}`, password: 'password123', ...extra };
};

/** Insert a group namespace (and optional owner member) straight into the database (portable SQL: either engine). */
async function insertGroup(path: string, ownerIds: number[] = []): Promise<number> {
  const t = now();
  const db = s.ctx.data;
  const id = (await db.run(`INSERT INTO namespaces (name, path, kind, created_at, updated_at) VALUES (?, ?, 'group', ?, ?) RETURNING id`, [path, path, t, t])).lastId!;
  for (const u of ownerIds) {
    await db.run(`INSERT INTO members (source_type, source_id, user_id, access_level, created_at, updated_at) VALUES ('Namespace', ?, ?, 50, ?, ?)`, [id, u, t, t]);
  }
  return id;
}

/** The first row of a query (portable SQL), or undefined. */
const row = (sql: string, args: unknown[] = []) => s.ctx.data.get(sql, args);
/** The number of users in the database. */
const userCount = async () => Number((await row('SELECT COUNT(*) AS n FROM users'))!.n);

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { name: 'Alice Liddell', bio: 'down the rabbit hole' });
  bob = await s.user('bob', { name: 'Bob Builder' });
});
afterAll(async () => { await s.close(); });

describe('GET /users', () => {
  it('401 anonymous', async () => {
    expect(await s.api('GET', '/users', null)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
  });

  it('admins get UserFull, paginated with headers', async () => {
    const r = await s.api('GET', '/users', s.root);
    expect(r.status).toBe(200);
    expect(r.body.map((u: { username: string }) => u.username)).toEqual(expect.arrayContaining(['root', 'alice', 'bob']));
    expect(sorted(r.body[0])).toEqual([...FULL_KEYS].sort());
    expect(r.body).toEqual([...r.body].sort((a, b) => a.id - b.id));
    expect(r.headers['x-total']).toBe(String(r.body.length));
    expect(r.headers['x-page']).toBe('1');
    expect(r.headers['x-per-page']).toBe('20');
  });

  it('other users get UserBasic only (no email)', async () => {
    const r = await s.api('GET', '/users', alice);
    expect(r.status).toBe(200);
    for (const u of r.body) expect(sorted(u)).toEqual([...BASIC_KEYS].sort());
  });

  it('pages with per_page and Link', async () => {
    const r = await s.api('GET', '/users?per_page=1&page=2', s.root);
    expect(r.body).toHaveLength(1);
    expect(r.headers['x-page']).toBe('2');
    expect(r.headers['x-prev-page']).toBe('1');
    expect(r.headers['x-next-page']).toBe('3');
    const link = String(r.headers.link);
    expect(link.indexOf('rel="prev"')).toBeLessThan(link.indexOf('rel="next"'));
    expect(link).toContain('rel="first"');
    expect(link).toContain('rel="last"');
    const past = await s.api('GET', '/users?page=99', s.root);
    expect(past.body).toEqual([]);
    expect(past.headers['x-total']).toBe(r.headers['x-total']);
  });

  it('search matches name, email or username, case-insensitively', async () => {
    const byName = await s.api('GET', '/users?search=LIDDELL', alice);
    expect(byName.body.map((u: { username: string }) => u.username)).toEqual(['alice']);
    const byEmail = await s.api('GET', '/users?search=bob@EXAMPLE', s.root);
    expect(byEmail.body.map((u: { username: string }) => u.username)).toEqual(['bob']);
    const byUsername = await s.api('GET', '/users?search=ROO', s.root);
    expect(byUsername.body.map((u: { username: string }) => u.username)).toEqual(['root']);
    const none = await s.api('GET', '/users?search=%25', s.root);
    expect(none.body).toEqual([]);
    expect(none.headers['x-total']).toBe('0');
    expect(none.headers['x-total-pages']).toBe('0');
  });

  it('username= is exact and answers a paginated array of at most one (docs/decisions.md)', async () => {
    const r = await s.api('GET', '/users?username=alice', bob);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(1);
    expect(r.body[0]).toMatchObject({ id: alice.id, username: 'alice' });
    expect(r.body[0]).not.toHaveProperty('email');
    expect(r.headers['x-total']).toBe('1');
    expect((await s.api('GET', '/users?username=ali', bob)).body).toEqual([]);
    expect((await s.api('GET', '/users?username=alice', s.root)).body[0].email).toBe('alice@example.com');
  });

  it('active and blocked filter by state', async () => {
    const carol = await s.user('carol');
    await s.api('PUT', `/users/${carol.id}/block`, s.root);
    const active = await s.api('GET', '/users?active=true&per_page=100', s.root);
    expect(active.body.every((u: { state: string }) => u.state === 'active')).toBe(true);
    expect(active.body.some((u: { id: number }) => u.id === carol.id)).toBe(false);
    const blocked = await s.api('GET', '/users?blocked=true', s.root);
    expect(blocked.body.map((u: { id: number }) => u.id)).toEqual([carol.id]);
    expect(blocked.body[0].state).toBe('blocked');
    const all = await s.api('GET', '/users?per_page=100', s.root);
    expect(all.body.some((u: { id: number }) => u.id === carol.id)).toBe(true);
  });
});

describe('GET /users/:id', () => {
  it('admins and the user themself get UserFull', async () => {
    const asAdmin = await s.api('GET', `/users/${alice.id}`, s.root);
    expect(asAdmin.status).toBe(200);
    expect(sorted(asAdmin.body)).toEqual([...FULL_KEYS].sort());
    expect(asAdmin.body).toMatchObject({ id: alice.id, email: 'alice@example.com', bio: 'down the rabbit hole' });
    const self = await s.api('GET', `/users/${alice.id}`, alice);
    expect(sorted(self.body)).toEqual([...FULL_KEYS].sort());
  });

  it('other users get the User entity (no email)', async () => {
    const r = await s.api('GET', `/users/${alice.id}`, bob);
    expect(r.status).toBe(200);
    expect(sorted(r.body)).toEqual([...USER_KEYS].sort());
    expect(r.body).toMatchObject({ id: alice.id, username: 'alice', is_admin: false, skype: '', linkedin: '', twitter: '', website_url: '' });
  });

  it('404 for an unknown or non-numeric id, 401 anonymous', async () => {
    expect(await s.api('GET', '/users/99999', bob)).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    expect(await s.api('GET', '/users/alice', bob)).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    expect(await s.api('GET', `/users/${alice.id}`, null)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
  });
});

describe('POST /users', () => {
  it('401 anonymous; 403 for non-admins, before any validation', async () => {
    expect(await s.api('POST', '/users', null, newUser())).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await s.api('POST', '/users', alice, newUser())).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await s.api('POST', '/users', alice, {})).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
  });

  it('creates a user: 201 UserFull with defaults, who can sign in', async () => {
    const body = newUser();
    const r = await s.api('POST', '/users', s.root, body);
    expect(r.status).toBe(201);
    expect(sorted(r.body)).toEqual([...FULL_KEYS].sort());
    expect(r.body).toMatchObject({
      username: body.username, email: body.email, name: body.name, state: 'active', is_admin: false, projects_limit: 10,
      can_create_group: true, can_create_project: true, external: false, bio: null, identities: [], two_factor_enabled: false,
      last_sign_in_at: null, current_sign_in_at: null,
    });
    expect(typeof r.body.id).toBe('number');
    expect(typeof r.body.confirmed_at).toBe('string');
    expect(r.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(r.body).not.toHaveProperty('password');
    expect(r.body).not.toHaveProperty('private_token');
    expect((await s.api('POST', '/session', null, { login: body.username, password: body.password })).status).toBe(201);
    const ns = await row(`SELECT kind, owner_id FROM namespaces WHERE path = ?`, [body.username]);
    expect(ns).toEqual({ kind: 'user', owner_id: r.body.id });
  });

  it('takes the optional fields (form-encoded, booleans as words)', async () => {
    const b = newUser();
    const form = new URLSearchParams({
      ...b, admin: 'yes', can_create_group: 'false', external: '1', projects_limit: '3', bio: 'hello', location: 'Earth',
      skype: 'sk', linkedin: 'li', twitter: 'tw', website_url: 'https://example.com', organization: 'ACME', confirm: 'no',
    }).toString();
    const r = await s.api('POST', '/users', s.root, form, FORM);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      is_admin: true, can_create_group: false, external: true, projects_limit: 3, bio: 'hello', location: 'Earth',
      skype: 'sk', linkedin: 'li', twitter: 'tw', website_url: 'https://example.com', organization: 'ACME', confirmed_at: null,
    });
  });

  it('ignores blank optional values', async () => {
    const r = await s.api('POST', '/users', s.root, new URLSearchParams({ ...newUser(), projects_limit: '', bio: '', admin: '' }).toString(), FORM);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ projects_limit: 10, bio: null, is_admin: false });
  });

  it('400 names the first missing or blank required attribute (email, password, name, username)', async () => {
    const full = newUser();
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'email'],
      [{ ...full, email: undefined }, 'email'],
      [{ ...full, email: '' }, 'email'],
      [{ ...full, password: undefined }, 'password'],
      [{ ...full, name: undefined }, 'name'],
      [{ ...full, username: undefined }, 'username'],
      [{ ...full, username: '' }, 'username'],
    ];
    for (const [body, attr] of cases) {
      const r = await s.api('POST', '/users', s.root, JSON.parse(JSON.stringify(body)));
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: `400 (Bad request) "${attr}" not given` });
    }
  });

  it('400 with the validation hash for invalid fields, creating nothing', async () => {
    const before = await userCount();
    const cases: [Record<string, unknown>, string][] = [
      [{ password: 'short' }, 'password'],
      [{ bio: 'x'.repeat(256) }, 'bio'],
      [{ email: 'not-an-email' }, 'email'],
      [{ email: 'two@@example.com' }, 'email'],
      [{ username: '-dash' }, 'username'],
      [{ username: 'dot.' }, 'username'],
      [{ username: 'has space' }, 'username'],
      [{ username: 'repo.git' }, 'username'],
      [{ username: 'feed.atom' }, 'username'],
      [{ username: 'api' }, 'username'],
      [{ username: 'Users' }, 'username'],
      [{ projects_limit: -1 }, 'projects_limit'],
      [{ projects_limit: 2 ** 31 }, 'projects_limit'],
      [{ name: 'n'.repeat(256) }, 'name'],
    ];
    for (const [extra, field] of cases) {
      const r = await s.api('POST', '/users', s.root, newUser(extra));
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(Object.keys(r.body.message)).toEqual([field]);
      expect(Array.isArray(r.body.message[field])).toBe(true);
      expect(typeof r.body.message[field][0]).toBe('string');
    }
    const both = await s.api('POST', '/users', s.root, newUser({ password: 'short', bio: 'x'.repeat(300) }));
    expect(both.status).toBe(400);
    expect(both.body.message).toEqual({ password: ['is too short (minimum is 8 characters)'], bio: ['is too long (maximum is 255 characters)'] });
    expect(await userCount()).toBe(before);
  });

  it('400 for a non-integer projects_limit', async () => {
    const r = await s.api('POST', '/users', s.root, newUser({ projects_limit: 'many' }));
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('projects_limit');
  });

  it('409 when the email or username is taken (case-insensitive), also by a group path', async () => {
    const dupEmail = await s.api('POST', '/users', s.root, newUser({ email: 'ALICE@example.com' }));
    expect(dupEmail).toMatchObject({ status: 409, body: { message: 'Email has already been taken' } });
    const dupUser = await s.api('POST', '/users', s.root, newUser({ username: 'Alice' }));
    expect(dupUser).toMatchObject({ status: 409, body: { message: 'Username has already been taken' } });
    await insertGroup('some-group');
    const dupGroup = await s.api('POST', '/users', s.root, newUser({ username: 'Some-Group' }));
    expect(dupGroup).toMatchObject({ status: 409, body: { message: 'Username has already been taken' } });
    // As GitLab 8.x, a taken email wins over other validation errors.
    const both = await s.api('POST', '/users', s.root, newUser({ email: 'alice@example.com', password: 'x' }));
    expect(both.status).toBe(409);
  });

  it('two creates of one username or email at once: one 201, the other the same 409', async () => {
    const a = newUser();
    const races: [Record<string, unknown>, string][] = [
      [newUser({ username: a.username.toUpperCase() }), 'Username has already been taken'],
      [newUser({ email: a.email.toUpperCase() }), 'Email has already been taken'],
    ];
    for (const [other, message] of races) {
      const rs = await Promise.all([s.api('POST', '/users', s.root, { ...a }), s.api('POST', '/users', s.root, other)]);
      expect(rs.map((r) => r.status).sort()).toEqual([201, 409]);
      expect(rs.find((r) => r.status === 409)!.body).toEqual({ message });
      expect((await s.api('DELETE', `/users/${rs.find((r) => r.status === 201)!.body.id}`, s.root)).status).toBe(200);
    }
  });
});

describe('PUT /users/:id', () => {
  let dave: TestUser;
  beforeAll(async () => { dave = await s.user('dave'); });

  it('401 anonymous, 403 non-admin (even for themself), 404 unknown', async () => {
    expect((await s.api('PUT', `/users/${dave.id}`, null, { name: 'x' })).status).toBe(401);
    expect(await s.api('PUT', `/users/${dave.id}`, dave, { name: 'x' })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await s.api('PUT', `/users/${dave.id}`, alice, { projects_limit: -5 })).toMatchObject({ status: 403 });
    expect(await s.api('PUT', '/users/99999', s.root, { name: 'x' })).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
  });

  it('updates fields and returns UserFull', async () => {
    const r = await s.api('PUT', `/users/${dave.id}`, s.root, {
      name: 'David', bio: 'new bio', skype: 'dskype', website_url: 'https://dave.example', projects_limit: 7, can_create_group: false, external: true,
    });
    expect(r.status).toBe(200);
    expect(sorted(r.body)).toEqual([...FULL_KEYS].sort());
    expect(r.body).toMatchObject({ id: dave.id, name: 'David', bio: 'new bio', skype: 'dskype', website_url: 'https://dave.example', projects_limit: 7, can_create_group: false, external: true });
    expect((await s.api('GET', `/users/${dave.id}`, s.root)).body.name).toBe('David');
  });

  it('ignores blank values instead of clearing or zeroing fields', async () => {
    const r = await s.api('PUT', `/users/${dave.id}`, s.root, 'name=&projects_limit=&bio=', FORM);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'David', projects_limit: 7, bio: 'new bio' });
  });

  it('can make and unmake admins', async () => {
    expect((await s.api('PUT', `/users/${dave.id}`, s.root, { admin: true })).body.is_admin).toBe(true);
    expect((await s.api('GET', '/users', dave)).body[0]).toHaveProperty('email');
    expect((await s.api('PUT', `/users/${dave.id}`, s.root, { admin: false })).body.is_admin).toBe(false);
  });

  it('changes the password used to sign in', async () => {
    expect((await s.api('PUT', `/users/${dave.id}`, s.root, { password: 'brand-new-pass' })).status).toBe(200);
    expect((await s.api('POST', '/session', null, { login: 'dave', password: 'password123' })).status).toBe(401);
    const ok = await s.api('POST', '/session', null, { login: 'dave', password: 'brand-new-pass' });
    expect(ok.status).toBe(201);
    expect(ok.body.private_token).toBe(dave.token);
  });

  it('409 for another user\'s email or username, not for their own', async () => {
    expect(await s.api('PUT', `/users/${dave.id}`, s.root, { email: 'bob@example.com' })).toMatchObject({ status: 409, body: { message: 'Email has already been taken' } });
    expect(await s.api('PUT', `/users/${dave.id}`, s.root, { username: 'BOB' })).toMatchObject({ status: 409, body: { message: 'Username has already been taken' } });
    expect(await s.api('PUT', `/users/${dave.id}`, s.root, { username: 'some-group' })).toMatchObject({ status: 409 });
    expect((await s.api('PUT', `/users/${dave.id}`, s.root, { email: 'dave@example.com', username: 'dave' })).status).toBe(200);
    expect((await s.api('PUT', `/users/${dave.id}`, s.root, { email: 'DAVE@example.com' })).status).toBe(200);
  });

  it('400 validation hash, changing nothing', async () => {
    const r = await s.api('PUT', `/users/${dave.id}`, s.root, { name: 'Changed', password: 'short', projects_limit: -1 });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.message).sort()).toEqual(['password', 'projects_limit']);
    expect((await s.api('GET', `/users/${dave.id}`, s.root)).body.name).toBe('David');
  });

  it('renaming the username renames the personal namespace', async () => {
    const r = await s.api('PUT', `/users/${dave.id}`, s.root, { username: 'davey' });
    expect(r.body.username).toBe('davey');
    const ns = await row(`SELECT path FROM namespaces WHERE kind = 'user' AND owner_id = ?`, [dave.id]);
    expect(ns).toEqual({ path: 'davey' });
    expect((await s.api('POST', '/session', null, { login: 'davey', password: 'brand-new-pass' })).status).toBe(201);
  });
});

describe('DELETE /users/:id', () => {
  it('401 anonymous, 403 non-admin, 404 unknown, 403 for oneself', async () => {
    expect((await s.api('DELETE', `/users/${bob.id}`, null)).status).toBe(401);
    expect(await s.api('DELETE', `/users/${bob.id}`, alice)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await s.api('DELETE', '/users/99999', s.root)).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    expect(await s.api('DELETE', `/users/${s.root.id}`, s.root)).toMatchObject({ status: 403 });
    expect((await s.api('GET', `/users/${bob.id}`, s.root)).status).toBe(200);
  });

  it('deletes the user, their namespace, projects, memberships and tokens', async () => {
    const erin = await s.user('erin');
    const project = (await s.api('POST', '/projects', erin, { name: 'Erin Project' })).body as { id: number };
    expect(typeof project.id).toBe('number');
    const pat = await s.api('POST', '/user/personal_access_tokens', erin, { name: 'cli' });
    expect(pat.status).toBe(201);
    const groupId = await insertGroup('erins-club', [erin.id, alice.id]);

    const r = await s.api('DELETE', `/users/${erin.id}`, s.root);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: erin.id, username: 'erin' });
    expect(await s.api('GET', `/users/${erin.id}`, s.root)).toMatchObject({ status: 404 });
    expect(await row(`SELECT 1 AS one FROM namespaces WHERE path = 'erin'`)).toBeUndefined();
    expect(await row(`SELECT 1 AS one FROM projects WHERE id = ?`, [project.id])).toBeUndefined();
    expect(await row(`SELECT 1 AS one FROM members WHERE user_id = ?`, [erin.id])).toBeUndefined();
    expect(await row(`SELECT 1 AS one FROM personal_access_tokens WHERE user_id = ?`, [erin.id])).toBeUndefined();
    expect(await row(`SELECT 1 AS one FROM namespaces WHERE id = ?`, [groupId])).toBeDefined();
    expect((await s.api('GET', '/user', erin)).status).toBe(401);
    expect((await s.api('GET', '/user', pat.body.token)).status).toBe(401);
    // The username and email are free again.
    expect((await s.api('POST', '/users', s.root, { username: 'erin', email: 'erin@example.com', name: 'Erin 2', password: 'password123' })).status).toBe(201);
  });

  it('keeps the issues deleted users wrote in other projects, authorless, with the live counts moved to author 0', async () => {
    const project = (await s.api('POST', '/projects', alice, { name: 'Rabbit Hole' })).body as { id: number };
    const t = now();
    const writers = [await s.user('hatter'), await s.user('hare')];
    let iid = 0;
    for (const w of writers) {
      iid += 1;
      await s.ctx.data.run(
        `INSERT INTO issues (project_id, iid, title, state, confidential, author_id, assignee_id, updated_by_id, created_at, updated_at)
         VALUES (?, ?, ?, 'opened', FALSE, ?, ?, ?, ?, ?)`,
        [project.id, iid, `tea party ${iid}`, w.id, w.id, w.id, t, t],
      );
    }
    // The second delete moves its issue onto the author-0 counts row the first one made (migration 0026).
    for (const w of writers) expect((await s.api('DELETE', `/users/${w.id}`, s.root)).status).toBe(200);
    const issues = await s.ctx.data.all(`SELECT author_id, assignee_id, updated_by_id FROM issues WHERE project_id = ? ORDER BY iid`, [project.id]);
    expect(issues).toEqual([
      { author_id: null, assignee_id: null, updated_by_id: null },
      { author_id: null, assignee_id: null, updated_by_id: null },
    ]);
    const counts = await s.ctx.data.all(`SELECT author_id, n FROM issue_counts WHERE project_id = ? AND n <> 0 ORDER BY author_id`, [project.id]);
    expect(counts).toEqual([{ author_id: 0, n: 2 }]);
  });

  it('keeps a user who is the sole owner of a group (still 200 with the user)', async () => {
    const frank = await s.user('frank');
    await insertGroup('franks-group', [frank.id]);
    const r = await s.api('DELETE', `/users/${frank.id}`, s.root);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(frank.id);
    expect((await s.api('GET', `/users/${frank.id}`, s.root)).status).toBe(200);
    expect((await s.api('GET', '/user', frank)).status).toBe(200);
  });
});

describe('PUT /users/:id/block and /unblock', () => {
  it('401 anonymous, 403 non-admin, 404 unknown', async () => {
    for (const action of ['block', 'unblock']) {
      expect((await s.api('PUT', `/users/${bob.id}/${action}`, null)).status).toBe(401);
      expect(await s.api('PUT', `/users/${bob.id}/${action}`, alice)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
      expect(await s.api('PUT', `/users/99999/${action}`, s.root)).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    }
    expect((await s.api('PUT', `/users/${s.root.id}/block`, s.root)).status).toBe(403);
  });

  it('blocking stops the private token and personal access tokens; unblocking restores them', async () => {
    const gina = await s.user('gina');
    const pat = (await s.api('POST', '/user/personal_access_tokens', gina, { name: 'ci' })).body.token as string;
    const blocked = await s.api('PUT', `/users/${gina.id}/block`, s.root);
    expect(blocked.status).toBe(200);
    expect(blocked.body).toBe(true);
    expect(await s.api('GET', '/user', gina)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect((await s.api('GET', '/user', pat)).status).toBe(401);
    expect((await s.api('GET', `/users/${gina.id}`, s.root)).body.state).toBe('blocked');
    expect((await s.api('PUT', `/users/${gina.id}/block`, s.root)).body).toBe(true);

    const unblocked = await s.api('PUT', `/users/${gina.id}/unblock`, s.root);
    expect(unblocked.status).toBe(200);
    expect(unblocked.body).toBe(true);
    expect((await s.api('GET', '/user', gina)).body.state).toBe('active');
    expect((await s.api('GET', '/user', pat)).status).toBe(200);
  });
});
