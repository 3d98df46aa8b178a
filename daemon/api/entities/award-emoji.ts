/** AwardEmoji presenter (GitLab v3 AwardEmoji, 8.9+), batched: one query for the users of a page. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { AwardEmojiRow } from '../../db/schema-collaboration.js';
import type { UserRow } from '../../db/schema.js';
import { usersByIds } from '../../db/users.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';

/** Present a page of awards: id, name, user, created_at, updated_at, awardable_id, awardable_type. */
export async function presentAwards(ctx: AppContext, rows: AwardEmojiRow[]) {
  return awardEntities(ctx, rows, await usersByIds(ctx.data, rows.map((r) => r.userId)), await gravatarEnabledAsync(ctx));
}

/** Present one award. */
export async function presentAward(ctx: AppContext, row: AwardEmojiRow) {
  return (await presentAwards(ctx, [row]))[0]!;
}

function awardEntities(ctx: AppContext, rows: AwardEmojiRow[], users: Map<number, UserRow>, gravatar: boolean) {
  return rows.map((a) => {
    const u = users.get(a.userId);
    return {
      id: a.id,
      name: a.name,
      user: u ? userBasic(ctx, u, gravatar) : { name: 'Ghost User', username: 'ghost', id: 0, state: 'active', avatar_url: null, web_url: `${ctx.externalUrl()}/ghost` },
      created_at: a.createdAt,
      updated_at: a.updatedAt,
      awardable_id: a.awardableId,
      awardable_type: a.awardableType,
    };
  });
}

const S = Type.String();
/** Response schema of AwardEmoji. */
export const AwardEmojiSchema = Type.Object({
  id: Type.Integer(), name: S, user: UserBasicSchema, created_at: S, updated_at: S, awardable_id: Type.Integer(), awardable_type: S,
});
