/**
 * Issue webhook payloads (GitLab 8.x Gitlab::DataBuilder for issues: object_kind "issue", user, project,
 * repository, object_attributes with action open/close/reopen/update, assignee, labels).
 * OWNER: issues engineer. Below the API: services build payloads without importing api/entities' presenters
 * (only the URL and avatar helpers, as push and CI hooks do).
 */
import type { AppContext } from '../context.js';
import type { IssueRow, LabelRow } from '../db/schema-collaboration.js';
import type { NamespaceRow, ProjectRow, UserRow } from '../db/schema.js';
import type { Queries } from '../db/layer/types.js';
import { userById } from '../db/users.js';
import { labelsOfTarget } from '../db/labels.js';
import { projectHookAttrs, repositoryHookAttrs } from './project.js';
import { namespaceById } from '../db/projects.js';
import { avatarUrl, issueWebUrl, projectUrls } from '../web-urls.js';

/** The `action` of an issue hook's object_attributes (8.x IssuableBaseService#execute_hooks). */
export type IssueHookAction = 'open' | 'close' | 'reopen' | 'update';

/** The issue's `object_attributes` (hook_attrs in 8.x: the issue's columns), also embedded as `issue` in note payloads. */
export function issueHookAttributes(_ctx: AppContext, issue: IssueRow): Record<string, unknown> {
  return {
    id: issue.id,
    title: issue.title,
    assignee_id: issue.assigneeId,
    author_id: issue.authorId,
    project_id: issue.projectId,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    position: 0,
    branch_name: null,
    description: issue.description,
    milestone_id: issue.milestoneId,
    state: issue.state,
    iid: issue.iid,
    updated_by_id: issue.updatedById,
    moved_to_id: issue.movedToId,
    confidential: issue.confidential,
    deleted_at: issue.deletedAt,
    due_date: issue.dueDate,
    closed_at: issue.closedAt,
  };
}

/** User#hook_attrs: name, username, avatar_url. */
export function userHookAttributes(ctx: AppContext, user: UserRow, gravatar: boolean): Record<string, unknown> {
  return { name: user.name, username: user.username, avatar_url: avatarUrl(user, gravatar) };
}

/** The `project` and `repository` blocks of a hook payload. */
export type ProjectHookBlocks = { project: Record<string, unknown>; repository: Record<string, unknown> };

/** projectHookBlocks with the namespace already read. */
function projectHookBlocksOf(ctx: AppContext, ns: NamespaceRow, project: ProjectRow): { project: Record<string, unknown>; repository: Record<string, unknown> } {
  const urls = projectUrls(ctx, ns, project);
  return { project: projectHookAttrs(ns, project, urls), repository: repositoryHookAttrs(project, urls) };
}

/** Label#hook_attrs: the label's columns. */
export function labelHookAttributes(l: LabelRow): Record<string, unknown> {
  return {
    id: l.id, title: l.title, color: l.color, project_id: l.projectId, created_at: l.createdAt, updated_at: l.updatedAt,
    template: l.template, description: l.description, type: 'ProjectLabel', group_id: null,
  };
}

/**
 * Project#hook_attrs and the `repository` block of 8.x issue, merge request and note payloads, reading the namespace
 * through `q` (a transaction or ctx.data).
 */
export async function projectHookBlocks(ctx: AppContext, q: Queries, project: ProjectRow): Promise<ProjectHookBlocks> {
  const ns = (await namespaceById(q, project.namespaceId))!;
  return projectHookBlocksOf(ctx, ns, project);
}

/**
 * The whole issue hook payload (8.x Issue#to_hook_data plus IssuesBaseService#hook_data): object_kind "issue",
 * user (who acted), project, repository, object_attributes (columns + url + action), assignee when there is one,
 * and labels. Reads the current state of the issue's labels and assignee, so call it after the write, inside its
 * transaction.
 */
export async function issueHookPayload(
  ctx: AppContext, tx: Queries, project: ProjectRow, issue: IssueRow, actor: UserRow, action: IssueHookAction, gravatar: boolean,
): Promise<Record<string, unknown>> {
  const blocks = await projectHookBlocks(ctx, tx, project);
  const labels = await labelsOfTarget(tx, 'Issue', issue.id);
  const assignee = await userById(tx, issue.assigneeId);
  const payload: Record<string, unknown> = {
    object_kind: 'issue',
    user: userHookAttributes(ctx, actor, gravatar),
    project: blocks.project,
    repository: blocks.repository,
    object_attributes: { ...issueHookAttributes(ctx, issue), url: issueWebUrl(blocks.project.web_url as string, issue.iid), action },
    labels: labels.map(labelHookAttributes),
  };
  if (assignee) payload.assignee = userHookAttributes(ctx, assignee, gravatar);
  return payload;
}
