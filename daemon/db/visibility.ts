/**
 * The visibility SQL of the list queries (GitLab's finders): which projects, groups, issues and todos a user may list,
 * as WHERE fragments with their arguments over the usual aliases (`projects p`, `namespaces n`, `issues i`, `todos t`).
 * They encode the rules of policy/permissions.ts (which re-exports them) for many rows at once; the list queries of
 * db/ and services/ take them as SqlConditions. Pure text builders: no statement runs here.
 */
import type { Dialect } from './layer/types.js';
import type { UserRow } from './schema.js';
import { MASTER, memberActiveSql, REPORTER } from './access.js';
import type { SqlCondition } from './sql.js';

export const PRIVATE = 0;
export const INTERNAL = 10;
export const PUBLIC = 20;

/**
 * How a project list query should be planned: 'index' lets SQLite gather the few matching ids through the member
 * indexes (best when the user reaches few projects); 'scan' walks projects in list order and tests each row,
 * cheapest condition first, with the indexes on `p` switched off (`+`), so a user who reaches thousands of projects
 * never makes SQLite collect and sort them all for one page.
 */
export type ProjectSqlPlan = 'index' | 'scan';

/**
 * SQL subquery of the ids of the projects `user` holds admin_project on (master and up, as canProject: the personal
 * namespace owner, direct or group members at 40+, group shares capped by group_access; every project for an admin,
 * none for a blocked user), with the user id bound and dates and MIN through the dialect (either engine). Deploy keys
 * of these projects are the user's accessible deploy keys.
 */
export function administeredProjectsWhere(d: Dialect, user: UserRow): SqlCondition {
  if (user.state !== 'active') return { sql: 'SELECT p.id FROM projects p WHERE FALSE', args: [] };
  if (user.isAdmin) return { sql: 'SELECT p.id FROM projects p', args: [] };
  const active = memberActiveSql(d);
  return {
    sql: `SELECT p.id FROM projects p WHERE
      p.id IN (SELECT m.source_id FROM members m WHERE m.source_type = 'Project' AND m.user_id = ? AND m.access_level >= ${MASTER} AND ${active})
      OR p.namespace_id IN (SELECT m.source_id FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND m.access_level >= ${MASTER} AND ${active})
      OR p.namespace_id IN (SELECT n.id FROM namespaces n WHERE n.kind = 'user' AND n.owner_id = ?)
      OR p.id IN (SELECT l.project_id FROM project_group_links l JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.group_id
                  AND m.user_id = ? AND ${active}
                  WHERE ${d.least('m.access_level', 'l.group_access')} >= ${MASTER} AND (l.expires_at IS NULL OR l.expires_at >= ${d.today}))`,
    args: [user.id, user.id, user.id, user.id],
  };
}

/**
 * SQL condition over a `projects` alias `p`: projects the user is authorized on (member, group member, group share, or
 * personal namespace owner), as GET /projects lists them; the user id bound, dates and MIN through the dialect. `plan`:
 * 'scan' switches SQLite's indexes on `p` off with `+` (PostgreSQL plans for itself).
 */
export function authorizedProjectsWhere(d: Dialect, userId: number, plan: ProjectSqlPlan = 'index'): SqlCondition {
  const active = memberActiveSql(d);
  const owned = `SELECT n.id FROM namespaces n WHERE n.kind = 'user' AND n.owner_id = ?`;
  const groups = `SELECT m.source_id FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND ${active}`;
  const direct = `SELECT m.source_id FROM members m WHERE m.source_type = 'Project' AND m.user_id = ? AND ${active}`;
  const shared = `SELECT l.project_id FROM project_group_links l JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.group_id AND m.user_id = ?`;
  if (plan === 'scan') {
    const plus = d.name === 'sqlite' ? '+' : '';
    return {
      sql: `(${plus}p.namespace_id IN (${owned}) OR ${plus}p.namespace_id IN (${groups}) OR ${plus}p.id IN (${direct}) OR ${plus}p.id IN (${shared}))`,
      args: [userId, userId, userId, userId],
    };
  }
  return {
    sql: `(
    p.id IN (${direct})
    OR p.namespace_id IN (${groups})
    OR p.namespace_id IN (${owned})
    OR p.id IN (${shared})
  )`,
    args: [userId, userId, userId, userId],
  };
}

/** SQL condition over `projects p`: every project the user can see (authorized, public, or internal if not external). */
export function visibleProjectsWhere(d: Dialect, user: UserRow, plan: ProjectSqlPlan = 'index'): SqlCondition {
  if (user.isAdmin) return { sql: 'TRUE', args: [] };
  const levels = user.external ? `${PUBLIC}` : `${INTERNAL}, ${PUBLIC}`;
  const authorized = authorizedProjectsWhere(d, user.id, plan);
  const plus = plan === 'scan' && d.name === 'sqlite' ? '+' : '';
  return { sql: `(${plus}p.visibility_level IN (${levels}) OR ${authorized.sql})`, args: authorized.args };
}

