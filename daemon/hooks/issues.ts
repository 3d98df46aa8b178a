/**
 * Issue webhook payloads (GitLab 8.x Gitlab::DataBuilder for issues: object_kind "issue", user, project,
 * repository, object_attributes with action open/close/reopen/update, assignee, labels).
 * OWNER: issues engineer. Below the API: services build payloads without importing api/entities.
 */
import type { AppContext } from '../context.js';
import type { IssueRow } from '../db/schema-collaboration.js';

/** The issue's `object_attributes` (hook_attrs in 8.x: the issue's columns), also embedded as `issue` in note payloads. */
export function issueHookAttributes(ctx: AppContext, issue: IssueRow): Record<string, unknown> {
  throw new Error('not implemented');
}
