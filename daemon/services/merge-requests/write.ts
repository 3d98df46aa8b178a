/**
 * Merge request writes (GitLab 8.x MergeRequests::CreateService, UpdateService, CloseService, ReopenService): create
 * within a project or from a fork into its upstream, update, close/reopen, soft delete, subscription and todo. Git is
 * read first (branches, diff version, merge status); then ONE transaction writes the merge request with its diff
 * version, labels, system notes, event, todos and merge request hook.
 */
import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { TodoRow } from '../../db/schema-collaboration.js';
import { mergeRequests, type MergeRequestRow } from '../../db/schema-merge-requests.js';
import { users, type ProjectRow, type UserRow } from '../../db/schema.js';
import { ApiError, badRequest, badRequestMessage, notFound, validationError } from '../../errors.js';
import { mergeRequestHookPayload, type MergeRequestHookAction } from '../../hooks/merge-requests.js';
import { canProject } from '../../policy/permissions.js';
import { recordEvent } from '../events.js';
import { queueHookDeliveries } from '../hook-deliveries.js';
import { lookupProject } from '../projects.js';
import { findOrCreateLabels, setTargetLabels } from '../collaboration/labels.js';
import { findProjectMilestone } from '../collaboration/milestones.js';
import { createSystemNote } from '../collaboration/notes.js';
import { subscribe, unsubscribe } from '../collaboration/subscriptions.js';
import { assigneeNote, labelsNote, milestoneNote, stateChangeNote, titleNote } from '../collaboration/system-notes.js';
import { markTodo, markTodosDoneOnClose, todosForNewIssuable, todosForUpdatedIssuable } from '../collaboration/todos.js';
import type { Tx } from '../collaboration/tx.js';
import {
  branchHead, checkMergeStatus, computeDiff, diffChanged, endsOf, insertDiff, resetMergeStatus, writeHeadRef, type ComputedDiff,
} from './diffs.js';
import { isOpen, latestDiff, mergeRequestInfo } from './find.js';
import { assigneeOf, labelTitles } from '../collaboration/issuable-params.js';

/** Longest merge request title (8.x: a string column). */
export const MR_TITLE_MAX = 255;
/** Longest description: a 1 MB description is refused (400), never stored half. */
export const MR_DESCRIPTION_MAX = 1_000_000;

/** Parameters of POST /projects/:id/merge_requests. */
export interface CreateMergeRequestParams {
  source_branch?: string;
  target_branch?: string;
  title?: string;
  description?: string;
  assignee_id?: number;
  milestone_id?: number;
  target_project_id?: number;
  /** Comma-separated label titles. */
  labels?: string;
}

/** Parameters of PUT /projects/:id/merge_requests/:merge_request_id. */
export interface UpdateMergeRequestParams {
  title?: string;
  description?: string;
  target_branch?: string;
  source_branch?: string;
  assignee_id?: number;
  milestone_id?: number;
  labels?: string;
  state_event?: string;
}

/** What the caller may set beyond title and description: labels, milestone and assignee need admin_merge_request. */
export interface MergeRequestWriteRights {
  admin: boolean;
}

/** 422 with 8.x's Grape `error!` body: `{"error": [message]}`. */
const unprocessableList = (message: string) => new ApiError(422, { error: [message] });

/** Validate title and description (the 8.x validation body on failure). */
function validateText(p: { title?: string; description?: string }): void {
  const errors: Record<string, string[]> = {};
  if (p.title !== undefined) {
    if (p.title.trim() === '') errors.title = ["can't be blank"];
    else if (p.title.length > MR_TITLE_MAX) errors.title = [`is too long (maximum is ${MR_TITLE_MAX} characters)`];
  }
  if (p.description !== undefined && p.description.length > MR_DESCRIPTION_MAX) {
    errors.description = [`is too long (maximum is ${MR_DESCRIPTION_MAX} characters)`];
  }
  if (Object.keys(errors).length) throw validationError(errors);
}

/** 409 when another open merge request has the same source project+branch and target project+branch (8.x validate_branches). */
function checkDuplicate(tx: Tx, p: { sourceProjectId: number; sourceBranch: string; targetProjectId: number; targetBranch: string }, except: number | null): void {
  const similar = tx.select({ title: mergeRequests.title }).from(mergeRequests).where(and(
    eq(mergeRequests.sourceProjectId, p.sourceProjectId), eq(mergeRequests.sourceBranch, p.sourceBranch),
    eq(mergeRequests.targetProjectId, p.targetProjectId), eq(mergeRequests.targetBranch, p.targetBranch),
    inArray(mergeRequests.state, ['opened', 'reopened', 'locked']), isNull(mergeRequests.deletedAt),
    except !== null ? ne(mergeRequests.id, except) : sql`1`,
  )).all();
  if (similar.length) {
    throw new ApiError(409, { message: [`Cannot Create: This merge request already exists: ${JSON.stringify(similar.map((s) => s.title))}`] });
  }
}

