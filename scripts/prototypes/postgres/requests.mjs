/**
 * The database work of the three hot requests, as the daemon does it (daemon/policy/authentication.ts,
 * services/projects/projects.ts, services/projects/lists.ts, policy/permissions.ts, api/entities/projects.ts), in three
 * shapes: today's synchronous code (cached better-sqlite3 statements, drizzle for the create transaction), the same
 * SQL through the proposed async layer (layer.mjs; one code for both engines, dialect fragments below), and Kysely's
 * query builder (one code for both engines). Caches in front of the queries (db/read-cache.ts, the response cache)
 * are left out on purpose: this measures what a request costs when it reaches the database.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';

const MASTER = 40;
const OWNER = 50;
const sha256 = (s) => createHash('sha256').update(s).digest('hex');

/** The SQL pieces that differ between the engines; every other character of a statement is shared. */
export const fragments = {
  sqlite: {
    today: `date('now')`,
    least: 'MIN',
    /** `col IN (?,?,?)`: today's form (one text per list length, as daemon/db/sql.ts placeholders()). */
    inIds: (col, ids) => ({ text: `${col} IN (${ids.length ? ids.map(() => '?').join(',') : 'NULL'})`, args: ids }),
    nocaseEq: (col) => `${col} = ? COLLATE NOCASE`,
  },
  postgres: {
    today: 'CURRENT_DATE',
    least: 'LEAST',
    /** `col = ANY(?)` with one int[] parameter: one text for any list length. */
    inIds: (col, ids) => ({ text: `${col} = ANY(?)`, args: [ids] }),
    nocaseEq: (col) => `lower(${col}) = lower(?)`,
  },
};

const memberActive = (F) => `(m.expires_at IS NULL OR m.expires_at >= ${F.today})`;

/** policy/permissions.ts projectAccessLevel, with positional parameters (user, ns, user, project, user, ns, user, project). */
const accessLevelSql = (F) => `SELECT MAX(level) AS level FROM (
   SELECT CASE WHEN n.kind = 'user' AND n.owner_id = ? THEN ${OWNER} ELSE 0 END AS level FROM namespaces n WHERE n.id = ?
   UNION ALL SELECT m.access_level FROM members m
     WHERE m.source_type = 'Project' AND m.source_id = ? AND m.user_id = ? AND ${memberActive(F)}
   UNION ALL SELECT m.access_level FROM members m
     WHERE m.source_type = 'Namespace' AND m.source_id = ? AND m.user_id = ? AND ${memberActive(F)}
   UNION ALL SELECT ${F.least}(m.access_level, l.group_access) FROM project_group_links l
     JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.group_id AND m.user_id = ?
     WHERE l.project_id = ? AND (l.expires_at IS NULL OR l.expires_at >= ${F.today})
 ) AS levels`;
const accessArgs = (user, p) => [user.id, p.namespace_id, p.id, user.id, p.namespace_id, user.id, user.id, p.id];

/**
 * policy/permissions.ts authorizedProjectsSql (the 'index' plan). Today the user id is written into the text; here it
 * is bound (four times, `authorizedArgs`): on PostgreSQL every distinct text is parsed and planned again (about 1 ms
 * for this one), on SQLite it only fills the statement cache.
 */
const authorizedSql = (F) => `(p.id IN (SELECT m.source_id FROM members m WHERE m.source_type = 'Project' AND m.user_id = ? AND ${memberActive(F)})
    OR p.namespace_id IN (SELECT m.source_id FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND ${memberActive(F)})
    OR p.namespace_id IN (SELECT n.id FROM namespaces n WHERE n.kind = 'user' AND n.owner_id = ?)
    OR p.id IN (SELECT l.project_id FROM project_group_links l JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.group_id AND m.user_id = ?))`;
const authorizedArgs = (user) => [user.id, user.id, user.id, user.id];

