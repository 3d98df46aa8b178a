/**
 * The users of a project (GitLab 8.13 `GET /projects/:id/users`: `project.team.users`, searched by name, email or
 * username): whoever holds an active access level on the project, that is the owner of a personal namespace, the
 * project's members, the members of its group, and the members of the groups it is shared with (project_group_links,
 * while the link has not expired). Each user once, ordered by id. On the data layer, both engines.
 */
import type { AppContext } from '../context.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { toUser } from '../db/rows.js';
import { likePattern } from '../db/sql.js';
import { memberActiveSql } from '../policy/permissions.js';
import type { Listing } from './groups.js';

/** The team of `project`, optionally narrowed to users whose name, email or username contains `search`. */
export function listProjectUsers(ctx: AppContext, project: ProjectRow, search?: string): Listing<UserRow> {
  const d = ctx.data.dialect;
  const active = memberActiveSql(d);
  let where = `u.id IN (
      SELECT n.owner_id FROM namespaces n WHERE n.id = ? AND n.kind = 'user'
      UNION SELECT m.user_id FROM members m WHERE m.source_type = 'Project' AND m.source_id = ? AND ${active}
      UNION SELECT m.user_id FROM members m WHERE m.source_type = 'Namespace' AND m.source_id = ? AND ${active}
      UNION SELECT m.user_id FROM project_group_links l
        JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.group_id AND ${active}
        WHERE l.project_id = ? AND (l.expires_at IS NULL OR l.expires_at >= ${d.today}))`;
  const args: unknown[] = [project.namespaceId, project.id, project.namespaceId, project.id];
  if (search) {
    const pattern = likePattern(search);
    where += ` AND (u.name ${d.ilike} ? ESCAPE '\\' OR u.email ${d.ilike} ? ESCAPE '\\' OR u.username ${d.ilike} ? ESCAPE '\\')`;
    args.push(pattern, pattern, pattern);
  }
  return {
    count: async (q) => Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM users u WHERE ${where}`, args))!.n),
    fetch: async (q, limit, offset) =>
      (await q.all<Record<string, unknown>>(`SELECT u.* FROM users u WHERE ${where} ORDER BY u.id LIMIT ? OFFSET ?`, [...args, limit, offset])).map((r) => toUser(r)),
  };
}
