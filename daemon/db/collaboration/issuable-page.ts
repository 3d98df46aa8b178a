/**
 * What a page of issues or merge requests counts, in one statement on either engine: each one's label titles (by
 * title), its thumbsup and thumbsdown awards, its user (non-system) notes, and the viewer's explicit subscription rows.
 * The rows labelTitlesOf and explicitSubscriptions read for one kind each, and what two more statements counted: a
 * page's list request sent four statements for them (four round trips on PostgreSQL).
 */
import type { Queries } from '../layer/types.js';

/** The counted parts of a page: each map has every id of the page (empty list, zeros) but `explicit`. */
export interface IssuablePageCounts {
  labels: Map<number, string[]>;
  votes: Map<number, { upvotes: number; downvotes: number }>;
  notes: Map<number, number>;
  /** The viewer's explicit subscription rows: id to subscribed (none without a viewer). */
  explicit: Map<number, boolean>;
}

export async function issuablePageCounts(q: Queries, type: 'Issue' | 'MergeRequest', ids: readonly number[], viewerId: number | null): Promise<IssuablePageCounts> {
  const unique = [...new Set(ids)];
  const out: IssuablePageCounts = { labels: new Map(), votes: new Map(), notes: new Map(), explicit: new Map() };
  for (const id of unique) {
    out.labels.set(id, []);
    out.votes.set(id, { upvotes: 0, downvotes: 0 });
    out.notes.set(id, 0);
  }
  if (!unique.length) return out;
  const subscriptions = viewerId === null ? '' : `
    UNION ALL SELECT 'subscription', subscribable_id, NULL, CASE WHEN subscribed THEN 1 ELSE 0 END FROM subscriptions
      WHERE user_id = ? AND subscribable_type = ? AND subscribable_id IN (SELECT id FROM page)`;
  const rows = await q.all<{ k: string; id: number; name: string | null; n: number | string }>(`WITH page(id) AS ${q.dialect.inIds}
    SELECT 'label' AS k, ll.target_id AS id, l.title AS name, 0 AS n FROM label_links ll JOIN labels l ON l.id = ll.label_id
      WHERE ll.target_type = ? AND ll.target_id IN (SELECT id FROM page)
    UNION ALL SELECT 'vote', awardable_id, name, COUNT(*) FROM award_emoji
      WHERE awardable_type = ? AND awardable_id IN (SELECT id FROM page) AND name IN ('thumbsup', 'thumbsdown') GROUP BY awardable_id, name
    UNION ALL SELECT 'notes', noteable_id, NULL, COUNT(*) FROM notes
      WHERE noteable_type = ? AND noteable_id IN (SELECT id FROM page) AND system = FALSE GROUP BY noteable_id${subscriptions}
    ORDER BY k, name`, [q.dialect.ids(unique), type, type, type, ...(viewerId === null ? [] : [viewerId, type])]);
  for (const r of rows) {
    if (r.k === 'label') out.labels.get(r.id)!.push(r.name!);
    else if (r.k === 'vote') {
      const c = out.votes.get(r.id)!;
      if (r.name === 'thumbsup') c.upvotes = Number(r.n); else c.downvotes = Number(r.n);
    } else if (r.k === 'notes') out.notes.set(r.id, Number(r.n));
    else out.explicit.set(r.id, Number(r.n) === 1);
  }
  return out;
}
