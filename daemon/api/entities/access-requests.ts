/** AccessRequester presenter (GitLab 8.13 Entities::AccessRequester: UserBasic + requested_at) and its schema. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { AccessRequestWithUser } from '../../services/projects/access-requests.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';

/** AccessRequesters of a list (the gravatar setting read once). */
export async function accessRequesterEntities(ctx: AppContext, list: AccessRequestWithUser[]) {
  if (list.length === 0) return [];
  const gravatar = await gravatarEnabledAsync(ctx);
  return list.map((r) => ({ ...userBasic(ctx, r.user, gravatar), requested_at: r.request.requestedAt }));
}

/** One AccessRequester. */
export async function accessRequesterEntity(ctx: AppContext, r: AccessRequestWithUser) {
  return (await accessRequesterEntities(ctx, [r]))[0]!;
}

/** Response schema of AccessRequester. */
export const AccessRequesterSchema = Type.Object({ ...UserBasicSchema.properties, requested_at: Type.String() });
