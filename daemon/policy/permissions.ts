/**
 * The one permission module: the rules of access levels, visibility and abilities for projects and groups (GitLab 8.12
 * ProjectPolicy/GroupPolicy). The levels themselves are read by the access data module (db/access.ts), once per
 * request: routes resolve the project and the caller's level with loadProject and ask `canProject` with it;
 * list queries use the SQL fragments of db/visibility.ts (re-exported here).
 */
import type { AppContext } from '../context.js';
import type { Queries } from '../db/layer/types.js';
import type { NamespaceRow, ProjectRow, UserRow } from '../db/schema.js';
import type { RunnerRow } from '../db/schema-ci.js';
import { projectsWithRunnersMeeting, runnerProjectCount, runnerProjectRows, specificRunnerIdsOfProjects } from '../db/runners.js';
import type { SqlCondition } from '../db/sql.js';
import { namespaceHasProjectWhere } from '../db/groups.js';
import {
  administeredProjectsWhere, authorizedProjectsWhere, INTERNAL, issueProjectsWhere, mergeRequestProjectsWhere, PRIVATE, PUBLIC,
  readableIssuesWhere, readableTodosWhere, visibleGroupsWhere, visibleProjectsWhere, type ProjectSqlPlan,
} from '../db/visibility.js';

import { DEVELOPER, GUEST, groupAccessLevelAsync, MASTER, memberActiveSql, OWNER, projectAccessLevelAsync, REPORTER } from '../db/access.js';

// The access levels, the member-active condition and the level lookups live in the access data module; the rules here read them.
export { DEVELOPER, GUEST, groupAccessLevelAsync, MASTER, memberActiveSql, OWNER, projectAccessLevelAsync, REPORTER };
export const ACCESS_LEVELS = [GUEST, REPORTER, DEVELOPER, MASTER, OWNER] as const;

// The visibility levels and the list queries' visibility SQL live beside the queries (db/visibility.ts); the rules here read them.
export {
  administeredProjectsWhere, authorizedProjectsWhere, INTERNAL, issueProjectsWhere, mergeRequestProjectsWhere, PRIVATE, PUBLIC,
  readableIssuesWhere, readableTodosWhere, visibleGroupsWhere, visibleProjectsWhere, type ProjectSqlPlan,
};
export type { SqlCondition };

/** Project abilities and the member level each needs. */
const PROJECT_LEVELS = {
  read_project: GUEST,
  read_issue: GUEST,
  read_label: GUEST,
  read_milestone: GUEST,
  read_project_member: GUEST,
  read_merge_request: GUEST,
  read_note: GUEST,
  /** issue boards and their lists (8.13 read_board, read_list; not tied to the issues feature) */
  read_board: GUEST,
  create_issue: GUEST,
  create_note: GUEST,
  upload_file: GUEST,
  download_code: REPORTER,
  fork_project: REPORTER,
  update_issue: REPORTER,
  admin_issue: REPORTER,
  admin_label: REPORTER,
  /** create, move and delete the lists of a board (8.13 admin_list) */
  admin_list: REPORTER,
  read_commit_status: REPORTER,
  read_build: REPORTER,
  read_pipeline: REPORTER,
  read_environment: REPORTER,
  read_deployment: REPORTER,
  create_merge_request: DEVELOPER,
  update_merge_request: DEVELOPER,
  admin_merge_request: DEVELOPER,
  push_code: DEVELOPER,
  create_commit_status: DEVELOPER,
  update_build: DEVELOPER,
  update_pipeline: DEVELOPER,
  create_environment: DEVELOPER,
  push_code_to_protected_branches: MASTER,
  admin_project: MASTER,
  admin_project_member: MASTER,
  admin_milestone: MASTER,
  admin_note: MASTER,
  admin_build: MASTER,
  admin_pipeline: MASTER,
  update_environment: MASTER,
  admin_commit_status: MASTER,
  change_visibility_level: OWNER,
  rename_project: OWNER,
  remove_project: OWNER,
  archive_project: OWNER,
  change_namespace: OWNER,
  remove_fork_project: OWNER,
  destroy_issue: OWNER,
  /** created_at / updated_at given on issue (and merge request) create and update are applied (8.x: admins and owners). */
  set_issuable_timestamps: OWNER,
  destroy_merge_request: OWNER,
} as const;
export type ProjectAbility = keyof typeof PROJECT_LEVELS;

