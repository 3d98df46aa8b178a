/**
 * scripts/engine-files.mjs: which test files the PostgreSQL pass of `npm test` leaves out (those that never read the
 * test-database variable, themselves or through what they import), and the guard that the programs never read it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSources, engineFiles, importsOf, VARIABLE } from '../../scripts/engine-files.mjs';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** A repository root with these files (path -> text). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'gantry-engine-files-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the files of the PostgreSQL pass', () => {
  it('reads static, side-effect and dynamic relative imports, not packages', () => {
    const text = `import { a } from './a.js';\nimport type { B } from "../b.js";\nimport './c.js';\nconst d = await import('./d.js');\nimport { it } from 'vitest';\nexport { e } from './e.js';`;
    expect(importsOf(text)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js']);
  });

  it('keeps a file that reads the variable itself or through any import, however deep; leaves out the rest', () => {
    const root = tree({
      'test/helpers/db.ts': `export const url = process.env.${VARIABLE};`,
      'test/helpers/server.ts': `export { url } from './db.js';`,
      'test/helpers/plain.ts': `export const x = 1;`,
      'test/helpers/lazy.ts': `export async function f() { return (await import('./server.js')).url; }`,
      'test/api/server.test.ts': `import { url } from '../helpers/server.js';`,
      'test/api/lazy.test.ts': `import { f } from '../helpers/lazy.js';`,
      'test/api/own.test.ts': `const u = process.env.${VARIABLE};`,
      'test/unit/plain.test.ts': `import { x } from '../helpers/plain.js';\nimport { it } from 'vitest';`,
      'test/unit/cycle-a.test.ts': `import './cycle-b.js';`,
      'test/unit/cycle-b.ts': `import './cycle-a.test.js';`,
    });
    expect(engineFiles(root)).toEqual({
      both: ['test/api/lazy.test.ts', 'test/api/own.test.ts', 'test/api/server.test.ts'],
      once: ['test/unit/cycle-a.test.ts', 'test/unit/plain.test.ts'],
    });
  });

  it('runs every test that reaches a database on both engines', () => {
    const { both, once } = engineFiles();
    // test servers (test/helpers/app.ts), the CLI's test server, gantryd with dataDirArgs, the data layer's own tests
    for (const f of ['test/authz/matrix.test.ts', 'test/api/projects.test.ts', 'test/cli/merge-requests.test.ts', 'test/e2e/ssh.test.ts',
      'test/e2e/ci-pipeline.test.ts', 'test/e2e/postgres-two-daemons.test.ts', 'test/unit/data-layer.test.ts', 'test/web/pages.test.ts']) {
      expect(both, f).toContain(f);
    }
    // pure functions, and programs that never get a database URL
    for (const f of ['test/unit/params.test.ts', 'test/runner/unit.test.ts', 'test/e2e/npm-start.test.ts']) expect(once, f).toContain(f);
  });

  it('holds only while the programs never read the variable: they do not', () => {
    expect(checkSources()).toEqual([]);
    const root = tree({ 'daemon/config.ts': `const u = process.env.${VARIABLE};`, 'cli/main.ts': 'export {};' });
    expect(checkSources(root)).toEqual(['daemon/config.ts']);
  });
});
