/**
 * Application settings: one row, validated on update, read through the data layer (ctx.data) on either engine: cached
 * in memory on SQLite (one process writes the row), read every time on PostgreSQL (another daemon may have changed it).
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { ApplicationSettingsRow } from '../../db/schema.js';
import { insertSettingsRow, settingsRow, updateSettingsRow } from '../../db/settings.js';
import type { Queries } from '../../db/layer/types.js';
import { validationError } from '../../errors.js';
import { randomToken } from '../../secrets.js';
import { normalizeBoolean } from '../../param-values.js';

const cache = new WeakMap<AppContext, ApplicationSettingsRow>();

/** The settings row as first created (the runner registration token sealed by the caller). */
function initialSettings(sealedToken: string): ApplicationSettingsRow {
  const t = now();
  return {
    id: 1, defaultProjectsLimit: 10, signupEnabled: true, signinEnabled: true, gravatarEnabled: true, signInText: null,
    afterSignUpText: null, homePageUrl: null, defaultBranchProtection: 2, restrictedVisibilityLevels: null, maxAttachmentSize: 10,
    maxArtifactsSize: 100, sessionExpireDelay: 10080, defaultProjectVisibility: 0, defaultSnippetVisibility: 0, defaultGroupVisibility: 0,
    domainWhitelist: null, domainBlacklistEnabled: false, domainBlacklist: null, userOauthApplications: true, afterSignOutPath: null,
    containerRegistryTokenExpireDelay: 5, repositoryStorage: 'default', enabledGitAccessProtocol: null,
    runnersRegistrationToken: sealedToken, createdAt: t, updatedAt: t,
  };
}

/**
 * Create the settings row on first start (with the instance runner registration token) and keep it in sync: on either
 * engine (bootstrap), the row made, or a configured token re-sealed.
 */
export async function ensureSettings(ctx: AppContext): Promise<void> {
  const existing = await settingsRow(ctx.data);
  const token = ctx.config.runnersToken;
  if (!existing) {
    await insertSettingsRow(ctx.data, initialSettings(ctx.secrets.seal(token ?? randomToken())));
  } else if (token && ctx.secrets.open(existing.runnersRegistrationToken) !== token) {
    await updateSettingsRow(ctx.data, { runnersRegistrationToken: ctx.secrets.seal(token) });
  }
  cache.delete(ctx);
}

/**
 * The current settings: cached on SQLite (one process writes the row), one statement per call on PostgreSQL, read on
 * `q` (the caller's transaction or snapshot, when it has one).
 */
export async function getSettings(ctx: AppContext, q: Queries = ctx.data): Promise<ApplicationSettingsRow> {
  const sqlite = ctx.data.dialect.name === 'sqlite';
  let row = sqlite ? cache.get(ctx) : undefined;
  if (!row) {
    const found = await settingsRow(q);
    if (!found) throw new Error('application settings missing');
    row = found;
    if (sqlite) cache.set(ctx, row);
  }
  return row;
}

/** The visibility levels non-admins may not use, from a settings row (empty when nothing is restricted). */
export function restrictedLevelsOf(settings: ApplicationSettingsRow): number[] {
  const text = settings.restrictedVisibilityLevels;
  return text ? (JSON.parse(text) as number[]) : [];
}

/** The visibility levels non-admins may not use (empty when nothing is restricted). */
export async function restrictedVisibilityLevelsAsync(ctx: AppContext): Promise<number[]> {
  return restrictedLevelsOf(await getSettings(ctx));
}

/** Parameters of PUT /application/settings (all optional), as they are stored. */
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
  max_artifacts_size?: number;
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

/**
 * What PUT /application/settings may send: any value for each field, as clients send them (numbers as strings,
 * booleans as 1/0/yes/no, lists as arrays or comma-separated strings). updateSettings() checks every one.
 */
export type SettingsInput = { [K in keyof UpdateSettingsParams]?: unknown };

const MAX_INT = 2147483647;
const VISIBILITY_BY_WORD: Record<string, number> = { private: 0, internal: 10, public: 20 };
const NOT_IN_LIST = 'is not included in the list';