/** The presenter's batch statements for `ids` (api/entities/projects.ts presentProjects). */
function presenterStatements(F, rows, viewer) {
  const ids = rows.map((r) => r.id);
  const nsIds = [...new Set(rows.map((r) => r.namespace_id))];
  const forkedFromIds = [...new Set(rows.map((r) => r.forked_from_id).filter((x) => x !== null))];
  const q = (pre, frag, post = '', extra = []) => ({ text: `${pre}${frag.text}${post}`, args: [...extra, ...frag.args] });
  return {
    namespaces: q('SELECT * FROM namespaces WHERE ', F.inIds('id', nsIds)),
    stars: q('SELECT project_id AS id, COUNT(*) AS n FROM stars WHERE ', F.inIds('project_id', ids), ' GROUP BY project_id'),
    forks: q('SELECT forked_from_id AS id, COUNT(*) AS n FROM projects WHERE ', F.inIds('forked_from_id', ids), ' GROUP BY forked_from_id'),
    issues: q(`SELECT c.project_id AS id, SUM(c.n) AS n FROM issue_counts c WHERE c.state = 'opened' AND `, F.inIds('c.project_id', ids), ' GROUP BY c.project_id'),
    links: q('SELECT l.project_id, l.group_id, n.name AS group_name, l.group_access FROM project_group_links l JOIN namespaces n ON n.id = l.group_id WHERE ',
      F.inIds('l.project_id', ids), ' ORDER BY l.id'),
    forkedFrom: q('SELECT p.*, n.path AS ns_path, n.name AS ns_name FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE ', F.inIds('p.id', forkedFromIds)),
    projectAccess: q(`SELECT source_id AS id, access_level AS n FROM members WHERE source_type = 'Project' AND user_id = ? AND `, F.inIds('source_id', ids), '', [viewer.id]),
    groupAccess: q(`SELECT source_id AS id, access_level AS n FROM members WHERE source_type = 'Namespace' AND user_id = ? AND `, F.inIds('source_id', nsIds), '', [viewer.id]),
    owners: (ownerIds) => q('SELECT * FROM users WHERE ', F.inIds('id', ownerIds)),
  };
}

/**
 * The same presenter data in three statements (for PostgreSQL, where each statement is a round trip): the five
 * per-project numbers as one UNION ALL, namespaces joined with their owners, the group shares; the fork parents
 * only when a project has one. Portable SQL: the same text serves SQLite.
 */
function batchedStatements(F, rows, viewer) {
  const ids = rows.map((r) => r.id);
  const nsIds = [...new Set(rows.map((r) => r.namespace_id))];
  const parts = [
    [`SELECT 'stars' AS k, project_id AS id, COUNT(*) AS n FROM stars WHERE `, F.inIds('project_id', ids), ' GROUP BY project_id', []],
    [` UNION ALL SELECT 'forks', forked_from_id, COUNT(*) FROM projects WHERE `, F.inIds('forked_from_id', ids), ' GROUP BY forked_from_id', []],
    [` UNION ALL SELECT 'issues', c.project_id, SUM(c.n) FROM issue_counts c WHERE c.state = 'opened' AND `, F.inIds('c.project_id', ids), ' GROUP BY c.project_id', []],
    [` UNION ALL SELECT 'pa', source_id, access_level FROM members WHERE source_type = 'Project' AND user_id = ? AND `, F.inIds('source_id', ids), '', [viewer.id]],
    [` UNION ALL SELECT 'ga', source_id, access_level FROM members WHERE source_type = 'Namespace' AND user_id = ? AND `, F.inIds('source_id', nsIds), '', [viewer.id]],
  ];
  const ns = F.inIds('n.id', nsIds);
  return {
    numbers: { text: parts.map(([a, f, b]) => `${a}${f.text}${b}`).join(''), args: parts.flatMap(([, f, , pre]) => [...pre, ...f.args]) },
    namespaces: {
      text: `SELECT n.*, u.username AS owner_username, u.name AS owner_name, u.state AS owner_state, u.created_at AS owner_created_at
        FROM namespaces n LEFT JOIN users u ON n.kind = 'user' AND u.id = n.owner_id WHERE ${ns.text}`,
      args: ns.args,
    },
  };
}

/** projectAccessLevel of the caller on the row's project, as a column of the project's own SELECT (binds the user 4 times). */
const levelColumn = (F) => `(SELECT MAX(level) FROM (
   SELECT CASE WHEN n.kind = 'user' AND n.owner_id = ? THEN ${OWNER} ELSE 0 END AS level FROM namespaces n WHERE n.id = p.namespace_id
   UNION ALL SELECT m.access_level FROM members m
     WHERE m.source_type = 'Project' AND m.source_id = p.id AND m.user_id = ? AND ${memberActive(F)}
   UNION ALL SELECT m.access_level FROM members m
     WHERE m.source_type = 'Namespace' AND m.source_id = p.namespace_id AND m.user_id = ? AND ${memberActive(F)}
   UNION ALL SELECT ${F.least}(m.access_level, l.group_access) FROM project_group_links l
     JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.group_id AND m.user_id = ?
     WHERE l.project_id = p.id AND (l.expires_at IS NULL OR l.expires_at >= ${F.today})
 ) AS levels)`;

