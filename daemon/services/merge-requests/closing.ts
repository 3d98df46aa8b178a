/** The issues a merge closes (8.x PostMergeService#close_issues): those closes_issues names that the merger may update. */
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { IssueRow } from '../../db/schema-collaboration.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { canUpdateIssue } from '../../policy/permissions.js';
import { lookupProjectAsync } from '../projects/projects.js';
import { closesIssues } from './closes-issues.js';

/** An issue to close, with its project (a `group/project#n` reference may name another project). */
export interface ClosingIssue {
  issue: IssueRow;
  project: ProjectRow;
}

/** The open issues named by the merge request's closing pattern that `actor` may update (8.x: only when merging into the default branch). */
export async function closingIssuesOf(ctx: AppContext, actor: UserRow, target: ProjectRow, mr: MergeRequestRow): Promise<ClosingIssue[]> {
  const found: IssueRow[] = await closesIssues(ctx, actor, mr, target);
  const out: ClosingIssue[] = [];
  for (const issue of found) {
    if (issue.state === 'closed') continue;
    const project = issue.projectId === target.id ? target : await lookupProjectAsync(ctx, issue.projectId);
    if (!project || !(await canUpdateIssue(ctx, actor, project, issue))) continue;
    out.push({ issue, project });
  }
  return out;
}