/** An integer from a number or a string of digits; undefined when it is not one. */
function toInteger(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? v : undefined;
  if (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v)) return Number(v);
  return undefined;
}

/** A visibility level: 0/10/20, the documented 0/1/2, or private/internal/public; undefined otherwise. */
function toVisibility(v: unknown): number | undefined {
  if (typeof v === 'string' && v.trim().toLowerCase() in VISIBILITY_BY_WORD) return VISIBILITY_BY_WORD[v.trim().toLowerCase()];
  const n = toInteger(v);
  if (n === undefined) return undefined;
  const level = n === 1 ? 10 : n === 2 ? 20 : n;
  return [0, 10, 20].includes(level) ? level : undefined;
}

/** A list from an array or a string separated by commas, semicolons, spaces or newlines; null when blank. */
function toList(v: unknown): unknown[] | null {
  if (v === null || v === '') return null;
  if (Array.isArray(v)) return v.flatMap((x) => (typeof x === 'string' ? x.split(/[\s,;]+/) : [x])).filter((x) => x !== '');
  return String(v).split(/[\s,;]+/).filter(Boolean);
}

const URL_PATTERN = /^https?:\/\/[^\s/?#]+[^\s]*$/i;
const DOMAIN_PATTERN = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;

/**
 * Validate and apply a settings update, on either engine. Every field is checked first; when any is invalid the reply
 * is 400 with the validation hash (`{message: {field: [errors]}}`) and nothing is changed. Then one
 * `UPDATE ... RETURNING *` (the current row, needed by the blacklist check, comes from getSettings: cached on SQLite).
 */
export async function updateSettings(ctx: AppContext, p: SettingsInput): Promise<ApplicationSettingsRow> {
  const set = settingsChanges(p, await getSettings(ctx));
  cache.delete(ctx);
  const row = await updateSettingsRow(ctx.data, set);
  if (!row) throw new Error('application settings missing');
  if (ctx.data.dialect.name === 'sqlite') cache.set(ctx, row);
  return row;
}

/**
 * The changes a settings update makes to the `current` row (camelCase columns, `updatedAt` included), or a 400 with
 * the validation hash naming every bad field.
 */
function settingsChanges(p: SettingsInput, current: ApplicationSettingsRow): Partial<ApplicationSettingsRow> {
  const errors: Record<string, string[]> = {};
  const err = (k: string, m: string) => (errors[k] ??= []).push(m);
  const set: Partial<ApplicationSettingsRow> = {};
  const assign = (col: keyof ApplicationSettingsRow, v: unknown) => ((set as Record<string, unknown>)[col] = v);

  const ints = [
    ['default_projects_limit', 'defaultProjectsLimit', 0],
    ['max_attachment_size', 'maxAttachmentSize', 1],
    ['max_artifacts_size', 'maxArtifactsSize', 1],
    ['session_expire_delay', 'sessionExpireDelay', 0],
    ['container_registry_token_expire_delay', 'containerRegistryTokenExpireDelay', 1],
  ] as const;
  for (const [k, col, min] of ints) {
    const raw = p[k];
    if (raw === undefined) continue;
    const v = toInteger(raw);
    if (v === undefined) err(k, typeof raw === 'number' ? 'must be an integer' : 'is not a number');
    else if (v < min) err(k, min === 0 ? 'must be greater than or equal to 0' : `must be greater than ${min - 1}`);
    else if (v > MAX_INT) err(k, `must be less than or equal to ${MAX_INT}`);
    else assign(col, v);
  }
  if (p.default_branch_protection !== undefined) {
    const v = toInteger(p.default_branch_protection);
    if (v === undefined || ![0, 1, 2].includes(v)) err('default_branch_protection', NOT_IN_LIST);
    else set.defaultBranchProtection = v;
  }
  for (const [k, col] of [
    ['default_project_visibility', 'defaultProjectVisibility'],
    ['default_snippet_visibility', 'defaultSnippetVisibility'],
    ['default_group_visibility', 'defaultGroupVisibility'],
  ] as const) {
    if (p[k] === undefined) continue;
    const level = toVisibility(p[k]);
    if (level === undefined) err(k, NOT_IN_LIST);
    else set[col] = level;
  }
  if (p.restricted_visibility_levels !== undefined) {
    const items = toList(p.restricted_visibility_levels);
    const levels = items?.map(toVisibility) ?? null;
    if (levels && levels.some((l) => l === undefined)) err('restricted_visibility_levels', NOT_IN_LIST);
    else set.restrictedVisibilityLevels = levels ? JSON.stringify([...new Set(levels)].sort((a, b) => a! - b!)) : null;
  }
  for (const [k, col] of [['domain_whitelist', 'domainWhitelist'], ['domain_blacklist', 'domainBlacklist']] as const) {
    if (p[k] === undefined) continue;
    const list = toList(p[k]);
    if (list && list.some((d) => typeof d !== 'string' || d.length > 255 || !DOMAIN_PATTERN.test(d))) err(k, 'contains an invalid domain');
    else set[col] = list ? JSON.stringify([...new Set(list as string[])]) : null;
  }
  for (const [k, col] of [
    ['signup_enabled', 'signupEnabled'], ['signin_enabled', 'signinEnabled'], ['gravatar_enabled', 'gravatarEnabled'],
    ['domain_blacklist_enabled', 'domainBlacklistEnabled'], ['user_oauth_applications', 'userOauthApplications'],
  ] as const) {
    if (p[k] === undefined) continue;
    const v = normalizeBoolean(p[k]);
    if (typeof v !== 'boolean') err(k, NOT_IN_LIST);
    else set[col] = v;
  }
  const text = (k: keyof SettingsInput, max: number): string | null | undefined => {
    const v = p[k];
    if (v === undefined) return undefined;
    if (v === null || v === '') return null;
    if (typeof v !== 'string' && typeof v !== 'number') return err(k, 'is invalid'), undefined;
    const s = String(v);
    return s.length > max ? (err(k, `is too long (maximum is ${max} characters)`), undefined) : s;
  };
  for (const [k, col] of [['sign_in_text', 'signInText'], ['after_sign_up_text', 'afterSignUpText']] as const) {
    const v = text(k, 65535);
    if (v !== undefined) set[col] = v;
  }
  for (const [k, col] of [['home_page_url', 'homePageUrl'], ['after_sign_out_path', 'afterSignOutPath']] as const) {
    const v = text(k, 2048);
    if (v === undefined) continue;
    if (v !== null && !URL_PATTERN.test(v)) err(k, 'is not a valid URL');
    else set[col] = v;
  }
  if (p.repository_storage !== undefined) {
    if (p.repository_storage !== 'default') err('repository_storage', `${NOT_IN_LIST} of configured storages (default)`);
    else set.repositoryStorage = 'default';
  }
  if (p.enabled_git_access_protocol !== undefined) {
    const v = p.enabled_git_access_protocol === '' || p.enabled_git_access_protocol === null ? null : p.enabled_git_access_protocol;
    if (v !== null && v !== 'ssh' && v !== 'http') err('enabled_git_access_protocol', NOT_IN_LIST);
    else set.enabledGitAccessProtocol = v;
  }
  const blacklistOn = set.domainBlacklistEnabled ?? current.domainBlacklistEnabled;
  const blacklist = set.domainBlacklist !== undefined ? set.domainBlacklist : current.domainBlacklist;
  if (blacklistOn && !errors.domain_blacklist && (!blacklist || (JSON.parse(blacklist) as string[]).length === 0)) {
    err('domain_blacklist', "can't be blank when the domain blacklist is enabled");
  }
  if (Object.keys(errors).length > 0) throw validationError(errors);

  set.updatedAt = now();
  return set;
}

/**
 * The gravatar_enabled setting on the data layer (cached on SQLite), for the presenters' `gravatar` argument; read on
 * `q` (the caller's transaction or snapshot, when it has one).
 */
export async function gravatarEnabledAsync(ctx: AppContext, q: Queries = ctx.data): Promise<boolean> {
  return (await getSettings(ctx, q)).gravatarEnabled;
}
