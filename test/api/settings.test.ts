import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../daemon/app.js';
import { bootstrap, loadSecrets, prepareDataDir } from '../../daemon/bootstrap.js';
import { resolveConfig } from '../../daemon/config.js';
import { DaemonState, dataPaths, type AppContext } from '../../daemon/context.js';
import { openDataLayer } from '../../daemon/db/layer/open.js';
import { getSettings } from '../../daemon/services/instance/settings.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';

let s: TestServer;
let alice: TestUser;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const FIELDS: Record<string, 'integer' | 'boolean' | 'string' | 'string?' | 'integer[]?' | 'string[]?'> = {
  id: 'integer', default_projects_limit: 'integer', signup_enabled: 'boolean', signin_enabled: 'boolean', gravatar_enabled: 'boolean',
  sign_in_text: 'string?', after_sign_up_text: 'string?', created_at: 'string', updated_at: 'string', home_page_url: 'string?',
  default_branch_protection: 'integer', restricted_visibility_levels: 'integer[]?', max_attachment_size: 'integer',
  session_expire_delay: 'integer', default_project_visibility: 'integer', default_snippet_visibility: 'integer',
  default_group_visibility: 'integer', domain_whitelist: 'string[]?', domain_blacklist_enabled: 'boolean', domain_blacklist: 'string[]?',
  user_oauth_applications: 'boolean', after_sign_out_path: 'string?', container_registry_token_expire_delay: 'integer',
  repository_storage: 'string', runners_registration_token: 'string',
};

const get = async () => (await s.api('GET', '/application/settings', s.root)).body;
/** The stored git protocol setting (write-only in the API), read from the database. */
const storedProtocol = async () =>
  (await s.ctx.data.get<{ p: string | null }>('SELECT enabled_git_access_protocol AS p FROM application_settings WHERE id = 1'))!.p;
const put = (body: unknown, headers?: Record<string, string>) => s.api('PUT', '/application/settings', s.root, body, headers);

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice');
});
afterAll(async () => { await s.close(); });

describe('authorization', () => {
  it('401 anonymous, 403 for non-admins (even with an invalid body), 200 for admins', async () => {
    expect(await s.api('GET', '/application/settings', null)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await s.api('PUT', '/application/settings', null, { signup_enabled: false })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await s.api('GET', '/application/settings', alice)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await s.api('PUT', '/application/settings', alice, { signup_enabled: false })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await s.api('PUT', '/application/settings', alice, { default_projects_limit: -1 })).toMatchObject({ status: 403 });
    expect((await get()).signup_enabled).toBe(true);
    expect((await s.api('GET', '/application/settings', s.root)).status).toBe(200);
  });
});

describe('GET /application/settings', () => {
  it('returns every field with its type and the defaults', async () => {
    const r = await s.api('GET', '/application/settings', s.root);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(Object.keys(FIELDS).sort());
    for (const [k, type] of Object.entries(FIELDS)) {
      const v = r.body[k];
      if (type.endsWith('?') && v === null) continue;
      if (type.startsWith('integer[]')) expect(v.every(Number.isInteger), k).toBe(true);
      else if (type.startsWith('string[]')) expect(v.every((x: unknown) => typeof x === 'string'), k).toBe(true);
      else if (type === 'integer') expect(Number.isInteger(v), k).toBe(true);
      else expect(typeof v, k).toBe(type.replace('?', ''));
    }
    expect(r.body).toMatchObject({
      id: 1, default_projects_limit: 10, signup_enabled: true, signin_enabled: true, gravatar_enabled: true, sign_in_text: null,
      home_page_url: null, default_branch_protection: 2, restricted_visibility_levels: null, max_attachment_size: 10,
      session_expire_delay: 10080, default_project_visibility: 0, default_snippet_visibility: 0, default_group_visibility: 0,
      domain_whitelist: null, domain_blacklist_enabled: false, domain_blacklist: null, user_oauth_applications: true,
      after_sign_out_path: null, container_registry_token_expire_delay: 5, repository_storage: 'default',
    });
    // write-only (the spec's Application settings resource): never shown
    expect(r.body).not.toHaveProperty('enabled_git_access_protocol');
    expect(r.body.runners_registration_token.length).toBeGreaterThanOrEqual(20);
  });
});

