/**
 * Issues: create, update (state_event close/reopen), soft delete, subscribe/unsubscribe and todo (GitLab 8.x
 * Issues::CreateService, UpdateService, CloseService, ReopenService). Every write is ONE transaction that also writes
 * the system notes, the event, the todos and the issue hook deliveries of the change.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { issues, type IssueRow, type TodoRow } from '../../db/schema-collaboration.js';
import { users, type ProjectRow, type UserRow } from '../../db/schema.js';
import { badRequest, notFoundMessage, validationError } from '../../errors.js';
import { issueHookPayload, type IssueHookAction } from '../../hooks/issues.js';
import { canReadIssuable } from '../../policy/permissions.js';
import { recordEvent } from '../events.js';
import { queueHookDeliveries } from '../hook-deliveries.js';
import { findOrCreateLabels, setTargetLabels } from './labels.js';
import { findProjectMilestone } from './milestones.js';
import { createSystemNote } from './notes.js';
import { subscribe, unsubscribe } from './subscriptions.js';
import {
  assigneeNote, confidentialityNote, labelsNote, milestoneNote, stateChangeNote, titleNote,
} from './system-notes.js';
import { markTodo, markTodosDoneOnClose, todosForNewIssuable, todosForUpdatedIssuable, type IssuableInfo } from './todos.js';
import type { Tx } from './tx.js';
import { validDate } from '../../dates.js';
import { assigneeOf, labelTitles } from './issuable-params.js';

export { labelTitles } from './issuable-params.js';

/** Longest issue title (8.x: a string column). */
export const ISSUE_TITLE_MAX = 255;
/** Longest issue description: a 1 MB description is refused (400), never stored half. */
export const ISSUE_DESCRIPTION_MAX = 1_000_000;

/** Parameters of POST /projects/:id/issues. */
export interface CreateIssueParams {
  title?: string;
  description?: string;
  assignee_id?: number;
  milestone_id?: number;
  /** Comma-separated label titles. */
  labels?: string;
  created_at?: string;
  due_date?: string;
  confidential?: boolean;
}

/** Parameters of PUT /projects/:id/issues/:issue_id. */
export interface UpdateIssueParams extends Omit<CreateIssueParams, 'created_at'> {
  state_event?: string;
  updated_at?: string;
}

/** What the caller may set beyond title and description (decided by the route from the policy). */
export interface IssueWriteRights {
  /** admin_issue: labels, milestone and assignee (dropped silently otherwise, as 8.x). */
  admin: boolean;
  /** Admins and project owners: created_at / updated_at are applied (ignored otherwise, as 8.x). */
  timestamps: boolean;
}

/** An ISO 8601 time as the API's UTC form with milliseconds, or null when it is not one. */
function isoTime(s: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s.trim())) return null;
  const ms = Date.parse(s.trim());
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** Validate the params of a create or update before anything is written (the 8.x validation body on failure). */
function validate(p: UpdateIssueParams & { created_at?: string }, creating: boolean): void {
  const errors: Record<string, string[]> = {};
  if (p.title !== undefined) {
    if (p.title.trim() === '') errors.title = ["can't be blank"];
    else if (p.title.length > ISSUE_TITLE_MAX) errors.title = [`is too long (maximum is ${ISSUE_TITLE_MAX} characters)`];
  }
  if (p.description !== undefined && p.description.length > ISSUE_DESCRIPTION_MAX) {
    errors.description = [`is too long (maximum is ${ISSUE_DESCRIPTION_MAX} characters)`];
  }
  if (p.due_date !== undefined && !validDate(p.due_date)) errors.due_date = ['is invalid'];
  if (creating && p.created_at !== undefined && isoTime(p.created_at) === null) errors.created_at = ['is invalid'];
  if (p.updated_at !== undefined && isoTime(p.updated_at) === null) errors.updated_at = ['is invalid'];
  if (p.state_event !== undefined && p.state_event !== 'close' && p.state_event !== 'reopen') errors.state_event = ['is invalid'];
  if (Object.keys(errors).length) throw validationError(errors);
}

