/**
 * Daemon settings: flags win over environment variables, which win over the config file (`--config <file>`, else
 * `<data-dir>/gantry.yml`), which wins over the defaults (CONTRACT.md; README "Configuration").
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseDocument } from 'yaml';

export interface DaemonConfig {
  host: string;
  port: number;
  dataDir: string;
  /** External base URL without a trailing slash; null means derive it from the bound address. */
  externalUrl: string | null;
  rootPassword: string | null;
  runnersToken: string | null;
  /** pino log level; 'silent' in tests. */
  logLevel: string;
  /** The built-in SSH server (git over SSH). */
  ssh: SshConfig;
  /** Request size limits and the failed sign-in throttle. */
  limits: Limits;
  /** Bearer token a scraper sends for GET /-/metrics; null = only admins may read it. */
  metricsToken: string | null;
  /** A PostgreSQL database (postgres:// or postgresql:// URL); null = SQLite in the data directory (the default). */
  databaseUrl: string | null;
  /**
   * Reverse proxies and balancers whose X-Forwarded-For is believed (addresses and CIDR ranges); empty (the default):
   * none, every request's client is its TCP peer.
   */
  trustedProxies: string[];
  /**
   * How long POST /ci/api/v1/builds/register holds a runner that sends no X-Gantry-Long-Poll header (GitLab Runner
   * 1.x) while no build is pending for it, in seconds; 0 answers 204 at once (README "Runners").
   */
  runnerLongPollSeconds: number;
}

/** Request size limits and the failed sign-in throttle (README "Configuration"). */
export interface Limits {
  /** Largest JSON, form, text or multipart body outside uploads, artifacts and git (bytes). */
  maxBodyBytes: number;
  /** Largest pack a git push may send (bytes); 0 = no limit. */
  maxPushBytes: number;
  signIn: SignInLimits;
}

/** Failed password sign-ins: per address (Rack::Attack's git_basic_auth Allow2Ban) and per user (Devise lockable). */
export interface SignInLimits {
  /** Failures that trigger a ban (per address) or a lock (per user); 0 switches the throttle off. */
  maxFailures: number;
  /** An address is banned after maxFailures failures within this many seconds. */
  findTimeSeconds: number;
  /** How long a banned address stays banned. */
  banTimeSeconds: number;
  /** How long a user stays locked after maxFailures failures in a row. */
  lockTimeSeconds: number;
  /** Addresses never banned (a reverse proxy on the same machine); per-user locks still apply to them. */
  trustedAddresses: string[];
}

/** The defaults of Limits: 10 MiB bodies, pushes unbounded, GitLab 8.x's throttle numbers. */
export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 10 * 1024 * 1024,
  maxPushBytes: 0,
  signIn: { maxFailures: 10, findTimeSeconds: 60, banTimeSeconds: 3600, lockTimeSeconds: 600, trustedAddresses: ['127.0.0.1', '::1'] },
};

/** Settings of the built-in SSH server. */
export interface SshConfig {
  /** Port to listen on (0 picks a free one); null: no SSH server (`--ssh-port off`). */
  port: number | null;
  /** Whether the port was given: a taken port that was given ends the start, the default one only warns. */
  portGiven: boolean;
  /** Address to listen on (the --host value unless --ssh-host is given). */
  host: string;
  /** Whether --ssh-host was given (then, unless it is a wildcard address, it is also the advertised host). */
  hostGiven: boolean;
  /** Host that ssh_url_to_repo advertises; null: --ssh-host when given, else the external URL's host. */
  externalHost: string | null;
  /** Port that ssh_url_to_repo advertises; null: the port the server listens on. */
  externalPort: number | null;
}

/** Flag values as parsed by commander (all optional strings). */
export interface DaemonFlags {
  host?: string;
  port?: string;
  dataDir?: string;
  externalUrl?: string;
  rootPassword?: string;
  runnersToken?: string;
  logLevel?: string;
  sshPort?: string;
  sshHost?: string;
  sshExternalHost?: string;
  sshExternalPort?: string;
  maxBodySize?: string;
  maxPushSize?: string;
  signinMaxFailures?: string;
  signinFindTime?: string;
  signinBanTime?: string;
  signinLockTime?: string;
  signinTrustedAddresses?: string;
  metricsToken?: string;
  databaseUrl?: string;
  trustedProxies?: string;
  runnerLongPoll?: string;
}

/** The default port of the built-in SSH server. */
export const DEFAULT_SSH_PORT = 2222;

/** pino's levels, accepted by --log-level. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Resolve the effective configuration from flags, an environment and a config file's values (an empty value counts
 * as unset); the file's values are keyed by DaemonFlags names, as readConfigFile gives them.
 */
