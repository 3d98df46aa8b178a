/** Saved logins ("profiles"): server URL + token, in <config dir>/config.json (mode 0600, dir 0700). */
import { join } from 'node:path';
import { configDir, readJsonFile, writePrivateJsonFile } from '../shared/config-dir.js';
import { CliError } from './errors.js';

/** One saved login. */
export interface Profile {
  url: string;
  token: string;
  username?: string | null;
  /** How the token was obtained: `private` (password login) or `personal` / `oauth`; unknown for older profiles. */
  tokenKind?: string;
  /** OAuth profiles (`gantry login --web`): the refresh token, and when the access token expires (ISO 8601). */
  refreshToken?: string;
  tokenExpiresAt?: string;
  /** Settings of this profile (`gantry config set`), over the global ones. */
  settings?: Record<string, string>;
}

/** The CLI config file: the active profile's name and every profile. */
export interface CliConfig {
  active: string | null;
  profiles: Record<string, Profile>;
  /** Settings for every profile (`gantry config set --global`). */
  settings?: Record<string, string>;
  /** Command aliases (`gantry alias set co 'mr checkout'`). */
  aliases?: Record<string, string>;
}

/** Path of the CLI config file for an environment. */
export function configFile(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'config.json');
}

/** Load the config (an empty one when the file does not exist). */
export function loadConfig(env: NodeJS.ProcessEnv): CliConfig {
  let raw: Partial<CliConfig> | null;
  try {
    raw = readJsonFile<Partial<CliConfig>>(configFile(env));
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const profiles = raw?.profiles && typeof raw.profiles === 'object' ? raw.profiles : {};
  const record = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, string>) : {});
  return { active: typeof raw?.active === 'string' ? raw.active : null, profiles, settings: record(raw?.settings), aliases: record(raw?.aliases) };
}

/** Save the config privately (0600 file in a 0700 dir). */
export function saveConfig(env: NodeJS.ProcessEnv, config: CliConfig): void {
  try {
    writePrivateJsonFile(configFile(env), config);
  } catch (e) {
    throw new CliError(`cannot write ${configFile(env)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      'set GANTRY_CONFIG_DIR to a writable directory');
  }
}

/** The fields of a profile that outlive a new login (its settings, say): everything but the token and its OAuth data. */
export function keptOnLogin(p: Profile | undefined): Partial<Profile> {
  if (!p) return {};
  const { refreshToken: _refresh, tokenExpiresAt: _expiry, ...kept } = p;
  return kept;
}

/** Normalise a server URL for storage and comparison: no trailing slash, no /api/v3 suffix. */
export function normaliseUrl(url: string): string {
  return url.trim().replace(/\/+$/, '').replace(/\/api\/v3$/, '');
}

/**
 * The kind of a token: what login recorded (`private` after a password login), else by the server's formats: private
 * tokens are 20 characters, personal access tokens 24 (daemon/services/users/users.ts), OAuth access tokens 64 hex digits
 * (daemon/services/oauth, as Doorkeeper).
 */
export function tokenKind(token: string, recorded: string | undefined): string {
  if (recorded) return recorded;
  return token.length === 24 ? 'personal' : token.length === 20 ? 'private' : /^[0-9a-f]{64}$/.test(token) ? 'oauth' : 'unknown';
}
