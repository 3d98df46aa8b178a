/** User presenters (GitLab v3 UserBasic, User, UserFull, UserLogin) and their response schemas. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { PersonalAccessTokenRow, UserRow } from '../../db/schema.js';
import { personalProjectCount, personalProjectCounts } from '../../db/users.js';
import { avatarUrl, userWebUrl } from '../../web-urls.js';
import { gravatarEnabledAsync } from '../../services/instance/settings.js';
import { tokenActive } from '../../services/users/users.js';
import { Nullable } from '../params.js';

export { gravatarEnabledAsync };

/** UserBasic: id, name, username, state, avatar_url, web_url. `gravatar`: see avatarUrl. */
export function userBasic(ctx: AppContext, u: UserRow, gravatar: boolean) {
  return {
    name: u.name,
    username: u.username,
    id: u.id,
    state: u.state,
    avatar_url: avatarUrl(u, gravatar),
    web_url: userWebUrl(ctx, u.username),
  };
}

/** User: UserBasic plus profile fields. `gravatar`: see avatarUrl. */
export function userEntity(ctx: AppContext, u: UserRow, gravatar: boolean) {
  return {
    ...userBasic(ctx, u, gravatar),
    created_at: u.createdAt,
    is_admin: u.isAdmin,
    bio: u.bio,
    location: u.location,
    skype: u.skype,
    linkedin: u.linkedin,
    twitter: u.twitter,
    website_url: u.websiteUrl,
    organization: u.organization,
  };
}

/**
 * UserFull: User plus account fields (the user themself and admins), given `personalProjects` (the number of projects
 * in the user's namespace, for can_create_project) and `gravatar`, which userFullAsync / userFulls read.
 */
function userFull(ctx: AppContext, u: UserRow, gravatar: boolean, personalProjects: number) {
  return {
    ...userEntity(ctx, u, gravatar),
    last_sign_in_at: u.lastSignInAt,
    confirmed_at: u.confirmedAt,
    email: u.email,
    theme_id: 1,
    color_scheme_id: 1,
    projects_limit: u.projectsLimit,
    current_sign_in_at: u.currentSignInAt,
    identities: [] as { provider: string; extern_uid: string }[],
    can_create_group: u.canCreateGroup,
    can_create_project: u.projectsLimit - personalProjects > 0,
    two_factor_enabled: false,
    external: u.external,
  };
}

/** userFull on the data layer: one statement (the personal projects' count); `gravatar` read when not given. */
export async function userFullAsync(ctx: AppContext, u: UserRow, gravatar?: boolean) {
  // Both at once: on PostgreSQL two round trips overlap (on SQLite the settings are cached).
  const [g, n] = await Promise.all([gravatar ?? gravatarEnabledAsync(ctx), personalProjectCount(ctx.data, u.id)]);
  return userFull(ctx, u, g, n);
}

/** userFull of several users on the data layer: one statement for all their personal projects' counts. */
export async function userFulls(ctx: AppContext, list: readonly UserRow[], gravatar: boolean) {
  if (!list.length) return [];
  const counts = await personalProjectCounts(ctx.data, list.map((u) => u.id));
  return list.map((u) => userFull(ctx, u, gravatar, counts.get(u.id) ?? 0));
}

/** UserLogin: UserFull plus the private token (POST /session only). */
export async function userLogin(ctx: AppContext, u: UserRow) {
  return { ...(await userFullAsync(ctx, u)), private_token: ctx.secrets.derive('private', u.privateTokenSalt) };
}

const S = Type.String();
const NS = Nullable(Type.String());
/** Response schema of UserBasic. */
export const UserBasicSchema = Type.Object({
  name: S, username: S, id: Type.Integer(), state: S, avatar_url: NS, web_url: S,
});
/** Response schema of User. */
export const UserSchema = Type.Object({
  ...UserBasicSchema.properties,
  created_at: S, is_admin: Type.Boolean(), bio: NS, location: NS, skype: S, linkedin: S, twitter: S, website_url: S, organization: NS,
});
/** Response schema of UserFull. */
export const UserFullSchema = Type.Object({
  ...UserSchema.properties,
  last_sign_in_at: NS, confirmed_at: NS, email: S, theme_id: Type.Integer(), color_scheme_id: Type.Integer(),
  projects_limit: Type.Integer(), current_sign_in_at: NS,
  identities: Type.Array(Type.Object({ provider: S, extern_uid: S })),
  can_create_group: Type.Boolean(), can_create_project: Type.Boolean(), two_factor_enabled: Type.Boolean(), external: Type.Boolean(),
});
/** Response schema of UserLogin. */
export const UserLoginSchema = Type.Object({ ...UserFullSchema.properties, private_token: S });

/** PersonalAccessToken (GitLab 9.x shape): never carries the secret; `active` is false once revoked or expired. */
export function personalAccessTokenEntity(t: PersonalAccessTokenRow) {
  return {
    id: t.id, name: t.name, revoked: t.revoked, created_at: t.createdAt, scopes: ['api'], user_id: t.userId,
    active: tokenActive(t), expires_at: t.expiresAt,
  };
}

/** Response schema of a personal access token (without the secret). */
export const PersonalAccessTokenSchema = Type.Object({
  id: Type.Integer(), name: S, revoked: Type.Boolean(), created_at: S, scopes: Type.Array(S), user_id: Type.Integer(),
  active: Type.Boolean(), expires_at: NS,
});
/** Response schema of a just-created personal access token: the only response that carries `token`. */
export const PersonalAccessTokenWithTokenSchema = Type.Object({ ...PersonalAccessTokenSchema.properties, token: S });
