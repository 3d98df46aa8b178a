/**
 * Two gantryd processes on one PostgreSQL database and one data directory (issue 11: "two gantryd processes serve the
 * slice consistently"): what is written through one is read through the other, settings changed on one hold on the
 * other, a personal access token made on one works on the other and, once revoked, is refused there at once.
 * Runs when GANTRY_TEST_DATABASE_URL is set (npm test's PostgreSQL pass); needs the build (npm test builds first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cleanEnv, cleanupTmp, lines, runGantryd, tmp, type Daemon } from './helpers.js';
import { startDaemonPair, type DaemonPair } from './database.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';

const PASSWORD = 'two-daemons-root-password';

describe('gantryd --database-url start failures', () => {
  afterAll(() => cleanupTmp());

  it('refuses a URL that is not PostgreSQL, in one line', async () => {
    const r = await runGantryd(['--port', '0', '--data-dir', tmp(), '--database-url', 'mysql://u:secret@db/gantry']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^gantryd: invalid database URL \(mysql:\/\/\.\.\.\): use a PostgreSQL URL such as postgres:\/\/user:password@host:5432\/gantry/);
    expect(r.stderr).not.toContain('secret');
  });

  it('says where it could not connect, without a stack trace or the password', async () => {
    const r = await runGantryd(['--port', '0', '--data-dir', tmp()], cleanEnv({ GANTRY_DATABASE_URL: 'postgres://gantry:secret@127.0.0.1:1/gantry' }));
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^gantryd: cannot connect to PostgreSQL at 127\.0\.0\.1:1: .*ECONNREFUSED.*; check --database-url$/);
    expect(r.stderr).not.toContain('secret');
    expect(lines(r.stderr)).toHaveLength(1);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('two gantryd processes on one PostgreSQL database', () => {
  let a: Daemon;
  let b: Daemon;
  let dataDir: string;
  let pair: DaemonPair | undefined;
  let root: string;
  /** A failed step's answer with the tail of both daemons' logs (an error answered 500 is logged there). */
  const why = (r: { body: unknown }) => `${JSON.stringify(r.body)}\nA: ${a.stderr().slice(-3000)}\nB: ${b.stderr().slice(-3000)}`;
  const ids: { user?: number; userToken?: string; group?: number; project?: number; pathWithNamespace?: string } = {};

  beforeAll(async () => {
    // Both start at once on the empty database and the empty data dir: one migrates (the other waits on the migration
    // lock), one makes the secret and the root user, and both end up with the same ones.
    pair = await startDaemonPair(TEST_DATABASE_URL!, PASSWORD);
    ({ a, b, dataDir } = pair);
  }, 90_000);

  afterAll(async () => {
    if (pair) expect(await pair.stop()).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
  });

  it('start on the same schema, secret and root user', async () => {
    for (const d of [a, b]) {
      expect((await api(d.url, 'GET', '/-/health')).status).toBe(200);
      expect(d.stdout()).not.toMatch(/password/); // a given root password is never printed
    }
    const la = await api(a.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
    const lb = await api(b.url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
    expect(la.status).toBe(201);
    expect(lb.status).toBe(201);
    // The private token is derived from the one secret of the shared data dir: the same on both.
    expect(lb.body.private_token).toBe(la.body.private_token);
    expect(lb.body.id).toBe(la.body.id);
    root = la.body.private_token;
    expect(existsSync(join(dataDir, 'gantry.db'))).toBe(false); // no SQLite file on PostgreSQL
    expect(readFileSync(join(dataDir, 'secret_key'), 'utf8').length).toBeGreaterThan(40);
  });

  it('a user, a group, a project and members written through A are read through B', async () => {
    const user = await api(a.url, 'POST', '/users', root, { username: 'erin', email: 'erin@example.com', name: 'Erin', password: 'erinpassword1' });
    expect(user.status, why(user)).toBe(201);
    ids.user = user.body.id;
    expect((await api(b.url, 'GET', `/users/${ids.user}`, root)).body).toMatchObject({ id: ids.user, username: 'erin', name: 'Erin' });
    const session = await api(b.url, 'POST', '/session', null, { login: 'erin', password: 'erinpassword1' });
    expect(session.status).toBe(201);
    ids.userToken = session.body.private_token;

    const group = await api(a.url, 'POST', '/groups', root, { name: 'Two Daemons', path: 'two-daemons' });
    expect(group.status, why(group)).toBe(201);
    ids.group = group.body.id;
    expect((await api(b.url, 'GET', `/groups/${ids.group}`, root)).body).toMatchObject({ id: ids.group, path: 'two-daemons' });

    const project = await api(a.url, 'POST', '/projects', root, { name: 'shared', namespace_id: ids.group });
    expect(project.status, why(project)).toBe(201);
    ids.project = project.body.id;
    ids.pathWithNamespace = project.body.path_with_namespace;
    expect((await api(b.url, 'GET', `/projects/${ids.project}`, root)).body).toMatchObject({ id: ids.project, path_with_namespace: 'two-daemons/shared' });
    const listed = await api(b.url, 'GET', '/projects', root);
    expect(listed.status).toBe(200);
    expect(listed.body.map((p: { id: number }) => p.id)).toContain(ids.project);

    const member = await api(a.url, 'POST', `/projects/${ids.project}/members`, root, { user_id: ids.user, access_level: 30 });
    expect(member.status, why(member)).toBe(201);
    expect((await api(b.url, 'GET', `/projects/${ids.project}/members/${ids.user}`, root)).body).toMatchObject({ id: ids.user, access_level: 30 });
    // Erin, a developer of the project through A, sees it through B.
    expect((await api(b.url, 'GET', `/projects/${ids.project}`, ids.userToken)).status).toBe(200);

    const groupMember = await api(a.url, 'POST', `/groups/${ids.group}/members`, root, { user_id: ids.user, access_level: 20 });
    expect(groupMember.status, why(groupMember)).toBe(201);
    const groupMembers = await api(b.url, 'GET', `/groups/${ids.group}/members`, root);
    expect(groupMembers.body.find((m: { id: number }) => m.id === ids.user)).toMatchObject({ access_level: 20 });
  });

  it('settings changed through B hold on A at once', async () => {
    const put = await api(b.url, 'PUT', '/application/settings', root, { default_projects_limit: 42, signup_enabled: false });
    expect(put.status, why(put)).toBe(200);
    expect((await api(a.url, 'GET', '/application/settings', root)).body).toMatchObject({ default_projects_limit: 42, signup_enabled: false });
    // and take effect there: a user created through A gets the new default limit
    const user = await api(a.url, 'POST', '/users', root, { username: 'frank', email: 'frank@example.com', name: 'Frank', password: 'frankpassword1' });
    expect(user.status, why(user)).toBe(201);
    expect(user.body.projects_limit).toBe(42);
  });

  it('a personal access token made on A works on B, and is refused there once revoked on A', async () => {
    const made = await api(a.url, 'POST', '/user/personal_access_tokens', ids.userToken, { name: 'ci' });
    expect(made.status, why(made)).toBe(201);
    const pat = made.body.token as string;
    expect((await api(b.url, 'GET', '/user', pat)).body).toMatchObject({ username: 'erin' });
    const revoked = await api(a.url, 'DELETE', `/user/personal_access_tokens/${made.body.id}`, ids.userToken);
    expect(revoked.status).toBe(200);
    expect((await api(b.url, 'GET', '/user', pat)).status).toBe(401);
    expect((await api(a.url, 'GET', '/user', pat)).status).toBe(401);
  });

  it('a user blocked through A is refused by B at once, and let in again once unblocked through B', async () => {
    expect((await api(a.url, 'PUT', `/users/${ids.user}/block`, root)).status).toBe(200);
    expect((await api(b.url, 'GET', '/user', ids.userToken)).status).toBe(401);
    expect((await api(b.url, 'PUT', `/users/${ids.user}/unblock`, root)).status).toBe(200);
    expect((await api(a.url, 'GET', '/user', ids.userToken)).body).toMatchObject({ username: 'erin', state: 'active' });
  });

  it('two creates of one username at once, one through each daemon: one 201 and one 409', async () => {
    const body = (email: string) => ({ username: 'racer', email, name: 'Racer', password: 'racerpassword1' });
    const [ra, rb] = await Promise.all([
      api(a.url, 'POST', '/users', root, body('racer-a@example.com')),
      api(b.url, 'POST', '/users', root, body('racer-b@example.com')),
    ]);
    expect([ra.status, rb.status].sort(), why(ra.status === 201 ? rb : ra)).toEqual([201, 409]);
    const listed = await api(b.url, 'GET', '/users?username=racer', root);
    expect(listed.body).toHaveLength(1);
  });

  it('serves every room on both (no route answers 501 any more)', async () => {
    for (const d of [a, b]) {
      for (const path of [`/projects/${ids.project}/merge_requests`, `/projects/${ids.project}/issues`, `/projects/${ids.project}/pipelines`]) {
        const r = await api(d.url, 'GET', path, root);
        expect(r.status, path).toBe(200);
      }
    }
  });

  it('clones through B a project created through A (git over HTTP)', async () => {
    const probe = await fetch(`${b.url}/${ids.pathWithNamespace}.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}` },
    });
    await probe.arrayBuffer();
    expect(probe.status).toBe(200);
    const into = join(tmp('gantry-two-clone-'), 'shared');
    const url = new URL(`${b.url}/${ids.pathWithNamespace}.git`);
    url.username = 'root';
    url.password = PASSWORD;
    const clone = spawnSync('git', ['clone', url.toString(), into], { encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    expect(clone.status, clone.stderr).toBe(0);
    expect(existsSync(join(into, '.git'))).toBe(true);
  });
});