const byId = (rows, key = 'id') => new Map(rows.map((r) => [r[key], r]));

/** The JSON-ready project entities from the batch results (shared by every variant, so their answers compare). */
function present(rows, r, viewer) {
  const ns = byId(r.namespaces);
  const owners = byId(r.owners);
  const num = (list) => new Map(list.map((x) => [x.id, Number(x.n)]));
  const stars = num(r.stars);
  const forks = num(r.forks);
  const issues = num(r.issues);
  const pa = num(r.projectAccess);
  const ga = num(r.groupAccess);
  const ff = byId(r.forkedFrom);
  return rows.map((p) => {
    const n = ns.get(p.namespace_id);
    const owner = n.kind === 'user' ? owners.get(n.owner_id) : undefined;
    const from = p.forked_from_id !== null ? ff.get(p.forked_from_id) : undefined;
    return {
      id: p.id, description: p.description, default_branch: p.default_branch, tag_list: JSON.parse(p.tag_list), public: p.visibility_level === 20,
      archived: !!p.archived, visibility_level: p.visibility_level, name: p.name, path: p.path, path_with_namespace: `${n.path}/${p.path}`,
      ...(owner ? { owner: { id: owner.id, username: owner.username, name: owner.name, state: owner.state, created_at: owner.created_at } } : {}),
      issues_enabled: !!p.issues_enabled, merge_requests_enabled: !!p.merge_requests_enabled, created_at: p.created_at, last_activity_at: p.last_activity_at,
      namespace: { id: n.id, name: n.name, path: n.path, kind: n.kind, lfs_enabled: !!n.lfs_enabled, created_at: n.created_at },
      ...(from ? { forked_from_project: { id: from.id, path_with_namespace: `${from.ns_path}/${from.path}` } } : {}),
      star_count: stars.get(p.id) ?? 0, forks_count: forks.get(p.id) ?? 0, ...(p.issues_enabled ? { open_issues_count: issues.get(p.id) ?? 0 } : {}),
      shared_with_groups: r.links.filter((l) => l.project_id === p.id).map((l) => ({ group_id: l.group_id, group_name: l.group_name, group_access_level: l.group_access })),
      permissions: {
        project_access: pa.has(p.id) ? { access_level: pa.get(p.id), notification_level: 3 } : null,
        group_access: ga.has(p.namespace_id) ? { access_level: ga.get(p.namespace_id), notification_level: 3 } : null,
      },
      ...(r.canAdmin?.get(p.id) ? { runners_token: `derived-${p.runners_token_salt}` } : {}),
      viewer: viewer.id,
    };
  });
}

const PRESENTER_KEYS = ['namespaces', 'stars', 'forks', 'issues', 'links', 'forkedFrom', 'projectAccess', 'groupAccess'];
const insertProjectSql = `INSERT INTO projects (name, path, namespace_id, description, visibility_level, default_branch, issues_enabled, merge_requests_enabled,
  builds_enabled, wiki_enabled, snippets_enabled, container_registry_enabled, shared_runners_enabled, public_builds, lfs_enabled, request_access_enabled,
  only_allow_merge_if_build_succeeds, import_url, tag_list, creator_id, forked_from_id, runners_token_salt, runners_token_hash, last_activity_at, created_at, updated_at)
  VALUES (?, ?, ?, NULL, 0, 'master', TRUE, TRUE, TRUE, TRUE, FALSE, FALSE, TRUE, TRUE, TRUE, FALSE, FALSE, NULL, '[]', ?, NULL, ?, ?, ?, ?, ?) RETURNING *`;
const insertMemberSql = `INSERT INTO members (source_type, source_id, user_id, access_level, created_by_id, created_at, updated_at) VALUES ('Project', ?, ?, ${MASTER}, ?, ?, ?)`;
const insertEventSql = `INSERT INTO events (project_id, author_id, action, created_at) VALUES (?, ?, 'created', ?)`;

