/** Merge requests' data module (the reads the hooks and presenters need). `q`: the database or a transaction. */
import type { Queries, RunResult } from './layer/types.js';
import { toMergeRequest } from './rows.js';
import type { MergeRequestRow } from './schema-merge-requests.js';
import { placeholders, rowsWithIds, type SqlCondition } from './sql.js';

type Rec = Record<string, unknown>;

/** The largest id an integer column holds (PostgreSQL's int4): larger ids name nothing and never reach a query. */
export const INT_MAX = 2147483647;
export const validId = (id: number) => Number.isSafeInteger(id) && Math.abs(id) <= INT_MAX;

/** The `commits` JSON text of a merge request's latest diff (newest commit first), or null without a diff. */
export async function latestDiffCommitsJson(q: Queries, mergeRequestId: number, headChars?: number): Promise<string | null> {
  // headChars: only the first characters of the list (a diff version of 5,000 commits is over a megabyte of JSON)
  const column = headChars === undefined ? 'commits' : `substr(commits, 1, ${Math.trunc(headChars)})`;
  const row = await q.get<{ commits: string }>(`SELECT ${column} AS commits FROM merge_request_diffs WHERE merge_request_id = ? ORDER BY id DESC LIMIT 1`, [mergeRequestId]);
  return row?.commits ?? null;
}

/** The id of a project's live merge request `iid` (as its target project), or undefined. */
export async function liveMergeRequestIdByIid(q: Queries, projectId: number, iid: number): Promise<number | undefined> {
  const r = await q.get<{ id: number }>('SELECT id FROM merge_requests WHERE target_project_id = ? AND iid = ? AND deleted_at IS NULL', [projectId, iid]);
  return r ? Number(r.id) : undefined;
}

/** A live (not deleted) merge request of the target project by its global id, or null. */
export async function findProjectMergeRequest(q: Queries, projectId: number, mergeRequestId: number): Promise<MergeRequestRow | null> {
  if (!validId(mergeRequestId)) return null;
  const r = await q.get<Rec>(`SELECT * FROM merge_requests WHERE id = ? AND target_project_id = ? AND deleted_at IS NULL`, [mergeRequestId, projectId]);
  return r ? toMergeRequest(r) : null;
}

/** A live merge request by global id (any project), or null. */
export async function findMergeRequest(q: Queries, mergeRequestId: number): Promise<MergeRequestRow | null> {
  if (!validId(mergeRequestId)) return null;
  const r = await q.get<Rec>(`SELECT * FROM merge_requests WHERE id = ? AND deleted_at IS NULL`, [mergeRequestId]);
  return r ? toMergeRequest(r) : null;
}

/** Merge request rows by id (live ones), in the order of `ids` (one query). */
export async function mergeRequestsByIds(q: Queries, ids: number[], opts: { deleted?: boolean } = {}): Promise<MergeRequestRow[]> {
  const wanted = [...new Set(ids)].filter(validId);
  if (wanted.length === 0) return [];
  const rows = await rowsWithIds<Rec>(q, 'merge_requests', wanted);
  const byId = new Map(rows.map((r) => [r.id as number, toMergeRequest(r)]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r && (opts.deleted || r.deletedAt === null) ? [r] : [];
  });
}

/** A merge request row by id, deleted or not, or null. */
export async function mergeRequestById(q: Queries, id: number): Promise<MergeRequestRow | null> {
  const r = await q.get<Rec>(`SELECT * FROM merge_requests WHERE id = ?`, [id]);
  return r ? toMergeRequest(r) : null;
}

const OPEN = `state IN ('opened', 'reopened') AND deleted_at IS NULL`;

/** Open merge requests with `branch` of `projectId` as their source, by id; `autoMergeOnly`: those set to merge when the build succeeds. */
export async function openMergeRequestsFromBranch(q: Queries, projectId: number, branch: string, autoMergeOnly = false): Promise<MergeRequestRow[]> {
  return (await q.all<Rec>(
    `SELECT * FROM merge_requests WHERE source_project_id = ? AND source_branch = ?${autoMergeOnly ? ' AND merge_when_build_succeeds = TRUE' : ''} AND ${OPEN} ORDER BY id`,
    [projectId, branch])).map(toMergeRequest);
}

