/**
 * Award emoji on issues, merge requests and notes; upvotes and downvotes.
 * OWNER: notes/award-emoji engineer. The exported signatures below are a contract used by presenters.
 */
import type { AppContext } from '../../context.js';
import type { AwardableType } from '../../db/schema-collaboration.js';

/** Upvotes (thumbsup) and downvotes (thumbsdown) per awardable: one query for a page. */
export function voteCounts(ctx: AppContext, type: AwardableType, ids: number[]): Map<number, { upvotes: number; downvotes: number }> {
  throw new Error('not implemented');
}
