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

/** Resolve the effective configuration from flags and an environment. */
export function resolveConfig(flags: DaemonFlags, env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  const portText = flags.port ?? env.GANTRY_PORT ?? '3080';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`invalid port "${portText}": use a number from 0 to 65535 (0 picks a free port)`);
  }
  const externalUrl = flags.externalUrl ?? env.GANTRY_EXTERNAL_URL ?? null;
  return {
    host: flags.host ?? env.GANTRY_HOST ?? '127.0.0.1',
    port,
    dataDir: resolve(flags.dataDir ?? env.GANTRY_DATA_DIR ?? join(homedir(), '.local/share/gantry')),
    externalUrl: externalUrl ? externalUrl.replace(/\/+$/, '') : null,
    rootPassword: flags.rootPassword ?? env.GANTRY_ROOT_PASSWORD ?? null,
    runnersToken: flags.runnersToken ?? env.GANTRY_RUNNERS_TOKEN ?? null,
    logLevel: flags.logLevel ?? env.GANTRY_LOG_LEVEL ?? 'info',
  };
}

/** A configuration problem reported to the person starting the daemon (one line, no stack). */
export class ConfigError extends Error {}