/** The next iid of a project's merge requests (inside the writing transaction). */
function nextIid(tx: Tx, projectId: number): number {
  const row = tx.select({ n: sql<number>`COALESCE(MAX(${mergeRequests.iid}), 0)` }).from(mergeRequests).where(eq(mergeRequests.targetProjectId, projectId)).get();
  return (row?.n ?? 0) + 1;
}

/** Queue the merge request hook deliveries of a change (inside its transaction). */
export function queueMergeRequestHook(
  ctx: AppContext, tx: Tx, project: ProjectRow, mr: MergeRequestRow, actor: UserRow, action: MergeRequestHookAction, oldrev?: string | null,
): void {
  queueHookDeliveries(tx, project.id, 'merge_request', mergeRequestHookPayload(ctx, project, mr, actor, action, oldrev));
}

/** A system note on the merge request by the actor. */
export function mergeRequestNote(tx: Tx, project: ProjectRow, mr: MergeRequestRow, actor: UserRow, body: string): void {
  if (body) createSystemNote(tx, { projectId: project.id, noteableType: 'MergeRequest', noteableId: mr.id, authorId: actor.id, body });
}

/**
 * The target project of a create: the URL's project, or `target_project_id` naming the project's upstream (the
 * project it was forked from). An unknown or hidden target is 404; a project that is not a fork of it 422 (8.x).
 */
function targetProjectOf(ctx: AppContext, actor: UserRow, source: ProjectRow, targetProjectId: number | undefined): ProjectRow {
  if (targetProjectId === undefined || targetProjectId === source.id) return source;
  const target = lookupProject(ctx, targetProjectId);
  if (!target || !canProject(ctx, actor, 'read_project', target)) throw notFound('Project');
  if (source.forkedFromId !== target.id) throw unprocessableList('Source project is not a fork of the target project');
  if (!canProject(ctx, actor, 'read_merge_request', target)) throw notFound('Project');
  return target;
}

/**
 * POST /projects/:id/merge_requests: create a merge request from `source` (the URL's project; the caller has
 * create_merge_request on it) into itself or its upstream. Branches must exist and differ; no other open merge
 * request may have the same pair (409). The diff version and merge status are computed from git first; the rows,
 * labels, event, todos and hook are one transaction.
 */
export async function createMergeRequest(
  ctx: AppContext, actor: UserRow, source: ProjectRow, p: CreateMergeRequestParams, rightsOf: (target: ProjectRow) => MergeRequestWriteRights,
): Promise<MergeRequestRow> {
  for (const attr of ['source_branch', 'target_branch', 'title'] as const) {
    const v = p[attr];
    if (v === undefined || v.trim() === '') throw badRequest(attr);
  }
  validateText(p);
  const sourceBranch = p.source_branch!;
  const targetBranch = p.target_branch!;
  const target = targetProjectOf(ctx, actor, source, p.target_project_id);
  if (target.id === source.id && sourceBranch === targetBranch) throw unprocessableList('You can not use same project/branch for source and target');
  const [sourceHead, targetHead] = await Promise.all([branchHead(ctx, source, sourceBranch), branchHead(ctx, target, targetBranch)]);
  const missing: Record<string, string[]> = {};
  if (!sourceHead) missing.source_branch = ['does not exist'];
  if (!targetHead) missing.target_branch = ['does not exist'];
  if (Object.keys(missing).length) throw validationError(missing);
  const ends = { targetProject: target, sourceProject: source, sourceBranch, targetBranch };
  const diff = await computeDiff(ctx, ends);
  const rights = rightsOf(target);
  const mr = ctx.db.transaction((tx) => {
    checkDuplicate(tx, { sourceProjectId: source.id, sourceBranch, targetProjectId: target.id, targetBranch }, null);
    const labelIds = rights.admin && p.labels !== undefined ? findOrCreateLabels(tx, target.id, labelTitles(p.labels), true).map((l) => l.id) : [];
    const milestone = rights.admin && p.milestone_id ? findProjectMilestone(ctx, target.id, p.milestone_id) : null;
    const assigneeId = rights.admin ? assigneeOf(tx, p.assignee_id) : undefined;
    const t = now();
    const row = tx.insert(mergeRequests).values({
      targetProjectId: target.id, iid: nextIid(tx, target.id), sourceProjectId: source.id, sourceBranch, targetBranch, title: p.title!,
      description: p.description ?? null, state: 'opened', mergeStatus: 'unchecked', authorId: actor.id, assigneeId: assigneeId ?? null,
      milestoneId: milestone?.id ?? null, createdAt: t, updatedAt: t,
    }).returning().get();
    if (diff) insertDiff(tx, row.id, diff);
    if (labelIds.length) setTargetLabels(tx, { type: 'MergeRequest', id: row.id }, labelIds);
    recordEvent(tx, { projectId: target.id, authorId: actor.id, action: 'created', targetId: row.id, targetType: 'MergeRequest', targetTitle: row.title });
    todosForNewIssuable(ctx, tx, actor, mergeRequestInfo(target, row), row.description);
    queueMergeRequestHook(ctx, tx, target, row, actor, 'open');
    return row;
  });
  await afterWrite(ctx, target, mr, diff);
  return checkMergeStatus(ctx, mr, target);
}

