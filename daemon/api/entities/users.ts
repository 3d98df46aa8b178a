/** User presenters (GitLab v3 UserBasic, User, UserFull, UserLogin) and their response schemas. */
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { statement } from '../../db/statements.js';
import type { PersonalAccessTokenRow, UserRow } from '../../db/schema.js';
import { getSettings } from '../../services/settings.js';
import { tokenActive } from '../../services/users.js';
import { Nullable } from '../params.js';

/** The avatar URL of a user: Gravatar when enabled, otherwise null. */
export function avatarUrl(ctx: AppContext, user: Pick<UserRow, 'email'>): string | null {
  if (!getSettings(ctx).gravatarEnabled) return null;
  const md5 = createHash('md5').update(user.email.trim().toLowerCase()).digest('hex');
  return `https://www.gravatar.com/avatar/${md5}?s=80&d=identicon`;
}

/** UserBasic: id, name, username, state, avatar_url, web_url. */
export function userBasic(ctx: AppContext, u: UserRow) {
  return {
    name: u.name,
    username: u.username,
    id: u.id,
    state: u.state,
    avatar_url: avatarUrl(ctx, u),
    web_url: `${ctx.externalUrl()}/${u.username}`,
  };
}

/** User: UserBasic plus profile fields. */
export function userEntity(ctx: AppContext, u: UserRow) {
  return {
    ...userBasic(ctx, u),
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

/** UserFull: User plus account fields (the user themself and admins). */
export function userFull(ctx: AppContext, u: UserRow) {
  const personal = statement(ctx,`SELECT COUNT(*) AS n FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.kind = 'user' AND n.owner_id = ?`)
    .get(u.id) as { n: number };
  return {
    ...userEntity(ctx, u),
    last_sign_in_at: u.lastSignInAt,
    confirmed_at: u.confirmedAt,
    email: u.email,
    theme_id: 1,
    color_scheme_id: 1,
    projects_limit: u.projectsLimit,
    current_sign_in_at: u.currentSignInAt,
    identities: [] as { provider: string; extern_uid: string }[],
    can_create_group: u.canCreateGroup,
    can_create_project: u.projectsLimit - personal.n > 0,
    two_factor_enabled: false,
    external: u.external,
  };
}

/** UserLogin: UserFull plus the private token (POST /session only). */
export function userLogin(ctx: AppContext, u: UserRow) {
  return { ...userFull(ctx, u), private_token: ctx.secrets.derive('private', u.privateTokenSalt) };
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
