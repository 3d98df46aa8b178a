/**
 * Merge request writes (GitLab 8.x MergeRequests::CreateService, UpdateService, CloseService, ReopenService): create
 * within a project or from a fork into its upstream, update, close/reopen, soft delete, subscription and todo. Git is
 * read first (branches, diff version, merge status); then ONE transaction writes the merge request with its diff
 * version, labels, system notes, event, todos and merge request hook.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { TodoRow } from '../../db/schema-collaboration.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { ApiError, badRequest, badRequestMessage, notFound, notFoundMessage, validationError } from '../../errors.js';
import { mergeRequestHookPayload, type MergeRequestHookAction } from '../../hooks/merge-requests.js';
import { canProjectAsync } from '../../policy/permissions.js';
import { recordEvent } from '../instance/events.js';
import { queueHookDeliveries } from '../hooks/deliveries.js';
import { lookupProjectAsync } from '../projects/projects.js';
import { findOrCreateLabels, setTargetLabels } from '../collaboration/labels.js';
import { findProjectMilestone } from '../collaboration/milestones.js';
import { createSystemNote } from '../collaboration/notes.js';
import { subscribe, unsubscribe } from '../collaboration/subscriptions.js';
import { stateChangeNote, titleNote } from '../collaboration/system-notes.js';
import { markTodo, markTodosDoneOnClose, todosForNewIssuable, todosForUpdatedIssuable } from '../collaboration/todos.js';
import { lockAsync } from '../collaboration/tx.js';
import { writeEnv, type WriteEnv } from '../collaboration/issues.js';
import {
  branchHead, checkMergeStatus, computeDiff, diffChanged, endsOf, insertDiff, resetMergeStatus, writeHeadRef, type ComputedDiff,
} from './diffs.js';
import { findMergeRequest, isOpen, latestDiff, mergeRequestInfo } from './find.js';
import { assigneeMilestoneLabels, assigneeOf, labelTitles } from '../collaboration/issuable-params.js';
import {
  insertMergeRequest, nextMergeRequestIid, setMergeRequestState, setMergeStatusIfUnchecked, similarMergeRequestTitles, softDeleteMergeRequest,
  updateMergeRequestColumns,
} from '../../db/merge-requests.js';

export { writeEnv, type WriteEnv };

/**
 * Keys of the merge requests' transaction locks (lockAsync: PostgreSQL advisory locks, nothing on SQLite): the iids and
 * open pairs of a target project (creates and target branch changes), and one merge request's writers.
 */
export const MR_LOCKS = { projectMergeRequests: 0x6d0101, mergeRequest: 0x6d0102 } as const;

/** The merge request row as it is now inside `tx`, with its writers serialised; null when deleted meanwhile. */
export async function lockMergeRequest(tx: Queries, id: number): Promise<MergeRequestRow | null> {
  await lockAsync(tx, MR_LOCKS.mergeRequest, id);
  return findMergeRequest(tx, id);
}

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
async function checkDuplicate(
  tx: Queries, p: { sourceProjectId: number; sourceBranch: string; targetProjectId: number; targetBranch: string }, except: number | null,
): Promise<void> {
  const similar = await similarMergeRequestTitles(tx, p, except);
  if (similar.length) {
    throw new ApiError(409, { message: [`Cannot Create: This merge request already exists: ${JSON.stringify(similar)}`] });
  }
}

/** Queue the merge request hook deliveries of a change (inside its transaction). */
export async function queueMergeRequestHook(
  ctx: AppContext, tx: Queries, env: WriteEnv, project: ProjectRow, mr: MergeRequestRow, actor: UserRow, action: MergeRequestHookAction, oldrev?: string | null,
): Promise<void> {
  await queueHookDeliveries(tx, project.id, 'merge_request', await mergeRequestHookPayload(ctx, tx, project, mr, actor, action, env.gravatar, oldrev));
}

