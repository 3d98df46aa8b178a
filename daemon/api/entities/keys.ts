/** SSH key presenters (GitLab v3 SSHKey, SSHKeyWithUser, and the raw record a DELETE returns) and their schemas. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { UserRow } from '../../db/schema.js';
import type { KeyRow } from '../../db/schema-keys.js';
import { Nullable } from '../params.js';
import { userFullAsync, UserFullSchema } from './users.js';

/** SSHKey: id, title, key, created_at (user keys and deploy keys alike). */
export function sshKeyEntity(k: KeyRow) {
  return { id: k.id, title: k.title, key: k.key, created_at: k.createdAt };
}

/** SSHKeyWithUser: SSHKey plus its user as UserFull (null for a deploy key). */
export async function sshKeyWithUser(ctx: AppContext, k: KeyRow, user: UserRow | null) {
  return { ...sshKeyEntity(k), user: user ? await userFullAsync(ctx, user) : null };
}

/** The raw key record 8.x answered DELETE with (its database columns). */
export function keyRecord(k: KeyRow) {
  return {
    id: k.id, user_id: k.userId, created_at: k.createdAt, updated_at: k.updatedAt, key: k.key, title: k.title, type: k.type,
    fingerprint: k.fingerprint, public: false, can_push: k.canPush, last_used_at: k.lastUsedAt,
  };
}

const S = Type.String();
export const SSHKeySchema = Type.Object({ id: Type.Integer(), title: S, key: S, created_at: S });
export const SSHKeyWithUserSchema = Type.Object({ ...SSHKeySchema.properties, user: Nullable(UserFullSchema) });
export const KeyRecordSchema = Type.Object({
  id: Type.Integer(), user_id: Nullable(Type.Integer()), created_at: S, updated_at: S, key: S, title: S, type: S, fingerprint: S,
  public: Type.Boolean(), can_push: Type.Boolean(), last_used_at: Nullable(S),
});