export function resolveConfig(flags: DaemonFlags, env: NodeJS.ProcessEnv = process.env, file: DaemonFlags = {}): DaemonConfig {
  const fromFile = new Map(SETTINGS.map((s) => [s.env, file[s.flag]]));
  const pick: PickValue = (flag, name) => {
    for (const v of [flag, env[name], fromFile.get(name)]) if (v !== undefined && v.trim() !== '') return v.trim();
    return undefined;
  };
  const secret = (flag: string | undefined, name: string) => nonEmpty(flag) ?? nonEmpty(env[name]) ?? nonEmpty(fromFile.get(name));
  const port = portNumber(pick(flags.port, 'GANTRY_PORT') ?? '3080', 'port');
  const externalUrl = pick(flags.externalUrl, 'GANTRY_EXTERNAL_URL') ?? null;
  if (externalUrl !== null && !validHttpUrl(externalUrl)) {
    throw new ConfigError(`invalid external URL "${externalUrl}": use an http:// or https:// URL such as https://gantry.example.com`);
  }
  const logLevel = (pick(flags.logLevel, 'GANTRY_LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`invalid log level "${logLevel}": use one of ${LOG_LEVELS.join(', ')}`);
  }
  const host = pick(flags.host, 'GANTRY_HOST') ?? '127.0.0.1';
  const sshPortText = pick(flags.sshPort, 'GANTRY_SSH_PORT');
  const sshHost = pick(flags.sshHost, 'GANTRY_SSH_HOST');
  const sshExternalPort = pick(flags.sshExternalPort, 'GANTRY_SSH_EXTERNAL_PORT');
  const ssh: SshConfig = {
    port: sshPortText?.toLowerCase() === 'off' ? null : portNumber(sshPortText ?? String(DEFAULT_SSH_PORT), 'SSH port', ' (0 picks a free port), or off for no SSH server'),
    portGiven: sshPortText !== undefined,
    host: sshHost ?? host,
    hostGiven: sshHost !== undefined,
    externalHost: pick(flags.sshExternalHost, 'GANTRY_SSH_EXTERNAL_HOST') ?? null,
    externalPort: sshExternalPort === undefined ? null : portNumber(sshExternalPort, 'SSH external port', '', 1),
  };
  if (ssh.externalHost !== null && !/^[^\s/@]+$/.test(ssh.externalHost)) {
    throw new ConfigError(`invalid SSH external host "${ssh.externalHost}": use a host name or address such as git.example.com`);
  }
  return {
    host,
    port,
    dataDir: resolve(pick(flags.dataDir, 'GANTRY_DATA_DIR') ?? join(homedir(), '.local/share/gantry')),
    externalUrl: externalUrl ? externalUrl.replace(/\/+$/, '') : null,
    // Secrets are taken as given (no trimming: a password may end in a space).
    rootPassword: secret(flags.rootPassword, 'GANTRY_ROOT_PASSWORD') ?? null,
    runnersToken: pick(flags.runnersToken, 'GANTRY_RUNNERS_TOKEN') ?? null,
    logLevel,
    ssh,
    limits: resolveLimits(flags, pick),
    metricsToken: secret(flags.metricsToken, 'GANTRY_METRICS_TOKEN') ?? null,
    databaseUrl: databaseUrl(pick(flags.databaseUrl, 'GANTRY_DATABASE_URL')),
    trustedProxies: trustedProxies(pick(flags.trustedProxies, 'GANTRY_TRUSTED_PROXIES')),
    runnerLongPollSeconds: runnerLongPoll(pick(flags.runnerLongPoll, 'GANTRY_RUNNER_LONG_POLL')),
  };
}

/** The default hold of header-less build requests (seconds; docs/decisions.md "Long-polling builds/register"). */
export const DEFAULT_RUNNER_LONG_POLL = 10;
/** The longest hold a runner may ask for (X-Gantry-Long-Poll) or the setting may give: below nginx's proxy_read_timeout. */
export const MAX_RUNNER_LONG_POLL = 60;

function runnerLongPoll(text: string | undefined): number {
  if (text === undefined) return DEFAULT_RUNNER_LONG_POLL;
  const n = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 0 && n <= MAX_RUNNER_LONG_POLL)) {
    throw new ConfigError(`invalid --runner-long-poll "${text}": use a number of seconds from 0 (no hold) to ${MAX_RUNNER_LONG_POLL}, such as ${DEFAULT_RUNNER_LONG_POLL}`);
  }
  return n;
}