/** What the todo service needs to know about an issue. */
export function issuableInfo(project: ProjectRow, issue: IssueRow): IssuableInfo {
  return { project, target: { type: 'Issue', id: issue.id }, authorId: issue.authorId, assigneeId: issue.assigneeId, confidential: issue.confidential };
}

/** A live issue of the project by its global id, or null. */
export function findProjectIssue(ctx: AppContext, projectId: number, issueId: number): IssueRow | null {
  return ctx.db.select().from(issues).where(and(eq(issues.id, issueId), eq(issues.projectId, projectId), isNull(issues.deletedAt))).get() ?? null;
}

/**
 * A live issue of the project the user may read, or 404 `404 Not found` (8.x's `find` miss; a confidential issue
 * the caller may not read answers the same, so its existence does not leak).
 */
export function findReadableIssue(ctx: AppContext, user: UserRow, project: ProjectRow, issueId: number): IssueRow {
  const issue = findProjectIssue(ctx, project.id, issueId);
  if (!issue || !canReadIssuable(ctx, user, project, { type: 'Issue', ...issue })) throw notFoundMessage('404 Not found');
  return issue;
}

/** The next iid of a project's issues (inside the writing transaction). */
function nextIid(tx: Tx, projectId: number): number {
  const row = tx.select({ n: sql<number>`COALESCE(MAX(${issues.iid}), 0)` }).from(issues).where(eq(issues.projectId, projectId)).get();
  return (row?.n ?? 0) + 1;
}

/** Queue the issue hook deliveries of a change (inside its transaction). */
function queueIssueHook(ctx: AppContext, tx: Tx, project: ProjectRow, issue: IssueRow, actor: UserRow, action: IssueHookAction): void {
  queueHookDeliveries(tx, project.id, 'issue', issueHookPayload(ctx, project, issue, actor, action));
}

/** What createIssueIn needs beyond the params (issue move reuses it). */
export interface CreateIssueOptions {
  authorId?: number | null;
  state?: 'opened' | 'closed';
  labelIds?: number[];
  milestoneId?: number | null;
  assigneeId?: number | null;
  createdAt?: string;
  updatedAt?: string;
  closedAt?: string | null;
}

/**
 * Insert an issue with the project's next iid, its labels, the `created` event, the todos and the `open` hook, in the
 * caller's transaction.
 */
export function createIssueIn(
  ctx: AppContext, tx: Tx, actor: UserRow, project: ProjectRow, p: { title: string; description: string | null; dueDate: string | null; confidential: boolean },
  o: CreateIssueOptions,
): IssueRow {
  const t = now();
  const issue = tx.insert(issues).values({
    projectId: project.id, iid: nextIid(tx, project.id), title: p.title, description: p.description, state: o.state ?? 'opened',
    confidential: p.confidential, authorId: o.authorId === undefined ? actor.id : o.authorId, assigneeId: o.assigneeId ?? null,
    milestoneId: o.milestoneId ?? null, dueDate: p.dueDate, createdAt: o.createdAt ?? t, updatedAt: o.updatedAt ?? o.createdAt ?? t,
    closedAt: o.closedAt ?? null,
  }).returning().get();
  if (o.labelIds && o.labelIds.length) setTargetLabels(tx, { type: 'Issue', id: issue.id }, o.labelIds);
  recordEvent(tx, { projectId: project.id, authorId: actor.id, action: 'created', targetId: issue.id, targetType: 'Issue', targetTitle: issue.title });
  todosForNewIssuable(ctx, tx, actor, issuableInfo(project, issue), issue.description);
  queueIssueHook(ctx, tx, project, issue, actor, 'open');
  return issue;
}

