#!/usr/bin/env node
// The second half of `npm test`: the suite again on PostgreSQL, when GANTRY_TEST_DATABASE_URL names a server. Every
// test server then gets a fresh database there (see test/helpers/app.ts), and the end-to-end tests start gantryd with
// --database-url of a fresh one (test/e2e/database.ts dataDirArgs). Without it, one line says the pass was skipped.
// Left out: the test files that never read that variable, themselves or through any test file they import
// (scripts/engine-files.mjs computes them each time): they run the very same code on both passes, so the SQLite pass
// already ran them. GANTRY_TEST_ALL_FILES=1 runs every file anyway. Extra arguments go to vitest.
//   GANTRY_TEST_DATABASE_URL="$(scripts/postgres-test-server)" node scripts/test-postgres.mjs
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { checkSources, engineFiles, ROOT, VARIABLE } from './engine-files.mjs';

if (!process.env.GANTRY_TEST_DATABASE_URL) {
  console.log(`PostgreSQL tests skipped: ${VARIABLE} is not set (start one with scripts/postgres-test-server)`);
  process.exit(0);
}
const readers = checkSources();
if (readers.length) {
  // the rule that leaves files out holds only while the programs never read the tests' variable
  console.error(`${readers.join(', ')} name ${VARIABLE}: only the tests may read it (scripts/engine-files.mjs)`);
  process.exit(1);
}
const { both, once } = process.env.GANTRY_TEST_ALL_FILES ? { both: [], once: [] } : engineFiles();
const url = new URL(process.env.GANTRY_TEST_DATABASE_URL);
console.log(`=== the suite on PostgreSQL (${url.hostname}:${url.port || 5432}) ===`);
if (once.length) console.log(`${once.length} files never read ${VARIABLE} (the same run as on SQLite) are left out; ${both.length} run: node scripts/engine-files.mjs lists them`);
const vitest = join(ROOT, 'node_modules/vitest/vitest.mjs');
const exclude = once.flatMap((f) => ['--exclude', f]);
const r = spawnSync(process.execPath, [vitest, 'run', ...exclude, ...process.argv.slice(2)], { cwd: ROOT, stdio: 'inherit' });
process.exit(r.status ?? 1);
