/** Application settings: one row, cached in memory, validated on update. */
import { eq } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { applicationSettings, type ApplicationSettingsRow } from '../db/schema.js';
import { validationError } from '../errors.js';
import { randomToken } from '../secrets.js';

const cache = new WeakMap<AppContext, ApplicationSettingsRow>();

/** Create the settings row on first start (with the instance runner registration token) and keep it in sync. */
export function ensureSettings(ctx: AppContext): void {
  const existing = ctx.db.select().from(applicationSettings).where(eq(applicationSettings.id, 1)).get();
  const token = ctx.config.runnersToken;
  if (!existing) {
    const t = now();
    ctx.db
      .insert(applicationSettings)
      .values({
        id: 1, defaultProjectsLimit: 10, signupEnabled: true, signinEnabled: true, gravatarEnabled: true,
        defaultBranchProtection: 2, maxAttachmentSize: 10, sessionExpireDelay: 10080, defaultProjectVisibility: 0,
        defaultSnippetVisibility: 0, defaultGroupVisibility: 0, domainBlacklistEnabled: false, userOauthApplications: true,
        containerRegistryTokenExpireDelay: 5, repositoryStorage: 'default',
        runnersRegistrationToken: ctx.secrets.seal(token ?? randomToken()), createdAt: t, updatedAt: t,
      })
      .run();
  } else if (token && ctx.secrets.open(existing.runnersRegistrationToken) !== token) {
    ctx.db.update(applicationSettings).set({ runnersRegistrationToken: ctx.secrets.seal(token) }).where(eq(applicationSettings.id, 1)).run();
  }
  cache.delete(ctx);
}

/** The current settings (cached). */
export function getSettings(ctx: AppContext): ApplicationSettingsRow {
  let row = cache.get(ctx);
  if (!row) {
    row = ctx.db.select().from(applicationSettings).where(eq(applicationSettings.id, 1)).get();
    if (!row) throw new Error('application settings missing');
    cache.set(ctx, row);
  }
  return row;
}

/** The instance-wide runner registration token in plain text. */
export function runnersRegistrationToken(ctx: AppContext): string {
  return ctx.secrets.open(getSettings(ctx).runnersRegistrationToken);
}

/** Parameters of PUT /application/settings (all optional). */
export interface UpdateSettingsParams {
  default_projects_limit?: number;
  signup_enabled?: boolean;
  signin_enabled?: boolean;
  gravatar_enabled?: boolean;
  sign_in_text?: string | null;
  after_sign_up_text?: string | null;
  home_page_url?: string | null;
  default_branch_protection?: number;
  restricted_visibility_levels?: number[] | null;
  max_attachment_size?: number;
  session_expire_delay?: number;
  default_project_visibility?: number;
  default_snippet_visibility?: number;
  default_group_visibility?: number;
  domain_whitelist?: string[] | null;
  domain_blacklist_enabled?: boolean;
  domain_blacklist?: string[] | null;
  user_oauth_applications?: boolean;
  after_sign_out_path?: string | null;
  container_registry_token_expire_delay?: number;
  repository_storage?: string;
  enabled_git_access_protocol?: string | null;
}

const LEVELS = [0, 10, 20];
/** GitLab 8.x accepted 0/1/2 in docs and 0/10/20 in practice for visibility settings; accept both and store 0/10/20. */
const visibilityOf = (v: number) => (v === 1 ? 10 : v === 2 ? 20 : v);