/** Comma-separated addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`), or `none`; a ConfigError names a bad one. */
function trustedProxies(text: string | undefined): string[] {
  if (text === undefined || text.toLowerCase() === 'none') return [];
  const list = text.split(/[\s,]+/).filter(Boolean);
  for (const entry of list) {
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError(
        `invalid trusted proxy "${entry}": use addresses or CIDR ranges, comma-separated, such as 10.0.0.5,10.1.0.0/16,fd00::/8 (or none)`,
      );
    }
  }
  return list;
}

/** A PostgreSQL URL as given, or a ConfigError saying what is accepted (the password is never repeated). */
function databaseUrl(text: string | undefined): string | null {
  if (text === undefined) return null;
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    /* reported below */
  }
  if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
    const shown = url ? `${url.protocol}//...` : 'the given value';
    throw new ConfigError(
      `invalid database URL (${shown}): use a PostgreSQL URL such as postgres://user:password@host:5432/gantry ` +
        '(postgres:// or postgresql://), or leave --database-url unset for SQLite in the data directory',
    );
  }
  return text;
}

type PickValue = (flag: string | undefined, name: string) => string | undefined;

function resolveLimits(flags: DaemonFlags, pick: PickValue): Limits {
  const d = DEFAULT_LIMITS;
  const count = (flag: string | undefined, name: string, option: string, fallback: number): number => {
    const text = pick(flag, name);
    if (text === undefined) return fallback;
    if (!/^\d{1,9}$/.test(text)) throw new ConfigError(`invalid ${option} "${text}": use a whole number such as ${fallback}`);
    return Number(text);
  };
  const size = (flag: string | undefined, name: string, option: string, fallback: number): number => {
    const text = pick(flag, name);
    if (text === undefined) return fallback;
    const bytes = parseSize(text);
    if (bytes === null) throw new ConfigError(`invalid ${option} "${text}": use a size such as 10m, 512k or 1g (0 = no limit where allowed)`);
    return bytes;
  };
  const maxBodyBytes = size(flags.maxBodySize, 'GANTRY_MAX_BODY_SIZE', '--max-body-size', d.maxBodyBytes);
  if (maxBodyBytes < 1024) throw new ConfigError('--max-body-size must be at least 1k (API requests need room for their JSON)');
  const addresses = pick(flags.signinTrustedAddresses, 'GANTRY_SIGNIN_TRUSTED_ADDRESSES');
  return {
    maxBodyBytes,
    maxPushBytes: size(flags.maxPushSize, 'GANTRY_MAX_PUSH_SIZE', '--max-push-size', d.maxPushBytes),
    signIn: {
      maxFailures: count(flags.signinMaxFailures, 'GANTRY_SIGNIN_MAX_FAILURES', '--signin-max-failures', d.signIn.maxFailures),
      findTimeSeconds: count(flags.signinFindTime, 'GANTRY_SIGNIN_FIND_TIME', '--signin-find-time', d.signIn.findTimeSeconds),
      banTimeSeconds: count(flags.signinBanTime, 'GANTRY_SIGNIN_BAN_TIME', '--signin-ban-time', d.signIn.banTimeSeconds),
      lockTimeSeconds: count(flags.signinLockTime, 'GANTRY_SIGNIN_LOCK_TIME', '--signin-lock-time', d.signIn.lockTimeSeconds),
      trustedAddresses: addresses === undefined ? d.signIn.trustedAddresses : addresses === 'none' ? [] : addresses.split(/[\s,]+/).filter(Boolean),
    },
  };
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3 };

/** A size such as `10485760`, `512k`, `10m`, `10MiB` or `1g` (binary units) in bytes; null when it is not one. */
export function parseSize(text: string): number | null {
  const m = text.trim().toLowerCase().match(/^(\d{1,12})\s*([a-z]*)$/);
  const unit = m ? UNITS[m[2]!] : undefined;
  if (!m || unit === undefined) return null;
  const bytes = Number(m[1]) * unit;
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** A port number from text, or a ConfigError naming the setting. */
function portNumber(text: string, what: string, extra = ' (0 picks a free port)', min = 0): number {
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < min || n > 65535) throw new ConfigError(`invalid ${what} "${text}": use a number from ${min} to 65535${extra}`);
  return n;
}

const nonEmpty = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);

function validHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' && !u.search && !u.hash;
  } catch {
    return false;
  }
}

/** A configuration problem reported to the person starting the daemon (one line, no stack). */
export class ConfigError extends Error {}

/** One setting of gantryd: its flag (and config file key), its DaemonFlags name and its environment variable. */
export interface Setting {
  /** The flag without its dashes, also the key in the config file: `ssh-port`. */
  key: string;
  flag: keyof DaemonFlags;
  env: string;
  /** Shown as `(set)` by --print-config. */
  secret?: boolean;
  /** The effective value as --print-config shows it. */
  show: (c: DaemonConfig) => string;
}

