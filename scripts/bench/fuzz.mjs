// Fuzz suite (`npm run bench -- fuzz`): the long round of scripts/fuzz/run.mjs (100,000 requests by default,
// BENCH_FUZZ_REQUESTS and BENCH_FUZZ_SEED to change), its figures into docs/benchmarks.md.
import { machine, writeSection } from './lib.mjs';
import { runFuzz, summary } from '../fuzz/run.mjs';

export async function run({ requests = Number(process.env.BENCH_FUZZ_REQUESTS ?? 100_000), seed = Number(process.env.BENCH_FUZZ_SEED ?? 1) } = {}) {
  const r = await runFuzz({ requests, seed, concurrency: 6, log: (m) => process.stderr.write(`bench ${m}\n`) });
  const statuses = Object.entries(r.statuses).sort().map(([s, n]) => `${s === '0' ? 'closed without an answer' : s === '-1' ? 'refused by the client' : s}: ${n}`).join(', ');
  const md = `## Fuzz (${new Date().toISOString().slice(0, 10)})

Machine: ${machine()}. \`node scripts/fuzz/run.mjs --requests ${requests} --seed ${seed}\` (the suite \`npm run bench -- fuzz\`):
every route of the OpenAPI document, the runner API, git over HTTP and /oauth, as admin, a developer, anonymous and
others, with hostile inputs, 6 in flight, against a seeded instance.

| measurement | result |
|---|---|
| requests sent | ${r.sent} in ${(r.ms / 1000).toFixed(0)} s |
| 5xx answers / no answer | **${r.failures.length}** |
| answers slower than 2 s | ${r.slow.length} |
| crash (process exit) | ${r.crash ? `**${JSON.stringify(r.crash.exit)}**` : 'none'} |
| files written outside the data dir | ${r.stray.length} |
| PRAGMA integrity_check + foreign_key_check / git fsck of every repository | ${r.database.length ? r.database.join('; ') : 'ok'} / ${r.repositories.length ? r.repositories.join('; ') : 'ok'} |

Statuses: ${statuses}.
${r.ok ? '' : `\n\`\`\`\n${summary(r).slice(0, 6000)}\n\`\`\`\n`}`;
  writeSection('fuzz', md);
  process.stdout.write(`${md}\n`);
  return r;
}
