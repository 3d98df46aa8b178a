/**
 * Issues: create, update (state_event close/reopen), soft delete, subscribe/unsubscribe and todo (GitLab 8.x
 * Issues::CreateService, UpdateService, CloseService, ReopenService). Every write is ONE transaction that also writes
 * the system notes, the event, the todos and the issue hook deliveries of the change.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { IssueRow, TodoRow } from '../../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { badRequest, notFoundMessage, validationError } from '../../errors.js';
import { issueHookPayload, type IssueHookAction } from '../../hooks/issues.js';
import { canReadIssuable } from '../../policy/permissions.js';
import { recordEvent } from '../instance/events.js';
import { queueHookDeliveries } from '../hooks/deliveries.js';
import { findOrCreateLabels, setTargetLabels } from './labels.js';
import { findProjectMilestone } from './milestones.js';
import { createSystemNote } from './notes.js';
import { subscribe, unsubscribe } from './subscriptions.js';
import { confidentialityNote, stateChangeNote, titleNote } from './system-notes.js';
import {
  markTodo, markTodosDoneOnClose, todosForNewIssuable, todosForUpdatedIssuable, type IssuableInfo,
} from './todos.js';
import { INT_MAX, LOCKS, lockAsync } from './tx.js';
import { validDate } from '../../dates.js';
import { assigneeMilestoneLabels, assigneeOf, labelTitles } from './issuable-params.js';
import type { Queries } from '../../db/layer/types.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { insertIssue, type IssueColumns, liveProjectIssue, softDeleteIssue, updateIssueRow } from '../../db/issues.js';
import { getSettings } from '../instance/settings.js';


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

/** A live issue of the project by its global id, or null (`q`: ctx.data or a transaction). */
export async function findProjectIssue(q: Queries, projectId: number, issueId: number): Promise<IssueRow | null> {
  if (!Number.isSafeInteger(issueId) || Math.abs(issueId) > INT_MAX) return null;
  return liveProjectIssue(q, projectId, issueId);
}

/**
 * A live issue of the project the user may read, or 404 `404 Not found` (8.x's `find` miss; a confidential issue
 * the caller may not read answers the same, so its existence does not leak). `level`: the caller's access level when known.
 */
export async function findReadableIssue(ctx: AppContext, user: UserRow, project: ProjectRow, issueId: number, level?: number): Promise<IssueRow> {
  const issue = await findProjectIssue(ctx.data, project.id, issueId);
  if (!issue || !(await canReadIssuable(ctx, user, project, { ...issue, type: 'Issue' }, level))) throw notFoundMessage('404 Not found');
  return issue;
}

/** The issue as it is now, inside a writing transaction, after serialising its writers; 404 when deleted meanwhile. */
export async function lockIssue(tx: Queries, issue: IssueRow): Promise<IssueRow> {
  await lockAsync(tx, LOCKS.issue, issue.id);
  const row = await findProjectIssue(tx, issue.projectId, issue.id);
  if (!row) throw notFoundMessage('404 Not found');
  return row;
}

/** What a write needs beyond the transaction: the gravatar setting of hook payloads, read before it. */
export interface WriteEnv {
  gravatar: boolean;
}

export async function writeEnv(ctx: AppContext): Promise<WriteEnv> {
  return { gravatar: (await getSettings(ctx)).gravatarEnabled };
}

