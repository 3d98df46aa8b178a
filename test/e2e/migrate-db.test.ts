/**
 * `gantryd migrate-db` end to end with the BUILT daemon: a SQLite installation filled through the API and git by a real
 * gantryd (users, a group, projects with members, a fork, issues with labels and notes, an issue moved to another
 * project, a milestone, award emoji, a todo, a merge request, a pipeline with builds from a pushed .gitlab-ci.yml, a
 * registered runner, a hook with deliveries waiting, a CI variable, a protected branch, a share with the group, a commit
 * comment, a release, a deploy key, an OAuth application and an access token from it, an SSH key, a personal access
 * token, changed settings), stopped, copied into a fresh PostgreSQL
 * database, then served by gantryd with --database-url on the same data directory: what the PostgreSQL port serves
 * today reads back as the SQLite daemon answered it, the old password and tokens still work, every table holds the
 * same rows. And the refusals: a running daemon, an older schema, a non-empty database, a value PostgreSQL cannot
 * hold (which leaves the target as it was).
 * Runs when GANTRY_TEST_DATABASE_URL is set (npm test's PostgreSQL pass); needs the build (npm test builds first).
 */
import BetterSqlite from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresDatabase } from '../../daemon/db/layer/postgres.js';
import { commitFiles, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { generateKeyPair } from '../helpers/ssh-keys.js';
import { api, cleanEnv, cleanupTmp, killAll, lines, runGantryd, startGantryd, tmp, type Daemon } from './helpers.js';

const PASSWORD = 'migrate-db-root-password';
const RUNNERS_TOKEN = 'migrate-db-registration-token-0123456789';
const EXTERNAL = 'http://gantry.example.test';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every file under a directory (but run/, the daemons' marks) with a hash of its content. */
function snapshotFiles(dir: string, under = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(join(dir, under))) {
    const rel = under ? `${under}/${name}` : name;
    if (rel === 'run') continue;
    const full = join(dir, rel);
    if (statSync(full).isDirectory()) Object.assign(out, snapshotFiles(dir, rel));
    else out[rel] = createHash('sha256').update(readFileSync(full)).digest('hex');
  }
  return out;
}

/** Every row of every table of a SQLite file, values as PostgreSQL's layer reads them back (booleans as 0/1). */
function sqliteRows(file: string): Record<string, unknown[]> {
  const db = new BetterSqlite(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name <> 'schema_migrations' ORDER BY name").all() as { name: string }[];
    return Object.fromEntries(tables.map((t) => [t.name, sortRows(db.prepare(`SELECT * FROM "${t.name}"`).all())]));
  } finally {
    db.close();
  }
}

function sortRows(rows: unknown[]): unknown[] {
  const norm = rows.map((r) => Object.fromEntries(Object.entries(r as object).map(([k, v]) => [k, typeof v === 'boolean' ? Number(v) : v])));
  return norm.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

async function postgresRows(url: string, tables: string[]): Promise<Record<string, unknown[]>> {
  const data = await postgresDatabase(url, { max: 1 });
  try {
    const out: Record<string, unknown[]> = {};
    for (const t of tables) out[t] = sortRows(await data.all(`SELECT * FROM "${t}"`));
    return out;
  } finally {
    await data.close();
  }
}

describe('gantryd migrate-db usage errors', () => {
  afterAll(() => cleanupTmp());

  it('says what it needs in one line, without the password, and exits 1', async () => {
    const dir = tmp('gantry-migrate-usage-');
    const none = await runGantryd(['migrate-db', '--data-dir', dir]);
    expect([none.code, none.stderr]).toEqual([1, 'gantryd: migrate-db needs --to postgres://user:password@host:5432/name, the empty PostgreSQL database to copy into\n']);
    const mysql = await runGantryd(['migrate-db', '--data-dir', dir, '--to', 'mysql://u:secret@db/gantry']);
    expect([mysql.code, mysql.stderr]).toEqual([1, 'gantryd: invalid --to URL: use a PostgreSQL URL such as postgres://user:password@host:5432/gantry (postgres:// or postgresql://)\n']);
    const empty = await runGantryd(['migrate-db', '--data-dir', dir, '--to', 'postgres://u:secret@127.0.0.1:1/gantry']);
    expect([empty.code, empty.stderr]).toEqual([1, `gantryd: ${dir} has no SQLite database (gantry.db): point --data-dir at the data directory of the installation to copy\n`]);
    const help = await runGantryd(['--help']);
    expect(help.stdout).toContain('migrate-db --to <url>');
  });
});

describe.skipIf(!TEST_DATABASE_URL)('gantryd migrate-db: a SQLite installation copied into PostgreSQL', () => {
  let dataDir: string;
  let sqliteDaemon: Daemon | undefined;
  let pgDaemon: Daemon | undefined;
  const drops: (() => Promise<void>)[] = [];
  let target: { url: string };
  let root: string;
  const made: {
    alice?: { id: number; token: string };
    bob?: { id: number; token: string };
    group?: number;
    project?: { id: number; path_with_namespace: string };
    groupProject?: number;
    fork?: number;
    pat?: string;
    bearer?: string;
    /** What the SQLite daemon answered, by request. */
    answers: Record<string, unknown>;
  } = { answers: {} };
  /** GET requests the PostgreSQL port serves today, with the token to send (all read back after the copy). */
  const reads = (): [string, string][] => [
    ['/users?per_page=100', root],
    ['/projects/all?per_page=100&order_by=id&sort=asc', root],
    [`/projects/${made.project!.id}`, root],
    [`/projects/${made.groupProject}`, made.alice!.token],
    [`/projects/${made.fork}`, made.bob!.token],
    ['/groups?per_page=100', root],
    [`/groups/${made.group}`, root],
    [`/groups/${made.group}/members`, root],
    [`/projects/${made.project!.id}/members`, root],
    [`/projects/${made.groupProject}/members`, root],
    ['/namespaces?per_page=100', root],
    ['/application/settings', root],
    ['/user', made.alice!.token],
    ['/user', made.pat!],
    ['/user/personal_access_tokens', made.bob!.token],
    ['/projects?per_page=100', made.bob!.token],
  ];
  const ok = (r: { status: number; body: unknown }, status = 201) => expect(r.status, JSON.stringify(r.body)).toBe(status);

  beforeAll(async () => {
    dataDir = tmp('gantry-migrate-');
    sqliteDaemon = await startGantryd(
      ['--port', '0', '--data-dir', dataDir, '--root-password', PASSWORD, '--runners-token', RUNNERS_TOKEN, '--external-url', EXTERNAL],
      cleanEnv(), 30_000,
    );
    const url = sqliteDaemon.url;
    root = (await api(url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
    const user = async (name: string) => {
      ok(await api(url, 'POST', '/users', root, { username: name, email: `${name}@example.com`, name: name.toUpperCase(), password: `${name}-password-1` }));
      const s = await api(url, 'POST', '/session', null, { login: name, password: `${name}-password-1` });
      return { id: s.body.id as number, token: s.body.private_token as string };
    };
    made.alice = await user('alice');
    made.bob = await user('bob');

    const group = await api(url, 'POST', '/groups', root, { name: 'Platform', path: 'platform', description: 'the platform team' });
    ok(group);
    made.group = group.body.id;
    ok(await api(url, 'POST', `/groups/${made.group}/members`, root, { user_id: made.alice.id, access_level: 40 }));
    const groupProject = await api(url, 'POST', '/projects', root, { name: 'api', namespace_id: made.group, visibility_level: 10 });
    ok(groupProject);
    made.groupProject = groupProject.body.id;

    // A repository with a CI configuration, pushed with git: a pipeline with two pending builds.
    const project = await api(url, 'POST', '/projects', root, { name: 'service', description: 'the service', visibility_level: 20 });
    ok(project);
    made.project = project.body;
    const p = made.project!.id;
    const dir = await workTree();
    const sha = await commitFiles(dir, { 'README.md': '# service\n', '.gitlab-ci.yml': 'test:\n  script: echo test\nlint:\n  script: echo lint\n' }, 'first');
    await gitOk(dir, ['push', '-q', repoUrl(url, made.project!.path_with_namespace, { username: 'root', password: PASSWORD }), 'HEAD:master']);
    ok(await api(url, 'POST', `/projects/${p}/members`, root, { user_id: made.bob.id, access_level: 30 }));
    // A hook (its deliveries of the events below wait in the outbox: nothing listens on port 9), a variable, a protected
    // branch, a share with the group, a commit comment, a tag with release notes, a deploy key.
    ok(await api(url, 'POST', `/projects/${p}/hooks`, root, { url: 'http://127.0.0.1:9/hook', issues_events: true, note_events: true }));
    ok(await api(url, 'POST', `/projects/${p}/variables`, root, { key: 'DEPLOY_ENV', value: 'staging' }));
    ok(await api(url, 'PUT', `/projects/${p}/repository/branches/master/protect`, root), 200);
    ok(await api(url, 'POST', `/projects/${p}/share`, root, { group_id: made.group, group_access: 30 }));
    ok(await api(url, 'POST', `/projects/${p}/repository/commits/${sha}/comments`, root, { note: 'a good start' }));
    ok(await api(url, 'POST', `/projects/${p}/repository/tags`, root, { tag_name: 'v1.0', ref: 'master', release_description: 'The first release' }));
    ok(await api(url, 'POST', `/projects/${p}/deploy_keys`, root, { title: 'deploy', key: generateKeyPair('ed25519', { comment: 'ci@deploy' }).publicKey }));

    // A merge request from a branch made through the API.
    ok(await api(url, 'POST', `/projects/${p}/repository/branches`, root, { branch_name: 'feature', ref: 'master' }));
    ok(await api(url, 'POST', `/projects/${p}/repository/files`, root, { file_path: 'feature.txt', branch_name: 'feature', content: 'new\n', commit_message: 'feature' }));
    ok(await api(url, 'POST', `/projects/${p}/merge_requests`, made.bob.token, { source_branch: 'feature', target_branch: 'master', title: 'Add the feature' }));

    // Issues with labels, a milestone and notes; one closed; one moved to the group's project (moved_to_id points at a later row).
    ok(await api(url, 'POST', `/projects/${p}/labels`, root, { name: 'bug', color: '#ff0000' }));
    const milestone = await api(url, 'POST', `/projects/${p}/milestones`, root, { title: 'v1', due_date: '2030-01-31' });
    ok(milestone);
    const issues: number[] = [];
    for (const [title, extra] of [['crash on start', { labels: 'bug', milestone_id: milestone.body.id }], ['slow list', { confidential: true }], ['to move', {}]] as const) {
      const i = await api(url, 'POST', `/projects/${p}/issues`, made.bob.token, { title, description: `${title}, in detail`, ...extra });
      ok(i);
      issues.push(i.body.id);
    }
    ok(await api(url, 'PUT', `/projects/${p}/issues/${issues[1]}`, root, { state_event: 'close' }), 200);
    ok(await api(url, 'POST', `/projects/${p}/issues/${issues[0]}/notes`, made.alice.token, { body: 'seen it too' }));
    ok(await api(url, 'POST', `/projects/${p}/issues/${issues[0]}/award_emoji`, made.alice.token, { name: 'thumbsup' }));
    ok(await api(url, 'POST', `/projects/${p}/issues/${issues[0]}/todo`, made.alice.token));
    ok(await api(url, 'POST', `/projects/${p}/issues/${issues[2]}/move`, root, { to_project_id: made.groupProject }));
    ok(await api(url, 'POST', `/projects/${p}/star`, made.alice.token));

    // A fork (forked_from_id), an OAuth application, an SSH key, a personal access token, a runner, changed settings.
    const fork = await api(url, 'POST', `/projects/fork/${p}`, made.bob.token);
    ok(fork);
    made.fork = fork.body.id;
    ok(await api(url, 'POST', '/applications', root, { name: 'Dashboard', redirect_uri: 'https://dashboard.example.com/callback' }));
    const key = generateKeyPair('ed25519', { comment: 'bob@laptop' });
    ok(await api(url, 'POST', '/user/keys', made.bob.token, { title: 'laptop', key: key.publicKey }));
    const pat = await api(url, 'POST', '/user/personal_access_tokens', made.bob.token, { name: 'ci', scopes: ['api'] });
    ok(pat);
    made.pat = pat.body.token;
    const grant = await fetch(`${url}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'password', username: 'alice', password: 'alice-password-1', client_id: 'gantry-cli' }),
    });
    const grantBody = await grant.json();
    expect(grant.status, JSON.stringify(grantBody)).toBe(200);
    made.bearer = grantBody.access_token;
    const runner = await fetch(`${url}/ci/api/v1/runners/register.json`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: RUNNERS_TOKEN, description: 'shell runner' }),
    });
    expect(runner.status).toBe(201);
    ok(await api(url, 'PUT', '/application/settings', root, { default_projects_limit: 42, signup_enabled: false }), 200);

    // The pipeline exists (made on push, in the background) before the daemon is stopped.
    for (let i = 0; i < 40; i++) {
      const pipelines = await api(url, 'GET', `/projects/${p}/pipelines`, root);
      if (Array.isArray(pipelines.body) && pipelines.body.length) break;
      await sleep(250);
    }
    for (const [path, token] of reads()) {
      const r = await api(url, 'GET', path, token);
      ok(r, 200);
      made.answers[`${path} as ${token}`] = r.body;
    }
  }, 120_000);

  afterAll(async () => {
    for (const d of [sqliteDaemon, pgDaemon]) if (d && d.proc.exitCode === null) await d.stop('SIGTERM');
    killAll();
    for (const drop of drops) await drop().catch(() => undefined);
    cleanupTmp();
  });

  const newDatabase = async () => {
    const db = await createTestDatabase(TEST_DATABASE_URL!);
    drops.push(db.drop);
    return db;
  };
  const migrateDb = (...args: string[]) => runGantryd(['migrate-db', ...args]);

  it('refuses while gantryd runs on the data directory, naming its pid', async () => {
    const db = await newDatabase();
    const r = await migrateDb('--data-dir', dataDir, '--to', db.url);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`gantryd: stop gantryd first (it is running as pid ${sqliteDaemon!.proc.pid}); migrate-db copies a stopped installation\n`);
    const pg = await postgresDatabase(db.url, { max: 1 });
    expect(await pg.all("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")).toEqual([]);
    await pg.close();
    expect(await sqliteDaemon!.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(readdirSync(join(dataDir, 'run'))).toEqual([]); // the daemon's mark went with it
  });

  it('refuses a SQLite database at an older schema version: start gantryd on it once first', async () => {
    const old = tmp('gantry-migrate-old-');
    cpSync(join(dataDir, 'gantry.db'), join(old, 'gantry.db'));
    const db = new BetterSqlite(join(old, 'gantry.db'));
    const last = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1').get() as { version: number; name: string };
    db.prepare('DELETE FROM schema_migrations WHERE version = ?').run(last.version);
    db.pragma(`user_version = ${last.version - 1}`);
    db.close();
    const r = await migrateDb('--data-dir', old, '--to', (await newDatabase()).url);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `gantryd: the SQLite database is at schema version ${last.version - 1}, this gantryd's is ${last.version} (missing: ${last.name}); ` +
        'start this gantryd once on the data directory (without --database-url) to migrate it, stop it, then run migrate-db again',
    ]);
  });

  it('a value PostgreSQL cannot hold stops the copy with the row named, and leaves the target as it was', async () => {
    const bad = tmp('gantry-migrate-bad-');
    cpSync(join(dataDir, 'gantry.db'), join(bad, 'gantry.db'));
    const db = new BetterSqlite(join(bad, 'gantry.db'));
    db.prepare("UPDATE users SET bio = 'a' || char(0) || 'b' WHERE username = 'bob'").run();
    db.close();
    const target = await newDatabase();
    const r = await migrateDb('--data-dir', bad, '--to', target.url);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `gantryd: users.bio of the row with id ${made.bob!.id} in the SQLite database holds a NUL character, which PostgreSQL's text column cannot take; ` +
        'correct that row in SQLite (gantryd stopped), then run migrate-db again',
    ]);
    // Rolled back as a whole: not even the schema is left.
    const pg = await postgresDatabase(target.url, { max: 1 });
    expect(await pg.all("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")).toEqual([]);
    await pg.close();
  });

  it('copies every table into an empty database, verified, and leaves the data directory as it was', async () => {
    target = await newDatabase();
    const before = snapshotFiles(dataDir);
    const r = await migrateDb('--data-dir', dataDir, '--to', target.url);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const out = r.stdout;
    expect(out).toMatch(/^gantryd migrate-db: copying .*gantry\.db \(schema version \d+\) into 127\.0\.0\.1:\d+\/gantry_t_\w+$/m);
    expect(out).toMatch(/^ {2}users +3 rows {2}\d+\.\d\d s$/m);
    expect(out).toMatch(/^ {2}issues +4 rows/m); // three, and the moved one's copy in the other project
    expect(out).toMatch(/^ {2}counts kept by triggers agree with a recount$/m);
    expect(out).toMatch(/^ {2}[\d,]+ rows in \d+ tables match \(row counts and checksums\) {2}\d+\.\d\d s\n {2}analyzed and committed {2}/m);
    expect(out).toContain(`gantryd --data-dir ${dataDir} --database-url '${target.url}'`);
    // Foreign-key order: a table after those it references.
    const order = [...out.matchAll(/^ {2}(\w+) +\d+ rows {2}/gm)].map((m) => m[1]);
    for (const [child, parent] of [['projects', 'namespaces'], ['namespaces', 'users'], ['issues', 'milestones'], ['commit_statuses', 'pipelines'], ['label_links', 'labels']]) {
      expect(order.indexOf(child)).toBeGreaterThan(order.indexOf(parent));
    }
    expect(snapshotFiles(dataDir)).toEqual(before);
    expect(readdirSync(join(dataDir, 'run'))).toEqual([]);
  }, 60_000);

  it('every table holds the same rows on both engines', async () => {
    const sqlite = sqliteRows(join(dataDir, 'gantry.db'));
    const pg = await postgresRows(target.url, Object.keys(sqlite));
    for (const table of Object.keys(sqlite)) expect(pg[table], table).toEqual(sqlite[table]);
    // The installation was filled: the rooms of this file all have rows.
    for (const table of ['users', 'namespaces', 'projects', 'members', 'issues', 'issue_counts', 'labels', 'label_links', 'notes', 'milestones',
      'merge_requests', 'merge_request_counts', 'merge_request_diffs', 'pipelines', 'commit_statuses', 'runners', 'oauth_applications', 'keys',
      'personal_access_tokens', 'stars', 'events', 'application_settings', 'project_hooks', 'hook_deliveries', 'ci_variables',
      'protected_branches', 'project_group_links', 'commit_notes', 'releases', 'deploy_keys_projects', 'award_emoji', 'todos',
      'oauth_access_tokens']) {
      expect(sqlite[table]!.length, table).toBeGreaterThan(0);
    }
    const moved = (sqlite.issues as { moved_to_id: number | null }[]).filter((i) => i.moved_to_id !== null);
    expect(moved).toHaveLength(1);
  });

  it('refuses a database that is not empty, unless --replace, which drops what was there', async () => {
    const other = await newDatabase();
    const pg = await postgresDatabase(other.url, { max: 1 });
    await pg.run('CREATE TABLE notes_of_someone (id integer PRIMARY KEY)');
    const refused = await migrateDb('--data-dir', dataDir, '--to', other.url);
    expect(refused.code).toBe(1);
    expect(lines(refused.stderr)).toEqual([
      `gantryd: the PostgreSQL database ${new URL(other.url).host}/${other.name} is not empty (it has notes_of_someone); ` +
        'copy into a new empty database (createdb --locale=C.UTF-8 -T template0 NAME), or add --replace to drop everything in this one first',
    ]);
    expect(await pg.all("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")).toEqual([{ table_name: 'notes_of_someone' }]);
    const replaced = await migrateDb('--data-dir', dataDir, '--to', other.url, '--replace');
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toContain('dropped what was in the database (--replace)');
    expect(await pg.all("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'notes_of_someone'")).toEqual([]);
    expect(await pg.get<{ n: number }>('SELECT COUNT(*) AS n FROM users')).toEqual({ n: 3 });
    await pg.close();
  }, 60_000);

  it('gantryd on the copy serves the same answers, the old password and tokens work, new ids follow the old ones', async () => {
    pgDaemon = await startGantryd(['--port', '0', '--data-dir', dataDir, '--database-url', target.url, '--external-url', EXTERNAL], cleanEnv(), 30_000);
    const url = pgDaemon.url;
    for (const [path, token] of reads()) {
      const r = await api(url, 'GET', path, token);
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body, path).toEqual(made.answers[`${path} as ${token}`]);
    }
    // (Signing in changes the users' sign-in times, so it comes after the reads.)
    const session = await api(url, 'POST', '/session', null, { login: 'root', password: PASSWORD });
    ok(session);
    expect(session.body.private_token).toBe(root); // derived from the data dir's secret and the copied salt
    // An OAuth access token issued on SQLite is accepted (stored hashed, copied).
    const bearer = await fetch(`${url}/api/v3/user`, { headers: { authorization: `Bearer ${made.bearer}` } });
    expect(bearer.status).toBe(200);
    expect((await bearer.json()).username).toBe('alice');
    const bob = await api(url, 'POST', '/session', null, { login: 'bob', password: 'bob-password-1' });
    ok(bob);
    expect(bob.body.private_token).toBe(made.bob!.token);
    // New rows take ids after the copied ones (identity sequences set past the highest id).
    const project = await api(url, 'POST', '/projects', root, { name: 'after-the-move' });
    ok(project);
    expect(project.body.id).toBeGreaterThan(made.fork!);
    const user = await api(url, 'POST', '/users', root, { username: 'carol', email: 'carol@example.com', name: 'Carol', password: 'carol-password-1' });
    ok(user);
    expect(user.body.id).toBe(made.bob!.id + 1);
    // And migrate-db refuses while this daemon runs.
    const r = await migrateDb('--data-dir', dataDir, '--to', target.url, '--replace');
    expect(r.stderr).toBe(`gantryd: stop gantryd first (it is running as pid ${pgDaemon.proc.pid}); migrate-db copies a stopped installation\n`);
  }, 60_000);
});
