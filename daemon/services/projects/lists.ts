/**
 * Project lists (GET /projects, /owned, /starred, /all, /visible, /search/:query): one raw-SQL query builder over
 * `projects p`, with prepared statements cached per SQL text, so a page of 20 out of 10,000 stays well under 10 ms,
 * deep pages included (db/keyset.ts).
 */
import type { AppContext } from '../../context.js';
import { UntilNextWrite } from '../../db/read-cache.js';
import { keysetPage } from '../../db/keyset.js';
import type { Dialect, Queries } from '../../db/layer/types.js';
import { toProject } from '../../db/rows.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { invalidParam } from '../../errors.js';
import { normalizeBoolean, VISIBILITY_BY_NAME } from '../../param-values.js';
import { authorizedProjectsWhere, visibleProjectsWhere, type SqlCondition } from '../../policy/permissions.js';
import { likePattern } from '../../db/sql.js';
import { ownedProjectsWhere, starredProjectsWhere } from '../../db/visibility.js';
import { countAllProjects, countProjectsWhere, projectReach } from '../../db/projects.js';

/** Which projects a list starts from. */
export type ProjectListScope =
  | { kind: 'authorized' | 'owned' | 'starred' | 'visible'; user: UserRow }
  | { kind: 'all' };

/** The list filters every project list accepts (raw query values). */
export interface ProjectListFilters {
  archived?: string;
  visibility?: string;
  order_by?: string;
  sort?: string;
  search?: string;
}

/** A compiled list query: WHERE text with its positional arguments, the sort column (ties broken by p.id) and direction. */
export interface ProjectListQuery {
  where: string;
  args: unknown[];
  key: string;
  desc: boolean;
}

const ORDER_COLUMNS: Record<string, string> = {
  id: 'p.id', name: 'p.name', path: 'p.path', created_at: 'p.created_at', updated_at: 'p.updated_at', last_activity_at: 'p.last_activity_at',
};



/**
 * Whether a user reaches so many projects (through their namespace, groups and direct memberships) that a list
 * should walk projects in order ('scan') rather than gather and sort the user's projects ('index'): more than 500
 * and more than a quarter of all projects. Each part reads at most that many index entries. SQLite only (the plan
 * choice is SQLite's `+` hints; PostgreSQL plans for itself and gets 'index'); memoised until the next write, inside
 * the list's snapshot too.
 */
async function densePlan(ctx: AppContext, q: Queries, userId: number, ownedOnly: boolean): Promise<boolean> {
  if (q.dialect.name !== 'sqlite') return false;
  const total = await countAllProjects(q);
  const threshold = Math.max(500, Math.ceil(total / 4));
  const reach = await counts.getAsync(ctx, `reach:${ownedOnly}:${userId}`, () => projectReach(q, userId, ownedOnly, threshold + 1), true);
  return reach > threshold;
}

/** The WHERE/ORDER BY of a project list in a dialect, the plan choices made; 400 for a bad `visibility`. */
function buildProjectListQuery(
  d: Dialect, scope: ProjectListScope, filters: ProjectListFilters, extraSearch: string | undefined, dense: boolean,
): ProjectListQuery {
  const conds: string[] = [];
  const args: unknown[] = [];
  const plus = d.name === 'sqlite' ? '+' : '';
  const add = (c: SqlCondition) => {
    conds.push(c.sql);
    args.push(...c.args);
  };
  switch (scope.kind) {
    case 'authorized':
      add(authorizedProjectsWhere(d, scope.user.id, dense ? 'scan' : 'index'));
      break;
    case 'owned':
      add(ownedProjectsWhere(scope.user.id, dense ? plus : ''));
      break;
    case 'starred':
      // Stars drive the query (few per user); visibility is then checked row by row.
      add(starredProjectsWhere(scope.user.id));
      add(visibleProjectsWhere(d, scope.user, 'scan'));
      break;
    case 'visible':
      // Public and internal projects are usually many: walk in list order.
      add(visibleProjectsWhere(d, scope.user, 'scan'));
      break;
    case 'all':
      break;
  }
  const archived = filters.archived === undefined ? undefined : normalizeBoolean(filters.archived);
  if (archived === true || archived === false) {
    conds.push('p.archived = ?');
    args.push(archived);
  }
  if (filters.visibility !== undefined) {
    const level = Object.hasOwn(VISIBILITY_BY_NAME, filters.visibility) ? VISIBILITY_BY_NAME[filters.visibility] : undefined;
    if (level === undefined) throw invalidParam('visibility', 'does not have a valid value');
    conds.push(`${plus}p.visibility_level = ?`);
    args.push(level);
  }
  for (const term of [filters.search, extraSearch]) {
    if (term === undefined || term === '') continue;
    const pattern = likePattern(term);
    conds.push(`(p.path ${d.ilike} ? ESCAPE '\\' OR p.name ${d.ilike} ? ESCAPE '\\' OR p.description ${d.ilike} ? ESCAPE '\\')`);
    args.push(pattern, pattern, pattern);
  }
  let column = (filters.order_by && Object.hasOwn(ORDER_COLUMNS, filters.order_by) ? ORDER_COLUMNS[filters.order_by] : undefined) ?? 'p.created_at';
  // SQLite's path is COLLATE NOCASE (its index too): PostgreSQL sorts it the same way on its lower(path) index.
  if (column === 'p.path' && d.name === 'postgres') column = 'lower(p.path)';
  // The id tie-break (added by db/keyset.ts) keeps pages stable when many rows share a timestamp or name.
  return { where: conds.length ? conds.join(' AND ') : 'TRUE', args, key: column, desc: filters.sort !== 'asc' };
}

/**
 * The WHERE/ORDER BY of a project list, on `q` (ctx.data or the list's snapshot), for either engine; 400 when
 * `visibility` is not public, internal or private.
 */
export async function projectListQueryAsync(
  ctx: AppContext, q: Queries, scope: ProjectListScope, filters: ProjectListFilters, extraSearch?: string,
): Promise<ProjectListQuery> {
  const dense = (scope.kind === 'authorized' || scope.kind === 'owned') && (await densePlan(ctx, q, scope.user.id, scope.kind === 'owned'));
  return buildProjectListQuery(q.dialect, scope, filters, extraSearch, dense);
}

/** Small query results (counts, plan choices), exact until the next write. */
const counts = new UntilNextWrite<number>(1000);

/**
 * Number of projects a list query matches, on `q` (the list's snapshot; memoised until the next write on SQLite).
 */
export async function countProjects(ctx: AppContext, q: Queries, lq: ProjectListQuery): Promise<number> {
  return counts.getAsync(ctx, `count:${lq.where}\u0000${JSON.stringify(lq.args)}`, () => countProjectsWhere(q, lq.where, lq.args), true);
}

/**
 * One page of a list query, on `q` (the list's snapshot). With `total` (countProjects), a deep page costs what the
 * first does: read from the nearer end, or (SQLite) from a keyset bookmark (db/keyset.ts) instead of an OFFSET walk.
 */
export async function fetchProjects(ctx: AppContext, q: Queries, lq: ProjectListQuery, limit: number, offset: number, total?: number): Promise<ProjectRow[]> {
  const list = { from: 'projects p', where: lq.where, values: lq.args, key: lq.key, id: 'p.id', desc: lq.desc, select: 'p.*' };
  return (await keysetPage<Record<string, unknown>>(ctx, q, list, limit, offset, total)).map(toProject);
}
