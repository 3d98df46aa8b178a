/**
 * Issue presenter (GitLab v3 Issue, lib/api/entities.rb @ 8.12), batched: a fixed number of queries for a page
 * (labels, milestones, votes, user notes counts, subscriptions, users, project paths), never one per row.
 * Used by the issue routes, the milestone issues list, todos and merge requests' closes_issues.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { IssueRow } from '../../db/schema-collaboration.js';
import type { UserRow } from '../../db/schema.js';
import { Nullable } from '../params.js';
import { issuableFields, loadIssuablePage } from './issuables.js';
import { MilestoneSchema } from './milestones.js';
import { gravatarEnabledAsync, UserBasicSchema } from './users.js';

type Rec = Record<string, unknown>;

/** Present a page of issues for `viewer` (subscribed is the viewer's) with a fixed number of queries. */
export async function presentIssues(ctx: AppContext, viewer: UserRow | null, rows: IssueRow[]): Promise<Rec[]> {
  if (rows.length === 0) return [];
  const page = await loadIssuablePage(ctx, viewer, 'Issue', rows);
  const gravatar = await gravatarEnabledAsync(ctx);
  // One literal without a spread: V8 builds it from its boilerplate; the properties after a spread would be defined
  // one by one in V8's runtime once a memory-reducing collection has dropped their maps (daemon/idle-memory.ts).
  return rows.map((i) => {
    const f = issuableFields(ctx, page, gravatar, i);
    return {
      id: i.id,
      iid: i.iid,
      project_id: i.projectId,
      title: i.title,
      description: i.description,
      state: i.state,
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      labels: f.labels,
      milestone: f.milestone,
      assignee: f.assignee,
      author: f.author,
      subscribed: f.subscribed,
      user_notes_count: f.user_notes_count,
      upvotes: f.upvotes,
      downvotes: f.downvotes,
      due_date: i.dueDate,
      confidential: i.confidential,
      web_url: `${page.webUrls.get(i.projectId) ?? ctx.externalUrl()}/issues/${i.iid}`,
    };
  });
}

/** Present one issue. */
export async function presentIssue(ctx: AppContext, viewer: UserRow | null, row: IssueRow): Promise<Rec> {
  return (await presentIssues(ctx, viewer, [row]))[0]!;
}

const S = Type.String();
const I = Type.Integer();
const B = Type.Boolean();
const NS = Nullable(S);
/** Response schema of Issue. `author` is null only when the author's account was deleted. */
export const IssueSchema = Type.Object({
  id: I, iid: I, project_id: I, title: S, description: NS, state: S, created_at: S, updated_at: S,
  labels: Type.Array(S), milestone: Nullable(MilestoneSchema), assignee: Nullable(UserBasicSchema), author: Nullable(UserBasicSchema),
  subscribed: B, user_notes_count: I, upvotes: I, downvotes: I, due_date: NS, confidential: B, web_url: S,
});
