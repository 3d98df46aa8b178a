// npm run bench [suite...]: runs the benchmark suites (default: all) against a freshly built gantryd and writes
// the results into docs/benchmarks.md. Suites: api, git, ssh, ci, collaboration, merge-requests, startup; driver (better-sqlite3 against node:sqlite, no daemon);
// drizzle (drizzle-orm's query builder against the data layer's SQL, no daemon);
// pages (the web pages under load, and their weight);
// the hardening suites fuzz (100,000 requests), crash (20 SIGKILL rounds) and soak (GANTRY_SOAK_MINUTES, default 60),
// which run only when named, as do engines (every room's hot request on SQLite before/after the port and on PostgreSQL,
// beside the floor; two daemons behind nginx) and migrate-db (a SQLite
// installation copied into PostgreSQL), which need a PostgreSQL server, and lists (a project's issue and merge request
// lists on 1,000,000 issues, on SQLite and, given a PostgreSQL server, beside it).
import { execSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// (the suites' helpers read the build: scripts/bench/lib.mjs is loaded after it)
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const suites = { api: () => import('./bench/api.mjs'), git: () => import('./bench/git.mjs'), ci: () => import('./bench/ci.mjs'), driver: () => import('./bench/driver.mjs'), drizzle: () => import('./bench/drizzle.mjs'), collaboration: () => import('./bench/collaboration.mjs'), 'merge-requests': () => import('./bench/merge-requests.mjs'), startup: () => import('./bench/startup.mjs'), ssh: () => import('./bench/ssh.mjs'), fuzz: () => import('./bench/fuzz.mjs'), crash: () => import('./bench/crash.mjs'), soak: () => import('./bench/soak.mjs'), engines: () => import('./bench/engines.mjs'), 'migrate-db': () => import('./bench/migrate-db.mjs'), pages: () => import('./bench/pages.mjs') , lists: () => import('./bench/lists.mjs') };
const HARDENING = ['fuzz', 'crash', 'soak', 'engines', 'migrate-db', 'lists'];
const chosen = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = chosen.length ? chosen : Object.keys(suites).filter((n) => !HARDENING.includes(n));
for (const n of names) if (!suites[n]) { console.error(`unknown suite "${n}"; choose from: ${Object.keys(suites).join(', ')}`); process.exit(2); }
if (!process.argv.includes('--no-build')) {
  process.stderr.write('bench: building (npm run build)...\n');
  execSync('npm run build', { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
for (const n of names) {
  process.stderr.write(`bench: suite ${n}\n`);
  await (await suites[n]()).run();
}