/** Queue the issue hook deliveries of a change (inside its transaction). */
async function queueIssueHook(ctx: AppContext, tx: Queries, env: WriteEnv, project: ProjectRow, issue: IssueRow, actor: UserRow, action: IssueHookAction): Promise<void> {
  await queueHookDeliveries(tx, project.id, 'issue', await issueHookPayload(ctx, tx, project, issue, actor, action, env.gravatar));
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
 * caller's transaction. The project's issue creates are serialised for the iid (lockAsync).
 */
export async function createIssueIn(
  ctx: AppContext, tx: Queries, env: WriteEnv, actor: UserRow, project: ProjectRow,
  p: { title: string; description: string | null; dueDate: string | null; confidential: boolean }, o: CreateIssueOptions,
): Promise<IssueRow> {
  const t = now();
  await lockAsync(tx, LOCKS.issueIid, project.id);
  const issue = await insertIssue(tx, {
    projectId: project.id, title: p.title, description: p.description, state: o.state ?? 'opened', confidential: p.confidential,
    authorId: o.authorId === undefined ? actor.id : o.authorId, assigneeId: o.assigneeId ?? null, milestoneId: o.milestoneId ?? null, dueDate: p.dueDate,
    createdAt: o.createdAt ?? t, updatedAt: o.updatedAt ?? o.createdAt ?? t, closedAt: o.closedAt ?? null,
  });
  if (o.labelIds && o.labelIds.length) await setTargetLabels(tx, { type: 'Issue', id: issue.id }, o.labelIds);
  await recordEvent(tx, { projectId: project.id, authorId: actor.id, action: 'created', targetId: issue.id, targetType: 'Issue', targetTitle: issue.title });
  await todosForNewIssuable(ctx, tx, actor, issuableInfo(project, issue), issue.description);
  await queueIssueHook(ctx, tx, env, project, issue, actor, 'open');
  return issue;
}

/** Map the violations of a write racing a deletion: the project, or a user it names, deleted meanwhile. */
function raced(e: unknown): never {
  if (isForeignKeyViolation(e)) throw notFoundMessage('404 Not found');
  throw e;
}

/** POST /projects/:id/issues: create an issue (labels created on the fly), in one transaction. */
export async function createIssue(ctx: AppContext, actor: UserRow, project: ProjectRow, p: CreateIssueParams, rights: IssueWriteRights): Promise<IssueRow> {
  if (p.title === undefined || p.title.trim() === '') throw badRequest('title');
  validate(p, true);
  const title = p.title;
  const env = await writeEnv(ctx);
  return ctx.data.transaction(async (tx) => {
    const labelIds = rights.admin && p.labels !== undefined ? (await findOrCreateLabels(tx, project.id, labelTitles(p.labels), true)).map((l) => l.id) : [];
    const milestone = rights.admin && p.milestone_id ? await findProjectMilestone(tx, project.id, p.milestone_id) : null;
    const assigneeId = rights.admin ? await assigneeOf(tx, p.assignee_id) : undefined;
    const createdAt = rights.timestamps && p.created_at !== undefined ? isoTime(p.created_at)! : undefined;
    return createIssueIn(ctx, tx, env, actor, project, {
      title, description: p.description ?? null, dueDate: p.due_date ?? null, confidential: p.confidential ?? false,
    }, { labelIds, milestoneId: milestone?.id ?? null, assigneeId: assigneeId ?? null, createdAt });
  }).catch(raced);
}

/** A system note on the issue by the actor (none for an empty body). */
async function noteOn(tx: Queries, project: ProjectRow, issue: IssueRow, actor: UserRow, body: string): Promise<void> {
  if (body) await createSystemNote(tx, { projectId: project.id, noteableType: 'Issue', noteableId: issue.id, authorId: actor.id, body });
}

/**
 * Close or reopen inside the caller's transaction: state, closed_at, system note, event, todos done, hook. `source`
 * names what closed it (a merge request reference such as `!3`): the note reads "Status changed to closed by !3".
 */
export async function changeIssueStateIn(
  ctx: AppContext, tx: Queries, env: WriteEnv, actor: UserRow, project: ProjectRow, issue: IssueRow, to: 'closed' | 'opened',
  opts: { hook?: boolean; at?: string; source?: string } = {},
): Promise<IssueRow> {
  const t = opts.at ?? now();
  const row = (await updateIssueRow(tx, issue.id, { state: to, closed_at: to === 'closed' ? t : null }, t, actor.id))!;
  await noteOn(tx, project, row, actor, stateChangeNote(to === 'closed' ? 'closed' : 'reopened', to === 'closed' ? opts.source : null));
  await recordEvent(tx, { projectId: project.id, authorId: actor.id, action: to === 'closed' ? 'closed' : 'reopened', targetId: row.id, targetType: 'Issue', targetTitle: row.title });
  if (to === 'closed') await markTodosDoneOnClose(tx, actor, { type: 'Issue', id: row.id });
  if (opts.hook !== false) await queueIssueHook(ctx, tx, env, project, row, actor, to === 'closed' ? 'close' : 'reopen');
  return row;
}

/**
 * PUT /projects/:id/issues/:issue_id: update the fields given, close or reopen, in one transaction with a system
 * note per change (title, assignee, milestone, labels, confidentiality, state), the event of a state change, todos
 * for a new assignee or new mentions, and the issue hook (`close`/`reopen`, and `update` when fields changed). The
 * changes are computed against the issue as it is inside the transaction (its writers serialised), so two updates at
 * once write each note once; an issue deleted meanwhile answers 404.
 */
export async function updateIssue(ctx: AppContext, actor: UserRow, project: ProjectRow, loaded: IssueRow, p: UpdateIssueParams, rights: IssueWriteRights): Promise<IssueRow> {
  validate(p, false);
  const env = await writeEnv(ctx);
  return ctx.data.transaction(async (tx) => {
    const issue = await lockIssue(tx, loaded);
    const sets: IssueColumns = {};
    const notes: string[] = [];
    const set = <K extends keyof IssueColumns>(column: K, value: IssueColumns[K]) => { sets[column] = value; };
    if (p.title !== undefined && p.title !== issue.title) {
      set('title', p.title);
      notes.push(titleNote(issue.title, p.title));
    }
    if (p.description !== undefined && p.description !== issue.description) set('description', p.description);
    if (p.due_date !== undefined && p.due_date !== issue.dueDate) set('due_date', p.due_date);
    if (p.confidential !== undefined && p.confidential !== issue.confidential) {
      set('confidential', p.confidential);
      notes.push(confidentialityNote(p.confidential));
    }
    let labelsChanged = false;
    if (rights.admin) {
      const changes = await assigneeMilestoneLabels(tx, project.id, { ...issue, type: 'Issue' }, p);
      Object.assign(sets, changes.columns);
      notes.push(...changes.notes);
      labelsChanged = changes.labelsChanged;
    }
    const fieldsChanged = Object.keys(sets).length > 0 || labelsChanged;
    const at = rights.timestamps && p.updated_at !== undefined ? isoTime(p.updated_at)! : now();
    let row = issue;
    if (fieldsChanged || (rights.timestamps && p.updated_at !== undefined)) {
      row = (await updateIssueRow(tx, issue.id, sets, at, actor.id))!;
    }
    for (const body of notes) await noteOn(tx, project, row, actor, body);
    if (fieldsChanged) {
      await todosForUpdatedIssuable(ctx, tx, actor, issuableInfo(project, row), {
        oldAssigneeId: issue.assigneeId, oldText: issue.description, newText: row.description,
      });
    }
    const to = p.state_event === 'close' && row.state !== 'closed' ? 'closed' : p.state_event === 'reopen' && row.state === 'closed' ? 'opened' : null;
    if (to) row = await changeIssueStateIn(ctx, tx, env, actor, project, row, to, { at });
    if (fieldsChanged) await queueIssueHook(ctx, tx, env, project, row, actor, 'update');
    return row;
  }).catch(raced);
}

/**
 * DELETE /projects/:id/issues/:issue_id: soft delete (hidden everywhere, the iid stays taken); 404 when already gone.
 * It waits for the issue's other writers (an update, a note, an award in progress) and they see it gone after it.
 */
export async function deleteIssue(ctx: AppContext, actor: UserRow, issue: IssueRow): Promise<IssueRow> {
  const row = await ctx.data.transaction(async (tx) => {
    await lockAsync(tx, LOCKS.issue, issue.id);
    return softDeleteIssue(tx, issue.id, actor.id, now());
  });
  if (!row) throw notFoundMessage('404 Not found');
  return row;
}

/** Whether the user is implicitly subscribed to the issue (its author or assignee, as 8.x's participants). */
const implicitlySubscribed = (user: UserRow, issue: IssueRow) => user.id === issue.authorId || user.id === issue.assigneeId;

/** POST .../subscription: false when already subscribed (304). */
export function subscribeToIssue(ctx: AppContext, user: UserRow, issue: IssueRow): Promise<boolean> {
  return subscribe(ctx.data, user.id, 'Issue', issue.id, implicitlySubscribed(user, issue));
}

/** DELETE .../subscription: false when not subscribed (304). */
export function unsubscribeFromIssue(ctx: AppContext, user: UserRow, issue: IssueRow): Promise<boolean> {
  return unsubscribe(ctx.data, user.id, 'Issue', issue.id, implicitlySubscribed(user, issue));
}

/** POST .../todo: a `marked` todo for the caller, or null when a pending one exists (304); 404 when the issue is gone. */
export async function markIssueTodo(ctx: AppContext, user: UserRow, project: ProjectRow, issue: IssueRow): Promise<TodoRow | null> {
  return ctx.data.transaction(async (tx) => markTodo(tx, user, issuableInfo(project, await lockIssue(tx, issue)))).catch(raced);
}
