/**
 * Project milestones.
 * OWNER: labels/milestones engineer. The exported signatures below are a contract used by issues and merge requests.
 */
import type { AppContext } from '../../context.js';
import type { MilestoneRow } from '../../db/schema-collaboration.js';

/** A milestone of the project by id, or null. */
export function findProjectMilestone(ctx: AppContext, projectId: number, milestoneId: number): MilestoneRow | null {
  throw new Error('not implemented');
}

/** A milestone of the project by title, or null (issue move assigns the same-titled milestone in the target). */
export function findMilestoneByTitle(ctx: AppContext, projectId: number, title: string): MilestoneRow | null {
  throw new Error('not implemented');
}

/** Milestones by id, for presenters (one query for a page). */
export function milestonesById(ctx: AppContext, ids: number[]): Map<number, MilestoneRow> {
  throw new Error('not implemented');
}