/** What a logged-in non-member gets on a public project, or an internal one when not external. */
const VISIBLE_NON_MEMBER = new Set<ProjectAbility>([
  'read_project', 'read_issue', 'read_label', 'read_milestone', 'read_project_member', 'read_merge_request',
  'read_note', 'create_issue', 'create_note', 'upload_file', 'download_code', 'fork_project', 'read_commit_status',
  'read_pipeline', 'read_board',
]);
/** Removed from everyone while a project is archived. */
const ARCHIVED_DENIES = new Set<ProjectAbility>(['push_code', 'push_code_to_protected_branches', 'create_merge_request', 'update_merge_request', 'admin_merge_request']);

/** Removed from everyone while issues are disabled on a project (8.12 disabled_features!: issues). */
const ISSUES_FEATURE = new Set<ProjectAbility>(['read_issue', 'create_issue', 'update_issue', 'admin_issue', 'destroy_issue']);
/** Removed from everyone while merge requests are disabled on a project (8.12 disabled_features!: merge_requests). */
const MERGE_REQUESTS_FEATURE = new Set<ProjectAbility>([
  'read_merge_request', 'create_merge_request', 'update_merge_request', 'admin_merge_request', 'destroy_merge_request',
]);
/** Removed while issues AND merge requests are both disabled (8.12: labels and milestones serve both). */
const LABELS_MILESTONES_FEATURE = new Set<ProjectAbility>(['read_label', 'admin_label', 'read_milestone', 'admin_milestone']);

/** Removed from everyone while builds are disabled on a project (8.13 disabled_features!: builds, pipelines, environments, deployments). */
const BUILDS_FEATURE = new Set<ProjectAbility>([
  'read_build', 'update_build', 'admin_build', 'read_pipeline', 'update_pipeline', 'admin_pipeline',
  'read_environment', 'create_environment', 'update_environment', 'read_deployment',
]);

/** Whether the project is visible to a logged-in user who is not a member. */
function visibleToNonMember(user: UserRow, project: ProjectRow): boolean {
  return project.visibilityLevel === PUBLIC || (project.visibilityLevel === INTERNAL && !user.external);
}

/**
 * The part of canProject decided without the caller's access level: false or true when that settles it (no active
 * user, an archived project or a disabled feature, an admin), undefined when the access level is needed.
 */
export function projectAbilityWithoutLevel(user: UserRow | null, ability: ProjectAbility, project: ProjectRow): boolean | undefined {
  if (!user || user.state !== 'active') return false;
  if (project.archived && ARCHIVED_DENIES.has(ability)) return false;
  if (!project.buildsEnabled && BUILDS_FEATURE.has(ability)) return false;
  if (!project.issuesEnabled && ISSUES_FEATURE.has(ability)) return false;
  if (!project.mergeRequestsEnabled && MERGE_REQUESTS_FEATURE.has(ability)) return false;
  if (!project.issuesEnabled && !project.mergeRequestsEnabled && LABELS_MILESTONES_FEATURE.has(ability)) return false;
  if (user.isAdmin) return true;
  return undefined;
}

/** The rest of canProject, given the caller's access level (for an active non-admin user). */
export function projectAbilityAtLevel(user: UserRow, ability: ProjectAbility, project: ProjectRow, access: number): boolean {
  if (access >= PROJECT_LEVELS[ability]) return true;
  if (visibleToNonMember(user, project)) {
    if (VISIBLE_NON_MEMBER.has(ability)) return true;
    if (ability === 'read_build' && project.publicBuilds) return true;
  }
  return false;
}

/**
 * Whether `user` may do `ability` on `project`, given the caller's access level (projectAccessLevelAsync, read once per
 * request). Admins may do everything; blocked or absent users nothing.
 */
export function canProject(user: UserRow | null, ability: ProjectAbility, project: ProjectRow, level: number): boolean {
  const decided = projectAbilityWithoutLevel(user, ability, project);
  if (decided !== undefined) return decided;
  return projectAbilityAtLevel(user!, ability, project, level);
}