/** A system note on the merge request by the actor. */
export async function mergeRequestNote(tx: Queries, project: ProjectRow, mr: MergeRequestRow, actor: UserRow, body: string): Promise<void> {
  if (body) await createSystemNote(tx, { projectId: project.id, noteableType: 'MergeRequest', noteableId: mr.id, authorId: actor.id, body });
}

/**
 * The target project of a create: the URL's project, or `target_project_id` naming the project's upstream (the
 * project it was forked from). An unknown or hidden target is 404; a project that is not a fork of it 422 (8.x).
 */
async function targetProjectOf(ctx: AppContext, actor: UserRow, source: ProjectRow, targetProjectId: number | undefined): Promise<ProjectRow> {
  if (targetProjectId === undefined || targetProjectId === source.id) return source;
  const target = await lookupProjectAsync(ctx, targetProjectId);
  if (!target || !(await canProjectAsync(ctx, actor, 'read_project', target))) throw notFound('Project');
  if (source.forkedFromId !== target.id) throw unprocessableList('Source project is not a fork of the target project');
  if (!(await canProjectAsync(ctx, actor, 'read_merge_request', target))) throw notFound('Project');
  return target;
}

/**
 * POST /projects/:id/merge_requests: create a merge request from `source` (the URL's project; the caller has
 * create_merge_request on it) into itself or its upstream. Branches must exist and differ; no other open merge
 * request may have the same pair (409). The diff version and merge status are computed from git first; the rows,
 * labels, event, todos and hook are one transaction.
 */
