/**
 * What `GET /version` reports: Gantry's version (package.json) and the git revision it was built from. `npm run build`
 * writes the revision to dist/build-info.json (scripts/copy-assets.mjs); a daemon run from a tree that was never built,
 * or built outside a git checkout, reports `unknown`. Read once, from the package root above this module (the same
 * from daemon/services/ under vitest, dist/daemon/services/ and the bundle dist/daemon/gantryd.mjs).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface VersionInfo {
  version: string;
  revision: string;
}

/** The revision reported when none was recorded at build time. */
export const UNKNOWN_REVISION = 'unknown';

let cached: VersionInfo | null = null;

/** The nearest directory above this module with Gantry's package.json. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'gantry') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the gantry package root (package.json)');
    dir = parent;
  }
}

/** Gantry's version and build revision. */
export function versionInfo(): VersionInfo {
  if (cached) return cached;
  const root = packageRoot();
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  let revision = UNKNOWN_REVISION;
  const info = join(root, 'dist', 'build-info.json');
  if (existsSync(info)) {
    const recorded = (JSON.parse(readFileSync(info, 'utf8')) as { revision?: unknown }).revision;
    if (typeof recorded === 'string' && recorded) revision = recorded;
  }
  return (cached = { version, revision });
}