/**
 * canProject through the data layer: the same rules (shared above), the access level read with
 * projectAccessLevelAsync (one statement) unless given or not needed.
 */
export async function canProjectAsync(
  ctx: Pick<AppContext, 'data'>, user: UserRow | null, ability: ProjectAbility, project: ProjectRow, level?: number, q: Queries = ctx.data,
): Promise<boolean> {
  const decided = projectAbilityWithoutLevel(user, ability, project);
  if (decided !== undefined) return decided;
  return projectAbilityAtLevel(user!, ability, project, level ?? (await projectAccessLevelAsync(ctx, user, project, q)));
}

/** What the confidentiality rule needs to know about an issue or merge request. */
export interface ReadableIssuable {
  type: 'Issue' | 'MergeRequest';
  confidential?: boolean;
  authorId: number | null;
  assigneeId: number | null;
}

/**
 * Whether `user` may read one issue or merge request (8.x IssuePolicy): read_issue / read_merge_request on the
 * project, and for a confidential issue also being its author, its assignee, a reporter or up, or an admin. The access
 * level is read once (or given as `level`, the caller's level on the project when the route already has it).
 */
export async function canReadIssuable(
  ctx: Pick<AppContext, 'data'>, user: UserRow | null, project: ProjectRow, issuable: ReadableIssuable, level?: number, q: Queries = ctx.data,
): Promise<boolean> {
  const ability = issuable.type === 'Issue' ? 'read_issue' : 'read_merge_request';
  const decided = projectAbilityWithoutLevel(user, ability, project);
  if (decided === false) return false;
  if (!user) return false;
  const confidentialOk = !issuable.confidential || user.isAdmin || user.id === issuable.authorId || user.id === issuable.assigneeId;
  if (decided === true && confidentialOk) return true;
  const access = level ?? (await projectAccessLevelAsync(ctx, user, project, q));
  if (decided === undefined && !projectAbilityAtLevel(user, ability, project, access)) return false;
  return confidentialOk || access >= REPORTER;
}

/**
 * Whether `user` may update one issue (8.x IssuePolicy): update_issue on the project (reporter and up), or being its
 * author or assignee while they can still read it.
 */
export async function canUpdateIssue(
  ctx: Pick<AppContext, 'data'>, user: UserRow | null, project: ProjectRow, issue: Omit<ReadableIssuable, 'type'>, level?: number,
): Promise<boolean> {
  if (!user) return false;
  const access = level ?? (await projectAccessLevelAsync(ctx, user, project));
  if (!(await canReadIssuable(ctx, user, project, { type: 'Issue', ...issue }, access))) return false;
  if (await canProjectAsync(ctx, user, 'update_issue', project, access)) return true;
  return project.issuesEnabled && user.state === 'active' && (user.id === issue.authorId || user.id === issue.assigneeId);
}

/**
 * Whether `user` may update one merge request (8.x MergeRequestPolicy): update_merge_request on its target project
 * (developer and up), or being its author or assignee while they can still read it (merge requests on).
 */
export async function canUpdateMergeRequest(
  ctx: Pick<AppContext, 'data'>, user: UserRow | null, project: ProjectRow, mr: Omit<ReadableIssuable, 'type'>, level?: number,
): Promise<boolean> {
  if (!user) return false;
  const access = level ?? (await projectAccessLevelAsync(ctx, user, project));
  if (!(await canReadIssuable(ctx, user, project, { type: 'MergeRequest', ...mr }, access))) return false;
  if (await canProjectAsync(ctx, user, 'update_merge_request', project, access)) return true;
  return project.mergeRequestsEnabled && !project.archived && user.state === 'active' && (user.id === mr.authorId || user.id === mr.assigneeId);
}

/** Whether the user reads every confidential issue of the project (admins, reporters and up). */
export async function seesConfidentialIssues(
  ctx: Pick<AppContext, 'data'>, user: UserRow | null, project: ProjectRow, level?: number, q: Queries = ctx.data,
): Promise<boolean> {
  if (!user) return false;
  return user.isAdmin || (level ?? (await projectAccessLevelAsync(ctx, user, project, q))) >= REPORTER;
}