/** POST /projects/:id/issues: create an issue (labels created on the fly), in one transaction. */
export function createIssue(ctx: AppContext, actor: UserRow, project: ProjectRow, p: CreateIssueParams, rights: IssueWriteRights): IssueRow {
  if (p.title === undefined || p.title.trim() === '') throw badRequest('title');
  validate(p, true);
  const title = p.title;
  return ctx.db.transaction((tx) => {
    const labelIds = rights.admin && p.labels !== undefined ? findOrCreateLabels(tx, project.id, labelTitles(p.labels), true).map((l) => l.id) : [];
    const milestone = rights.admin && p.milestone_id ? findProjectMilestone(ctx, project.id, p.milestone_id) : null;
    const assigneeId = rights.admin ? assigneeOf(tx, p.assignee_id) : undefined;
    const createdAt = rights.timestamps && p.created_at !== undefined ? isoTime(p.created_at)! : undefined;
    return createIssueIn(ctx, tx, actor, project, {
      title, description: p.description ?? null, dueDate: p.due_date ?? null, confidential: p.confidential ?? false,
    }, { labelIds, milestoneId: milestone?.id ?? null, assigneeId: assigneeId ?? null, createdAt });
  });
}

/** The system note helper of a write: a note on the issue by the actor. */
function noteOn(tx: Tx, project: ProjectRow, issue: IssueRow, actor: UserRow, body: string): void {
  if (body) createSystemNote(tx, { projectId: project.id, noteableType: 'Issue', noteableId: issue.id, authorId: actor.id, body });
}

/**
 * Close or reopen inside a transaction: state, closed_at, system note, event, todos done, hook. `source` names what
 * closed it (a merge request reference such as `!3`): the note reads "Status changed to closed by !3".
 */
export function changeIssueStateIn(
  ctx: AppContext, tx: Tx, actor: UserRow, project: ProjectRow, issue: IssueRow, to: 'closed' | 'opened', opts: { hook?: boolean; at?: string; source?: string } = {},
): IssueRow {
  const t = opts.at ?? now();
  const row = tx.update(issues).set({ state: to, closedAt: to === 'closed' ? t : null, updatedAt: t, updatedById: actor.id })
    .where(eq(issues.id, issue.id)).returning().get()!;
  noteOn(tx, project, row, actor, stateChangeNote(to === 'closed' ? 'closed' : 'reopened', to === 'closed' ? opts.source : null));
  recordEvent(tx, { projectId: project.id, authorId: actor.id, action: to === 'closed' ? 'closed' : 'reopened', targetId: row.id, targetType: 'Issue', targetTitle: row.title });
  if (to === 'closed') markTodosDoneOnClose(tx, actor, { type: 'Issue', id: row.id });
  if (opts.hook !== false) queueIssueHook(ctx, tx, project, row, actor, to === 'closed' ? 'close' : 'reopen');
  return row;
}

/**
 * PUT /projects/:id/issues/:issue_id: update the fields given, close or reopen, in one transaction with a system
 * note per change (title, assignee, milestone, labels, confidentiality, state), the event of a state change, todos
 * for a new assignee or new mentions, and the issue hook (`close`/`reopen`, and `update` when fields changed).
 */