/**
 * The three requests written once against the async layer (`db`: all/get/run/transaction). The same functions run on
 * SQLite and PostgreSQL; only `fragments[db.dialect]` differs. `batched`: the same answers in fewer statements (the
 * project row carries the caller's access level, the presenter runs batchedStatements), for PostgreSQL's round trips.
 * `versioned`: the cost of the design's shared write version for the caches, without any cache hit to pay for it:
 * 'row': every request reads a one-row version first and every write transaction bumps it as its last statement;
 * 'snapshot' (PostgreSQL): every request reads `pg_current_snapshot()` first, which changes with every transaction
 * that writes, and writes pay nothing.
 */
export function asyncRequests(db, { batched = false, versioned = false } = {}) {
  const F = fragments[db.dialect];
  const access = accessLevelSql(F);
  const userForToken = async (token) => {
    if (versioned === 'row') await db.get('SELECT v FROM write_version');
    if (versioned === 'snapshot') await db.get('SELECT pg_current_snapshot()::text AS v');
    const u = await db.get('SELECT * FROM users WHERE private_token_hash = ?', [sha256(token)]);
    return u && u.state === 'active' ? u : null;
  };
  const level = async (user, p) => (await db.get(access, accessArgs(user, p))).level ?? 0;
  const presentBatched = async (rows, viewer, withRunnersToken) => {
    const s = batchedStatements(F, rows, viewer);
    const numbers = await db.all(s.numbers.text, s.numbers.args);
    const pick = (k) => numbers.filter((x) => x.k === k);
    const r = { stars: pick('stars'), forks: pick('forks'), issues: pick('issues'), projectAccess: pick('pa'), groupAccess: pick('ga') };
    r.namespaces = await db.all(s.namespaces.text, s.namespaces.args);
    r.owners = r.namespaces.filter((n) => n.owner_username !== null)
      .map((n) => ({ id: n.owner_id, username: n.owner_username, name: n.owner_name, state: n.owner_state, created_at: n.owner_created_at }));
    const p = presenterStatements(F, rows, viewer);
    r.links = await db.all(p.links.text, p.links.args);
    r.forkedFrom = rows.some((x) => x.forked_from_id !== null) ? await db.all(p.forkedFrom.text, p.forkedFrom.args) : [];
    if (withRunnersToken) r.canAdmin = new Map(rows.map((x) => [x.id, x.level >= MASTER]));
    return present(rows, r, viewer);
  };
  const presentRows = async (rows, viewer, withRunnersToken) => {
    if (!rows.length) return [];
    if (batched) return presentBatched(rows, viewer, withRunnersToken);
    const s = presenterStatements(F, rows, viewer);
    const r = {};
    for (const k of PRESENTER_KEYS) r[k] = await db.all(s[k].text, s[k].args);
    const ownerIds = r.namespaces.filter((n) => n.kind === 'user' && n.owner_id).map((n) => n.owner_id);
    const o = s.owners(ownerIds);
    r.owners = await db.all(o.text, o.args);
    if (withRunnersToken) r.canAdmin = new Map([[rows[0].id, (await level(viewer, rows[0])) >= MASTER]]);
    return present(rows, r, viewer);
  };
  return {
    /** GET /projects/:id as the project's owner. */
    async getProject(token, projectId) {
      const user = await userForToken(token);
      if (batched) {
        const p = await db.get(`SELECT p.*, ${levelColumn(F)} AS level FROM projects p WHERE p.id = ?`, [user.id, user.id, user.id, user.id, projectId]);
        if (!p || (p.level ?? 0) < 10) throw new Error('404');
        return (await presentRows([p], user, true))[0];
      }
      const p = await db.get('SELECT * FROM projects WHERE id = ?', [projectId]);
      if (!p || (await level(user, p)) < 10) throw new Error('404');
      return (await presentRows([p], user, true))[0];
    },
    /** GET /projects?per_page=20 (ProjectWithAccess, authorized scope, created_at desc). */
    async listProjects(token) {
      const user = await userForToken(token);
      const where = authorizedSql(F);
      const { n } = await db.get(`SELECT COUNT(*) AS n FROM projects p WHERE ${where}`, authorizedArgs(user));
      const rows = n ? await db.all(`SELECT p.* FROM projects p WHERE ${where} ORDER BY p.created_at DESC, p.id DESC LIMIT ? OFFSET ?`, [...authorizedArgs(user), 20, 0]) : [];
      return { total: Number(n), items: await presentRows(rows, user, false) };
    },
    /** POST /projects: the checks, then project + owner membership + event in one transaction. */
    async createProject(token, name) {
      const user = await userForToken(token);
      const ns = await db.get(`SELECT * FROM namespaces WHERE kind = 'user' AND owner_id = ?`, [user.id]);
      await db.get('SELECT COUNT(*) AS n FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.kind = \'user\' AND n.owner_id = ?', [user.id]);
      const path = name.toLowerCase();
      for (const [col, v] of [['name', name], ['path', path]]) {
        if (await db.get(`SELECT 1 AS taken FROM projects WHERE namespace_id = ? AND ${F.nocaseEq(col)}`, [ns.id, v])) throw new Error(`${col} taken`);
      }
      const salt = randomBytes(18).toString('base64url');
      const t = new Date().toISOString();
      return db.transaction(async (tx) => {
        const row = await tx.get(insertProjectSql, [name, path, ns.id, user.id, salt, sha256(`runners${salt}`), t, t, t]);
        await tx.run(insertMemberSql, [row.id, user.id, user.id, t, t]);
        await tx.run(insertEventSql, [row.id, user.id, t]);
        if (versioned === 'row') await tx.run('UPDATE write_version SET v = v + 1');
        return row.id;
      });
    },
  };
}