/**
 * SQL condition over an `issues` alias `i` of ONE project: the confidential issues the user may not read are left out
 * (admins, reporters and up see all; others their own and those assigned to them). The user id bound, booleans portable.
 */
export async function confidentialIssuesWhere(ctx: Pick<AppContext, 'data'>, user: UserRow | null, project: ProjectRow, level?: number): Promise<SqlCondition> {
  if (await seesConfidentialIssues(ctx, user, project, level)) return { sql: 'TRUE', args: [] };
  if (!user) return { sql: 'i.confidential = FALSE', args: [] };
  return { sql: '(i.confidential = FALSE OR i.author_id = ? OR i.assignee_id = ?)', args: [user.id, user.id] };
}

/** What an anonymous reader gets on a public project (8.13 ProjectPolicy#anonymous_rules; the API itself always needs a user). */
const ANONYMOUS_PUBLIC = new Set<ProjectAbility>([
  'read_project', 'read_board', 'read_label', 'read_milestone', 'read_project_member', 'read_merge_request', 'read_note',
  'read_pipeline', 'read_commit_status', 'download_code', 'read_issue',
]);

/**
 * Whether an anonymous reader (the web pages, git over HTTP) may do `ability` on `project`: the read abilities of
 * anonymous_rules on a public project, read_build when its builds are public, less the disabled features.
 */
export function anonymousCanProject(ability: ProjectAbility, project: ProjectRow): boolean {
  if (project.visibilityLevel !== PUBLIC) return false;
  if (!project.buildsEnabled && BUILDS_FEATURE.has(ability)) return false;
  if (!project.issuesEnabled && ISSUES_FEATURE.has(ability)) return false;
  if (!project.mergeRequestsEnabled && MERGE_REQUESTS_FEATURE.has(ability)) return false;
  if (!project.issuesEnabled && !project.mergeRequestsEnabled && LABELS_MILESTONES_FEATURE.has(ability)) return false;
  return ANONYMOUS_PUBLIC.has(ability) || (ability === 'read_build' && project.publicBuilds);
}

/** Whether an anonymous caller may read a project's code (git over HTTP only; the API always needs a user). */
export function anonymousCanDownload(project: ProjectRow): boolean {
  return project.visibilityLevel === PUBLIC;
}

/** Group abilities and the member level each needs. */
const GROUP_LEVELS = {
  read_group: GUEST,
  create_projects: MASTER,
  admin_milestones: MASTER,
  admin_group: OWNER,
  admin_namespace: OWNER,
  admin_group_member: OWNER,
  change_visibility_level: OWNER,
} as const;
export type GroupAbility = keyof typeof GROUP_LEVELS;

/** The part of canGroup decided without a lookup: false (no active user), true (an admin), else undefined. */
export function groupAbilityWithoutProjects(user: UserRow | null, ability: GroupAbility, group: NamespaceRow): boolean | undefined {
  if (!user || user.state !== 'active') return false;
  if (user.isAdmin) return true;
  return undefined;
}

/** canGroup's rule for an active non-admin at `level`: true/false, or 'projects' (read_group via a visible project). */
export function groupAbilityAtLevel(user: UserRow, ability: GroupAbility, group: NamespaceRow, level: number): boolean | 'projects' {
  if (level >= GROUP_LEVELS[ability]) return true;
  if (ability !== 'read_group') return false;
  if (group.visibilityLevel === PUBLIC || (group.visibilityLevel === INTERNAL && !user.external)) return true;
  return 'projects';
}

/**
 * Whether `user` may do `ability` on `group`, through the data layer. read_group also covers anyone who can see a
 * project in it (one statement, or two for read_group).
 */
export async function canGroup(
  ctx: Pick<AppContext, 'data'>, user: UserRow | null, ability: GroupAbility, group: NamespaceRow, q: Queries = ctx.data,
): Promise<boolean> {
  const decided = groupAbilityWithoutProjects(user, ability, group);
  if (decided !== undefined) return decided;
  const atLevel = groupAbilityAtLevel(user!, ability, group, await groupAccessLevelAsync(ctx, user, group, q));
  if (atLevel !== 'projects') return atLevel;
  return namespaceHasProjectWhere(q, group.id, visibleProjectsWhere(q.dialect, user!));
}