/** Validate and apply a settings update; 400 with the validation hash on any invalid field, changing nothing. */
export function updateSettings(ctx: AppContext, p: UpdateSettingsParams): ApplicationSettingsRow {
  const errors: Record<string, string[]> = {};
  const err = (k: string, m: string) => (errors[k] ??= []).push(m);
  const set: Partial<ApplicationSettingsRow> = {};
  const intField = (k: keyof UpdateSettingsParams, col: keyof ApplicationSettingsRow, min: number) => {
    const v = p[k];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) err(k, `must be greater than or equal to ${min}`);
    else (set as Record<string, unknown>)[col] = v;
  };
  intField('default_projects_limit', 'defaultProjectsLimit', 0);
  intField('max_attachment_size', 'maxAttachmentSize', 1);
  intField('session_expire_delay', 'sessionExpireDelay', 0);
  intField('container_registry_token_expire_delay', 'containerRegistryTokenExpireDelay', 1);
  if (p.default_branch_protection !== undefined) {
    if (![0, 1, 2].includes(p.default_branch_protection)) err('default_branch_protection', 'is not included in the list');
    else set.defaultBranchProtection = p.default_branch_protection;
  }
  for (const [k, col] of [
    ['default_project_visibility', 'defaultProjectVisibility'],
    ['default_snippet_visibility', 'defaultSnippetVisibility'],
    ['default_group_visibility', 'defaultGroupVisibility'],
  ] as const) {
    const v = p[k];
    if (v === undefined) continue;
    const level = visibilityOf(v);
    if (!LEVELS.includes(level)) err(k, 'is not included in the list');
    else set[col] = level;
  }
  if (p.restricted_visibility_levels !== undefined) {
    const levels = p.restricted_visibility_levels?.map(visibilityOf) ?? null;
    if (levels && levels.some((l) => !LEVELS.includes(l))) err('restricted_visibility_levels', 'is not included in the list');
    else set.restrictedVisibilityLevels = levels ? JSON.stringify([...new Set(levels)]) : null;
  }
  for (const [k, col] of [['domain_whitelist', 'domainWhitelist'], ['domain_blacklist', 'domainBlacklist']] as const) {
    const v = p[k];
    if (v === undefined) continue;
    const list = v?.flatMap((d) => d.split(/[\s,;]+/)).map((d) => d.trim()).filter(Boolean) ?? null;
    if (list && list.some((d) => !/^[*a-z0-9.-]+$/i.test(d))) err(k, 'contains an invalid domain');
    else set[col] = list ? JSON.stringify(list) : null;
  }
  for (const [k, col] of [
    ['signup_enabled', 'signupEnabled'], ['signin_enabled', 'signinEnabled'], ['gravatar_enabled', 'gravatarEnabled'],
    ['domain_blacklist_enabled', 'domainBlacklistEnabled'], ['user_oauth_applications', 'userOauthApplications'],
  ] as const) {
    if (p[k] !== undefined) set[col] = p[k];
  }
  for (const [k, col] of [
    ['sign_in_text', 'signInText'], ['after_sign_up_text', 'afterSignUpText'], ['after_sign_out_path', 'afterSignOutPath'],
  ] as const) {
    if (p[k] !== undefined) set[col] = p[k] || null;
  }
  if (p.home_page_url !== undefined) {
    if (p.home_page_url && !/^https?:\/\/\S+$/.test(p.home_page_url)) err('home_page_url', 'is not a valid URL');
    else set.homePageUrl = p.home_page_url || null;
  }
  if (p.repository_storage !== undefined) {
    if (p.repository_storage !== 'default') err('repository_storage', 'is not included in the list of configured storages (default)');
    else set.repositoryStorage = p.repository_storage;
  }
  if (p.enabled_git_access_protocol !== undefined) {
    const v = p.enabled_git_access_protocol || null;
    if (v !== null && !['ssh', 'http'].includes(v)) err('enabled_git_access_protocol', 'is not included in the list');
    else set.enabledGitAccessProtocol = v;
  }
  const current = getSettings(ctx);
  const blacklistOn = set.domainBlacklistEnabled ?? current.domainBlacklistEnabled;
  const blacklist = set.domainBlacklist !== undefined ? set.domainBlacklist : current.domainBlacklist;
  if (blacklistOn && (!blacklist || JSON.parse(blacklist).length === 0)) err('domain_blacklist', "can't be blank when the blacklist is enabled");
  if (Object.keys(errors).length > 0) throw validationError(errors);

  set.updatedAt = now();
  ctx.db.update(applicationSettings).set(set).where(eq(applicationSettings.id, 1)).run();
  cache.delete(ctx);
  return getSettings(ctx);
}
