/**
 * Moving an issue to another project (GitLab 8.x Issues::MoveService), in one transaction: a new issue in the target
 * (same title, description, author, assignee, state, dates; the same-titled labels and milestone of the target), the
 * notes and award emoji copied, "Moved from" / "Moved to" system notes, the old issue closed and marked moved_to.
 */
import { eq } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { issues, type IssueRow } from '../../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { statement } from '../../db/statements.js';
import { badRequestMessage } from '../../errors.js';
import { canProject } from '../../policy/permissions.js';
import { labelTitlesOf, labelsByTitle } from './labels.js';
import { milestonesById } from './milestones.js';
import { createSystemNote } from './notes.js';
import { movedNote } from './system-notes.js';
import { changeIssueStateIn, createIssueIn } from './issues.js';

/** `namespace/project#iid`: how a system note refers to an issue of another project. */
function issueReference(ctx: AppContext, project: ProjectRow, iid: number): string {
  const ns = statement(ctx, `SELECT path FROM namespaces WHERE id = ?`).get(project.namespaceId) as { path: string };
  return `${ns.path}/${project.path}#${iid}`;
}

/**
 * POST /projects/:id/issues/:issue_id/move. 400 `Cannot move issue due to insufficient permissions!` unless the
 * actor has admin_issue on both projects; 400 `Cannot move issue to project it originates from!` for the same project.
 * Answers the new issue.
 */
export function moveIssue(ctx: AppContext, actor: UserRow, from: ProjectRow, issue: IssueRow, to: ProjectRow): IssueRow {
  if (!canProject(ctx, actor, 'admin_issue', from) || !canProject(ctx, actor, 'admin_issue', to)) {
    throw badRequestMessage('Cannot move issue due to insufficient permissions!');
  }
  if (from.id === to.id) throw badRequestMessage('Cannot move issue to project it originates from!');
  const titles = labelTitlesOf(ctx, 'Issue', [issue.id]).get(issue.id) ?? [];
  const milestone = issue.milestoneId !== null ? milestonesById(ctx, [issue.milestoneId]).get(issue.milestoneId) : undefined;
  return ctx.db.transaction((tx) => {
    const labelIds = titles.length ? labelsByTitle(ctx, to.id, titles).map((l) => l.id) : [];
    const target = milestone ? statement(ctx, `SELECT id FROM milestones WHERE project_id = ? AND title = ?`).get(to.id, milestone.title) as { id: number } | undefined : null;
    const moved = createIssueIn(ctx, tx, actor, to, {
      title: issue.title, description: issue.description, dueDate: issue.dueDate, confidential: issue.confidential,
    }, {
      authorId: issue.authorId, assigneeId: issue.assigneeId, state: issue.state, labelIds, milestoneId: target?.id ?? null,
      createdAt: issue.createdAt, closedAt: issue.closedAt,
    });
    // Notes and award emoji follow the issue (8.x rewrite_notes / rewrite_award_emoji), in their order.
    const noteMap = new Map<number, number>();
    const oldNotes = statement(ctx, `SELECT * FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ? ORDER BY id`).all(issue.id) as Record<string, unknown>[];
    const insertNote = ctx.db.$client.prepare(
      `INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, system, attachment, updated_by_id, created_at, updated_at)
       VALUES (?, 'Issue', ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const n of oldNotes) {
      const r = insertNote.run(to.id, moved.id, n.note, n.author_id, n.system, n.attachment, n.updated_by_id, n.created_at, n.updated_at);
      noteMap.set(n.id as number, Number(r.lastInsertRowid));
    }
    const copyAward = ctx.db.$client.prepare(
      `INSERT OR IGNORE INTO award_emoji (name, user_id, awardable_type, awardable_id, created_at, updated_at)
       SELECT name, user_id, awardable_type, ?, created_at, updated_at FROM award_emoji WHERE awardable_type = ? AND awardable_id = ?`,
    );
    copyAward.run(moved.id, 'Issue', issue.id);
    for (const [oldId, newId] of noteMap) copyAward.run(newId, 'Note', oldId);
    createSystemNote(tx, { projectId: to.id, noteableType: 'Issue', noteableId: moved.id, authorId: actor.id, body: movedNote('from', issueReference(ctx, from, issue.iid)) });
    createSystemNote(tx, { projectId: from.id, noteableType: 'Issue', noteableId: issue.id, authorId: actor.id, body: movedNote('to', issueReference(ctx, to, moved.iid)) });
    let old = issue;
    if (old.state !== 'closed') old = changeIssueStateIn(ctx, tx, actor, from, old, 'closed');
    tx.update(issues).set({ movedToId: moved.id }).where(eq(issues.id, old.id)).run();
    return tx.select().from(issues).where(eq(issues.id, moved.id)).get()!;
  });
}
