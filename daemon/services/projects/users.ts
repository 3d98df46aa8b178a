/**
 * The users of a project (GitLab 8.13 `GET /projects/:id/users`: `project.team.users`, searched by name, email or
 * username): whoever holds an active access level on the project, that is the owner of a personal namespace, the
 * project's members, the members of its group, and the members of the groups it is shared with (project_group_links,
 * while the link has not expired). Each user once, ordered by id. On the data layer, both engines.
 */
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { projectTeamListing } from '../../db/members.js';
import type { Listing } from '../users/groups.js';

/** The team of `project`, optionally narrowed to users whose name, email or username contains `search`. */
export function listProjectUsers(_ctx: AppContext, project: ProjectRow, search?: string): Listing<UserRow> {
  return projectTeamListing(project, search);
}