/** Open merge requests into `branch` of `projectId` (from another branch) with a diff version whose head is one of `heads`. */
export async function openMergeRequestsIntoBranchWithHeads(q: Queries, projectId: number, branch: string, heads: readonly string[]): Promise<MergeRequestRow[]> {
  return (await q.all<Rec>(
    `SELECT * FROM merge_requests WHERE ${OPEN} AND target_project_id = ? AND target_branch = ?
       AND NOT (source_project_id = ? AND source_branch = ?)
       AND id IN (SELECT merge_request_id FROM merge_request_diffs WHERE head_commit_sha IN (${placeholders(heads)})) ORDER BY id`,
    [projectId, branch, projectId, branch, ...heads],
  )).map(toMergeRequest);
}

/** Set the open merge requests from or into `branch` of `projectId` back to unchecked (rows already unchecked are left). */
export async function uncheckMergeRequestsOfBranch(tx: Queries, projectId: number, branch: string): Promise<void> {
  // one statement per side, each through its partial index (migration 0040): only the rows still checked are visited
  for (const side of ['source', 'target']) {
    await tx.run(
      `UPDATE merge_requests SET merge_status = 'unchecked', merge_status_version = merge_status_version + 1
       WHERE merge_status <> 'unchecked' AND ${OPEN} AND ${side}_project_id = ? AND ${side}_branch = ?`,
      [projectId, branch],
    );
  }
}

/** The merge_status_version column (migration 0020): not part of MergeRequestRow. */
export async function mergeStatusVersion(q: Queries, id: number): Promise<number> {
  const r = await q.get<{ v: number }>(`SELECT merge_status_version AS v FROM merge_requests WHERE id = ?`, [id]);
  return Number(r?.v ?? 0);
}

/** Set merge_status back to unchecked, moving its version. */
export async function uncheckMergeStatus(tx: Queries, id: number): Promise<void> {
  await tx.run(`UPDATE merge_requests SET merge_status = 'unchecked', merge_status_version = merge_status_version + 1 WHERE id = ?`, [id]);
}

/** Write a checked merge status while the row is still unchecked at `version` (a reset meanwhile wins); what changed. */
export function writeCheckedMergeStatus(q: Queries, id: number, status: string, version: number): Promise<RunResult> {
  return q.run(`UPDATE merge_requests SET merge_status = ? WHERE id = ? AND merge_status = 'unchecked' AND merge_status_version = ?`, [status, id, version]);
}

/** Take back a status written at `version` (unchecked again, the version moved) while it is still that status. */
export async function takeBackMergeStatus(q: Queries, id: number, status: string, version: number): Promise<void> {
  await q.run(`UPDATE merge_requests SET merge_status = 'unchecked', merge_status_version = merge_status_version + 1
     WHERE id = ? AND merge_status = ? AND merge_status_version = ?`, [id, status, version]);
}

/** Write a merge status while the row is unchecked (whatever its version). */
export async function setMergeStatusIfUnchecked(tx: Queries, id: number, status: string): Promise<void> {
  await tx.run(`UPDATE merge_requests SET merge_status = ? WHERE id = ? AND merge_status = 'unchecked'`, [status, id]);
}

/** The titles of the live open (or locked) merge requests with these branches, except merge request `except`, by id. */
export async function similarMergeRequestTitles(
  tx: Queries, p: { sourceProjectId: number; sourceBranch: string; targetProjectId: number; targetBranch: string }, except: number | null,
): Promise<string[]> {
  return (await tx.all<{ title: string }>(
    `SELECT title FROM merge_requests WHERE source_project_id = ? AND source_branch = ? AND target_project_id = ? AND target_branch = ?
       AND state IN ('opened', 'reopened', 'locked') AND deleted_at IS NULL AND id <> ? ORDER BY id`,
    [p.sourceProjectId, p.sourceBranch, p.targetProjectId, p.targetBranch, except ?? 0],
  )).map((r) => r.title);
}

