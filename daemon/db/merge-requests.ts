/** Merge requests' data module (the reads the hooks and presenters need). `q`: the database or a transaction. */
import type { Queries, RunResult } from './layer/types.js';
import { toMergeRequest } from './rows.js';
import type { MergeRequestRow } from './schema-merge-requests.js';
import { placeholders } from './sql.js';

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
  const rows = await q.all<Rec>(`SELECT * FROM merge_requests WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(wanted)]);
  const byId = new Map(rows.map((r) => [r.id as number, toMergeRequest(r)]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r && (opts.deleted || r.deletedAt === null) ? [r] : [];
  });
}
