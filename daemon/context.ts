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
  /**
   * This daemon's in-memory state (listeners by build id, throttles by key id, ...): each module keeps its own slot
   * here, never in a module-level variable, so that two daemons in one process (the tests) never share it.
   */
  state: DaemonState;
}

/** One module's slot in a daemon's state: `make` builds its value on first use. */
export interface StateSlot<T> {
  readonly name: string;
  readonly make: () => T;
}

/** A slot of daemon state (declare it once at module level; the values live in each daemon's DaemonState). */
export const stateSlot = <T>(name: string, make: () => T): StateSlot<T> => ({ name, make });

/** The in-memory state of one daemon, slot by slot (see AppContext.state). */
export class DaemonState {
  private readonly values = new Map<StateSlot<unknown>, unknown>();

  /** The value of `slot` in this daemon, made on first use. */
  get<T>(slot: StateSlot<T>): T {
    if (this.values.has(slot)) return this.values.get(slot) as T;
    const value = slot.make();
    this.values.set(slot, value);
    return value;
  }
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