/** After a write that set a diff version: keep refs/merge-requests/<iid>/head (best effort: the database is the truth). */
async function afterWrite(ctx: AppContext, target: ProjectRow, mr: MergeRequestRow, diff: ComputedDiff | null): Promise<void> {
  try {
    await writeHeadRef(ctx, target, mr.iid, diff?.headCommitSha ?? null);
  } catch {
    /* the ref is a convenience for clients; the next refresh writes it again */
  }
}

/** Close or reopen inside a transaction: state, closed_at, system note, event, todos done, hook. */
export function changeMergeRequestStateIn(
  ctx: AppContext, tx: Tx, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, to: 'closed' | 'reopened', opts: { at?: string; hook?: boolean } = {},
): MergeRequestRow {
  const t = opts.at ?? now();
  const row = tx.update(mergeRequests).set({ state: to, closedAt: to === 'closed' ? t : null, updatedAt: t, updatedById: actor.id })
    .where(eq(mergeRequests.id, mr.id)).returning().get()!;
  mergeRequestNote(tx, project, row, actor, stateChangeNote(to));
  recordEvent(tx, { projectId: project.id, authorId: actor.id, action: to, targetId: row.id, targetType: 'MergeRequest', targetTitle: row.title });
  if (to === 'closed') markTodosDoneOnClose(tx, actor, { type: 'MergeRequest', id: row.id });
  if (opts.hook !== false) queueMergeRequestHook(ctx, tx, project, row, actor, to === 'closed' ? 'close' : 'reopen');
  return row;
}

/**
 * PUT /projects/:id/merge_requests/:merge_request_id: update the fields given, close or reopen, in one transaction
 * with a system note per change, the event of a state change, todos for a new assignee or new mentions, and the hook
 * (`close`/`reopen`, and `update` when fields changed). A new target branch must exist (400), differ from the source
 * in the same project (422) and not duplicate another open merge request (409); the diff version is recomputed and
 * the merge status checked again.
 */
