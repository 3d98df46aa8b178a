/** Daemon settings: flags win over environment variables, which win over defaults (CONTRACT.md). */
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
}

/** pino's levels, accepted by --log-level. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Resolve the effective configuration from flags and an environment (an empty value counts as unset). */
export function resolveConfig(flags: DaemonFlags, env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  const pick = (flag: string | undefined, name: string): string | undefined => {
    for (const v of [flag, env[name]]) if (v !== undefined && v.trim() !== '') return v.trim();
    return undefined;
  };
  const portText = pick(flags.port, 'GANTRY_PORT') ?? '3080';
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`invalid port "${portText}": use a number from 0 to 65535 (0 picks a free port)`);
  }
  const externalUrl = pick(flags.externalUrl, 'GANTRY_EXTERNAL_URL') ?? null;
  if (externalUrl !== null && !validHttpUrl(externalUrl)) {
    throw new ConfigError(`invalid external URL "${externalUrl}": use an http:// or https:// URL such as https://gantry.example.com`);
  }
  const logLevel = (pick(flags.logLevel, 'GANTRY_LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`invalid log level "${logLevel}": use one of ${LOG_LEVELS.join(', ')}`);
  }
  return {
    host: pick(flags.host, 'GANTRY_HOST') ?? '127.0.0.1',
    port,
    dataDir: resolve(pick(flags.dataDir, 'GANTRY_DATA_DIR') ?? join(homedir(), '.local/share/gantry')),
    externalUrl: externalUrl ? externalUrl.replace(/\/+$/, '') : null,
    // Secrets are taken as given (no trimming: a password may end in a space).
    rootPassword: nonEmpty(flags.rootPassword) ?? nonEmpty(env.GANTRY_ROOT_PASSWORD) ?? null,
    runnersToken: pick(flags.runnersToken, 'GANTRY_RUNNERS_TOKEN') ?? null,
    logLevel,
  };
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
