/** Issues' data module (the reads presenters need beside the issue lists). `q`: the database or a transaction. */
import type { Queries } from './layer/types.js';
import { toIssue } from './rows.js';
import type { IssueRow } from './schema-collaboration.js';

/** The issues of `ids` that are not deleted (repeats skipped). */
export async function liveIssuesByIds(q: Queries, ids: readonly number[]): Promise<Map<number, IssueRow>> {
  const wanted = [...new Set(ids)];
  if (!wanted.length) return new Map();
  return new Map((await q.all(`SELECT * FROM issues WHERE id IN ${q.dialect.inIds} AND deleted_at IS NULL`, [q.dialect.ids(wanted)]))
    .map((r) => [r.id as number, toIssue(r)]));
}