export async function updateMergeRequest(
  ctx: AppContext, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, p: UpdateMergeRequestParams, rights: MergeRequestWriteRights,
): Promise<MergeRequestRow> {
  if (p.source_branch !== undefined && p.source_branch !== mr.sourceBranch) throw badRequestMessage('Source branch cannot be changed');
  validateText(p);
  if (p.state_event !== undefined && !['close', 'reopen', 'merge'].includes(p.state_event)) throw validationError({ state_event: ['is invalid'] });
  let diff: ComputedDiff | null = null;
  const newTarget = p.target_branch !== undefined && p.target_branch !== mr.targetBranch ? p.target_branch : null;
  if (newTarget !== null) {
    if (newTarget.trim() === '') throw validationError({ target_branch: ["can't be blank"] });
    if (mr.sourceProjectId === project.id && newTarget === mr.sourceBranch) throw unprocessableList('You can not use same project/branch for source and target');
    if (!(await branchHead(ctx, project, newTarget))) throw validationError({ target_branch: ['does not exist'] });
    diff = await computeDiff(ctx, { ...endsOf(ctx, mr, project), targetBranch: newTarget });
  }
  const row = ctx.db.transaction((tx) => {
    const set: Partial<MergeRequestRow> = {};
    const notes: string[] = [];
    if (p.title !== undefined && p.title !== mr.title) {
      set.title = p.title;
      notes.push(titleNote(mr.title, p.title));
    }
    if (p.description !== undefined && p.description !== mr.description) set.description = p.description;
    if (newTarget !== null) {
      if (isOpen(mr) && mr.sourceProjectId !== null) {
        checkDuplicate(tx, { sourceProjectId: mr.sourceProjectId, sourceBranch: mr.sourceBranch, targetProjectId: project.id, targetBranch: newTarget }, mr.id);
      }
      set.targetBranch = newTarget;
      notes.push(`Target branch changed from \`${mr.targetBranch}\` to \`${newTarget}\``);
    }
    if (rights.admin) {
      const assigneeId = assigneeOf(tx, p.assignee_id);
      if (assigneeId !== undefined && assigneeId !== mr.assigneeId) {
        set.assigneeId = assigneeId;
        const u = assigneeId !== null ? tx.select({ username: users.username }).from(users).where(eq(users.id, assigneeId)).get() : undefined;
        notes.push(assigneeNote(u?.username ?? null));
      }
      if (p.milestone_id !== undefined) {
        const m = p.milestone_id ? findProjectMilestone(ctx, project.id, p.milestone_id) : null;
        if ((m?.id ?? null) !== mr.milestoneId) {
          set.milestoneId = m?.id ?? null;
          notes.push(milestoneNote(m ? { iid: m.iid } : null));
        }
      }
    }
    let labelsChanged = false;
    if (rights.admin && p.labels !== undefined) {
      const wanted = findOrCreateLabels(tx, project.id, labelTitles(p.labels), true);
      const { added, removed } = setTargetLabels(tx, { type: 'MergeRequest', id: mr.id }, wanted.map((l) => l.id));
      if (added.length || removed.length) {
        labelsChanged = true;
        notes.push(labelsNote(added.map((l) => ({ id: l.id })), removed.map((l) => ({ id: l.id }))));
      }
    }
    const fieldsChanged = Object.keys(set).length > 0 || labelsChanged;
    const at = now();
    let out = mr;
    if (fieldsChanged) out = tx.update(mergeRequests).set({ ...set, updatedAt: at, updatedById: actor.id }).where(eq(mergeRequests.id, mr.id)).returning().get()!;
    if (newTarget !== null) {
      if (diff && diffChanged(latestDiff(ctx, mr.id), diff)) insertDiff(tx, mr.id, diff);
      resetMergeStatus(ctx, mr.id);
      out = { ...out, mergeStatus: 'unchecked' };
    }
    for (const body of notes) mergeRequestNote(tx, project, out, actor, body);
    if (fieldsChanged) {
      todosForUpdatedIssuable(ctx, tx, actor, mergeRequestInfo(project, out), { oldAssigneeId: mr.assigneeId, oldText: mr.description, newText: out.description });
    }
    const to = p.state_event === 'close' && isOpen(out) ? 'closed' : p.state_event === 'reopen' && out.state === 'closed' ? 'reopened' : null;
    if (to) out = changeMergeRequestStateIn(ctx, tx, actor, project, out, to, { at });
    if (fieldsChanged) queueMergeRequestHook(ctx, tx, project, out, actor, 'update');
    return out;
  });
  if (diff) await afterWrite(ctx, project, row, diff);
  return checkMergeStatus(ctx, row, project);
}

/** DELETE /projects/:id/merge_requests/:merge_request_id: soft delete (hidden everywhere, the iid stays taken). */
export function deleteMergeRequest(ctx: AppContext, actor: UserRow, mr: MergeRequestRow): MergeRequestRow {
  return ctx.db.transaction((tx) =>
    tx.update(mergeRequests).set({ deletedAt: now(), updatedById: actor.id }).where(eq(mergeRequests.id, mr.id)).returning().get()!);
}

/** Whether the user is implicitly subscribed (its author or assignee, as 8.x's participants). */
const implicitlySubscribed = (user: UserRow, mr: MergeRequestRow) => user.id === mr.authorId || user.id === mr.assigneeId;

/** POST .../subscription: false when already subscribed (304). */
export function subscribeToMergeRequest(ctx: AppContext, user: UserRow, mr: MergeRequestRow): boolean {
  return ctx.db.transaction((tx) => subscribe(tx, user.id, 'MergeRequest', mr.id, implicitlySubscribed(user, mr)));
}

/** DELETE .../subscription: false when not subscribed (304). */
export function unsubscribeFromMergeRequest(ctx: AppContext, user: UserRow, mr: MergeRequestRow): boolean {
  return ctx.db.transaction((tx) => unsubscribe(tx, user.id, 'MergeRequest', mr.id, implicitlySubscribed(user, mr)));
}

/** POST .../todo: a `marked` todo for the caller, or null when a pending one exists (304). */
export function markMergeRequestTodo(ctx: AppContext, user: UserRow, project: ProjectRow, mr: MergeRequestRow): TodoRow | null {
  return ctx.db.transaction((tx) => markTodo(ctx, tx, user, mergeRequestInfo(project, mr)));
}
