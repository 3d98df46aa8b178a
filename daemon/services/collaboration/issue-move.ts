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
import { toIssue } from '../../db/rows.js';

/** `namespace/project#iid`: how a system note refers to an issue of another project. */
async function issueReference(q: Queries, project: ProjectRow, iid: number): Promise<string> {
  const ns = await q.get<{ path: string }>(`SELECT path FROM namespaces WHERE id = ?`, [project.namespaceId]);
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
    const noteMap = new Map<number, number>();
    const oldNotes = await tx.all<Record<string, unknown>>(`SELECT * FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ? ORDER BY id`, [issue.id]);
    for (const n of oldNotes) {
      const r = await tx.get<{ id: number }>(
        `INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, attachment, updated_by_id, created_at, updated_at)
         VALUES (?, 'Issue', ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        [to.id, moved.id, n.note, n.author_id, !!n.system, n.attachment, n.updated_by_id, n.created_at, n.updated_at],
      );
      noteMap.set(n.id as number, r!.id);
    }
    const copyAward = `INSERT INTO award_emoji (name, user_id, awardable_type, awardable_id, created_at, updated_at)
       SELECT name, user_id, awardable_type, ?, created_at, updated_at FROM award_emoji WHERE awardable_type = ? AND awardable_id = ?
       ON CONFLICT (awardable_type, awardable_id, name, user_id) DO NOTHING`;
    await tx.run(copyAward, [moved.id, 'Issue', issue.id]);
    for (const [oldId, newId] of noteMap) await tx.run(copyAward, [newId, 'Note', oldId]);
    await createSystemNote(tx, { projectId: to.id, noteableType: 'Issue', noteableId: moved.id, authorId: actor.id, body: movedNote('from', await issueReference(tx, from, issue.iid)) });
    await createSystemNote(tx, { projectId: from.id, noteableType: 'Issue', noteableId: issue.id, authorId: actor.id, body: movedNote('to', await issueReference(tx, to, moved.iid)) });
    let old = issue;
    if (old.state !== 'closed') old = await changeIssueStateIn(ctx, tx, env, actor, from, old, 'closed');
    await tx.run(`UPDATE issues SET moved_to_id = ? WHERE id = ?`, [moved.id, old.id]);
    return toIssue((await tx.get<Record<string, unknown>>(`SELECT * FROM issues WHERE id = ?`, [moved.id]))!);
  });
}
