/** What every route and service receives: the database, configuration, secrets and storage paths. */
import { join } from 'node:path';
import type { Database } from './db/layer/types.js';
import type { DaemonConfig } from './config.js';
import type { Secrets } from './secrets.js';

export interface AppContext {
  /** The data layer (docs/design/postgres.md): SQLite or PostgreSQL, the one way to the database. */
  data: Database;
  config: DaemonConfig;
  secrets: Secrets;
  /** Absolute storage directories under the data dir. */
  paths: { data: string; repositories: string; uploads: string; artifacts: string; traces: string };
  /** The external base URL (no trailing slash); fixed once the daemon listens. */
  externalUrl(): string;
  /** Host and port ssh_url_to_repo advertises, once the SSH server listens; absent: port 22 of the external URL's host. */
  sshAddress?(): { host: string; port: number };
}

/** Storage directories under a data dir. */
export function dataPaths(dataDir: string): AppContext['paths'] {
  return {
    data: dataDir,
    repositories: join(dataDir, 'repositories'),
    uploads: join(dataDir, 'uploads'),
    artifacts: join(dataDir, 'artifacts'),
    traces: join(dataDir, 'traces'),
  };
}

/** Current time as ISO 8601 UTC with milliseconds (the API's timestamp form). */
export const now = () => new Date().toISOString();
