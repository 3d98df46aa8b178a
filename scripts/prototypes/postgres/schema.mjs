/**
 * The slice's tables written once with Kysely's schema builder and compiled for either engine (the "one source for
 * both engines' migrations" of docs/design/postgres.md), and the benchmark's data set loaded identically into both.
 * On SQLite the prototype applies the daemon's real migrations instead (daemon/db/migrations), so the baseline runs
 * on today's schema; this builder is what the PostgreSQL side gets.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';

/** Column types that differ between the engines; everything else (text, integer) is written once. */
const types = (dialect) => ({
  id: (c) => (dialect === 'postgres' ? c.generatedByDefaultAsIdentity().primaryKey() : c.primaryKey().autoIncrement()),
  bool: dialect === 'postgres' ? 'boolean' : 'integer',
  time: dialect === 'postgres' ? 'timestamptz' : 'text',
  date: dialect === 'postgres' ? 'date' : 'text',
  // A case-insensitive unique text: SQLite's COLLATE NOCASE; PostgreSQL gets a unique index on lower(column).
  nocase: (c) => (dialect === 'postgres' ? c : c.modifyEnd(sql`COLLATE NOCASE`)),
  t: (dialect === 'postgres' ? sql`true` : sql`1`),
  f: (dialect === 'postgres' ? sql`false` : sql`0`),
});

