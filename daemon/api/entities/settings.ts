/** Application settings presenter and schema. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { ApplicationSettingsRow } from '../../db/schema.js';
import { Nullable } from '../params.js';

const list = (text: string | null) => (text ? (JSON.parse(text) as unknown[]) : null);

/** ApplicationSetting entity (GitLab 8.13 fields plus runners_registration_token). */
export function settingsEntity(ctx: AppContext, s: ApplicationSettingsRow) {
  return {
    id: s.id,
    default_projects_limit: s.defaultProjectsLimit,
    signup_enabled: s.signupEnabled,
    signin_enabled: s.signinEnabled,
    gravatar_enabled: s.gravatarEnabled,
    sign_in_text: s.signInText,
    after_sign_up_text: s.afterSignUpText,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    home_page_url: s.homePageUrl,
    default_branch_protection: s.defaultBranchProtection,
    restricted_visibility_levels: list(s.restrictedVisibilityLevels) as number[] | null,
    max_attachment_size: s.maxAttachmentSize,
    session_expire_delay: s.sessionExpireDelay,
    default_project_visibility: s.defaultProjectVisibility,
    default_snippet_visibility: s.defaultSnippetVisibility,
    default_group_visibility: s.defaultGroupVisibility,
    domain_whitelist: list(s.domainWhitelist) as string[] | null,
    domain_blacklist_enabled: s.domainBlacklistEnabled,
    domain_blacklist: list(s.domainBlacklist) as string[] | null,
    user_oauth_applications: s.userOauthApplications,
    after_sign_out_path: s.afterSignOutPath,
    container_registry_token_expire_delay: s.containerRegistryTokenExpireDelay,
    repository_storage: s.repositoryStorage,
    // Opened from the row shown (no second read of the settings: the same row, on either engine).
    runners_registration_token: ctx.secrets.open(s.runnersRegistrationToken),
  };
}

const I = Type.Integer();
const B = Type.Boolean();
const NS = Nullable(Type.String());
/** Response schema of the application settings. */
export const SettingsSchema = Type.Object({
  id: I, default_projects_limit: I, signup_enabled: B, signin_enabled: B, gravatar_enabled: B, sign_in_text: NS,
  after_sign_up_text: NS, created_at: Type.String(), updated_at: Type.String(), home_page_url: NS,
  default_branch_protection: I, restricted_visibility_levels: Nullable(Type.Array(I)), max_attachment_size: I,
  session_expire_delay: I, default_project_visibility: I, default_snippet_visibility: I, default_group_visibility: I,
  domain_whitelist: Nullable(Type.Array(Type.String())), domain_blacklist_enabled: B, domain_blacklist: Nullable(Type.Array(Type.String())),
  user_oauth_applications: B, after_sign_out_path: NS, container_registry_token_expire_delay: I, repository_storage: Type.String(),
  runners_registration_token: Type.String(),
});
