/**
 * Moving an issue to another project (GitLab 8.x Issues::MoveService), in one transaction: a new issue in the target
 * (same title, description, author, assignee, state, dates; the same-titled labels and milestone of the target), the
 * notes and award emoji copied, "Moved from" / "Moved to" system notes, the old issue closed and marked moved_to.
 */
import type { AppContext } from '../../context.js';
import type { IssueRow } from '../../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { badRequestMessage } from '../../errors.js';
import { canProjectAsync } from '../../policy/permissions.js';
import { labelsByTitle } from './labels.js';
import { labelTitlesOf } from '../../db/labels.js';
import { findMilestoneByTitle, milestonesById } from './milestones.js';
import { createSystemNote } from './notes.js';
import { movedNote } from './system-notes.js';
import { changeIssueStateIn, createIssueIn, lockIssue, writeEnv } from './issues.js';
import type { Queries } from '../../db/layer/types.js';
import { issueById, setIssueMovedTo } from '../../db/issues.js';
import { copyIssueNotes } from '../../db/notes.js';
import { copyAwards } from '../../db/collaboration/award-emoji.js';
import { namespaceById } from '../../db/projects.js';

/** `namespace/project#iid`: how a system note refers to an issue of another project. */
async function issueReference(q: Queries, project: ProjectRow, iid: number): Promise<string> {
  const ns = await namespaceById(q, project.namespaceId);
  return `${ns!.path}/${project.path}#${iid}`;
}

/**
 * POST /projects/:id/issues/:issue_id/move. 400 `Cannot move issue due to insufficient permissions!` unless the
 * actor has admin_issue on both projects; 400 `Cannot move issue to project it originates from!` for the same project.
 * Answers the new issue. The issue's writers are serialised and it is read again inside the transaction (404 when it
 * was deleted meanwhile).
 */
export async function moveIssue(ctx: AppContext, actor: UserRow, from: ProjectRow, loaded: IssueRow, to: ProjectRow): Promise<IssueRow> {
  if (!(await canProjectAsync(ctx, actor, 'admin_issue', from)) || !(await canProjectAsync(ctx, actor, 'admin_issue', to))) {
    throw badRequestMessage('Cannot move issue due to insufficient permissions!');
  }
  if (from.id === to.id) throw badRequestMessage('Cannot move issue to project it originates from!');
  const env = await writeEnv(ctx);
  return ctx.data.transaction(async (tx) => {
    const issue = await lockIssue(tx, loaded);
    const titles = (await labelTitlesOf(tx, 'Issue', [issue.id])).get(issue.id) ?? [];
    const milestone = issue.milestoneId !== null ? (await milestonesById(tx, [issue.milestoneId])).get(issue.milestoneId) : undefined;
    const labelIds = titles.length ? (await labelsByTitle(tx, to.id, titles)).map((l) => l.id) : [];
    const target = milestone ? await findMilestoneByTitle(tx, to.id, milestone.title) : null;
    const moved = await createIssueIn(ctx, tx, env, actor, to, {
      title: issue.title, description: issue.description, dueDate: issue.dueDate, confidential: issue.confidential,
    }, {
      authorId: issue.authorId, assigneeId: issue.assigneeId, state: issue.state, labelIds, milestoneId: target?.id ?? null,
      createdAt: issue.createdAt, closedAt: issue.closedAt,
    });
    // Notes and award emoji follow the issue (8.x rewrite_notes / rewrite_award_emoji), in their order.
    const noteMap = await copyIssueNotes(tx, issue.id, to.id, moved.id);
    await copyAwards(tx, 'Issue', issue.id, moved.id);
    for (const [oldId, newId] of noteMap) await copyAwards(tx, 'Note', oldId, newId);
    await createSystemNote(tx, { projectId: to.id, noteableType: 'Issue', noteableId: moved.id, authorId: actor.id, body: movedNote('from', await issueReference(tx, from, issue.iid)) });
    await createSystemNote(tx, { projectId: from.id, noteableType: 'Issue', noteableId: issue.id, authorId: actor.id, body: movedNote('to', await issueReference(tx, to, moved.iid)) });
    let old = issue;
    if (old.state !== 'closed') old = await changeIssueStateIn(ctx, tx, env, actor, from, old, 'closed');
    await setIssueMovedTo(tx, old.id, moved.id);
    return (await issueById(tx, moved.id))!;
  });
}
