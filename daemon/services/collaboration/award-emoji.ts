/**
 * Award emoji on issues, merge requests and notes; upvotes and downvotes.
 * OWNER: notes/award-emoji engineer. The exported signatures below are a contract used by presenters.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { AwardEmojiRow, AwardableType } from '../../db/schema-collaboration.js';
import type { UserRow } from '../../db/schema.js';
import { isEmojiName, normalizeEmojiName } from './emoji-names.js';
import type { Queries } from '../../db/layer/types.js';
import { awardOf, deleteAwardRow, insertAward } from '../../db/collaboration/award-emoji.js';
import { noteableRowLive, noteBody } from '../../db/notes.js';

import { notFoundMessage } from '../../errors.js';
import { INT_MAX, LOCKS, lockAsync } from './tx.js';
import { snippetLive } from '../projects/snippets.js';

export { countAwards, deleteAwardsOf, listAwards, voteCounts } from '../../db/collaboration/award-emoji.js';

/** What awarding needs to know about the issue, merge request, snippet or note. */
export interface Awardable {
  type: AwardableType;
  id: number;
  authorId: number | null;
}

/** One award of an awardable, or null. */
export async function findAward(q: Queries, awardable: Pick<Awardable, 'type' | 'id'>, awardId: number): Promise<AwardEmojiRow | null> {
  if (!Number.isSafeInteger(awardId) || Math.abs(awardId) > INT_MAX) return null;
  return awardOf(q, awardable, awardId);
}

/** 8.x Awardable#user_can_award?: the author of a thing may not vote (thumbsup/thumbsdown) on it. */
export function canAward(actor: UserRow, awardable: Awardable, name: string): boolean {
  const n = normalizeEmojiName(name);
  return !(awardable.authorId === actor.id && (n === 'thumbsup' || n === 'thumbsdown'));
}

/** Ruby's Hash#inspect of ActiveRecord errors, as 8.x put them into messages: `{:name=>["has already been taken"]}`. */
export function rubyErrors(errors: Record<string, string[]>): string {
  return `{${Object.entries(errors).map(([k, v]) => `:${k}=>[${v.map((m) => JSON.stringify(m)).join(', ')}]`).join(', ')}}`;
}

/** The award, or the validation errors (unknown emoji, or the same award twice) that stopped it. */
export type AwardResult = { award: AwardEmojiRow } | { errors: Record<string, string[]> };

/**
 * Whether the thing awarded is still there, inside the writing transaction (its writers serialised: an issue's lock,
 * a note's, a snippet's), so an award never outlives what it is on.
 */
export async function awardableLive(tx: Queries, awardable: Pick<Awardable, 'type' | 'id'>): Promise<boolean> {
  switch (awardable.type) {
    case 'Issue':
      await lockAsync(tx, LOCKS.issue, awardable.id);
      return noteableRowLive(tx, { type: 'Issue', id: awardable.id });
    case 'MergeRequest':
      return noteableRowLive(tx, { type: 'MergeRequest', id: awardable.id });
    case 'Note':
      await lockAsync(tx, LOCKS.note, awardable.id);
      return (await noteBody(tx, awardable.id)) !== undefined;
    case 'Snippet':
      return snippetLive(tx, awardable.id);
    default:
      return true;
  }
}

/** Award `name` in the caller's transaction (see createAward); null when the awardable is gone. */
async function createAwardIn(tx: Queries, actor: UserRow, awardable: Awardable, n: string): Promise<AwardResult | null> {
  if (!(await awardableLive(tx, awardable))) return null;
  const award = await insertAward(tx, awardable, actor.id, n, now());
  return award ? { award } : { errors: { name: ['has already been taken'] } };
}

/**
 * Award `name` (`+1` is thumbsup) to `awardable` as `actor`. Does not check canAward: the caller decides the error.
 * The same award twice (also two at once) is the `has already been taken` error; 404 `404 Not found` when the
 * awardable was deleted meanwhile.
 */
export async function createAward(ctx: AppContext, actor: UserRow, awardable: Awardable, name: string): Promise<AwardResult> {
  const n = normalizeEmojiName(name);
  if (!isEmojiName(n)) return { errors: { name: ['is not included in the list'] } };
  const r = await ctx.data.transaction((tx) => createAwardIn(tx, actor, awardable, n));
  if (!r) throw notFoundMessage('404 Not found');
  return r;
}

/** Remove an award (the route checks it is the caller's, or the caller is an admin); 404 when removed meanwhile. */
export async function removeAward(ctx: AppContext, award: AwardEmojiRow): Promise<AwardEmojiRow> {
  if (!(await deleteAwardRow(ctx.data, award.id))) throw notFoundMessage('404 Not found');
  return award;
}

const EMOJI_ONLY = /^:([a-z0-9_+-]+):\s?$/;

/** The emoji name when a note body is only a known emoji (`:+1:`, 8.x Note#award_emoji?), otherwise null. */
export function awardableBodyName(body: string): string | null {
  const m = EMOJI_ONLY.exec(body);
  return m && isEmojiName(m[1]) ? normalizeEmojiName(m[1]) : null;
}

/**
 * POST .../notes with an emoji-only body (8.x Notes::CreateService): the award when the actor may award it; null
 * when not (an author's own vote), so a plain note is written instead. A second identical award is an error.
 */
export async function awardOnCreate(ctx: AppContext, actor: UserRow, awardable: Awardable, name: string): Promise<AwardEmojiRow | null> {
  if (!canAward(actor, awardable, name)) return null;
  const r = await createAward(ctx, actor, awardable, name);
  if ('errors' in r) throw new AwardError(r.errors);
  return r.award;
}

/** A failed award (validation errors), turned into the route's 404 message. */
export class AwardError extends Error {
  constructor(public readonly errors: Record<string, string[]>) {
    super(rubyErrors(errors));
  }
}
