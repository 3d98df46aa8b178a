/** GET/PUT /application/settings (admin only). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { adminOnly } from '../policy/authentication.js';
import { getSettings, updateSettings, type SettingsInput } from '../services/instance/settings.js';
import { settingsEntity, SettingsSchema } from './entities/settings.js';
import { Bool, Int, Nullable } from './params.js';

/** A list param given as an array or as a comma-separated string. */
const ListOf = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(item: T, description: string) =>
  Type.Optional(Nullable(Type.Union([Type.Array(item), Type.String()], { description })));
const Visibility = (what: string) => Type.Optional(Int({ description: `default visibility of new ${what}: 0, 10 or 20 (0, 1, 2 and private/internal/public are accepted)` }));
const Text = (description: string) => Type.Optional(Nullable(Type.String({ description })));

/** The body of PUT /application/settings. It documents the types; updateSettings() does the checking (see below). */
const UpdateBody = Type.Object({
  default_projects_limit: Type.Optional(Int({ description: 'projects a new user may create (default 10), at least 0' })),
  signup_enabled: Type.Optional(Bool()),
  signin_enabled: Type.Optional(Bool()),
  gravatar_enabled: Type.Optional(Bool()),
  sign_in_text: Text('text on the sign-in page'),
  after_sign_up_text: Text('text shown after sign-up'),
  home_page_url: Text('http(s) URL to redirect to instead of the sign-in page'),
  default_branch_protection: Type.Optional(Int({ description: '0 not protected, 1 developers can push, 2 developers cannot push (default 2)' })),
  restricted_visibility_levels: ListOf(Type.Integer(), 'visibility levels (0, 10, 20) only admins may use; null means none'),
  max_attachment_size: Type.Optional(Int({ description: 'MB, at least 1' })),
  max_artifacts_size: Type.Optional(Int({ description: 'MB, at least 1: runner artifacts must be smaller (not shown by GET, as in 8.x)' })),
  session_expire_delay: Type.Optional(Int({ description: 'minutes, at least 0' })),
  default_project_visibility: Visibility('projects'),
  default_snippet_visibility: Visibility('snippets'),
  default_group_visibility: Visibility('groups'),
  domain_whitelist: ListOf(Type.String(), 'sign-up domains allowed; null means any'),
  domain_blacklist_enabled: Type.Optional(Bool()),
  domain_blacklist: ListOf(Type.String(), 'sign-up domains refused; required while the blacklist is enabled'),
  user_oauth_applications: Type.Optional(Bool()),
  after_sign_out_path: Text('http(s) URL to go to after sign-out'),
  container_registry_token_expire_delay: Type.Optional(Int({ description: 'minutes, at least 1' })),
  repository_storage: Type.Optional(Type.String({ description: 'name of a configured storage: default' })),
  enabled_git_access_protocol: Text('ssh, http, or null for both'),
});

/** Registers the application settings routes. */
export default async function settingsRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  api.get('/application/settings', {
    preValidation: adminOnly,
    schema: { tags: ['settings'], summary: 'Application settings (admin)', response: { 200: SettingsSchema } },
  }, async () => settingsEntity(ctx, await getSettings(ctx)));

  api.put('/application/settings', {
    preValidation: adminOnly,
    // The schema documents the body, but the body is not validated or coerced by it: a wrong value must answer
    // the validation hash `{message: {field: [...]}}` naming every bad field, which updateSettings() builds.
    validatorCompiler: () => () => true,
    schema: { tags: ['settings'], summary: 'Change application settings (admin); nothing changes if any field is invalid', body: UpdateBody, response: { 200: SettingsSchema } },
  }, async (request) => {
    const body = request.body && typeof request.body === 'object' && !Buffer.isBuffer(request.body) ? (request.body as Record<string, unknown>) : {};
    const input: SettingsInput = Object.fromEntries(Object.keys(UpdateBody.properties).filter((k) => k in body).map((k) => [k, body[k]]));
    return settingsEntity(ctx, await updateSettings(ctx, input));
  });
}
