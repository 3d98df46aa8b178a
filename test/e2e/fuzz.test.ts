/**
 * A short seeded fuzz round (scripts/fuzz/run.mjs) against the real daemon: every route of the OpenAPI document, the
 * runner API, git over HTTP and /oauth get random and hostile requests as admin, a developer and anonymous. No 5xx,
 * no crash, nothing written outside the data dir, and afterwards a sound database and sound repositories. A failure
 * prints each request to replay: `node scripts/fuzz/run.mjs --seed <seed> --only <index>`. On the PostgreSQL pass the
 * daemon runs on a fresh database of the test server (`--database-url` of the script).
 */
import { expect, it } from 'vitest';
import { runFuzz, summary } from '../../scripts/fuzz/run.mjs';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';

const SEED = Number(process.env.GANTRY_FUZZ_SEED ?? 1);
const REQUESTS = Number(process.env.GANTRY_FUZZ_REQUESTS ?? 3000);

it(`sends ${REQUESTS} hostile requests (seed ${SEED}) without a 5xx, a crash, a stray file or damage`, async () => {
  const pg = TEST_DATABASE_URL ? await createTestDatabase(TEST_DATABASE_URL) : null;
  let report: Awaited<ReturnType<typeof runFuzz>>;
  try {
    report = await runFuzz({ requests: REQUESTS, seed: SEED, concurrency: 4, databaseUrl: pg?.url ?? null });
  } finally {
    await pg?.drop();
  }
  const text = summary(report);
  expect(report.sent, text).toBe(REQUESTS);
  expect(report.failures, text).toEqual([]);
  expect(report.crash, text).toBeNull();
  expect(report.stray, text).toEqual([]);
  expect(report.database, text).toEqual([]);
  expect(report.repositories, text).toEqual([]);
  // the round reached the routes, not only the authentication in front of them
  expect(Object.keys(report.statuses).filter((s) => s.startsWith('2')).length, text).toBeGreaterThan(0);
  expect(report.statuses['400'] ?? 0, text).toBeGreaterThan(REQUESTS / 20);
}, 180_000);