/**
 * Today's code shape: synchronous, cached prepared statements on one better-sqlite3 connection (daemon/db/statements.ts).
 * The create runs the async variant's statements (cached, BEGIN IMMEDIATE) so that the two differ only in being
 * asynchronous; with `drizzle` ({ db, schema, eq, and }, schema from dist/) it runs as services/projects/projects.ts writes it
 * today instead: drizzle builders and statements prepared on every call.
 */
export function syncRequests(conn, drizzle) {
  const F = fragments.sqlite;
  const cache = new Map();
  const st = (text) => {
    let s = cache.get(text);
    if (!s) cache.set(text, (s = conn.prepare(text)));
    return s;
  };
  const access = accessLevelSql(F);
  const userForToken = (token) => {
    const u = st('SELECT * FROM users WHERE private_token_hash = ?').get(sha256(token));
    return u && u.state === 'active' ? u : null;
  };
  const level = (user, p) => st(access).get(...accessArgs(user, p)).level ?? 0;
  const presentRows = (rows, viewer, withRunnersToken) => {
    if (!rows.length) return [];
    const s = presenterStatements(F, rows, viewer);
    const r = {};
    for (const k of PRESENTER_KEYS) r[k] = st(s[k].text).all(...s[k].args);
    const ownerIds = r.namespaces.filter((n) => n.kind === 'user' && n.owner_id).map((n) => n.owner_id);
    const o = s.owners(ownerIds);
    r.owners = st(o.text).all(...o.args);
    if (withRunnersToken) r.canAdmin = new Map([[rows[0].id, level(viewer, rows[0]) >= MASTER]]);
    return present(rows, r, viewer);
  };
  const createRaw = (token, name) => {
    const user = userForToken(token);
    const ns = st(`SELECT * FROM namespaces WHERE kind = 'user' AND owner_id = ?`).get(user.id);
    st('SELECT COUNT(*) AS n FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.kind = \'user\' AND n.owner_id = ?').get(user.id);
    const path = name.toLowerCase();
    for (const [col, v] of [['name', name], ['path', path]]) {
      if (st(`SELECT 1 AS taken FROM projects WHERE namespace_id = ? AND ${F.nocaseEq(col)}`).get(ns.id, v)) throw new Error(`${col} taken`);
    }
    const salt = randomBytes(18).toString('base64url');
    const t = new Date().toISOString();
    return conn.transaction(() => {
      const row = st(insertProjectSql).get(name, path, ns.id, user.id, salt, sha256(`runners${salt}`), t, t, t);
      st(insertMemberSql).run(row.id, user.id, user.id, t, t);
      st(insertEventSql).run(row.id, user.id, t);
      return row.id;
    }).immediate();
  };
  const { db, schema, eq, and } = drizzle ?? {};
  const requests = {
    getProject(token, projectId) {
      const user = userForToken(token);
      const p = st('SELECT * FROM projects WHERE id = ?').get(projectId);
      if (!p || level(user, p) < 10) throw new Error('404');
      return presentRows([p], user, true)[0];
    },
    listProjects(token) {
      const user = userForToken(token);
      const where = authorizedSql(F);
      const { n } = st(`SELECT COUNT(*) AS n FROM projects p WHERE ${where}`).get(...authorizedArgs(user));
      const rows = n ? st(`SELECT p.* FROM projects p WHERE ${where} ORDER BY p.created_at DESC, p.id DESC LIMIT ? OFFSET ?`).all(...authorizedArgs(user), 20, 0) : [];
      return { total: n, items: presentRows(rows, user, false) };
    },
    createProject(token, name) {
      const user = userForToken(token);
      const ns = db.select().from(schema.namespaces).where(and(eq(schema.namespaces.kind, 'user'), eq(schema.namespaces.ownerId, user.id))).get();
      conn.prepare('SELECT COUNT(*) AS n FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.kind = \'user\' AND n.owner_id = ?').get(user.id);
      const path = name.toLowerCase();
      for (const [col, v] of [['name', name], ['path', path]]) {
        if (conn.prepare(`SELECT 1 FROM projects WHERE namespace_id = ? AND ${col} = ? COLLATE NOCASE`).get(ns.id, v)) throw new Error(`${col} taken`);
      }
      const salt = randomBytes(18).toString('base64url');
      const t = new Date().toISOString();
      return db.transaction((tx) => {
        const row = tx.insert(schema.projects).values({
          name, path, namespaceId: ns.id, description: null, visibilityLevel: 0, defaultBranch: 'master', issuesEnabled: true, mergeRequestsEnabled: true,
          buildsEnabled: true, wikiEnabled: true, snippetsEnabled: false, containerRegistryEnabled: false, sharedRunnersEnabled: true, publicBuilds: true,
          lfsEnabled: true, requestAccessEnabled: false, onlyAllowMergeIfBuildSucceeds: false, importUrl: null, tagList: '[]', creatorId: user.id,
          forkedFromId: null, runnersTokenSalt: salt, runnersTokenHash: sha256(`runners${salt}`), lastActivityAt: t, createdAt: t, updatedAt: t,
        }).returning().get();
        tx.insert(schema.members).values({ sourceType: 'Project', sourceId: row.id, userId: user.id, accessLevel: MASTER, createdById: user.id, createdAt: t, updatedAt: t }).run();
        tx.insert(schema.events).values({ projectId: row.id, authorId: user.id, action: 'created', createdAt: t }).run();
        return row.id;
      });
    },
  };
  return drizzle ? requests : { ...requests, createProject: createRaw };
}