const list = (items: string[]) => (items.length ? items.join(',') : 'none');
const unset = (v: string | null) => v ?? '(unset)';

/** Every setting, in the order of `gantryd --help` (CONTRACT.md's flags and the rest of README "Configuration"). */
export const SETTINGS: readonly Setting[] = [
  { key: 'host', flag: 'host', env: 'GANTRY_HOST', show: (c) => c.host },
  { key: 'port', flag: 'port', env: 'GANTRY_PORT', show: (c) => String(c.port) },
  { key: 'data-dir', flag: 'dataDir', env: 'GANTRY_DATA_DIR', show: (c) => c.dataDir },
  { key: 'external-url', flag: 'externalUrl', env: 'GANTRY_EXTERNAL_URL', show: (c) => c.externalUrl ?? `(http://<host>:<port>)` },
  { key: 'root-password', flag: 'rootPassword', env: 'GANTRY_ROOT_PASSWORD', secret: true, show: (c) => unset(c.rootPassword) },
  { key: 'runners-token', flag: 'runnersToken', env: 'GANTRY_RUNNERS_TOKEN', secret: true, show: (c) => unset(c.runnersToken) },
  { key: 'log-level', flag: 'logLevel', env: 'GANTRY_LOG_LEVEL', show: (c) => c.logLevel },
  { key: 'ssh-port', flag: 'sshPort', env: 'GANTRY_SSH_PORT', show: (c) => (c.ssh.port === null ? 'off' : String(c.ssh.port)) },
  { key: 'ssh-host', flag: 'sshHost', env: 'GANTRY_SSH_HOST', show: (c) => c.ssh.host },
  { key: 'ssh-external-host', flag: 'sshExternalHost', env: 'GANTRY_SSH_EXTERNAL_HOST', show: (c) => unset(c.ssh.externalHost) },
  { key: 'ssh-external-port', flag: 'sshExternalPort', env: 'GANTRY_SSH_EXTERNAL_PORT', show: (c) => (c.ssh.externalPort === null ? '(the SSH port)' : String(c.ssh.externalPort)) },
  { key: 'max-body-size', flag: 'maxBodySize', env: 'GANTRY_MAX_BODY_SIZE', show: (c) => String(c.limits.maxBodyBytes) },
  { key: 'max-push-size', flag: 'maxPushSize', env: 'GANTRY_MAX_PUSH_SIZE', show: (c) => String(c.limits.maxPushBytes) },
  { key: 'signin-max-failures', flag: 'signinMaxFailures', env: 'GANTRY_SIGNIN_MAX_FAILURES', show: (c) => String(c.limits.signIn.maxFailures) },
  { key: 'signin-find-time', flag: 'signinFindTime', env: 'GANTRY_SIGNIN_FIND_TIME', show: (c) => String(c.limits.signIn.findTimeSeconds) },
  { key: 'signin-ban-time', flag: 'signinBanTime', env: 'GANTRY_SIGNIN_BAN_TIME', show: (c) => String(c.limits.signIn.banTimeSeconds) },
  { key: 'signin-lock-time', flag: 'signinLockTime', env: 'GANTRY_SIGNIN_LOCK_TIME', show: (c) => String(c.limits.signIn.lockTimeSeconds) },
  { key: 'signin-trusted-addresses', flag: 'signinTrustedAddresses', env: 'GANTRY_SIGNIN_TRUSTED_ADDRESSES', show: (c) => list(c.limits.signIn.trustedAddresses) },
  { key: 'trusted-proxies', flag: 'trustedProxies', env: 'GANTRY_TRUSTED_PROXIES', show: (c) => list(c.trustedProxies) },
  { key: 'metrics-token', flag: 'metricsToken', env: 'GANTRY_METRICS_TOKEN', secret: true, show: (c) => unset(c.metricsToken) },
  { key: 'runner-long-poll', flag: 'runnerLongPoll', env: 'GANTRY_RUNNER_LONG_POLL', show: (c) => String(c.runnerLongPollSeconds) },
  { key: 'database-url', flag: 'databaseUrl', env: 'GANTRY_DATABASE_URL', secret: true, show: (c) => unset(c.databaseUrl) },
];

/** The config file of a data dir, read when no --config is given. */
export const configFileOf = (dataDir: string): string => join(dataDir, 'gantry.yml');

/** A config file's values, keyed by DaemonFlags names; `path` names it in errors. */
export interface ConfigFile {
  path: string;
  values: DaemonFlags;
}