export function updateIssue(ctx: AppContext, actor: UserRow, project: ProjectRow, issue: IssueRow, p: UpdateIssueParams, rights: IssueWriteRights): IssueRow {
  validate(p, false);
  return ctx.db.transaction((tx) => {
    const set: Partial<IssueRow> = {};
    const notes: string[] = [];
    if (p.title !== undefined && p.title !== issue.title) {
      set.title = p.title;
      notes.push(titleNote(issue.title, p.title));
    }
    if (p.description !== undefined && p.description !== issue.description) set.description = p.description;
    if (p.due_date !== undefined && p.due_date !== issue.dueDate) set.dueDate = p.due_date;
    if (p.confidential !== undefined && p.confidential !== issue.confidential) {
      set.confidential = p.confidential;
      notes.push(confidentialityNote(p.confidential));
    }
    if (rights.admin) {
      const assigneeId = assigneeOf(tx, p.assignee_id);
      if (assigneeId !== undefined && assigneeId !== issue.assigneeId) {
        set.assigneeId = assigneeId;
        const u = assigneeId !== null ? tx.select({ username: users.username }).from(users).where(eq(users.id, assigneeId)).get() : undefined;
        notes.push(assigneeNote(u?.username ?? null));
      }
      if (p.milestone_id !== undefined) {
        const m = p.milestone_id ? findProjectMilestone(ctx, project.id, p.milestone_id) : null;
        const milestoneId = m?.id ?? null;
        if (milestoneId !== issue.milestoneId) {
          set.milestoneId = milestoneId;
          notes.push(milestoneNote(m ? { iid: m.iid } : null));
        }
      }
    }
    let labelsChanged = false;
    if (rights.admin && p.labels !== undefined) {
      const wanted = findOrCreateLabels(tx, project.id, labelTitles(p.labels), true);
      const { added, removed } = setTargetLabels(tx, { type: 'Issue', id: issue.id }, wanted.map((l) => l.id));
      if (added.length || removed.length) {
        labelsChanged = true;
        notes.push(labelsNote(added.map((l) => ({ id: l.id })), removed.map((l) => ({ id: l.id }))));
      }
    }
    const fieldsChanged = Object.keys(set).length > 0 || labelsChanged;
    const at = rights.timestamps && p.updated_at !== undefined ? isoTime(p.updated_at)! : now();
    let row = issue;
    if (fieldsChanged || (rights.timestamps && p.updated_at !== undefined)) {
      row = tx.update(issues).set({ ...set, updatedAt: at, updatedById: actor.id }).where(eq(issues.id, issue.id)).returning().get()!;
    }
    for (const body of notes) noteOn(tx, project, row, actor, body);
    if (fieldsChanged) {
      todosForUpdatedIssuable(ctx, tx, actor, issuableInfo(project, row), {
        oldAssigneeId: issue.assigneeId, oldText: issue.description, newText: row.description,
      });
    }
    const to = p.state_event === 'close' && row.state !== 'closed' ? 'closed' : p.state_event === 'reopen' && row.state === 'closed' ? 'opened' : null;
    if (to) row = changeIssueStateIn(ctx, tx, actor, project, row, to, { at });
    if (fieldsChanged) queueIssueHook(ctx, tx, project, row, actor, 'update');
    return row;
  });
}

/** DELETE /projects/:id/issues/:issue_id: soft delete (hidden everywhere, the iid stays taken). */
export function deleteIssue(ctx: AppContext, actor: UserRow, issue: IssueRow): IssueRow {
  return ctx.db.transaction((tx) => {
    const t = now();
    return tx.update(issues).set({ deletedAt: t, updatedById: actor.id }).where(eq(issues.id, issue.id)).returning().get()!;
  });
}

/** Whether the user is implicitly subscribed to the issue (its author or assignee, as 8.x's participants). */
const implicitlySubscribed = (user: UserRow, issue: IssueRow) => user.id === issue.authorId || user.id === issue.assigneeId;

/** POST .../subscription: false when already subscribed (304). */
export function subscribeToIssue(ctx: AppContext, user: UserRow, issue: IssueRow): boolean {
  return ctx.db.transaction((tx) => subscribe(tx, user.id, 'Issue', issue.id, implicitlySubscribed(user, issue)));
}

/** DELETE .../subscription: false when not subscribed (304). */
export function unsubscribeFromIssue(ctx: AppContext, user: UserRow, issue: IssueRow): boolean {
  return ctx.db.transaction((tx) => unsubscribe(tx, user.id, 'Issue', issue.id, implicitlySubscribed(user, issue)));
}

/** POST .../todo: a `marked` todo for the caller, or null when a pending one exists (304). */
export function markIssueTodo(ctx: AppContext, user: UserRow, project: ProjectRow, issue: IssueRow): TodoRow | null {
  return ctx.db.transaction((tx) => markTodo(ctx, tx, user, issuableInfo(project, issue)));
}
