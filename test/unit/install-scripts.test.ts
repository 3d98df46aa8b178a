/**
 * npm 12 runs no dependency install script that package.json's `allowScripts` does not approve. Gantry needs none of
 * them (issue 25): better-sqlite3 13 loads a prebuilt N-API binding from its package (its `node-gyp rebuild` only
 * matters on a platform without one), ssh2 falls back to Node's crypto without its optional binding (and then never
 * loads cpu-features), and esbuild's postinstall only checks the platform binary that its optional dependency already
 * installed. So every dependency with an install script is named in `allowScripts`, each one denied: `npm install`
 * prints no install-scripts notice, and the suite (daemon, SSH, git, builds) runs on what is installed without them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
};
const require = createRequire(join(root, 'package.json'));

describe('install scripts (npm 12 allowScripts)', () => {
  it('names every locked dependency that has an install script, and denies each', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, p]) => path && p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
      .sort();
    expect(withScripts).toEqual(['better-sqlite3', 'cpu-features', 'esbuild', 'ssh2']);
    expect(pkg.allowScripts).toEqual(Object.fromEntries(withScripts.map((name) => [name, false])));
  });

  it('better-sqlite3 ships a prebuilt binding for every platform the README names, and opens a database with it', () => {
    const dir = join(root, 'node_modules/better-sqlite3/prebuilds');
    for (const platform of ['linux-x64', 'linux-arm64', 'linuxmusl-x64', 'darwin-arm64', 'darwin-x64', 'win32-x64']) {
      expect(existsSync(join(dir, `${platform}.node`)), platform).toBe(true);
    }
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const db = new Database(':memory:');
    expect((db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v).toMatch(/^3\./);
    db.close();
  });

  it('ssh2 and esbuild load without what their scripts would have built', () => {
    expect(() => require('ssh2')).not.toThrow();
    const esbuild = require('esbuild') as typeof import('esbuild');
    expect(esbuild.transformSync('let a: number = 1', { loader: 'ts' }).code).toBe('let a = 1;\n');
  });
});