/** SQL subquery of the ids of the projects whose issues the user may list: visible, with issues enabled. */
export function issueProjectsWhere(d: Dialect, user: UserRow): SqlCondition {
  const visible = visibleProjectsWhere(d, user);
  return { sql: `SELECT p.id FROM projects p WHERE p.issues_enabled = TRUE AND ${visible.sql}`, args: visible.args };
}

/**
 * SQL condition over `issues i` across projects (GET /groups/:id/issues, GET /issues): the issue's project is visible
 * to the user with issues enabled, and a confidential issue is the user's own, assigned to them, or in a project where
 * they are reporter or up.
 */
export function readableIssuesWhere(d: Dialect, user: UserRow): SqlCondition {
  if (user.isAdmin) return { sql: `i.project_id IN (SELECT p.id FROM projects p WHERE p.issues_enabled = TRUE)`, args: [] };
  const active = memberActiveSql(d);
  const authorized = authorizedProjectsWhere(d, user.id);
  const projects = issueProjectsWhere(d, user);
  const reporterProjects = `SELECT p.id FROM projects p WHERE ${authorized.sql} AND (
      p.id IN (SELECT m.source_id FROM members m WHERE m.source_type = 'Project' AND m.user_id = ? AND m.access_level >= ${REPORTER} AND ${active})
      OR p.namespace_id IN (SELECT m.source_id FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND m.access_level >= ${REPORTER} AND ${active})
      OR p.namespace_id IN (SELECT n.id FROM namespaces n WHERE n.kind = 'user' AND n.owner_id = ?)
      OR p.id IN (SELECT l.project_id FROM project_group_links l JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.group_id
                  AND m.user_id = ? WHERE ${d.least('m.access_level', 'l.group_access')} >= ${REPORTER}))`;
  return {
    sql: `(i.project_id IN (${projects.sql})
    AND (i.confidential = FALSE OR i.author_id = ? OR i.assignee_id = ? OR i.project_id IN (${reporterProjects})))`,
    args: [...projects.args, user.id, user.id, ...authorized.args, user.id, user.id, user.id, user.id],
  };
}

/**
 * SQL condition over `todos t` of one user: the todos whose target the user may still read (an issue as
 * readableIssuesWhere says, a merge request of a visible project with merge requests on). 8.x listed every todo, so a
 * user removed from a project, or an issue made confidential, kept showing its title and text in GET /todos.
 */
export function readableTodosWhere(d: Dialect, user: UserRow): SqlCondition {
  const issues = readableIssuesWhere(d, user);
  const mrProjects = mergeRequestProjectsWhere(d, user);
  return {
    sql: `((t.target_type = 'Issue' AND t.target_id IN (SELECT i.id FROM issues i WHERE ${issues.sql}))
    OR (t.target_type = 'MergeRequest' AND t.project_id IN (${mrProjects.sql}))
    OR t.target_type NOT IN ('Issue', 'MergeRequest'))`,
    args: [...issues.args, ...mrProjects.args],
  };
}

/** SQL subquery of the ids of the projects whose merge requests the user may list: visible, with merge requests enabled. */
export function mergeRequestProjectsWhere(d: Dialect, user: UserRow): SqlCondition {
  const visible = visibleProjectsWhere(d, user);
  return { sql: `SELECT p.id FROM projects p WHERE p.merge_requests_enabled = TRUE AND ${visible.sql}`, args: visible.args };
}

/**
 * SQL condition over a `namespaces` alias `n`: the groups the user can read (read_group): public groups, internal ones
 * unless external, groups they are a member of, and groups holding a project they can see; the user id bound.
 */
export function visibleGroupsWhere(d: Dialect, user: UserRow): SqlCondition {
  if (user.isAdmin) return { sql: `n.kind = 'group'`, args: [] };
  const levels = user.external ? `${PUBLIC}` : `${INTERNAL}, ${PUBLIC}`;
  const projects = visibleProjectsWhere(d, user);
  return {
    sql: `(n.kind = 'group' AND (n.visibility_level IN (${levels})
    OR n.id IN (SELECT m.source_id FROM members m WHERE m.source_type = 'Namespace' AND m.user_id = ? AND ${memberActiveSql(d)})
    OR n.id IN (SELECT p.namespace_id FROM projects p WHERE ${projects.sql})))`,
    args: [user.id, ...projects.args],
  };
}

/** Over `projects p`: the projects of the user's personal namespace (`plus`: SQLite's `+` to switch the index off). */
export const ownedProjectsWhere = (userId: number, plus = ''): SqlCondition =>
  ({ sql: `${plus}p.namespace_id IN (SELECT n.id FROM namespaces n WHERE n.kind = 'user' AND n.owner_id = ?)`, args: [userId] });

/** Over `projects p`: the projects the user starred. */
export const starredProjectsWhere = (userId: number): SqlCondition => ({ sql: `p.id IN (SELECT s.project_id FROM stars s WHERE s.user_id = ?)`, args: [userId] });
