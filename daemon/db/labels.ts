/** Labels' data module: the labels attached to an issue or a merge request. `q`: the database or a transaction. */
import type { Queries } from './layer/types.js';
import { toLabel } from './rows.js';
import type { LabelRow } from './schema-collaboration.js';

/** The labels of one issue or merge request, by title. */
export async function labelsOfTarget(q: Queries, targetType: 'Issue' | 'MergeRequest', targetId: number): Promise<LabelRow[]> {
  return (await q.all(
    `SELECT l.* FROM labels l JOIN label_links ll ON ll.label_id = l.id WHERE ll.target_type = ? AND ll.target_id = ? ORDER BY l.title`,
    [targetType, targetId],
  )).map(toLabel);
}
