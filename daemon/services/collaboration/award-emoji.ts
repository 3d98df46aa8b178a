/**
 * Award emoji on issues, merge requests and notes; upvotes and downvotes.
 * OWNER: notes/award-emoji engineer. The exported signatures below are a contract used by presenters.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { awardEmoji, type AwardableType } from '../../db/schema-collaboration.js';

/** Upvotes (thumbsup) and downvotes (thumbsdown) per awardable: one query for a page. */
export function voteCounts(ctx: AppContext, type: AwardableType, ids: number[]): Map<number, { upvotes: number; downvotes: number }> {
  const out = new Map<number, { upvotes: number; downvotes: number }>();
  if (!ids.length) return out;
  const unique = [...new Set(ids)];
  for (const id of unique) out.set(id, { upvotes: 0, downvotes: 0 });
  for (let i = 0; i < unique.length; i += 500) {
    const rows = ctx.db.select({ id: awardEmoji.awardableId, name: awardEmoji.name, n: sql<number>`count(*)` }).from(awardEmoji)
      .where(and(eq(awardEmoji.awardableType, type), inArray(awardEmoji.awardableId, unique.slice(i, i + 500)),
        inArray(awardEmoji.name, ['thumbsup', 'thumbsdown'])))
      .groupBy(awardEmoji.awardableId, awardEmoji.name).all();
    for (const r of rows) {
      const c = out.get(r.id)!;
      if (r.name === 'thumbsup') c.upvotes = Number(r.n); else c.downvotes = Number(r.n);
    }
  }
  return out;
}
