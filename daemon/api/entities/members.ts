/** Member presenter (GitLab v3 Member: UserBasic + access_level + expires_at) and its response schema. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { MemberRow, UserRow } from '../../db/schema.js';
import { Nullable } from '../params.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';

type MemberFields = Pick<MemberRow, 'accessLevel' | 'expiresAt'>;

/** A Member given the gravatar setting (see avatarUrl). */
function memberWith(ctx: AppContext, member: MemberFields, user: UserRow, gravatar: boolean) {
  return { ...userBasic(ctx, user, gravatar), access_level: member.accessLevel, expires_at: member.expiresAt };
}

/** Member: the user's UserBasic fields plus access_level and expires_at (YYYY-MM-DD or null). */
export async function memberEntity(ctx: AppContext, member: MemberFields, user: UserRow) {
  return memberWith(ctx, member, user, await gravatarEnabledAsync(ctx));
}

/** Members of a list (the gravatar setting read once). */
export async function memberEntities(ctx: AppContext, list: { member: MemberFields; user: UserRow }[]) {
  if (list.length === 0) return [];
  const gravatar = await gravatarEnabledAsync(ctx);
  return list.map((m) => memberWith(ctx, m.member, m.user, gravatar));
}

/** Response schema of Member. */
export const MemberSchema = Type.Object({
  ...UserBasicSchema.properties,
  access_level: Type.Integer(),
  expires_at: Nullable(Type.String()),
});