describe('PUT /application/settings', () => {
  it('changes every field (JSON), returning the new settings', async () => {
    const before = await get();
    const change = {
      default_projects_limit: 42, signup_enabled: false, signin_enabled: false, gravatar_enabled: false, sign_in_text: 'Welcome',
      after_sign_up_text: 'Thanks', home_page_url: 'https://example.com/home', default_branch_protection: 1,
      restricted_visibility_levels: [20, 0], max_attachment_size: 25, session_expire_delay: 60, default_project_visibility: 10,
      default_snippet_visibility: 20, default_group_visibility: 10, domain_whitelist: ['example.com', '*.example.org'],
      domain_blacklist_enabled: true, domain_blacklist: ['spam.com'], user_oauth_applications: false,
      after_sign_out_path: 'https://example.com/bye', container_registry_token_expire_delay: 15, repository_storage: 'default',
      enabled_git_access_protocol: 'http',
    };
    const r = await put(change);
    expect(r.status).toBe(200);
    const { enabled_git_access_protocol: protocol, ...shown } = change;
    expect(r.body).toMatchObject({ ...shown, restricted_visibility_levels: [0, 20] });
    // accepted and stored, but write-only: neither the PUT answer nor GET shows it
    expect(r.body).not.toHaveProperty('enabled_git_access_protocol');
    expect(await storedProtocol()).toBe(protocol);
    expect(r.body.runners_registration_token).toBe(before.runners_registration_token);
    expect(r.body.created_at).toBe(before.created_at);
    expect(r.body.updated_at >= before.updated_at).toBe(true);
    expect(await get()).toEqual(r.body);
  });

  it('takes form-encoded values: numbers as text, booleans as words, lists comma-separated', async () => {
    const r = await put('default_projects_limit=7&signup_enabled=yes&signin_enabled=1&gravatar_enabled=true&domain_blacklist_enabled=off'
      + '&restricted_visibility_levels=10,20&domain_whitelist=a.com,%20b.com;c.com&default_project_visibility=internal', FORM);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      default_projects_limit: 7, signup_enabled: true, signin_enabled: true, gravatar_enabled: true, domain_blacklist_enabled: false,
      restricted_visibility_levels: [10, 20], domain_whitelist: ['a.com', 'b.com', 'c.com'], default_project_visibility: 10,
    });
  });

  it('takes lists as form arrays, and visibility as 0/1/2 or names', async () => {
    const r = await put('restricted_visibility_levels[]=0&restricted_visibility_levels[]=2&domain_blacklist[]=x.com&domain_blacklist[]=y.com'
      + '&default_snippet_visibility=1&default_group_visibility=public', FORM);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ restricted_visibility_levels: [0, 20], domain_blacklist: ['x.com', 'y.com'], default_snippet_visibility: 10, default_group_visibility: 20 });
    const names = await put({ restricted_visibility_levels: 'private, public' });
    expect(names.body.restricted_visibility_levels).toEqual([0, 20]);
    const newline = await put({ domain_whitelist: 'one.com\ntwo.com' });
    expect(newline.body.domain_whitelist).toEqual(['one.com', 'two.com']);
  });

  it('clears lists and texts with null or an empty string', async () => {
    await put({ restricted_visibility_levels: [10], domain_whitelist: ['a.com'], sign_in_text: 'x', home_page_url: 'http://h.example' });
    const r = await put({ restricted_visibility_levels: null, domain_whitelist: '', sign_in_text: '', home_page_url: null });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ restricted_visibility_levels: null, domain_whitelist: null, sign_in_text: null, home_page_url: null });
    await put({ enabled_git_access_protocol: 'ssh' });
    expect(await storedProtocol()).toBe('ssh');
    const form = await put('restricted_visibility_levels=&enabled_git_access_protocol=', FORM);
    expect(form.body).toMatchObject({ restricted_visibility_levels: null });
    expect(await storedProtocol()).toBeNull();
  });

  it('an empty body changes nothing', async () => {
    const before = await get();
    const r = await put({});
    expect(r.status).toBe(200);
    expect({ ...r.body, updated_at: null }).toEqual({ ...before, updated_at: null });
    expect((await s.api('PUT', '/application/settings', s.root)).status).toBe(200);
  });

  it('ignores unknown fields and the runners registration token', async () => {
    const before = await get();
    const r = await put({ runners_registration_token: 'mine-now', id: 9, no_such_setting: true });
    expect(r.status).toBe(200);
    expect(r.body.runners_registration_token).toBe(before.runners_registration_token);
    expect(r.body.id).toBe(1);
  });

  const INVALID: [string, unknown][] = [
    ['default_projects_limit', -1], ['default_projects_limit', 'many'], ['default_projects_limit', 1.5], ['default_projects_limit', null],
    ['max_attachment_size', 0], ['session_expire_delay', -5], ['container_registry_token_expire_delay', 0],
    ['default_branch_protection', 3], ['default_branch_protection', 'x'],
    ['default_project_visibility', 5], ['default_snippet_visibility', 'secret'], ['default_group_visibility', -1],
    ['restricted_visibility_levels', [0, 7]], ['restricted_visibility_levels', 'private,hidden'],
    ['signup_enabled', 'maybe'], ['signin_enabled', 'sure'], ['gravatar_enabled', 2], ['user_oauth_applications', 'x'], ['domain_blacklist_enabled', 'x'],
    ['home_page_url', 'not a url'], ['home_page_url', 'ftp://example.com'], ['after_sign_out_path', 'javascript:alert(1)'],
    ['domain_whitelist', ['ok.com', 'bad domain!']], ['domain_blacklist', 'has/slash.com'],
    ['repository_storage', 'elsewhere'], ['enabled_git_access_protocol', 'ftp'], ['sign_in_text', { nested: true }],
  ];
  for (const [field, value] of INVALID) {
    it(`400 validation hash for ${field}=${JSON.stringify(value)}, changing nothing`, async () => {
      const before = await get();
      const r = await put({ [field]: value });
      expect(r.status).toBe(400);
      expect(Object.keys(r.body.message)).toEqual([field]);
      expect(r.body.message[field].length).toBeGreaterThan(0);
      expect(typeof r.body.message[field][0]).toBe('string');
      expect(await get()).toEqual(before);
    });
  }

  it('one valid and one invalid field: 400 and the valid one is not applied', async () => {
    const before = await get();
    const r = await put({ default_projects_limit: 99, sign_in_text: 'changed', max_attachment_size: -3 });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: { max_attachment_size: ['must be greater than 0'] } });
    expect(await get()).toEqual(before);
    expect((await get()).default_projects_limit).not.toBe(99);
  });

  it('reports every invalid field at once', async () => {
    const r = await put({ default_projects_limit: -1, default_branch_protection: 9, home_page_url: 'nope' });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.message).sort()).toEqual(['default_branch_protection', 'default_projects_limit', 'home_page_url']);
    expect(r.body.message.default_projects_limit).toEqual(['must be greater than or equal to 0']);
  });

  it('the domain blacklist must not be empty while enabled', async () => {
    await put({ domain_blacklist_enabled: false, domain_blacklist: null });
    const r = await put({ domain_blacklist_enabled: true });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.message)).toEqual(['domain_blacklist']);
    expect((await get()).domain_blacklist_enabled).toBe(false);
    const both = await put({ domain_blacklist_enabled: true, domain_blacklist: 'spam.example' });
    expect(both.status).toBe(200);
    expect((await put({ domain_blacklist: '' })).status).toBe(400);
    expect((await put({ domain_blacklist_enabled: false, domain_blacklist: '' })).status).toBe(200);
  });
});

