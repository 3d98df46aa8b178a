/** Award emoji's data module: awards of issues, merge requests, snippets and notes, and their vote counts. `q`: the database or a transaction. */
import type { Queries } from '../layer/types.js';
import { toAwardEmoji } from '../rows.js';
import type { AwardEmojiRow, AwardableType } from '../schema-collaboration.js';

/** What an award is on: its type and id. */
interface AwardableRef {
  type: AwardableType;
  id: number;
}

/** Upvotes (thumbsup) and downvotes (thumbsdown) per awardable: one query for a page. */
export async function voteCounts(q: Queries, type: AwardableType, ids: number[]): Promise<Map<number, { upvotes: number; downvotes: number }>> {
  const out = new Map<number, { upvotes: number; downvotes: number }>();
  if (!ids.length) return out;
  const unique = [...new Set(ids)];
  for (const id of unique) out.set(id, { upvotes: 0, downvotes: 0 });
  const rows = await q.all<{ id: number; name: string; n: number }>(`SELECT a.awardable_id AS id, a.name, COUNT(*) AS n FROM ${q.dialect.idList('j')} CROSS JOIN award_emoji a
    WHERE a.awardable_type = ? AND a.awardable_id = j.value AND a.name BETWEEN 'thumbsdown' AND 'thumbsup' GROUP BY a.awardable_id, a.name`,
  [q.dialect.ids(unique), type]);
  // (a range of the index, not `name IN (...)`, which SQLite answers with a temporary index: names in between are left here)
  for (const r of rows) {
    const c = out.get(r.id)!;
    if (r.name === 'thumbsup') c.upvotes = Number(r.n);
    else if (r.name === 'thumbsdown') c.downvotes = Number(r.n);
  }
  return out;
}

/** Awards of an awardable, oldest first. */
export async function listAwards(q: Queries, awardable: AwardableRef, limit: number, offset: number): Promise<AwardEmojiRow[]> {
  return (await q.all<Record<string, unknown>>(`SELECT * FROM award_emoji WHERE awardable_type = ? AND awardable_id = ? ORDER BY id LIMIT ? OFFSET ?`,
    [awardable.type, awardable.id, limit, offset])).map(toAwardEmoji);
}

/** How many awards an awardable has. */
export async function countAwards(q: Queries, awardable: AwardableRef): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM award_emoji WHERE awardable_type = ? AND awardable_id = ?`, [awardable.type, awardable.id]))!.n);
}

/** One award of an awardable (a valid row id), or null. */
export async function awardOf(q: Queries, awardable: AwardableRef, awardId: number): Promise<AwardEmojiRow | null> {
  const row = await q.get<Record<string, unknown>>(`SELECT * FROM award_emoji WHERE id = ? AND awardable_type = ? AND awardable_id = ?`,
    [awardId, awardable.type, awardable.id]);
  return row ? toAwardEmoji(row) : null;
}

/** Insert an award; the new row, or null when the user gave this award already. */
export async function insertAward(tx: Queries, awardable: AwardableRef, userId: number, name: string, at: string): Promise<AwardEmojiRow | null> {
  const row = await tx.get<Record<string, unknown>>(
    `INSERT INTO award_emoji (name, user_id, awardable_type, awardable_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (awardable_type, awardable_id, name, user_id) DO NOTHING RETURNING *`,
    [name, userId, awardable.type, awardable.id, at, at],
  );
  return row ? toAwardEmoji(row) : null;
}

/** Delete one award; false when it was gone already. */
export async function deleteAwardRow(q: Queries, id: number): Promise<boolean> {
  return (await q.run(`DELETE FROM award_emoji WHERE id = ?`, [id])).changes > 0;
}

/** Delete every award of awardables (for a deleted note, issue or merge request). */
export async function deleteAwardsOf(tx: Queries, type: AwardableType, ids: number[]): Promise<void> {
  if (ids.length) await tx.run(`DELETE FROM award_emoji WHERE awardable_type = ? AND awardable_id IN ${tx.dialect.inIds}`, [type, tx.dialect.ids(ids)]);
}

/** Copy the awards of one awardable onto another of the same type (those the copy has already are skipped). */
export async function copyAwards(tx: Queries, type: AwardableType, fromId: number, toId: number): Promise<void> {
  await tx.run(`INSERT INTO award_emoji (name, user_id, awardable_type, awardable_id, created_at, updated_at)
     SELECT name, user_id, awardable_type, ?, created_at, updated_at FROM award_emoji WHERE awardable_type = ? AND awardable_id = ?
     ON CONFLICT (awardable_type, awardable_id, name, user_id) DO NOTHING`, [toId, type, fromId]);
}
