/**
 * The texts of GitLab 8.x system notes (app/services/system_note_service.rb @ 8.12/8.13), so every service words
 * them alike. Clients parse these bodies (reference 2.5), so the wording is 8.13's: "Status changed to closed",
 * "Reassigned to @bob" / "Assignee removed", "Added ~1 and removed ~2 labels", "Milestone changed to %1" /
 * "Milestone removed", "Changed title: **old** → **new**", "Moved to ns/proj#11".
 * OWNER: notes/award-emoji engineer.
 */

/** A label as system notes refer to it: by id (`~12`, as 8.13's `to_reference(format: :id)`), or a ready title. */
export type LabelRef = { id: number } | string;
/** A milestone as system notes refer to it: by iid (`%3`, as 8.13's `to_reference`), or a ready title. */
export type MilestoneRef = { iid: number } | string;

/** "Status changed to closed" / "... reopened" / "... merged"; `source` (a reference like `!3` or a sha) adds " by <source>". */
export function stateChangeNote(state: 'closed' | 'reopened' | 'merged', source?: string | null): string {
  return `Status changed to ${state}${source ? ` by ${source}` : ''}`;
}

/** "Reassigned to @bob" or "Assignee removed". */
export function assigneeNote(assigneeUsername: string | null): string {
  return assigneeUsername == null ? 'Assignee removed' : `Reassigned to @${assigneeUsername}`;
}

/** `~12` for a label given by id; `~bug`, or `~"two words"` for a title that needs quotes. */
export function labelReference(label: LabelRef): string {
  if (typeof label !== 'string') return `~${label.id}`;
  if (label.startsWith('~')) return label;
  return /^[A-Za-z0-9_\-?&.]+$/.test(label) && !/^\d+$/.test(label) ? `~${label}` : `~"${label.replace(/"/g, '')}"`;
}

/** `%3` for a milestone given by iid; `%v1.0`, or `%"two words"`, for a title. */
export function milestoneReference(milestone: MilestoneRef): string {
  if (typeof milestone !== 'string') return `%${milestone.iid}`;
  if (milestone.startsWith('%')) return milestone;
  return /^[A-Za-z0-9_\-?&.]+$/.test(milestone) && !/^\d+$/.test(milestone) ? `%${milestone}` : `%"${milestone.replace(/"/g, '')}"`;
}

/**
 * "Added ~1 ~2 labels", "Removed ~3 label", "Added ~1 and removed ~2 labels" (8.13: labels by id; a title is taken
 * as given). Only the first letter is capitalized (8.13 capitalized the whole string, which was harmless for ids
 * and would lowercase titles). Empty string when nothing changed: write no note then.
 */
export function labelsNote(added: LabelRef[], removed: LabelRef[]): string {
  const count = added.length + removed.length;
  if (!count) return '';
  let body = '';
  if (added.length) {
    body += `added ${added.map(labelReference).join(' ')}`;
    if (removed.length) body += ' and ';
  }
  if (removed.length) body += `removed ${removed.map(labelReference).join(' ')}`;
  body += count === 1 ? ' label' : ' labels';
  return body.charAt(0).toUpperCase() + body.slice(1);
}

/** "Milestone changed to %3" or "Milestone removed". */
export function milestoneNote(milestone: MilestoneRef | null): string {
  return milestone == null ? 'Milestone removed' : `Milestone changed to ${milestoneReference(milestone)}`;
}

/** "Changed title: **old** → **new**" (8.13 also marked the changed characters; the plain titles are kept). */
export function titleNote(oldTitle: string, newTitle: string): string {
  return `Changed title: **${oldTitle}** → **${newTitle}**`;
}

/** "Moved to group/other#3" on the old issue, "Moved from group/project#2" on the new one. */
export function movedNote(direction: 'to' | 'from', reference: string): string {
  return `Moved ${direction} ${reference}`;
}

/** "Made the issue confidential" / "Made the issue visible". */
export function confidentialityNote(confidential: boolean): string {
  return confidential ? 'Made the issue confidential' : 'Made the issue visible';
}
