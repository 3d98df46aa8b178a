/**
 * What the Issue and MergeRequest presenters load for a page of issuables, with a fixed number of queries: labels,
 * milestones, votes, user notes counts, the viewer's subscriptions (author and assignee count as subscribed, as
 * 8.x's Subscribable), authors and assignees, and the projects' web URLs.
 */
import type { AppContext } from '../../context.js';
import type { MilestoneRow } from '../../db/schema-collaboration.js';
import type { UserRow } from '../../db/schema.js';
import { usersByIds } from '../../db/users.js';
import { projectFullPaths } from '../../db/projects.js';
import { labelTitlesOf } from '../../db/labels.js';
import { milestonesById } from '../../services/collaboration/milestones.js';
import { voteCounts } from '../../services/collaboration/award-emoji.js';
import { userNotesCounts } from '../../services/collaboration/notes.js';
import { subscribedSet } from '../../services/collaboration/subscriptions.js';
import type { Queries } from '../../db/layer/types.js';
import { milestoneEntity } from './milestones.js';
import { userBasic } from './users.js';

/** The columns of an issue or merge request the page loads need. */
export interface IssuableRef {
  id: number;
  projectId: number;
  authorId: number | null;
  assigneeId: number | null;
  milestoneId: number | null;
}

/** The batch-loaded parts of a page of issuables. */
export interface IssuablePage {
  labels: Map<number, string[]>;
  milestones: Map<number, MilestoneRow>;
  votes: Map<number, { upvotes: number; downvotes: number }>;
  notes: Map<number, number>;
  subscribed: Set<number>;
  users: Map<number, UserRow>;
  webUrls: Map<number, string>;
}

/** Load a page of issues or merge requests for `viewer`. */
export async function loadIssuablePage(
  ctx: AppContext, viewer: UserRow | null, type: 'Issue' | 'MergeRequest', rows: readonly IssuableRef[], q: Queries = ctx.data,
): Promise<IssuablePage> {
  const ids = rows.map((r) => r.id);
  const milestoneIds = [...new Set(rows.map((r) => r.milestoneId).filter((x): x is number => x !== null))];
  const people = (r: IssuableRef) => [r.authorId, r.assigneeId].filter((x): x is number => x !== null);
  const implicit = new Map(rows.map((r) => [r.id, people(r)]));
  const userIds = [...new Set(rows.flatMap(people))];
  const projectIds = [...new Set(rows.map((r) => r.projectId))];
  const base = ctx.externalUrl();
  return {
    labels: await labelTitlesOf(q, type, ids),
    milestones: milestoneIds.length ? await milestonesById(q, milestoneIds) : new Map(),
    votes: await voteCounts(q, type, ids),
    notes: await userNotesCounts(q, type, ids),
    subscribed: viewer ? await subscribedSet(q, viewer.id, type, ids, implicit) : new Set<number>(),
    users: await usersByIds(q, userIds),
    webUrls: new Map([...(await projectFullPaths(q, projectIds))].map(([id, p]) => [id, `${base}/${p.namespacePath}/${p.path}`])),
  };
}

/**
 * The fields an issue and a merge request present alike from their page's loads (in the Issue entity's order):
 * labels, milestone, assignee, author, subscribed, user_notes_count, upvotes, downvotes.
 */
export function issuableFields(ctx: AppContext, page: IssuablePage, gravatar: boolean, row: Omit<IssuableRef, 'projectId'>) {
  const person = (id: number | null) => {
    const u = id !== null ? page.users.get(id) : undefined;
    return u ? userBasic(ctx, u, gravatar) : null;
  };
  const milestone = row.milestoneId !== null ? page.milestones.get(row.milestoneId) : undefined;
  const v = page.votes.get(row.id);
  return {
    labels: page.labels.get(row.id) ?? [],
    milestone: milestone ? milestoneEntity(milestone) : null,
    assignee: person(row.assigneeId),
    author: person(row.authorId),
    subscribed: page.subscribed.has(row.id),
    user_notes_count: page.notes.get(row.id) ?? 0,
    upvotes: v?.upvotes ?? 0,
    downvotes: v?.downvotes ?? 0,
  };
}