export async function createMergeRequest(
  ctx: AppContext, actor: UserRow, source: ProjectRow, p: CreateMergeRequestParams, rightsOf: (target: ProjectRow) => Promise<MergeRequestWriteRights>,
): Promise<MergeRequestRow> {
  for (const attr of ['source_branch', 'target_branch', 'title'] as const) {
    const v = p[attr];
    if (v === undefined || v.trim() === '') throw badRequest(attr);
  }
  validateText(p);
  const sourceBranch = p.source_branch!;
  const targetBranch = p.target_branch!;
  const target = await targetProjectOf(ctx, actor, source, p.target_project_id);
  if (target.id === source.id && sourceBranch === targetBranch) throw unprocessableList('You can not use same project/branch for source and target');
  const [sourceHead, targetHead] = await Promise.all([branchHead(ctx, source, sourceBranch), branchHead(ctx, target, targetBranch)]);
  const missing: Record<string, string[]> = {};
  if (!sourceHead) missing.source_branch = ['does not exist'];
  if (!targetHead) missing.target_branch = ['does not exist'];
  if (Object.keys(missing).length) throw validationError(missing);
  const ends = { targetProject: target, sourceProject: source, sourceBranch, targetBranch };
  // the diff version and its merge status from one set of heads, so the answer needs no second round of git
  const diff = await computeDiff(ctx, ends, { mergeStatus: true });
  const rights = await rightsOf(target);
  const env = await writeEnv(ctx);
  const mr = await ctx.data.transaction(async (tx) => {
    // creates into one project one at a time: the iid and the open-pair check see every earlier create
    await lockAsync(tx, MR_LOCKS.projectMergeRequests, target.id);
    await checkDuplicate(tx, { sourceProjectId: source.id, sourceBranch, targetProjectId: target.id, targetBranch }, null);
    const labelIds = rights.admin && p.labels !== undefined ? (await findOrCreateLabels(tx, target.id, labelTitles(p.labels), true)).map((l) => l.id) : [];
    const milestone = rights.admin && p.milestone_id ? await findProjectMilestone(tx, target.id, p.milestone_id) : null;
    const assigneeId = rights.admin ? await assigneeOf(tx, p.assignee_id) : undefined;
    const t = now();
    // the next iid under the project's lock (inside this transaction)
    const row = await insertMergeRequest(tx, {
      targetProjectId: target.id, iid: await nextMergeRequestIid(tx, target.id), sourceProjectId: source.id, sourceBranch, targetBranch, title: p.title!,
      description: p.description ?? null, authorId: actor.id, assigneeId: assigneeId ?? null, milestoneId: milestone?.id ?? null, createdAt: t,
    });
    if (diff) await insertDiff(tx, row.id, diff);
    if (labelIds.length) await setTargetLabels(tx, { type: 'MergeRequest', id: row.id }, labelIds);
    await recordEvent(tx, { projectId: target.id, authorId: actor.id, action: 'created', targetId: row.id, targetType: 'MergeRequest', targetTitle: row.title });
    await todosForNewIssuable(ctx, tx, actor, mergeRequestInfo(target, row), row.description);
    await queueMergeRequestHook(ctx, tx, env, target, row, actor, 'open');
    // the check of the version just stored, as checkMergeStatus would write it right after (the hook said unchecked)
    if (diff?.mergeStatus) {
      await setMergeStatusIfUnchecked(tx, row.id, diff.mergeStatus);
      return { ...row, mergeStatus: diff.mergeStatus };
    }
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
export async function changeMergeRequestStateIn(
  ctx: AppContext, tx: Queries, env: WriteEnv, actor: UserRow, project: ProjectRow, mr: MergeRequestRow, to: 'closed' | 'reopened',
  opts: { at?: string; hook?: boolean } = {},
): Promise<MergeRequestRow> {
  const t = opts.at ?? now();
  const row = await setMergeRequestState(tx, mr.id, to, to === 'closed' ? t : null, t, actor.id);
  await mergeRequestNote(tx, project, row, actor, stateChangeNote(to));
  await recordEvent(tx, { projectId: project.id, authorId: actor.id, action: to, targetId: row.id, targetType: 'MergeRequest', targetTitle: row.title });
  if (to === 'closed') await markTodosDoneOnClose(tx, actor, { type: 'MergeRequest', id: row.id });
  if (opts.hook !== false) await queueMergeRequestHook(ctx, tx, env, project, row, actor, to === 'closed' ? 'close' : 'reopen');
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
    diff = await computeDiff(ctx, { ...(await endsOf(ctx, mr, project)), targetBranch: newTarget });
  }
  const env = await writeEnv(ctx);
  const mrId = mr.id;
  const row = await ctx.data.transaction(async (tx) => {
    if (newTarget !== null) await lockAsync(tx, MR_LOCKS.projectMergeRequests, project.id);
    // the merge request as it is now (its writers serialised): deleted meanwhile is a 404
    const before = await lockMergeRequest(tx, mrId);
    if (!before) return null;
    const mr = before;
    const set: Record<string, unknown> = {};
    const notes: string[] = [];
    if (p.title !== undefined && p.title !== mr.title) {
      set.title = p.title;
      notes.push(titleNote(mr.title, p.title));
    }
    if (p.description !== undefined && p.description !== mr.description) set.description = p.description;
    if (newTarget !== null) {
      if (isOpen(mr) && mr.sourceProjectId !== null) {
        await checkDuplicate(tx, { sourceProjectId: mr.sourceProjectId, sourceBranch: mr.sourceBranch, targetProjectId: project.id, targetBranch: newTarget }, mr.id);
      }
      set.target_branch = newTarget;
      notes.push(`Target branch changed from \`${mr.targetBranch}\` to \`${newTarget}\``);
    }
    let labelsChanged = false;
    if (rights.admin) {
      const changes = await assigneeMilestoneLabels(tx, project.id, { ...mr, type: 'MergeRequest' }, p);
      Object.assign(set, changes.columns);
      notes.push(...changes.notes);
      labelsChanged = changes.labelsChanged;
    }
    const fieldsChanged = Object.keys(set).length > 0 || labelsChanged;
    const at = now();
    let out = mr;
    if (fieldsChanged) {
      // A change of labels alone sets no column of its own: updated_at and updated_by_id only.
      out = await updateMergeRequestColumns(tx, mr.id, set, at, actor.id);
    }
    if (newTarget !== null) {
      if (diff && diffChanged(await latestDiff(tx, mr.id), diff)) await insertDiff(tx, mr.id, diff);
      await resetMergeStatus(tx, mr.id);
      out = { ...out, mergeStatus: 'unchecked' };
    }
    for (const body of notes) await mergeRequestNote(tx, project, out, actor, body);
    if (fieldsChanged) {
      await todosForUpdatedIssuable(ctx, tx, actor, mergeRequestInfo(project, out), { oldAssigneeId: mr.assigneeId, oldText: mr.description, newText: out.description });
    }
    const to = p.state_event === 'close' && isOpen(out) ? 'closed' : p.state_event === 'reopen' && out.state === 'closed' ? 'reopened' : null;
    if (to) out = await changeMergeRequestStateIn(ctx, tx, env, actor, project, out, to, { at });
    if (fieldsChanged) await queueMergeRequestHook(ctx, tx, env, project, out, actor, 'update');
    return out;
  });
  if (!row) throw notFoundMessage('404 Not found');
  if (diff) await afterWrite(ctx, project, row, diff);
  return checkMergeStatus(ctx, row, project);
}

/** DELETE /projects/:id/merge_requests/:merge_request_id: soft delete (hidden everywhere, the iid stays taken); 404 when already gone. */
export async function deleteMergeRequest(ctx: AppContext, actor: UserRow, mr: MergeRequestRow): Promise<MergeRequestRow> {
  const row = await ctx.data.transaction(async (tx) => {
    // after the writers of the merge request that hold its lock (a subscription, a todo, an update) are done
    await lockAsync(tx, MR_LOCKS.mergeRequest, mr.id);
    return softDeleteMergeRequest(tx, mr.id, now(), actor.id);
  });
  if (!row) throw notFoundMessage('404 Not found');
  return row;
}

/** Whether the user is implicitly subscribed (its author or assignee, as 8.x's participants). */
const implicitlySubscribed = (user: UserRow, mr: MergeRequestRow) => user.id === mr.authorId || user.id === mr.assigneeId;

/** POST .../subscription: false when already subscribed (304); 404 when the merge request was deleted meanwhile. */
export async function subscribeToMergeRequest(ctx: AppContext, user: UserRow, mr: MergeRequestRow): Promise<boolean> {
  return liveOr404(await ctx.data.transaction(async (tx) =>
    (await lockMergeRequest(tx, mr.id)) ? subscribe(tx, user.id, 'MergeRequest', mr.id, implicitlySubscribed(user, mr)) : null));
}

/** DELETE .../subscription: false when not subscribed (304); 404 when the merge request was deleted meanwhile. */
export async function unsubscribeFromMergeRequest(ctx: AppContext, user: UserRow, mr: MergeRequestRow): Promise<boolean> {
  return liveOr404(await ctx.data.transaction(async (tx) =>
    (await lockMergeRequest(tx, mr.id)) ? unsubscribe(tx, user.id, 'MergeRequest', mr.id, implicitlySubscribed(user, mr)) : null));
}

/** POST .../todo: a `marked` todo for the caller, or null when a pending one exists (304); 404 when deleted meanwhile. */
export async function markMergeRequestTodo(ctx: AppContext, user: UserRow, project: ProjectRow, mr: MergeRequestRow): Promise<TodoRow | null> {
  const made = await ctx.data.transaction(async (tx) =>
    (await lockMergeRequest(tx, mr.id)) ? { todo: await markTodo(tx, user, mergeRequestInfo(project, mr)) } : null);
  return liveOr404(made).todo;
}

/** The answer of a write whose merge request was there, or 404 when it was deleted meanwhile. */
function liveOr404<T>(v: T | null): T {
  if (v === null) throw notFoundMessage('404 Not found');
  return v;
}
