/** The merge_request_diffs table's data module: a merge request's diff versions. `q`: the database or a transaction. */
import type { Queries } from './layer/types.js';
import { validId } from './merge-requests.js';
import { toMergeRequestDiff } from './rows.js';
import type { MergeRequestDiffRow } from './schema-merge-requests.js';

type Rec = Record<string, unknown>;

/** The latest diff version of each merge request (one query), keyed by merge request id. */
export async function latestDiffs(q: Queries, mergeRequestIds: number[]): Promise<Map<number, MergeRequestDiffRow>> {
  const ids = [...new Set(mergeRequestIds)].filter(validId);
  if (ids.length === 0) return new Map();
  const rows = await q.all<Rec>(
    `SELECT d.* FROM ${q.dialect.idList('j')} CROSS JOIN merge_request_diffs d
      WHERE d.id = (SELECT MAX(x.id) FROM merge_request_diffs x WHERE x.merge_request_id = j.value)`,
    [q.dialect.ids(ids)],
  );
  return new Map(rows.map((r) => [r.merge_request_id as number, toMergeRequestDiff(r)]));
}

/**
 * The source head of each merge request's latest diff version (the presenter's `sha`), without reading the versions'
 * stored commit lists (a 5,000-commit merge request keeps 1.5 MB of them).
 */
export async function latestDiffHeads(q: Queries, mergeRequestIds: number[]): Promise<Map<number, string | null>> {
  const ids = [...new Set(mergeRequestIds)].filter(validId);
  if (ids.length === 0) return new Map();
  const rows = await q.all<{ id: number; head: string | null }>(
    `SELECT d.merge_request_id AS id, d.head_commit_sha AS head FROM ${q.dialect.idList('j')} CROSS JOIN merge_request_diffs d
     WHERE d.id = (SELECT MAX(x.id) FROM merge_request_diffs x WHERE x.merge_request_id = j.value)`,
    [q.dialect.ids(ids)],
  );
  return new Map(rows.map((r) => [r.id, r.head]));
}

/** A diff version to insert (`commits`: the JSON text of its commit list). */
export type NewMergeRequestDiff = Omit<MergeRequestDiffRow, 'id'>;

/** Insert a diff version; only its id is read back (the commits just written may be megabytes). */
export async function insertMergeRequestDiff(tx: Queries, d: NewMergeRequestDiff): Promise<number> {
  const r = await tx.get<{ id: number }>(
    `INSERT INTO merge_request_diffs (merge_request_id, state, base_commit_sha, head_commit_sha, start_commit_sha, commits, commits_count, real_size, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [d.mergeRequestId, d.state, d.baseCommitSha, d.headCommitSha, d.startCommitSha, d.commits, d.commitsCount, d.realSize, d.createdAt],
  );
  return Number(r!.id);
}

/** The diff versions of a merge request, newest first. */
export async function diffVersions(q: Queries, mergeRequestId: number): Promise<MergeRequestDiffRow[]> {
  return (await q.all<Rec>(`SELECT * FROM merge_request_diffs WHERE merge_request_id = ? ORDER BY id DESC`, [mergeRequestId])).map(toMergeRequestDiff);
}

/** One diff version of a merge request, or null (the caller keeps ids past int4 away). */
export async function diffVersion(q: Queries, mergeRequestId: number, versionId: number): Promise<MergeRequestDiffRow | null> {
  const r = await q.get<Rec>(`SELECT * FROM merge_request_diffs WHERE id = ? AND merge_request_id = ?`, [versionId, mergeRequestId]);
  return r ? toMergeRequestDiff(r) : null;
}

/** The heads and count of the latest diff version with the first `headChars` characters of its commit list, or undefined. */
export async function latestDiffHead(
  q: Queries, mergeRequestId: number, headChars: number,
): Promise<{ head: string | null; start: string | null; n: number; commits: string } | undefined> {
  return q.get<{ head: string | null; start: string | null; n: number; commits: string }>(
    `SELECT head_commit_sha AS head, start_commit_sha AS start, commits_count AS n, substr(commits, 1, ${Math.trunc(headChars)}) AS commits
     FROM merge_request_diffs WHERE merge_request_id = ? ORDER BY id DESC LIMIT 1`,
    [mergeRequestId],
  );
}

/**
 * The commit list (JSON text) of the latest diff version when it holds one of `words` (case-insensitive; plain letters
 * only: they are written into the SQL), else null: the database looks, so a list that names none is not read.
 */
export async function latestDiffCommitsHolding(q: Queries, mergeRequestId: number, words: readonly string[]): Promise<string | null> {
  const like = (w: string) => {
    if (!/^[a-z]+$/i.test(w)) throw new Error(`latestDiffCommitsHolding: not a plain word: ${w}`);
    return `d.commits ${q.dialect.ilike} '%${w}%'`;
  };
  const r = await q.get<{ commits: string | null }>(
    `SELECT CASE WHEN ${words.map(like).join(' OR ')} THEN d.commits END AS commits
     FROM merge_request_diffs d WHERE d.merge_request_id = ? ORDER BY d.id DESC LIMIT 1`,
    [mergeRequestId],
  );
  return r?.commits ?? null;
}