/** The next iid of a project's merge requests (inside the writing transaction, under the project's lock). */
export async function nextMergeRequestIid(tx: Queries, projectId: number): Promise<number> {
  const row = await tx.get<{ n: number }>(`SELECT COALESCE(MAX(iid), 0) AS n FROM merge_requests WHERE target_project_id = ?`, [projectId]);
  return Number(row?.n ?? 0) + 1;
}

/** A new merge request row (opened, unchecked). */
export type NewMergeRequest = Pick<MergeRequestRow,
  'targetProjectId' | 'iid' | 'sourceProjectId' | 'sourceBranch' | 'targetBranch' | 'title' | 'description' | 'authorId' | 'assigneeId' | 'milestoneId' | 'createdAt'>;

/** Insert an opened, unchecked merge request (updated_at = created_at). */
export async function insertMergeRequest(tx: Queries, m: NewMergeRequest): Promise<MergeRequestRow> {
  return toMergeRequest((await tx.get<Rec>(
    `INSERT INTO merge_requests (target_project_id, iid, source_project_id, source_branch, target_branch, title, description, state, merge_status,
       author_id, assignee_id, milestone_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'opened', 'unchecked', ?, ?, ?, ?, ?) RETURNING *`,
    [m.targetProjectId, m.iid, m.sourceProjectId, m.sourceBranch, m.targetBranch, m.title, m.description, m.authorId, m.assigneeId,
      m.milestoneId, m.createdAt, m.createdAt],
  ))!);
}

/** Set a merge request's state (closed_at with it), updated_at and updated_by_id; the row after. */
export async function setMergeRequestState(tx: Queries, id: number, state: string, closedAt: string | null, at: string, userId: number): Promise<MergeRequestRow> {
  return toMergeRequest((await tx.get<Rec>(
    `UPDATE merge_requests SET state = ?, closed_at = ?, updated_at = ?, updated_by_id = ? WHERE id = ? RETURNING *`,
    [state, closedAt, at, userId, id],
  ))!);
}

/** Set columns (snake_case names from the caller's fixed list) with updated_at and updated_by_id; the row after. */
export async function updateMergeRequestColumns(tx: Queries, id: number, set: Record<string, unknown>, at: string, userId: number): Promise<MergeRequestRow> {
  const cols = Object.keys(set);
  return toMergeRequest((await tx.get<Rec>(
    `UPDATE merge_requests SET ${[...cols.map((c) => `${c} = ?`), 'updated_at = ?', 'updated_by_id = ?'].join(', ')} WHERE id = ? RETURNING *`,
    [...cols.map((c) => set[c]), at, userId, id],
  ))!);
}

/** Mark a live merge request deleted; the row after, or null when it was deleted already. */
export async function softDeleteMergeRequest(tx: Queries, id: number, at: string, userId: number): Promise<MergeRequestRow | null> {
  const r = await tx.get<Rec>(`UPDATE merge_requests SET deleted_at = ?, updated_by_id = ? WHERE id = ? AND deleted_at IS NULL RETURNING *`, [at, userId, id]);
  return r ? toMergeRequest(r) : null;
}

/** Set the merge when the build succeeds (merge_user_id too when `mergeUserId` is given, else kept); the row after. */
export async function setAutoMergeColumns(
  tx: Queries, id: number, s: { mergeParams: string; removeSourceBranch: boolean; at: string; mergeUserId?: number },
): Promise<MergeRequestRow> {
  const first = s.mergeUserId !== undefined;
  return toMergeRequest((await tx.get<Rec>(
    `UPDATE merge_requests SET merge_params = ?, should_remove_source_branch = ?, updated_at = ?, merge_when_build_succeeds = TRUE,
       merge_user_id = ${first ? '?' : 'merge_user_id'}
     WHERE id = ? RETURNING *`,
    [s.mergeParams, s.removeSourceBranch, s.at, ...(first ? [s.mergeUserId] : []), id],
  ))!);
}