describe('effects', () => {
  it('default_projects_limit applies to users created afterwards', async () => {
    expect((await put({ default_projects_limit: 3 })).status).toBe(200);
    const created = await s.api('POST', '/users', s.root, { username: 'limited', email: 'limited@example.com', name: 'L', password: 'password123' });
    expect(created.body.projects_limit).toBe(3);
    expect((await s.api('GET', `/users/${alice.id}`, s.root)).body.projects_limit).toBe(10);
    const explicit = await s.api('POST', '/users', s.root, { username: 'explicit', email: 'explicit@example.com', name: 'E', password: 'password123', projects_limit: 0 });
    expect(explicit.body).toMatchObject({ projects_limit: 0, can_create_project: false });
    await put({ default_projects_limit: 10 });
  });

  it('gravatar_enabled=false removes avatar URLs', async () => {
    await put({ gravatar_enabled: false });
    expect((await s.api('GET', '/user', alice)).body.avatar_url).toBeNull();
    await put({ gravatar_enabled: true });
    expect((await s.api('GET', '/user', alice)).body.avatar_url).toMatch(/^https:\/\/www\.gravatar\.com\//);
  });
});

describe('runners_registration_token', () => {
  /** The instance runner registration token in plain text, as the daemon reads it. */
  const tokenOf = async (ctx: AppContext) => ctx.secrets.open((await getSettings(ctx)).runnersRegistrationToken);

  /**
   * One installation (a data dir, and on PostgreSQL its own database) started again and again: each `start` opens and
   * bootstraps a context on it from a resolved configuration, as gantryd does; `stop` closes it.
   */
  async function installation() {
    const dir = mkdtempSync(join(tmpdir(), 'gantry-settings-'));
    const pg = TEST_DATABASE_URL ? await createTestDatabase(TEST_DATABASE_URL) : null;
    const opened: { close(): Promise<void> }[] = [];
    return {
      async start(env: NodeJS.ProcessEnv): Promise<AppContext> {
        const config = resolveConfig({ dataDir: dir, port: '0', logLevel: 'silent', databaseUrl: pg?.url }, { GANTRY_ROOT_PASSWORD: 'rootpassword123', ...env });
        const paths = dataPaths(dir);
        prepareDataDir(paths);
        const database = await openDataLayer(config);
        opened.push(database);
        const ctx: AppContext = { data: database.data, config, secrets: loadSecrets(dir), paths, externalUrl: () => 'http://x.test', state: new DaemonState() };
        await bootstrap(ctx);
        return ctx;
      },
      async stop() {
        for (const d of opened.splice(0)) await d.close();
      },
      async remove() {
        await this.stop();
        await pg?.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  it('equals GANTRY_RUNNERS_TOKEN when configured, and follows it across restarts', async () => {
    const site = await installation();
    try {
      const ctx = await site.start({ GANTRY_RUNNERS_TOKEN: 'configured-runners-token-1' });
      expect(await tokenOf(ctx)).toBe('configured-runners-token-1');
      const app = await buildApp(ctx);
      const login = await app.inject({ method: 'POST', url: '/api/v3/session', payload: { login: 'root', password: 'rootpassword123' } });
      const token = login.json().private_token as string;
      const r = await app.inject({ method: 'GET', url: '/api/v3/application/settings', headers: { 'private-token': token } });
      expect(r.json().runners_registration_token).toBe('configured-runners-token-1');
      await app.close();
      await site.stop();

      const again = await site.start({ GANTRY_RUNNERS_TOKEN: 'configured-runners-token-2' });
      expect(await tokenOf(again)).toBe('configured-runners-token-2');
      await site.stop();

      const unset = await site.start({});
      expect(await tokenOf(unset)).toBe('configured-runners-token-2');
    } finally {
      await site.remove();
    }
  });

  it('is generated once when not configured, and stable across restarts', async () => {
    const site = await installation();
    try {
      const ctx = await site.start({});
      const first = await tokenOf(ctx);
      expect(first).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      await site.stop();
      const again = await site.start({});
      expect(await tokenOf(again)).toBe(first);
    } finally {
      await site.remove();
    }
  });

  it('flags win over the environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gantry-settings-'));
    try {
      const config = resolveConfig({ dataDir: dir, runnersToken: 'from-flag-token' }, { GANTRY_RUNNERS_TOKEN: 'from-env-token' });
      expect(config.runnersToken).toBe('from-flag-token');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