/**
 * Read a YAML config file: a mapping of setting keys (the flags without dashes, `ssh-port: 2322`) to scalars, or lists
 * for the comma-separated settings. Null when it does not exist and `required` is false. Unknown keys, values of the
 * wrong kind and values the setting does not accept are ConfigErrors naming the file and the key.
 */
export function readConfigFile(path: string, required: boolean): ConfigFile | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // (ENOTDIR: the data dir is no directory; the data dir's own check says so, in its words)
    if ((code === 'ENOENT' || code === 'ENOTDIR') && !required) return null;
    throw new ConfigError(`cannot read the config file ${path}: ${code ?? (e as Error).message}`);
  }
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) throw new ConfigError(`${path}: not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  const data: unknown = doc.toJS();
  if (data === null || data === undefined) return { path, values: {} };
  if (typeof data !== 'object' || Array.isArray(data)) throw new ConfigError(`${path}: expected a mapping of settings such as "port: 3080"`);
  const values: DaemonFlags = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    const setting = SETTINGS.find((s) => s.key === key);
    if (!setting) {
      throw new ConfigError(`${path}: unknown key "${key}"; the keys are the flags of gantryd without their dashes: ${SETTINGS.map((s) => s.key).join(', ')}`);
    }
    const text = scalarText(value, key === 'ssh-port');
    if (text === null) throw new ConfigError(`${path}: key "${key}": expected a single value${key.endsWith('-addresses') || key === 'trusted-proxies' ? ' or a list' : ''}, not ${JSON.stringify(value)}`);
    // Each value is checked on its own, so that the error names the key it came from.
    try {
      resolveConfig({ [setting.flag]: text }, {});
    } catch (e) {
      if (e instanceof ConfigError) throw new ConfigError(`${path}: key "${key}": ${e.message}`);
      throw e;
    }
    // A relative data dir is relative to the file, not to wherever gantryd was started.
    values[setting.flag] = key === 'data-dir' ? resolve(dirname(path), text.trim()) : text;
  }
  return { path, values };
}

/** A YAML value as the flag's text: strings, numbers, lists of them (comma-joined); `false` is `off` for ssh-port. */
function scalarText(value: unknown, offForFalse: boolean): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (value === false && offForFalse) return 'off';
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) return value.join(',');
  return null;
}

/** Where the effective value of each setting came from. */
export type SettingSource = 'flag' | 'environment' | 'file' | 'default';

/**
 * The configuration for gantryd's flags and environment and, when one applies, its config file: `--config <file>`
 * (or GANTRY_CONFIG), which must exist, else `<data-dir>/gantry.yml` if it exists. The data dir of that default file
 * is the one of the flags, environment or default; a data dir set inside it is ignored (it would be another file).
 */
export function loadConfig(flags: DaemonFlags & { config?: string }, env: NodeJS.ProcessEnv = process.env) {
  const given = nonEmpty(flags.config) ?? nonEmpty(env.GANTRY_CONFIG);
  let file: ConfigFile | null;
  if (given !== undefined) {
    file = readConfigFile(resolve(given), true);
  } else {
    file = readConfigFile(configFileOf(resolveConfig({ dataDir: flags.dataDir }, env).dataDir), false);
    if (file) delete file.values.dataDir;
  }
  const config = resolveConfig(flags, env, file?.values ?? {});
  const sources = new Map<string, SettingSource>();
  for (const s of SETTINGS) {
    const set = (v: string | undefined) => v !== undefined && v.trim() !== '';
    sources.set(s.key, set(flags[s.flag]) ? 'flag' : set(env[s.env]) ? 'environment' : set(file?.values[s.flag]) ? 'file' : 'default');
  }
  return { config, file: file?.path ?? null, sources };
}

/** `gantryd --print-config`: one line per setting, `key: value  # source`; secrets show only whether they are set. */
export function printableConfig(loaded: ReturnType<typeof loadConfig>): string {
  const width = Math.max(...SETTINGS.map((s) => s.key.length)) + 2;
  const lines = [`# config file: ${loaded.file ?? `none (${configFileOf(loaded.config.dataDir)} does not exist)`}`];
  for (const s of SETTINGS) {
    const source = loaded.sources.get(s.key)!;
    const where = source === 'environment' ? `environment ${s.env}` : source === 'file' ? `file ${loaded.file}` : source;
    const shown = s.secret ? (s.show(loaded.config) === '(unset)' ? '(unset)' : '(set)') : s.show(loaded.config);
    lines.push(`${`${s.key}:`.padEnd(width)}${shown}  # ${where}`);
  }
  return `${lines.join('\n')}\n`;
}