/** The slice's schema (users, tokens, namespaces, projects, members, links, stars, events, issue counts, settings). */
export async function createSliceSchema(db, dialect) {
  const T = types(dialect);
  const flags = (b, names, on) => names.reduce((acc, n) => acc.addColumn(n, T.bool, (c) => c.notNull().defaultTo(on.includes(n) ? T.t : T.f)), b);
  await db.schema.createTable('users').addColumn('id', 'integer', T.id)
    .addColumn('username', 'text', (c) => T.nocase(c.notNull())).addColumn('email', 'text', (c) => T.nocase(c.notNull()))
    .addColumn('name', 'text', (c) => c.notNull()).addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('private_token_salt', 'text', (c) => c.notNull()).addColumn('private_token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('active')).addColumn('is_admin', T.bool, (c) => c.notNull().defaultTo(T.f))
    .addColumn('bio', 'text').addColumn('location', 'text').addColumn('skype', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('linkedin', 'text', (c) => c.notNull().defaultTo('')).addColumn('twitter', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('website_url', 'text', (c) => c.notNull().defaultTo('')).addColumn('organization', 'text')
    .addColumn('projects_limit', 'integer', (c) => c.notNull().defaultTo(10)).addColumn('can_create_group', T.bool, (c) => c.notNull().defaultTo(T.t))
    .addColumn('external', T.bool, (c) => c.notNull().defaultTo(T.f)).addColumn('confirmed_at', T.time).addColumn('last_sign_in_at', T.time)
    .addColumn('current_sign_in_at', T.time).addColumn('created_at', T.time, (c) => c.notNull()).addColumn('updated_at', T.time, (c) => c.notNull())
    .execute();
  await db.schema.createTable('personal_access_tokens').addColumn('id', 'integer', T.id)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade')).addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique()).addColumn('expires_at', T.date)
    .addColumn('revoked', T.bool, (c) => c.notNull().defaultTo(T.f)).addColumn('created_at', T.time, (c) => c.notNull()).execute();
  await db.schema.createTable('namespaces').addColumn('id', 'integer', T.id).addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => T.nocase(c.notNull())).addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('user', 'group')`))
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('cascade')).addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('visibility_level', 'integer', (c) => c.notNull().defaultTo(0))
    .$call((b) => flags(b, ['share_with_group_lock', 'request_access_enabled', 'lfs_enabled'], ['lfs_enabled']))
    .addColumn('created_at', T.time, (c) => c.notNull()).addColumn('updated_at', T.time, (c) => c.notNull()).execute();
  await db.schema.createTable('projects').addColumn('id', 'integer', T.id).addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => T.nocase(c.notNull())).addColumn('namespace_id', 'integer', (c) => c.notNull().references('namespaces.id'))
    .addColumn('description', 'text').addColumn('default_branch', 'text', (c) => c.notNull().defaultTo('master'))
    .addColumn('visibility_level', 'integer', (c) => c.notNull().defaultTo(0))
    .$call((b) => flags(b, ['issues_enabled', 'merge_requests_enabled', 'builds_enabled', 'wiki_enabled', 'snippets_enabled', 'container_registry_enabled',
      'shared_runners_enabled', 'public_builds', 'lfs_enabled', 'request_access_enabled', 'only_allow_merge_if_build_succeeds', 'archived'],
    ['issues_enabled', 'merge_requests_enabled', 'builds_enabled', 'wiki_enabled', 'shared_runners_enabled', 'public_builds', 'lfs_enabled']))
    .addColumn('import_url', 'text').addColumn('tag_list', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('creator_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('forked_from_id', 'integer', (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('runners_token_salt', 'text', (c) => c.notNull()).addColumn('runners_token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('last_activity_at', T.time, (c) => c.notNull()).addColumn('created_at', T.time, (c) => c.notNull())
    .addColumn('updated_at', T.time, (c) => c.notNull()).execute();
  await db.schema.createTable('members').addColumn('id', 'integer', T.id)
    .addColumn('source_type', 'text', (c) => c.notNull().check(sql`source_type IN ('Project', 'Namespace')`))
    .addColumn('source_id', 'integer', (c) => c.notNull()).addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('access_level', 'integer', (c) => c.notNull()).addColumn('expires_at', T.date).addColumn('created_by_id', 'integer')
    .addColumn('created_at', T.time, (c) => c.notNull()).addColumn('updated_at', T.time, (c) => c.notNull())
    .addUniqueConstraint('members_source_user', ['source_type', 'source_id', 'user_id']).execute();
  await db.schema.createTable('project_group_links').addColumn('id', 'integer', T.id)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('group_access', 'integer', (c) => c.notNull()).addColumn('expires_at', T.date)
    .addColumn('created_at', T.time, (c) => c.notNull()).addColumn('updated_at', T.time, (c) => c.notNull())
    .addUniqueConstraint('project_group_links_project_group', ['project_id', 'group_id']).execute();
  await db.schema.createTable('stars').addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('created_at', T.time, (c) => c.notNull()).addPrimaryKeyConstraint('stars_pk', ['user_id', 'project_id']).execute();
  await db.schema.createTable('events').addColumn('id', 'integer', T.id)
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null')).addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_id', 'integer').addColumn('target_type', 'text').addColumn('target_title', 'text').addColumn('title', 'text')
    .addColumn('data', 'text').addColumn('note_id', 'integer').addColumn('created_at', T.time, (c) => c.notNull()).execute();
  await db.schema.createTable('issue_counts').addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull()).addColumn('state', 'text', (c) => c.notNull())
    .addColumn('confidential', T.bool, (c) => c.notNull()).addColumn('n', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('issue_counts_pk', ['project_id', 'author_id', 'state', 'confidential']).execute();
  const index = (name, table, cols) => db.schema.createIndex(name).on(table).columns(cols).execute();
  const nocaseUnique = (name, table, expr) =>
    dialect === 'postgres' ? db.schema.createIndex(name).on(table).unique().expression(sql.raw(expr)).execute() : Promise.resolve();
  await nocaseUnique('users_username_lower', 'users', 'lower(username)');
  await nocaseUnique('users_email_lower', 'users', 'lower(email)');
  await nocaseUnique('namespaces_path_lower', 'namespaces', 'lower(path)');
  await nocaseUnique('projects_namespace_path_lower', 'projects', 'namespace_id, lower(path)');
  await index('personal_access_tokens_user', 'personal_access_tokens', ['user_id']);
  await index('namespaces_owner', 'namespaces', ['owner_id']);
  await index('projects_namespace', 'projects', ['namespace_id']);
  await index('projects_visibility', 'projects', ['visibility_level']);
  await index('projects_created', 'projects', ['created_at']);
  await index('projects_forked_from', 'projects', ['forked_from_id']);
  await index('members_user', 'members', ['user_id', 'source_type']);
  await index('project_group_links_group', 'project_group_links', ['group_id']);
  await index('stars_project', 'stars', ['project_id']);
  await index('events_project', 'events', ['project_id', 'id']);
}

/** Apply the daemon's real SQLite migrations to a better-sqlite3 connection (the baseline's schema). */
export function applyDaemonMigrations(conn, dir) {
  for (const f of readdirSync(dir).filter((x) => /^\d{4}_.+\.sql$/.test(x)).sort()) conn.exec(readFileSync(join(dir, f), 'utf8'));
}

const sha256 = (s) => createHash('sha256').update(s).digest('hex');
/** The private token of user `i` (its SHA-256 is stored). */
export const tokenOf = (i) => `token-of-user-${i}-xxxxxxxxxxxx`;

/**
 * The data set: `users` users, each with a personal namespace holding `perUser` projects (owner membership rows as
 * createProject writes them), 20 groups of 50 projects with 10 members each, shares, stars, forks, issue counts.
 */
export function dataSet({ users = 200, perUser = 45, groups = 20, perGroup = 50 } = {}) {
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');
  const at = (i) => new Date(t0 + i * 60_000).toISOString();
  const rows = { users: [], namespaces: [], projects: [], members: [], project_group_links: [], stars: [], issue_counts: [] };
  for (let i = 1; i <= users; i++) {
    rows.users.push({ id: i, username: `user${i}`, email: `user${i}@example.com`, name: `User ${i}`, password_hash: 'x', private_token_salt: `s${i}`,
      private_token_hash: sha256(tokenOf(i)), is_admin: false, created_at: at(i), updated_at: at(i) });
    rows.namespaces.push({ id: i, name: `user${i}`, path: `user${i}`, kind: 'user', owner_id: i, visibility_level: 0, created_at: at(i), updated_at: at(i) });
  }
  for (let g = 1; g <= groups; g++) {
    const id = users + g;
    rows.namespaces.push({ id, name: `Group ${g}`, path: `group${g}`, kind: 'group', owner_id: null, visibility_level: 10, created_at: at(id), updated_at: at(id) });
    for (let k = 0; k < 10; k++) {
      rows.members.push({ source_type: 'Namespace', source_id: id, user_id: ((g * 7 + k * 13) % users) + 1, access_level: k === 0 ? 50 : 30, created_by_id: null, created_at: at(id), updated_at: at(id) });
    }
  }
  let pid = 0;
  const addProject = (nsId, owner, name) => {
    pid++;
    rows.projects.push({ id: pid, name, path: name.toLowerCase(), namespace_id: nsId, description: `Project ${pid}`, visibility_level: [0, 10, 20][pid % 3],
      creator_id: owner, forked_from_id: pid % 33 === 0 ? pid - 1 : null, runners_token_salt: `r${pid}`, runners_token_hash: sha256(`runners${pid}`),
      last_activity_at: at(pid), created_at: at(pid), updated_at: at(pid) });
    if (pid % 4 === 0) rows.issue_counts.push({ project_id: pid, author_id: owner, state: 'opened', confidential: false, n: pid % 17 });
    if (pid % 20 === 0) rows.project_group_links.push({ project_id: pid, group_id: users + 1 + (pid % groups), group_access: 30, created_at: at(pid), updated_at: at(pid) });
    return pid;
  };
  for (let i = 1; i <= users; i++) {
    for (let k = 0; k < perUser; k++) {
      const id = addProject(i, i, `Proj-${i}-${k}`);
      rows.members.push({ source_type: 'Project', source_id: id, user_id: i, access_level: 40, created_by_id: i, created_at: at(id), updated_at: at(id) });
    }
  }
  for (let g = 1; g <= groups; g++) for (let k = 0; k < perGroup; k++) addProject(users + g, 1, `Gproj-${g}-${k}`);
  const starred = new Set();
  for (let k = 0; k < 5000; k++) {
    const user = (k % users) + 1;
    const project = ((k * 7919) % pid) + 1;
    if (starred.has(`${user}:${project}`)) continue;
    starred.add(`${user}:${project}`);
    rows.stars.push({ user_id: user, project_id: project, created_at: at(k) });
  }
  return rows;
}

/** The tables of the data set, in foreign-key order. */
export const TABLES = ['users', 'namespaces', 'projects', 'members', 'project_group_links', 'stars', 'issue_counts'];
