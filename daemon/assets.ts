/**
 * Where the daemon's non-code files are (SQL migrations, the git pre-receive hook), relative to the daemon folder.
 * The same answer whether this runs as TypeScript (daemon/), as compiled modules (dist/daemon/) or as the one-file
 * bundle dist/daemon/gantryd.mjs, which sits in that same folder.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DAEMON_DIR = dirname(fileURLToPath(import.meta.url));

/** The absolute path of a file or folder under the daemon folder (`db/migrations`, `git/hooks/pre-receive.mjs`). */
export const daemonAsset = (relative: string): string => join(DAEMON_DIR, relative);