/** Clear the merge when the build succeeds; the row after. */
export async function clearAutoMergeColumns(tx: Queries, id: number, mergeParams: string | null, at: string): Promise<MergeRequestRow> {
  return toMergeRequest((await tx.get<Rec>(
    `UPDATE merge_requests SET merge_when_build_succeeds = FALSE, merge_user_id = NULL, merge_params = ?, should_remove_source_branch = FALSE, updated_at = ?
     WHERE id = ? RETURNING *`,
    [mergeParams, at, id],
  ))!);
}

/** Record why a merge did not happen (merge_error); `whileOpen`: only while the merge request is open and live. */
export async function setMergeError(q: Queries, id: number, error: string, whileOpen: boolean): Promise<void> {
  await q.run(`UPDATE merge_requests SET merge_error = ? WHERE id = ?${whileOpen ? ` AND ${OPEN}` : ''}`, [error, id]);
}

/** Take the merge lock of an open merge request for `owner` (state locked, the candidate merge commit); whether taken. */
export async function takeMergeLock(q: Queries, id: number, owner: string, userId: number, candidate: string, at: string): Promise<boolean> {
  return (await q.run(
    `UPDATE merge_requests SET lock_state = state, state = 'locked', locked_at = ?, lock_owner = ?, lock_heartbeat_at = ?, merge_user_id = ?,
       merge_commit_sha = ?
     WHERE id = ? AND ${OPEN}`,
    [at, owner, at, userId, candidate, id],
  )).changes === 1;
}

/** Move the heartbeat of a merge lock `owner` holds. */
export async function beatMergeLock(q: Queries, id: number, owner: string, at: string): Promise<void> {
  await q.run(`UPDATE merge_requests SET lock_heartbeat_at = ? WHERE id = ? AND state = 'locked' AND lock_owner = ?`, [at, id, owner]);
}

/** Give back a merge lock `owner` holds: the state it had, `error` in merge_error. */
export async function releaseMergeLock(q: Queries, id: number, owner: string, error: string | null): Promise<void> {
  await q.run(
    `UPDATE merge_requests SET state = COALESCE(lock_state, 'opened'), lock_state = NULL, locked_at = NULL, lock_owner = NULL, lock_heartbeat_at = NULL,
       merge_commit_sha = NULL, merge_error = ?
     WHERE id = ? AND state = 'locked' AND lock_owner = ?`,
    [error, id, owner],
  );
}

/** Record the merge commit about to be published under a lock `owner` holds (its heartbeat moves too). */
export async function recordMergeCandidate(q: Queries, id: number, owner: string, sha: string, at: string): Promise<void> {
  await q.run(`UPDATE merge_requests SET merge_commit_sha = ?, lock_heartbeat_at = ? WHERE id = ? AND state = 'locked' AND lock_owner = ?`, [sha, at, id, owner]);
}

/** Mark merged a merge request whose lock `owner` still holds; the row after, or null when the lock is not theirs. */
export async function markMerged(
  tx: Queries, id: number, owner: string, m: { at: string; sha: string; userId: number; removeSourceBranch: boolean },
): Promise<MergeRequestRow | null> {
  const r = await tx.get<Rec>(
    `UPDATE merge_requests SET state = 'merged', merged_at = ?, merge_commit_sha = ?, merge_user_id = ?, merge_error = NULL,
       merge_when_build_succeeds = FALSE, should_remove_source_branch = ?, updated_at = ?, lock_state = NULL, locked_at = NULL, lock_owner = NULL,
       lock_heartbeat_at = NULL
     WHERE id = ? AND state = 'locked' AND lock_owner = ? RETURNING *`,
    [m.at, m.sha, m.userId, m.removeSourceBranch, m.at, id, owner],
  );
  return r ? toMergeRequest(r) : null;
}

