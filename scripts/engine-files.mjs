// Which test files need the PostgreSQL pass of `npm test` (scripts/test-postgres.mjs). The two passes differ only in
// GANTRY_TEST_DATABASE_URL: nothing but the tests reads it (gantryd, the CLI and the runner name their settings one by
// one, and none is that one; checkSources() proves it). A test file whose own code and every test file it imports,
// however deep, never names that variable runs the very same code on both passes, and is left out of the second.
// The rule is computed from the files each time: there is no list to forget.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const VARIABLE = 'GANTRY_TEST_DATABASE_URL';

/** Relative imports of a source text: static `from '...'`, side-effect `import '...'` and dynamic `import('...')`. */
export function importsOf(text) {
  const out = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) out.push(m[1]);
  return out;
}

/** The file an import names: TypeScript's `.js` for `.ts`, or the name as written. */
function resolveImport(from, spec) {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), base, `${base}.ts`]) {
    if (existsSync(candidate) && !candidate.endsWith('/')) return candidate;
  }
  return undefined;
}

/** Whether `file`, or a file it imports from the repository (transitively), names the test-database variable. */
export function readsTestDatabase(file, seen = new Map()) {
  if (seen.has(file)) return seen.get(file);
  seen.set(file, false); // a cycle adds nothing
  const text = readFileSync(file, 'utf8');
  let reads = text.includes(VARIABLE);
  for (const spec of importsOf(text)) {
    if (reads) break;
    const target = resolveImport(file, spec);
    if (target && readsTestDatabase(target, seen)) reads = true;
  }
  seen.set(file, reads);
  return reads;
}

/** The files below `dir` whose path `keep` accepts, relative to `root`. */
function filesBelow(root, dir, keep) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesBelow(root, p, keep));
    else if (keep(p)) out.push(relative(root, p));
  }
  return out;
}

/** Every test file vitest runs (vitest.config.ts includes test/**\/*.test.ts), relative to the root, sorted. */
export function testFiles(root = ROOT) {
  return filesBelow(root, join(root, 'test'), (p) => p.endsWith('.test.ts')).sort();
}

/** The test files split by whether the PostgreSQL pass runs anything different in them. */
export function engineFiles(root = ROOT) {
  const seen = new Map();
  const both = [];
  const once = [];
  for (const f of testFiles(root)) (readsTestDatabase(join(root, f), seen) ? both : once).push(f);
  return { both, once };
}

/** Files of the programs (not the tests) that name the variable: must be none, or the rule above would not hold. */
export function checkSources(root = ROOT) {
  const names = (p) => /\.(ts|mts|js|mjs|cjs)$/.test(p) && readFileSync(p, 'utf8').includes(VARIABLE);
  return ['daemon', 'cli', 'runner-agent', 'shared', 'bin'].filter((dir) => existsSync(join(root, dir))).flatMap((dir) => filesBelow(root, join(root, dir), names));
}

// `node scripts/engine-files.mjs`: the two lists.
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const { both, once } = engineFiles();
  console.log(`On both engines (${both.length}):\n${both.map((f) => `  ${f}`).join('\n')}`);
  console.log(`On SQLite only, the same code on both (${once.length}):\n${once.map((f) => `  ${f}`).join('\n')}`);
}
