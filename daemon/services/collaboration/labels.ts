/**
 * Project labels and their links to issues and merge requests.
 * OWNER: labels/milestones engineer. The exported signatures below are a contract used by issues and merge requests.
 */
import type { AppContext } from '../../context.js';
import type { LabelRow } from '../../db/schema-collaboration.js';
import type { Target, Tx } from './tx.js';

/**
 * The project's labels with these titles (case-sensitive, as 8.x), creating the missing ones with a default color
 * when `create` (labels given on issue/MR create and update are created on the fly, as 8.x's find_or_create).
 * Blank and duplicate titles are dropped.
 */
export function findOrCreateLabels(tx: Tx, projectId: number, titles: string[], create: boolean): LabelRow[] {
  throw new Error('not implemented');
}

/** Replace the labels of a target; answers the titles added and removed (for the system note). */
export function setTargetLabels(tx: Tx, target: Target, labelIds: number[]): { added: LabelRow[]; removed: LabelRow[] } {
  throw new Error('not implemented');
}

/** Label titles of each target (sorted by title), for presenters: one query for a page. */
export function labelTitlesOf(ctx: AppContext, type: Target['type'], ids: number[]): Map<number, string[]> {
  throw new Error('not implemented');
}

/** Labels of one project with one of these titles (no creation). */
export function labelsByTitle(ctx: AppContext, projectId: number, titles: string[]): LabelRow[] {
  throw new Error('not implemented');
}
