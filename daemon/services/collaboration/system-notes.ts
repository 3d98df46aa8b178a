/**
 * The texts of GitLab 8.x system notes (app/services/system_note_service.rb), so every service words them alike.
 * OWNER: notes/award-emoji engineer.
 */

/** "closed" / "reopened" / "merged" (8.x: "Status changed to closed"; 8.13 wording kept short: see decisions). */
export function stateChangeNote(state: 'closed' | 'reopened' | 'merged'): string {
  throw new Error('not implemented');
}

/** "Reassigned to @bob" or "Removed assignee". */
export function assigneeNote(assigneeUsername: string | null): string {
  throw new Error('not implemented');
}

/** "Added ~bug ~ui labels and removed ~old label" (8.x label references by title). */
export function labelsNote(added: string[], removed: string[]): string {
  throw new Error('not implemented');
}

/** "Changed milestone to %v1.0" or "Removed milestone". */
export function milestoneNote(milestoneTitle: string | null): string {
  throw new Error('not implemented');
}

/** "Changed title: **old** → **new**". */
export function titleNote(oldTitle: string, newTitle: string): string {
  throw new Error('not implemented');
}

/** "Moved to group/other#3" on the old issue, "Moved from group/project#2" on the new one. */
export function movedNote(direction: 'to' | 'from', reference: string): string {
  throw new Error('not implemented');
}
