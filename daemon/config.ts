/** Daemon settings: flags win over environment variables, which win over defaults (CONTRACT.md). */
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

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
}

/** The default port of the built-in SSH server. */
export const DEFAULT_SSH_PORT = 2222;

/** pino's levels, accepted by --log-level. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Resolve the effective configuration from flags and an environment (an empty value counts as unset). */
export function resolveConfig(flags: DaemonFlags, env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  const pick: PickValue = (flag, name) => {
    for (const v of [flag, env[name]]) if (v !== undefined && v.trim() !== '') return v.trim();
    return undefined;
  };
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
    rootPassword: nonEmpty(flags.rootPassword) ?? nonEmpty(env.GANTRY_ROOT_PASSWORD) ?? null,
    runnersToken: pick(flags.runnersToken, 'GANTRY_RUNNERS_TOKEN') ?? null,
    logLevel,
    ssh,
    limits: resolveLimits(flags, pick),
    metricsToken: nonEmpty(flags.metricsToken) ?? nonEmpty(env.GANTRY_METRICS_TOKEN) ?? null,
    databaseUrl: databaseUrl(pick(flags.databaseUrl, 'GANTRY_DATABASE_URL')),
    trustedProxies: trustedProxies(pick(flags.trustedProxies, 'GANTRY_TRUSTED_PROXIES')),
  };
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
