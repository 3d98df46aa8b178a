#!/usr/bin/env node
// The second half of `npm test`: the test files listed in test/postgres-files.json, run again on PostgreSQL when
// GANTRY_TEST_DATABASE_URL names a server (every test server then gets a fresh database there; see
// test/helpers/app.ts). Without it, one line says they were skipped. Extra arguments go to vitest.
//   GANTRY_TEST_DATABASE_URL="$(scripts/postgres-test-server)" node scripts/test-postgres.mjs
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!process.env.GANTRY_TEST_DATABASE_URL) {
  console.log('PostgreSQL tests skipped: GANTRY_TEST_DATABASE_URL is not set (start one with scripts/postgres-test-server)');
  process.exit(0);
}
const files = JSON.parse(readFileSync(join(root, 'test/postgres-files.json'), 'utf8'));
const missing = files.filter((f) => !existsSync(join(root, f)));
if (missing.length) {
  console.error(`test/postgres-files.json names files that do not exist: ${missing.join(', ')}`);
  process.exit(1);
}
const url = new URL(process.env.GANTRY_TEST_DATABASE_URL);
console.log(`=== ${files.length} test files on PostgreSQL (${url.hostname}:${url.port || 5432}) ===`);
const vitest = join(root, 'node_modules/vitest/vitest.mjs');
const r = spawnSync(process.execPath, [vitest, 'run', ...files, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
