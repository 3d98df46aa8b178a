/**
 * Issue presenter (GitLab v3 Issue, lib/api/entities.rb @ 8.12), batched: a fixed number of queries for a page
 * (labels, milestones, votes, user notes counts, subscriptions, users, project paths), never one per row.
 * Used by the issue routes, the milestone issues list, todos and (later) merge requests' closes_issues.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { IssueRow } from '../../db/schema-collaboration.js';
import type { UserRow } from '../../db/schema.js';
import { statement } from '../../db/statements.js';
import { toUser } from '../../db/rows.js';
import { IN_IDS, idList } from '../../db/sql.js';
import { labelTitlesOf } from '../../services/collaboration/labels.js';
import { milestonesById } from '../../services/collaboration/milestones.js';
import { voteCounts } from '../../services/collaboration/award-emoji.js';
import { userNotesCounts } from '../../services/collaboration/notes.js';
import { subscribedSet } from '../../services/collaboration/subscriptions.js';
import { Nullable } from '../params.js';
import { milestoneEntity, MilestoneSchema } from './milestones.js';
import { userBasic, UserBasicSchema } from './users.js';

type Rec = Record<string, unknown>;

/** Users by id (one query). */
function usersById(ctx: AppContext, ids: number[]): Map<number, UserRow> {
  const uniq = [...new Set(ids)];
  if (uniq.length === 0) return new Map();
  return new Map((statement(ctx, `SELECT * FROM users WHERE id IN ${IN_IDS}`).all(idList(uniq)) as Rec[]).map((u) => [u.id as number, toUser(u)]));
}

/** `<base>/<namespace path>/<project path>` per project id (one query). */
function projectWebUrls(ctx: AppContext, projectIds: number[]): Map<number, string> {
  const uniq = [...new Set(projectIds)];
  const base = ctx.externalUrl();
  return new Map((statement(ctx,
    `SELECT p.id AS id, n.path AS ns, p.path AS path FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id IN ${IN_IDS}`,
  ).all(idList(uniq)) as { id: number; ns: string; path: string }[]).map((r) => [r.id, `${base}/${r.ns}/${r.path}`]));
}

/** Present a page of issues for `viewer` (subscribed is the viewer's) with a fixed number of queries. */
export function presentIssues(ctx: AppContext, viewer: UserRow | null, rows: IssueRow[]): Rec[] {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const labels = labelTitlesOf(ctx, 'Issue', ids);
  const milestoneIds = [...new Set(rows.map((r) => r.milestoneId).filter((x): x is number => x !== null))];
  const milestones = milestoneIds.length ? milestonesById(ctx, milestoneIds) : new Map();
  const votes = voteCounts(ctx, 'Issue', ids);
  const notes = userNotesCounts(ctx, 'Issue', ids);
  const implicit = new Map(rows.map((r) => [r.id, [r.authorId, r.assigneeId].filter((x): x is number => x !== null)]));
  const subscribed = viewer ? subscribedSet(ctx, viewer.id, 'Issue', ids, implicit) : new Set<number>();
  const users = usersById(ctx, rows.flatMap((r) => [r.authorId, r.assigneeId].filter((x): x is number => x !== null)));
  const webUrls = projectWebUrls(ctx, rows.map((r) => r.projectId));
  return rows.map((i) => {
    const author = i.authorId !== null ? users.get(i.authorId) : undefined;
    const assignee = i.assigneeId !== null ? users.get(i.assigneeId) : undefined;
    const milestone = i.milestoneId !== null ? milestones.get(i.milestoneId) : undefined;
    const v = votes.get(i.id);
    return {
      id: i.id,
      iid: i.iid,
      project_id: i.projectId,
      title: i.title,
      description: i.description,
      state: i.state,
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      labels: labels.get(i.id) ?? [],
      milestone: milestone ? milestoneEntity(milestone) : null,
      assignee: assignee ? userBasic(ctx, assignee) : null,
      author: author ? userBasic(ctx, author) : null,
      subscribed: subscribed.has(i.id),
      user_notes_count: notes.get(i.id) ?? 0,
      upvotes: v?.upvotes ?? 0,
      downvotes: v?.downvotes ?? 0,
      due_date: i.dueDate,
      confidential: i.confidential,
      web_url: `${webUrls.get(i.projectId) ?? ctx.externalUrl()}/issues/${i.iid}`,
    };
  });
}

/** Present one issue. */
export function presentIssue(ctx: AppContext, viewer: UserRow | null, row: IssueRow): Rec {
  return presentIssues(ctx, viewer, [row])[0]!;
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
