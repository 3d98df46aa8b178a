/** GET/PUT /application/settings (admin only). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { forbidden } from '../errors.js';
import { requireUser } from '../policy/authentication.js';
import { getSettings, updateSettings, type UpdateSettingsParams } from '../services/settings.js';
import { settingsEntity, SettingsSchema } from './entities/settings.js';
import { Bool, Int, Nullable } from './params.js';

/** A list param given as an array or as a comma/space separated string. */
const ListOf = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(item: T) =>
  Type.Optional(Nullable(Type.Union([Type.Array(item), Type.String()])));

const UpdateBody = Type.Object({
  default_projects_limit: Type.Optional(Int()),
  signup_enabled: Type.Optional(Bool()),
  signin_enabled: Type.Optional(Bool()),
  gravatar_enabled: Type.Optional(Bool()),
  sign_in_text: Type.Optional(Nullable(Type.String())),
  after_sign_up_text: Type.Optional(Nullable(Type.String())),
  home_page_url: Type.Optional(Nullable(Type.String())),
  default_branch_protection: Type.Optional(Int()),
  restricted_visibility_levels: ListOf(Type.Integer()),
  max_attachment_size: Type.Optional(Int()),
  session_expire_delay: Type.Optional(Int()),
  default_project_visibility: Type.Optional(Int()),
  default_snippet_visibility: Type.Optional(Int()),
  default_group_visibility: Type.Optional(Int()),
  domain_whitelist: ListOf(Type.String()),
  domain_blacklist_enabled: Type.Optional(Bool()),
  domain_blacklist: ListOf(Type.String()),
  user_oauth_applications: Type.Optional(Bool()),
  after_sign_out_path: Type.Optional(Nullable(Type.String())),
  container_registry_token_expire_delay: Type.Optional(Int()),
  repository_storage: Type.Optional(Type.String()),
  enabled_git_access_protocol: Type.Optional(Nullable(Type.String())),
});

const splitList = (v: unknown): string[] | null | undefined =>
  v === undefined ? undefined : v === null || v === '' ? null : Array.isArray(v) ? v.map(String) : String(v).split(/[\s,;]+/).filter(Boolean);

/** Registers the application settings routes. */
export default async function settingsRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const admin = (request: Parameters<typeof requireUser>[0]) => {
    if (!requireUser(request).isAdmin) throw forbidden();
  };
  api.get('/application/settings', { schema: { tags: ['settings'], response: { 200: SettingsSchema } } }, async (request) => {
    admin(request);
    return settingsEntity(ctx, getSettings(ctx));
  });
  api.put('/application/settings', { schema: { tags: ['settings'], body: UpdateBody, response: { 200: SettingsSchema } } }, async (request) => {
    admin(request);
    const body = { ...((request.body ?? {}) as Record<string, unknown>) };
    const levels = splitList(body.restricted_visibility_levels);
    const params: UpdateSettingsParams = {
      ...(body as UpdateSettingsParams),
      restricted_visibility_levels: levels === undefined ? undefined : levels === null ? null : levels.map(Number),
      domain_whitelist: splitList(body.domain_whitelist),
      domain_blacklist: splitList(body.domain_blacklist),
    };
    if (params.restricted_visibility_levels?.some((n) => !Number.isInteger(n))) {
      params.restricted_visibility_levels = [-1];
    }
    return settingsEntity(ctx, updateSettings(ctx, params));
  });
}
