/** Member presenter (GitLab v3 Member: UserBasic + access_level + expires_at) and its response schema. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { MemberRow, UserRow } from '../../db/schema.js';
import { Nullable } from '../params.js';
import { userBasic, UserBasicSchema } from './users.js';

/** Member: the user's UserBasic fields plus access_level and expires_at (YYYY-MM-DD or null). */
export function memberEntity(ctx: AppContext, member: Pick<MemberRow, 'accessLevel' | 'expiresAt'>, user: UserRow) {
  return { ...userBasic(ctx, user), access_level: member.accessLevel, expires_at: member.expiresAt };
}

/** Response schema of Member. */
export const MemberSchema = Type.Object({
  ...UserBasicSchema.properties,
  access_level: Type.Integer(),
  expires_at: Nullable(Type.String()),
});
