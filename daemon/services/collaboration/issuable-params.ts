/** Parameters that issues and merge requests take alike (labels, assignee_id, milestone_id), and what an update with them changes. */
import { validationError } from '../../errors.js';
import type { Queries } from '../../db/layer/types.js';
import { userById } from '../../db/users.js';
import { findProjectMilestone } from './milestones.js';
import { findOrCreateLabels, setTargetLabels } from './labels.js';
import { assigneeNote, labelsNote, milestoneNote } from './system-notes.js';

/** Split a comma-separated labels param into trimmed titles (blank ones dropped). */
export function labelTitles(labels: string | undefined): string[] {
  return labels === undefined ? [] : labels.split(',').map((l) => l.trim()).filter((l) => l !== '');
}

/** The assignee id to store: 0 means none; an unknown user is a validation error. */
export async function assigneeOf(tx: Queries, id: number | undefined): Promise<number | null | undefined> {
  if (id === undefined) return undefined;
  if (id === 0) return null;
  const u = Number.isSafeInteger(id) && Math.abs(id) <= 2147483647 ? await userById(tx, id) : null;
  if (!u) throw validationError({ assignee_id: ['is invalid'] });
  return u.id;
}

/**
 * The assignee_id, milestone_id and labels of an issue's or a merge request's update (reporters and up: the caller
 * checks), inside its transaction against the row as it is there: the columns to set, the labels set at once (missing
 * ones created), and the system note of each change in 8.x's order. `labelsChanged`: the labels moved (they have no
 * column of their own, yet the row's updated_at moves with them).
 */
export async function assigneeMilestoneLabels(
  tx: Queries,
  projectId: number,
  row: { type: 'Issue' | 'MergeRequest'; id: number; assigneeId: number | null; milestoneId: number | null },
  p: { assignee_id?: number; milestone_id?: number; labels?: string },
): Promise<{ columns: { assignee_id?: number | null; milestone_id?: number | null }; notes: string[]; labelsChanged: boolean }> {
  const columns: { assignee_id?: number | null; milestone_id?: number | null } = {};
  const notes: string[] = [];
  const assigneeId = await assigneeOf(tx, p.assignee_id);
  if (assigneeId !== undefined && assigneeId !== row.assigneeId) {
    columns.assignee_id = assigneeId;
    const u = assigneeId !== null ? await userById(tx, assigneeId) : null;
    notes.push(assigneeNote(u?.username ?? null));
  }
  if (p.milestone_id !== undefined) {
    const m = p.milestone_id ? await findProjectMilestone(tx, projectId, p.milestone_id) : null;
    if ((m?.id ?? null) !== row.milestoneId) {
      columns.milestone_id = m?.id ?? null;
      notes.push(milestoneNote(m ? { iid: m.iid } : null));
    }
  }
  let labelsChanged = false;
  if (p.labels !== undefined) {
    const wanted = await findOrCreateLabels(tx, projectId, labelTitles(p.labels), true);
    const { added, removed } = await setTargetLabels(tx, { type: row.type, id: row.id }, wanted.map((l) => l.id));
    if (added.length || removed.length) {
      labelsChanged = true;
      notes.push(labelsNote(added.map((l) => ({ id: l.id })), removed.map((l) => ({ id: l.id }))));
    }
  }
  return { columns, notes, labelsChanged };
}
