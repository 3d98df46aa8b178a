/** Locating the installed package (the same from cli/*.ts under vitest and from dist/cli/*.js). */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | null = null;

/** The package root: the nearest directory above this module holding bin/gantryd.js and package.json. */
export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin', 'gantryd.js'))) return (root = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the gantry package root (bin/gantryd.js)');
    dir = parent;
  }
}

/** The package version from package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