/** Whether `user` may manage the account `targetUserId` (its personal access tokens): admins, or the user themself. */
export function canManageUser(user: UserRow | null, targetUserId: number): boolean {
  return !!user && user.state === 'active' && (user.isAdmin || user.id === targetUserId);
}

/** Abilities that belong to no project or group. */
export type GlobalAbility = 'admin_instance' | 'create_group';

/** Whether `user` may do an instance-wide action: administer the instance, or create groups (can_create_group). */
export function canGlobal(user: UserRow | null, ability: GlobalAbility): boolean {
  if (!user || user.state !== 'active') return false;
  if (user.isAdmin) return true;
  return ability === 'create_group' ? user.canCreateGroup : false;
}

/**
 * Whether `user` may use the OAuth applications API: administrators always, other users when the
 * `user_oauth_applications` setting allows it.
 */
export function canManageOauthApplications(user: UserRow, userOauthApplications: boolean): boolean {
  return user.isAdmin || userOauthApplications;
}

/** Whether `user` may see and delete an OAuth application: its owner, or an administrator. */
export function ownsOauthApplication(user: UserRow, app: { ownerId: number | null }): boolean {
  return user.isAdmin || app.ownerId === user.id;
}

/** Runner abilities (GitLab 8.12 lib/api/runners.rb authenticate_*_runner! helpers). */
export type RunnerAbility = 'read_runner' | 'update_runner' | 'delete_runner' | 'assign_runner';

/** Whether the runner is a specific runner of a project the user masters (GitLab's ci_authorized_runners). */
export async function ownsRunner(ctx: Pick<AppContext, 'data'>, user: UserRow | null, runner: RunnerRow): Promise<boolean> {
  if (!user || runner.isShared) return false;
  for (const p of await runnerProjectRows(ctx.data, runner.id)) if (await canProjectAsync(ctx, user, 'admin_project', p)) return true;
  return false;
}

/** Ids of the specific runners of projects the user may administer (ci_authorized_runners), for GET /runners. */
export async function ownedRunnerIds(ctx: Pick<AppContext, 'data'>, user: UserRow): Promise<number[]> {
  const rows = await projectsWithRunnersMeeting(ctx.data, authorizedProjectsWhere(ctx.data.dialect, user.id));
  const mastered: number[] = [];
  for (const p of rows) if (await canProjectAsync(ctx, user, 'admin_project', p)) mastered.push(p.id);
  return specificRunnerIdsOfProjects(ctx.data, mastered);
}

/**
 * Why `user` may not do `ability` on `runner` (the 403 reason), or null when allowed. As 8.12: shared runners are
 * readable by everyone and changed only by admins; a specific runner is read and updated by admins and masters of
 * one of its projects, deleted by them only while it has one project; enabling one for another project is never
 * possible for a shared or locked runner, and needs the runner to be the caller's otherwise. On either engine.
 */
export async function runnerDenial(ctx: Pick<AppContext, 'data'>, user: UserRow | null, ability: RunnerAbility, runner: RunnerRow): Promise<string | null> {
  if (!user || user.state !== 'active') return 'No access granted';
  const owner = async () => ((await ownsRunner(ctx, user, runner)) ? null : 'No access granted');
  switch (ability) {
    case 'read_runner':
      return runner.isShared || user.isAdmin ? null : owner();
    case 'update_runner':
      if (user.isAdmin) return null;
      return runner.isShared ? 'Runner is shared' : owner();
    case 'delete_runner': {
      if (user.isAdmin) return null;
      if (runner.isShared) return 'Runner is shared';
      const n = await runnerProjectCount(ctx.data, runner.id);
      return n > 1 ? 'Runner associated with more than one project' : owner();
    }
    case 'assign_runner':
      if (runner.isShared) return 'Runner is shared';
      if (runner.locked) return 'Runner is locked';
      return user.isAdmin ? null : owner();
  }
}

/** Whether `user` may do `ability` on `runner`. */
export async function canRunner(ctx: Pick<AppContext, 'data'>, user: UserRow | null, ability: RunnerAbility, runner: RunnerRow): Promise<boolean> {
  return (await runnerDenial(ctx, user, ability, runner)) === null;
}