/**
 * The same requests through Kysely (one query code for both engines): the builder where it reaches, `sql` fragments
 * where the statement has engine-specific parts (the access-level union, MIN/LEAST, dates, case-insensitive compare).
 */
export function kyselyRequests(k, dialect) {
  const F = fragments[dialect];
  const raw = (text, args) => {
    const parts = text.split('?');
    return sql.join(parts.map((p, i) => (i < parts.length - 1 ? sql`${sql.raw(p)}${args[i]}` : sql.raw(p))), sql.raw(''));
  };
  const access = accessLevelSql(F);
  const userForToken = async (token) => {
    const u = await k.selectFrom('users').selectAll().where('private_token_hash', '=', sha256(token)).executeTakeFirst();
    return u && u.state === 'active' ? u : null;
  };
  const level = async (user, p) => (await raw(access, accessArgs(user, p)).execute(k)).rows[0].level ?? 0;
  const presentRows = async (rows, viewer, withRunnersToken) => {
    if (!rows.length) return [];
    const ids = rows.map((r) => r.id);
    const nsIds = [...new Set(rows.map((r) => r.namespace_id))];
    const forkedFromIds = [...new Set(rows.map((r) => r.forked_from_id).filter((x) => x !== null))];
    const nonEmpty = (a) => (a.length ? a : [-1]);
    const r = {};
    r.namespaces = await k.selectFrom('namespaces').selectAll().where('id', 'in', nsIds).execute();
    r.stars = await k.selectFrom('stars').select(['project_id as id', (e) => e.fn.countAll().as('n')]).where('project_id', 'in', ids).groupBy('project_id').execute();
    r.forks = await k.selectFrom('projects').select(['forked_from_id as id', (e) => e.fn.countAll().as('n')]).where('forked_from_id', 'in', ids).groupBy('forked_from_id').execute();
    r.issues = await k.selectFrom('issue_counts as c').select(['c.project_id as id', (e) => e.fn.sum('c.n').as('n')])
      .where('c.state', '=', 'opened').where('c.project_id', 'in', ids).groupBy('c.project_id').execute();
    r.links = await k.selectFrom('project_group_links as l').innerJoin('namespaces as n', 'n.id', 'l.group_id')
      .select(['l.project_id', 'l.group_id', 'n.name as group_name', 'l.group_access']).where('l.project_id', 'in', ids).orderBy('l.id').execute();
    r.forkedFrom = await k.selectFrom('projects as p').innerJoin('namespaces as n', 'n.id', 'p.namespace_id').selectAll('p')
      .select(['n.path as ns_path', 'n.name as ns_name']).where('p.id', 'in', nonEmpty(forkedFromIds)).execute();
    r.projectAccess = await k.selectFrom('members').select(['source_id as id', 'access_level as n'])
      .where('source_type', '=', 'Project').where('user_id', '=', viewer.id).where('source_id', 'in', ids).execute();
    r.groupAccess = await k.selectFrom('members').select(['source_id as id', 'access_level as n'])
      .where('source_type', '=', 'Namespace').where('user_id', '=', viewer.id).where('source_id', 'in', nsIds).execute();
    const ownerIds = r.namespaces.filter((n) => n.kind === 'user' && n.owner_id).map((n) => n.owner_id);
    r.owners = await k.selectFrom('users').selectAll().where('id', 'in', nonEmpty(ownerIds)).execute();
    if (withRunnersToken) r.canAdmin = new Map([[rows[0].id, (await level(viewer, rows[0])) >= MASTER]]);
    return present(rows, r, viewer);
  };
  return {
    async getProject(token, projectId) {
      const user = await userForToken(token);
      const p = await k.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
      if (!p || (await level(user, p)) < 10) throw new Error('404');
      return (await presentRows([p], user, true))[0];
    },
    async listProjects(token) {
      const user = await userForToken(token);
      const where = raw(authorizedSql(F), authorizedArgs(user));
      const { n } = await k.selectFrom('projects as p').select((e) => e.fn.countAll().as('n')).where(where).executeTakeFirstOrThrow();
      const rows = n ? await k.selectFrom('projects as p').selectAll('p').where(where).orderBy('p.created_at', 'desc').orderBy('p.id', 'desc').limit(20).offset(0).execute() : [];
      return { total: Number(n), items: await presentRows(rows, user, false) };
    },
    async createProject(token, name) {
      const user = await userForToken(token);
      const ns = await k.selectFrom('namespaces').selectAll().where('kind', '=', 'user').where('owner_id', '=', user.id).executeTakeFirstOrThrow();
      await k.selectFrom('projects as p').innerJoin('namespaces as n', 'n.id', 'p.namespace_id').select((e) => e.fn.countAll().as('n'))
        .where('n.kind', '=', 'user').where('n.owner_id', '=', user.id).executeTakeFirst();
      const path = name.toLowerCase();
      for (const [col, v] of [['name', name], ['path', path]]) {
        const taken = await k.selectFrom('projects').select(sql`1`.as('taken')).where('namespace_id', '=', ns.id).where(raw(F.nocaseEq(col), [v])).executeTakeFirst();
        if (taken) throw new Error(`${col} taken`);
      }
      const salt = randomBytes(18).toString('base64url');
      const t = new Date().toISOString();
      const yes = dialect === 'postgres' ? true : 1;
      const no = dialect === 'postgres' ? false : 0;
      return k.transaction().execute(async (tx) => {
        const row = await tx.insertInto('projects').values({
          name, path, namespace_id: ns.id, description: null, visibility_level: 0, default_branch: 'master', issues_enabled: yes, merge_requests_enabled: yes,
          builds_enabled: yes, wiki_enabled: yes, snippets_enabled: no, container_registry_enabled: no, shared_runners_enabled: yes, public_builds: yes,
          lfs_enabled: yes, request_access_enabled: no, only_allow_merge_if_build_succeeds: no, import_url: null, tag_list: '[]', creator_id: user.id,
          forked_from_id: null, runners_token_salt: salt, runners_token_hash: sha256(`runners${salt}`), last_activity_at: t, created_at: t, updated_at: t,
        }).returningAll().executeTakeFirstOrThrow();
        await tx.insertInto('members').values({ source_type: 'Project', source_id: row.id, user_id: user.id, access_level: MASTER, created_by_id: user.id, created_at: t, updated_at: t }).execute();
        await tx.insertInto('events').values({ project_id: row.id, author_id: user.id, action: 'created', created_at: t }).execute();
        return row.id;
      });
    },
  };
}