/** The ids of locked merge requests whose lock's heartbeat is older than `staleBefore` (or missing), by id. */
export async function staleLockedMergeRequestIds(q: Queries, staleBefore: string): Promise<number[]> {
  return (await q.all<{ id: number }>(
    `SELECT id FROM merge_requests WHERE state = 'locked' AND (lock_heartbeat_at IS NULL OR lock_heartbeat_at < ?) ORDER BY id`, [staleBefore],
  )).map((r) => Number(r.id));
}

/** Take over a stale merge lock for `owner` (still locked, heartbeat older than `staleBefore`); whether taken. */
export async function claimStaleMergeLock(q: Queries, id: number, owner: string, staleBefore: string, at: string): Promise<boolean> {
  return (await q.run(
    `UPDATE merge_requests SET lock_owner = ?, lock_heartbeat_at = ?
     WHERE id = ? AND state = 'locked' AND (lock_heartbeat_at IS NULL OR lock_heartbeat_at < ?)`,
    [owner, at, id, staleBefore],
  )).changes === 1;
}

/** The sum of a project's merge request counts (the merge_request_counts table), of `states` or all. */
export async function countedMergeRequests(q: Queries, projectId: number, states: readonly string[] | null): Promise<number> {
  const sql = `SELECT COALESCE(SUM(n), 0) AS n FROM merge_request_counts WHERE project_id = ?${states ? ` AND state IN (${placeholders(states)})` : ''}`;
  return Number((await q.get<{ n: number }>(sql, [projectId, ...(states ?? [])]))!.n);
}

/** How many merge requests `m` meet `where` (a condition over `merge_requests m`). */
export async function countMergeRequestsWhere(q: Queries, where: string, values: readonly unknown[]): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM merge_requests m WHERE ${where}`, values))!.n);
}

/** The filters of a project's merge request list (unknown order/sort values already fell back to the defaults). */
export interface MergeRequestListFilter {
  projectId: number;
  /** opened (opened and reopened), closed, merged; anything else lists every state (8.x). */
  state?: string;
  iids?: number[];
  orderBy?: 'created_at' | 'updated_at';
  sort?: 'asc' | 'desc';
}

/** The condition over `merge_requests m` of a project list's filter, with its values. */
export function mergeRequestListWhere(f: MergeRequestListFilter): { where: string; values: unknown[] } {
  const parts = ['m.target_project_id = ?', 'm.deleted_at IS NULL'];
  const values: unknown[] = [f.projectId];
  if (f.state === 'opened') parts.push(`m.state IN ('opened', 'reopened')`);
  else if (f.state === 'closed' || f.state === 'merged') {
    parts.push('m.state = ?');
    values.push(f.state);
  }
  if (f.iids && f.iids.length) {
    // an iid beyond the integer column names nothing (and must not reach PostgreSQL's int4 comparison)
    const iids = f.iids.filter((n) => Number.isSafeInteger(n) && Math.abs(n) <= 2147483647);
    if (iids.length) {
      parts.push(`m.iid IN (${placeholders(iids)})`);
      values.push(...iids);
    } else parts.push('1 = 0');
  }
  return { where: parts.join(' AND '), values };
}

/** The states a state filter counts (opened lists reopened ones too; no filter: every state, `locked` included). */
export function mergeRequestStatesOf(state: string | undefined): string[] | null {
  if (state === 'opened') return ['opened', 'reopened'];
  if (state === 'closed' || state === 'merged') return [state];
  return null;
}

/** The condition over `merge_requests m` of a user's live merge requests (as assignee or author) in `projects` (a condition over project ids from policy/). */
export function userMergeRequestsWhere(
  role: 'assignee' | 'author', userId: number, states: readonly string[] | null, projects: SqlCondition,
): { where: string; values: unknown[] } {
  const parts = [`m.${role === 'assignee' ? 'assignee_id' : 'author_id'} = ?`, 'm.deleted_at IS NULL', `m.target_project_id IN (${projects.sql})`];
  const values: unknown[] = [userId, ...projects.args];
  if (states) {
    parts.push(`m.state IN (${placeholders(states)})`);
    values.push(...states);
  }
  return { where: parts.join(' AND '), values };
}
