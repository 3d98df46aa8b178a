#!/usr/bin/env node
// The second half of `npm test`: the whole suite again (every test file, as vitest.config.ts includes them; no list),
// on PostgreSQL, when GANTRY_TEST_DATABASE_URL names a server. Every test server then gets a fresh database there (see
// test/helpers/app.ts), and the end-to-end tests start gantryd with --database-url of a fresh one
// (test/e2e/helpers.ts dataDirArgs). Without it, one line says the pass was skipped. Extra arguments go to vitest.
//   GANTRY_TEST_DATABASE_URL="$(scripts/postgres-test-server)" node scripts/test-postgres.mjs
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!process.env.GANTRY_TEST_DATABASE_URL) {
  console.log('PostgreSQL tests skipped: GANTRY_TEST_DATABASE_URL is not set (start one with scripts/postgres-test-server)');
  process.exit(0);
}
const url = new URL(process.env.GANTRY_TEST_DATABASE_URL);
console.log(`=== the whole suite on PostgreSQL (${url.hostname}:${url.port || 5432}) ===`);
const vitest = join(root, 'node_modules/vitest/vitest.mjs');
const r = spawnSync(process.execPath, [vitest, 'run', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
